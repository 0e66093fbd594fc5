//! A heap profile dump as heapprofd writes it onto its sequence, sans-IO
//! (packets go to a [`PacketSink`]: a `TraceWriter`, or a `BufferSink` in tests):
//!
//! - once per sequence, the fixed internings (id 0 of each string table is
//!   the empty string) in a packet that clears incremental state;
//! - per process and heap, `ProfilePacket`s each holding one
//!   `process_dumps` entry (the header: pid, heap name, intervals, flags,
//!   stats) and its `HeapSample`s, a new packet (`continued` on the one
//!   before, `index` counting on) whenever one passes about 400 kB;
//! - then the last of those is marked `continued` and the callstacks new to
//!   the sequence are defined in `interned_data` (split the same way), and
//!   an empty `ProfilePacket` ends the dump.

use zerotrace_protos::protos::profile_packet::{HeapSample, ProcessHeapSamples};

use zerotrace_profiling::PacketSink;
use zerotrace_profiling::intern::{Interner, write_fixed};

/// Where a packet's contents are over the threshold, a new packet begins
/// (upstream's, checked before each sample, so that no packet much passes
/// half a megabyte).
pub const PACKET_SIZE_THRESHOLD: usize = 400_000;

/// `TracePacket.sequence_flags`: SEQ_INCREMENTAL_STATE_CLEARED.
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

/// `ProcessHeapSamples.client_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientError {
    /// None.
    #[default]
    None,
    /// The client gave up waiting for room in the buffer.
    HitTimeout,
    /// The client could not find its stack's bounds.
    InvalidStackBounds,
}

/// `ProcessStats` of a dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DumpStats {
    /// Samples whose stack did not unwind to the end.
    pub unwinding_errors: u64,
    /// Allocations recorded.
    pub heap_samples: u64,
    /// Times the process's mappings were read again.
    pub map_reparses: u64,
    /// Time spent unwinding, in microseconds.
    pub total_unwinding_time_us: u64,
    /// Time allocating threads waited for room, in microseconds.
    pub client_spinlock_blocked_us: u64,
    /// A histogram of unwinding times: (upper limit in us, count); `None`
    /// as the limit is the last, open bucket.
    pub unwinding_time_us: Vec<(Option<u64>, u64)>,
}

/// The header of one process's heap in a dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessHeader {
    /// The process.
    pub pid: u64,
    /// When the books were taken (`CLOCK_MONOTONIC_COARSE` ns, as
    /// heapprofd stamps it; the packet's own timestamp is BOOTTIME).
    pub timestamp: u64,
    /// Profiled from its start (the session was running when it began).
    pub from_startup: bool,
    /// The client went away before the dump.
    pub disconnected: bool,
    /// Records were lost for want of room.
    pub buffer_overran: bool,
    /// Why the client stopped, if it did.
    pub client_error: ClientError,
    /// The record stream was found corrupted.
    pub buffer_corrupted: bool,
    /// A guardrail stopped the profile.
    pub hit_guardrail: bool,
    /// The heap's name.
    pub heap_name: String,
    /// The interval in force (after adaptive sampling).
    pub sampling_interval_bytes: u64,
    /// The interval configured.
    pub orig_sampling_interval_bytes: u64,
    /// The process's stats.
    pub stats: DumpStats,
}

/// One callstack's line of a dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DumpSample {
    /// The callstack's iid on the sequence.
    pub callstack_iid: u64,
    /// Sampled bytes allocated there.
    pub allocated: u64,
    /// Of those, freed.
    pub freed: u64,
    /// Allocations recorded there.
    pub alloc_count: u64,
    /// Of those, freed.
    pub free_count: u64,
    /// With `dump_at_max`: bytes live there at the peak, written instead of
    /// `allocated` and `freed`.
    pub at_max: Option<u64>,
}

/// The encoded size of a varint.
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

impl DumpSample {
    /// About its encoded size in a `ProcessHeapSamples`.
    fn size(&self) -> usize {
        let fields = match self.at_max {
            Some(m) => varint_len(m),
            None => varint_len(self.allocated) + varint_len(self.freed),
        } + varint_len(self.callstack_iid)
            + varint_len(self.alloc_count)
            + varint_len(self.free_count);
        fields + 5 + 3
    }
}

/// One sequence's dump state: the count of profile packets written on it
/// (`ProfilePacket.index`) and whether the fixed internings are out.
#[derive(Debug, Default)]
pub struct DumpWriter {
    next_index: u64,
    started: bool,
}

impl DumpWriter {
    /// A new sequence's state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes the fixed internings if this sequence has not had them (the
    /// first packet of the sequence; `interner` must be new with it).
    pub fn start(&mut self, sink: &mut dyn PacketSink, now: u64) {
        if self.started {
            return;
        }
        self.started = true;
        sink.packet(&mut |p| {
            p.set_timestamp(now)
                .set_sequence_flags(SEQ_INCREMENTAL_STATE_CLEARED);
            let mut d = p.begin_interned_data();
            write_fixed(d.message());
        });
    }

    /// A rejected process (another session profiles it): one packet.
    pub fn reject_concurrent(&mut self, sink: &mut dyn PacketSink, now: u64, pid: u64) {
        sink.packet(&mut |p| {
            p.set_timestamp(now);
            let mut pp = p.begin_profile_packet();
            pp.add_process_dumps()
                .set_pid(pid)
                .set_rejected_concurrent(true);
        });
    }

    /// Writes one process's heap: its header, `samples` (whose callstacks
    /// `interner` has interned: the ones new to the sequence are defined
    /// after the samples), and the empty packet that ends the dump.
    pub fn dump(
        &mut self,
        sink: &mut dyn PacketSink,
        now: u64,
        header: &ProcessHeader,
        samples: &[DumpSample],
        interner: &mut Interner,
    ) {
        self.start(sink, now);
        let mut rest = samples;
        loop {
            // As many samples as fit under the threshold (at least one).
            let mut size = 0usize;
            let mut n = 0;
            for s in rest {
                if n > 0 && size >= PACKET_SIZE_THRESHOLD {
                    break;
                }
                size += s.size();
                n += 1;
            }
            let (these, after) = rest.split_at(n);
            rest = after;
            let last = rest.is_empty();
            let index = self.next_index;
            self.next_index += 1;
            let mut more_interned = false;
            sink.packet(&mut |p| {
                p.set_timestamp(now);
                {
                    let mut pp = p.begin_profile_packet();
                    {
                        let mut d = pp.add_process_dumps();
                        fill_header(&mut d, header);
                        for s in these {
                            fill_sample(&mut d.add_samples(), s);
                        }
                    }
                    // Every packet but the dump's closing one is continued;
                    // the last one with samples is followed by the
                    // callstacks' definitions.
                    pp.set_continued(true);
                    pp.set_index(index);
                }
                if last && interner.has_new() {
                    let mut d = p.begin_interned_data();
                    more_interned = interner.write_new_bounded(d.message(), PACKET_SIZE_THRESHOLD);
                }
            });
            if last {
                while more_interned {
                    sink.packet(&mut |p| {
                        p.set_timestamp(now);
                        let mut d = p.begin_interned_data();
                        more_interned =
                            interner.write_new_bounded(d.message(), PACKET_SIZE_THRESHOLD);
                    });
                }
                break;
            }
        }
        let index = self.next_index;
        self.next_index += 1;
        sink.packet(&mut |p| {
            p.set_timestamp(now);
            p.begin_profile_packet().set_index(index);
        });
    }
}

fn fill_header(d: &mut ProcessHeapSamples<'_>, h: &ProcessHeader) {
    d.set_pid(h.pid)
        .set_timestamp(h.timestamp)
        .set_from_startup(h.from_startup)
        .set_disconnected(h.disconnected)
        .set_buffer_overran(h.buffer_overran)
        .set_client_error_raw(match h.client_error {
            ClientError::None => 0,
            ClientError::HitTimeout => 1,
            ClientError::InvalidStackBounds => 2,
        })
        .set_buffer_corrupted(h.buffer_corrupted)
        .set_hit_guardrail(h.hit_guardrail);
    if !h.heap_name.is_empty() {
        d.set_heap_name(&h.heap_name);
    }
    d.set_sampling_interval_bytes(h.sampling_interval_bytes)
        .set_orig_sampling_interval_bytes(h.orig_sampling_interval_bytes);
    let s = &h.stats;
    let mut st = d.begin_stats();
    st.set_unwinding_errors(s.unwinding_errors)
        .set_heap_samples(s.heap_samples)
        .set_map_reparses(s.map_reparses)
        .set_total_unwinding_time_us(s.total_unwinding_time_us)
        .set_client_spinlock_blocked_us(s.client_spinlock_blocked_us);
    let mut hist = st.begin_unwinding_time_us();
    for (limit, count) in &s.unwinding_time_us {
        let mut b = hist.add_buckets();
        match limit {
            Some(l) => b.set_upper_limit(*l),
            None => b.set_max_bucket(true),
        };
        b.set_count(*count);
    }
}

fn fill_sample(w: &mut HeapSample<'_>, s: &DumpSample) {
    w.set_callstack_id(s.callstack_iid);
    match s.at_max {
        Some(m) => {
            w.set_self_max(m);
        }
        None => {
            w.set_self_allocated(s.allocated).set_self_freed(s.freed);
        }
    }
    w.set_alloc_count(s.alloc_count)
        .set_free_count(s.free_count);
}

#[cfg(test)]
#[path = "dump_tests.rs"]
mod tests;
