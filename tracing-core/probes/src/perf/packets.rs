//! The packets `linux.perf` writes, as traced_perf writes them: the
//! sequence's first packets (incremental state cleared,
//! `trace_packet_defaults` with the samples' clock and
//! `perf_sample_defaults` describing the events opened; then id 0 of each
//! string table), then one `perf_sample` per sample with the
//! new interned definitions it uses, and `perf_sample`s that report
//! losses: kernel records lost, samples skipped with their reason, and the
//! guardrail stop.

use protozero::Message;

use super::config::{EventKind, EventSpec, Interval};
use super::intern::{FrameDesc, Interner, write_fixed};
use crate::producer::PacketSink;
use zerotrace_protos::protos::perf_events::PerfClock;
use zerotrace_protos::protos::perf_events::{RawEvent, Tracepoint};
use zerotrace_protos::protos::perf_sample::{SampleSkipReason, producer_event};
use zerotrace_protos::protos::profiling::{CpuMode, StackUnwindError};
use zerotrace_protos::protos::{PerfSample, PerfSampleDefaults};
use zerotrace_protos::upstream_tables::{packet_defaults_field, packet_field};

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
#[derive(Debug, Clone)]
pub struct Defaults<'a> {
    /// When it is written, on the boot clock.
    pub ts: u64,
    /// The samples' clock (a `BuiltinClock` id).
    pub clock_id: u32,
    /// How often the timebase samples, as the kernel was asked.
    pub interval: Interval,
    /// The timebase event.
    pub timebase: &'a EventSpec,
    /// The follower events.
    pub followers: &'a [EventSpec],
    /// `process_shard_count` and the shard chosen, when sharding.
    pub shard: Option<(u32, u32)>,
}

/// The field numbers of an event's parts in `PerfEvents.Timebase` or in
/// `FollowerEvent`, which write them alike.
struct EventFields {
    counter: u32,
    tracepoint: u32,
    raw_event: u32,
    name: u32,
    modifiers: u32,
}

/// `PerfEvents.Timebase`'s.
const TIMEBASE_FIELDS: EventFields = EventFields {
    counter: 4,
    tracepoint: 3,
    raw_event: 5,
    name: 10,
    modifiers: 12,
};

/// `FollowerEvent`'s.
const FOLLOWER_FIELDS: EventFields = EventFields {
    counter: 1,
    tracepoint: 2,
    raw_event: 3,
    name: 4,
    modifiers: 5,
};

/// Writes `spec` into `m` (a `Timebase` or a `FollowerEvent`) as upstream
/// describes the event it opened: the event (a tracepoint with its name as
/// configured and its filter, empty if none; a raw event with all four
/// numbers), the name if any, and the counted privilege levels if not all.
fn write_event(m: &mut Message<'_>, f: &EventFields, spec: &EventSpec) {
    match &spec.kind {
        EventKind::Counter(c) => m.append_varint(f.counter, *c as u64),
        EventKind::Tracepoint {
            config_name,
            filter,
            ..
        } => {
            Tracepoint::from_message(m.begin_nested(f.tracepoint))
                .set_name(config_name)
                .set_filter(filter.as_deref().unwrap_or(""));
        }
        EventKind::Raw {
            kind,
            config,
            config1,
            config2,
            ..
        } => {
            RawEvent::from_message(m.begin_nested(f.raw_event))
                .set_type(*kind)
                .set_config(*config)
                .set_config1(*config1)
                .set_config2(*config2);
        }
    }
    if let Some(name) = spec.name.as_deref().filter(|n| !n.is_empty()) {
        m.append_string(f.name, name);
    }
    if let Some(levels) = spec
        .modifiers
        .filter(|l| !(l.user && l.kernel && l.hypervisor))
    {
        for (counted, value) in [(levels.user, 1), (levels.kernel, 2), (levels.hypervisor, 3)] {
            if counted {
                m.append_varint(f.modifiers, value);
            }
        }
    }
}

/// Writes the sequence's first packets, as traced_perf writes them: the
/// defaults (stamped on the boot clock, the incremental state cleared;
/// the samples' clock; the timebase and followers as the kernel was asked
/// for them; the shard), then the fixed interned entries (id 0 of each
/// string table).
pub fn write_start(sink: &mut dyn PacketSink, d: &Defaults<'_>) {
    sink.write_packet(&mut |p: &mut Message<'_>| {
        p.append_varint(packet_field::TIMESTAMP, d.ts);
        p.append_varint(
            packet_field::TIMESTAMP_CLOCK_ID,
            u64::from(BOOTTIME_CLOCK_ID),
        );
        p.append_varint(packet_field::SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
        let mut defaults = p.begin_nested(packet_field::TRACE_PACKET_DEFAULTS);
        defaults.append_varint(
            packet_defaults_field::TIMESTAMP_CLOCK_ID,
            u64::from(d.clock_id),
        );
        let mut perf = PerfSampleDefaults::from_message(
            defaults.begin_nested(packet_defaults_field::PERF_SAMPLE_DEFAULTS),
        );
        {
            let mut tb = perf.begin_timebase();
            match d.interval {
                Interval::Frequency(hz) => tb.set_frequency(hz),
                Interval::Period(n) => tb.set_period(n),
            };
            write_event(tb.message(), &TIMEBASE_FIELDS, d.timebase);
        }
        for f in d.followers {
            let mut fe = perf.add_followers();
            write_event(fe.message(), &FOLLOWER_FIELDS, f);
        }
        if let Some((count, chosen)) = d.shard {
            perf.set_process_shard_count(count)
                .set_chosen_process_shard(chosen);
        }
    });
    sink.write_packet(&mut |p: &mut Message<'_>| {
        {
            let mut data = p.begin_nested(packet_field::INTERNED_DATA);
            write_fixed(&mut data);
        }
        p.append_varint(packet_field::SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
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

/// Writes an unwound sample: who it was, its counts, its callstack
/// (`frames` leaf first) and how unwinding ended.
pub fn write_sample(
    sink: &mut dyn PacketSink,
    interner: &mut Interner,
    h: &SampleHeader,
    counts: &[u64],
    frames: Option<&[FrameDesc]>,
    unwind_error: Option<StackUnwindError>,
) {
    let callstack = frames.map(|f| interner.callstack(f));
    sink.write_packet(&mut |p: &mut Message<'_>| {
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

/// Writes a sample without a callstack (callstacks are not sampled, or a
/// kernel-frames-only config met a user-mode sample): its counts, then
/// who it was, in upstream's order for such samples.
pub fn write_counts_only(sink: &mut dyn PacketSink, h: &SampleHeader, counts: &[u64]) {
    sink.write_packet(&mut |p: &mut Message<'_>| {
        begin(p, h.ts);
        let mut s = PerfSample::from_message(p.begin_nested(packet_field::PERF_SAMPLE));
        s.set_cpu(h.cpu);
        write_counts(&mut s, counts);
        s.set_pid(h.pid)
            .set_tid(h.tid)
            .set_cpu_mode(cpu_mode(h.cpu_mode));
    });
}

/// Writes that CPU `cpu`'s ring buffer lost `lost` records. The loss has
/// no time of its own: the packet is stamped `ts`, when it was noticed, on
/// the boot clock, and says so in `timestamp_clock_id` (the samples' clock
/// may be another).
pub fn write_records_lost(sink: &mut dyn PacketSink, ts: u64, cpu: u32, lost: u64) {
    sink.write_packet(&mut |p: &mut Message<'_>| {
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
    sink.write_packet(&mut |p: &mut Message<'_>| {
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
    sink.write_packet(&mut |p: &mut Message<'_>| {
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
