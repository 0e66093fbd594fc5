//! The packets `linux.perf` writes, as traced_perf writes them: the
//! sequence's first packet (incremental state cleared, id 0 of each string
//! table, `trace_packet_defaults` with the samples' clock and
//! `perf_sample_defaults`), then one `perf_sample` per sample with the
//! new interned definitions it uses, and `perf_sample`s that report
//! losses: kernel records lost, samples skipped with their reason, and the
//! guardrail stop.

use protozero::Message;

use super::intern::{FrameDesc, Interner, write_fixed};
use crate::producer::PacketSink;
use crate::protos::perf_events::PerfClock;
use crate::protos::perf_sample::{SampleSkipReason, producer_event};
use crate::protos::profiling::{CpuMode, StackUnwindError};
use crate::protos::{PerfSample, PerfSampleDefaults, packet_defaults_field, packet_field};

/// `TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
/// `TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE`.
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

/// The `BuiltinClock` id of a perf clock (what `timestamp_clock_id` holds).
pub fn builtin_clock_id(clock: PerfClock) -> u32 {
    match clock {
        PerfClock::Realtime => 1,
        PerfClock::Monotonic => 3,
        PerfClock::MonotonicRaw => 5,
        PerfClock::Boottime | PerfClock::UnknownPerfClock => 6,
    }
}

/// What the sequence's first packet says.
#[derive(Debug, Clone, Default)]
pub struct Defaults<'a> {
    /// The samples' clock.
    pub clock_id: u32,
    /// The config's `Timebase` message, as configured.
    pub timebase: &'a [u8],
    /// The config's `FollowerEvent` messages.
    pub followers: &'a [Vec<u8>],
    /// `process_shard_count` and the shard chosen, when sharding.
    pub shard: Option<(u32, u32)>,
}

/// Writes the sequence's first packet.
pub fn write_start(sink: &mut dyn PacketSink, d: &Defaults<'_>) {
    sink.packet(&mut |p: &mut Message<'_>| {
        {
            let mut data = p.begin_nested(packet_field::INTERNED_DATA);
            write_fixed(&mut data);
        }
        {
            let mut defaults = p.begin_nested(packet_field::TRACE_PACKET_DEFAULTS);
            defaults.append_varint(
                packet_defaults_field::TIMESTAMP_CLOCK_ID,
                u64::from(d.clock_id),
            );
            let mut perf = PerfSampleDefaults::from_message(
                defaults.begin_nested(packet_defaults_field::PERF_SAMPLE_DEFAULTS),
            );
            if !d.timebase.is_empty() {
                perf.set_timebase_raw(d.timebase);
            }
            for f in d.followers {
                perf.add_followers_raw(f);
            }
            if let Some((count, chosen)) = d.shard {
                perf.set_process_shard_count(count)
                    .set_chosen_process_shard(chosen);
            }
        }
        p.append_varint(packet_field::SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    });
}

/// Who and where a sample was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleHeader {
    /// Its timestamp, in the sequence's clock.
    pub ts: u64,
    /// The CPU.
    pub cpu: u32,
    /// The process.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// The record's CPU mode (perf's numbers, the same as `CpuMode`'s).
    pub cpu_mode: u16,
}

fn cpu_mode(m: u16) -> CpuMode {
    CpuMode::from_i32(i32::from(m)).unwrap_or(CpuMode::ModeUnknown)
}

/// `BuiltinClock.BUILTIN_CLOCK_BOOTTIME`: the clock of the packets that
/// are stamped by the probes rather than by the kernel (losses, the
/// guardrail stop), which say so whatever the samples' clock is.
pub const BOOTTIME_CLOCK_ID: u32 = 6;

/// Starts a packet as traced_perf starts every packet after the first:
/// `sequence_flags` (needs the incremental state), then the timestamp.
fn begin(p: &mut Message<'_>, ts: u64) {
    p.append_varint(packet_field::SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    p.append_varint(packet_field::TIMESTAMP, ts);
}

/// A sample's counts: the timebase's, then each follower's.
fn write_counts(s: &mut PerfSample<'_>, counts: &[u64]) {
    if let Some((&timebase, followers)) = counts.split_first() {
        s.set_timebase_count(timebase);
        for &c in followers {
            s.add_follower_counts(c);
        }
    }
}

/// Writes a sample: its counts, its callstack (`frames` leaf first; `None`
/// when callstacks are not sampled) and how unwinding ended.
pub fn write_sample(
    sink: &mut dyn PacketSink,
    interner: &mut Interner,
    h: &SampleHeader,
    counts: &[u64],
    frames: Option<&[FrameDesc]>,
    unwind_error: Option<StackUnwindError>,
) {
    let callstack = frames.map(|f| interner.callstack(f));
    sink.packet(&mut |p: &mut Message<'_>| {
        begin(p, h.ts);
        if interner.has_new() {
            let mut data = p.begin_nested(packet_field::INTERNED_DATA);
            interner.write_new(&mut data);
        }
        let mut s = PerfSample::from_message(p.begin_nested(packet_field::PERF_SAMPLE));
        s.set_cpu(h.cpu)
            .set_pid(h.pid)
            .set_tid(h.tid)
            .set_cpu_mode(cpu_mode(h.cpu_mode));
        write_counts(&mut s, counts);
        if let Some(iid) = callstack {
            s.set_callstack_iid(iid);
        }
        if let Some(e) = unwind_error.filter(|&e| e != StackUnwindError::UnwindErrorNone) {
            s.set_unwind_error(e);
        }
    });
}

/// Writes that CPU `cpu`'s ring buffer lost `lost` records. The loss has
/// no time of its own: the packet is stamped `ts`, when it was noticed, on
/// the boot clock, and says so in `timestamp_clock_id` (the samples' clock
/// may be another).
pub fn write_records_lost(sink: &mut dyn PacketSink, ts: u64, cpu: u32, lost: u64) {
    sink.packet(&mut |p: &mut Message<'_>| {
        begin(p, ts);
        p.append_varint(
            packet_field::TIMESTAMP_CLOCK_ID,
            u64::from(BOOTTIME_CLOCK_ID),
        );
        PerfSample::from_message(p.begin_nested(packet_field::PERF_SAMPLE))
            .set_cpu(cpu)
            .set_kernel_records_lost(lost);
    });
}

/// Writes a sample that was read but not unwound, with its counts, and why.
pub fn write_skipped(
    sink: &mut dyn PacketSink,
    h: &SampleHeader,
    counts: &[u64],
    reason: SampleSkipReason,
) {
    sink.packet(&mut |p: &mut Message<'_>| {
        begin(p, h.ts);
        let mut s = PerfSample::from_message(p.begin_nested(packet_field::PERF_SAMPLE));
        s.set_cpu(h.cpu)
            .set_pid(h.pid)
            .set_tid(h.tid)
            .set_cpu_mode(cpu_mode(h.cpu_mode));
        write_counts(&mut s, counts);
        s.set_sample_skipped_reason(reason);
    });
}

/// Writes that the data source stopped because the probes' memory passed
/// `max_daemon_memory_kb` (`ts` on the boot clock, said in
/// `timestamp_clock_id`).
pub fn write_guardrail_stop(sink: &mut dyn PacketSink, ts: u64) {
    sink.packet(&mut |p: &mut Message<'_>| {
        begin(p, ts);
        p.append_varint(
            packet_field::TIMESTAMP_CLOCK_ID,
            u64::from(BOOTTIME_CLOCK_ID),
        );
        let mut s = PerfSample::from_message(p.begin_nested(packet_field::PERF_SAMPLE));
        s.begin_producer_event()
            .set_source_stop_reason(producer_event::DataSourceStopReason::ProfilerStopGuardrail);
    });
}
