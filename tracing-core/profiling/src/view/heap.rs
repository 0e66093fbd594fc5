//! Heap dumps as Perfetto's heapprofd writes them (data source
//! `android.heapprofd`), read back for the viewers.
//!
//! A dump on a sequence is a run of `TracePacket.profile_packet`s: each
//! holds `process_dumps` entries (a process's heap: pid, heap name,
//! sampling interval, flags, stats) with their `HeapSample`s, every packet
//! but the last `continued`, `index` counting up per sequence; the
//! callstacks new to the sequence are defined in `interned_data` **after**
//! the samples that name them (in the last continued packet or in
//! packets after it), and a `ProfilePacket` with `continued` unset closes
//! the dump. So samples are collected raw (callstack iids) until the dump
//! closes, and only then resolved through the sequence's interning
//! ([`super::interning`]), into [`HeapDump`]s whose stacks are frame
//! indices of the profile, root first, like CPU samples'.
//!
//! Dumps repeat (continuous dumps) and their totals are cumulative since
//! the profile began: the last dump of a process and heap holds the whole
//! picture ([`super::Profile::last_heap_dumps`]).
//!
//! What cannot be used is counted in [`HeapCounts`], never dropped
//! silently: callstacks that do not resolve (the sample stays, without a
//! stack), malformed messages, missing packets (a gap in `index`), and
//! dumps that never closed (the trace ended, or the sequence was cleared,
//! before their closing packet: they are resolved with what was defined).

use std::collections::{BTreeMap, HashMap};

use zerotrace_protos::protos::ProfilePacketDecoder;
use zerotrace_protos::protos::profile_packet::{
    HeapSampleDecoder, ProcessHeapSamplesDecoder, ProcessStatsDecoder,
};

use super::interning::{Sequence, Unresolved};
use super::tables::Tables;

/// One callstack's line of a heap dump. Byte values are what heapprofd
/// wrote: sampled bytes scaled to estimates of the real ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapSample {
    /// The callstack as frame indices of the profile, **root first, leaf
    /// last**; empty when it does not resolve.
    pub stack: Vec<usize>,
    /// The callstack's iid on its sequence (`HeapSample.callstack_id`).
    pub callstack_iid: u64,
    /// Why the callstack does not resolve, if it does not.
    pub unresolved: Option<Unresolved>,
    /// Bytes allocated there since the profile began.
    pub allocated: u64,
    /// Of those, bytes freed.
    pub freed: u64,
    /// Allocations made there.
    pub alloc_count: u64,
    /// Of those, allocations freed.
    pub free_count: u64,
    /// With `dump_at_max`: bytes live there at the heap's peak (heapprofd
    /// then writes this instead of `allocated` and `freed`).
    pub self_max: Option<u64>,
    /// Which packet held it: how many packets the reader was given before
    /// that one (so a viewer printing packets can find its samples).
    pub packet: u64,
}

impl HeapSample {
    /// Bytes allocated and not freed: `self_max` for a dump at the peak,
    /// else `allocated - freed`.
    pub fn unreleased(&self) -> u64 {
        self.self_max
            .unwrap_or_else(|| self.allocated.saturating_sub(self.freed))
    }

    /// Allocations not freed.
    pub fn live_count(&self) -> u64 {
        self.alloc_count.saturating_sub(self.free_count)
    }
}

/// `ProcessHeapSamples`' flags: what went wrong while profiling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapDumpFlags {
    /// Profiled from the process's start.
    pub from_startup: bool,
    /// Not profiled: another session profiles the process.
    pub rejected_concurrent: bool,
    /// The process went away (or disconnected) before the dump.
    pub disconnected: bool,
    /// Records were lost: the client's buffer was full.
    pub buffer_overran: bool,
    /// `ProcessHeapSamples.ClientError` as a number (0: none).
    pub client_error: i32,
    /// The record stream was found corrupted.
    pub buffer_corrupted: bool,
    /// A guardrail (CPU or memory) stopped the profile.
    pub hit_guardrail: bool,
}

impl HeapDumpFlags {
    /// The flags that are set, by their field names (`client_error` with
    /// its value's name); `from_startup` is not a problem and not listed.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (set, name) in [
            (self.rejected_concurrent, "rejected_concurrent"),
            (self.disconnected, "disconnected"),
            (self.buffer_overran, "buffer_overran"),
            (self.buffer_corrupted, "buffer_corrupted"),
            (self.hit_guardrail, "hit_guardrail"),
        ] {
            if set {
                out.push(name.to_owned());
            }
        }
        if self.client_error != 0 {
            out.push(format!(
                "client_error {}",
                client_error_name(self.client_error)
            ));
        }
        out
    }
}

/// `CLIENT_ERROR_...` name of a `ProcessHeapSamples.ClientError` number.
pub fn client_error_name(v: i32) -> String {
    match v {
        0 => "CLIENT_ERROR_NONE".to_owned(),
        1 => "CLIENT_ERROR_HIT_TIMEOUT".to_owned(),
        2 => "CLIENT_ERROR_INVALID_STACK_BOUNDS".to_owned(),
        n => format!("ClientError({n})"),
    }
}

/// `ProcessStats` of a dump: the profiler's own accounting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeapDumpStats {
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
}

/// One process's heap in one dump, its callstacks resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapDump {
    /// When the books were taken (`ProcessHeapSamples.timestamp`, else the
    /// packet's timestamp; BOOTTIME ns).
    pub ts: u64,
    /// `trusted_packet_sequence_id`.
    pub sequence: u32,
    /// The process.
    pub pid: u64,
    /// The heap's name (`libc.malloc`, `rust`, ...; empty when unnamed).
    pub heap_name: String,
    /// The sampling interval in force (after adaptive sampling), bytes.
    pub sampling_interval_bytes: u64,
    /// The interval configured, bytes.
    pub orig_sampling_interval_bytes: u64,
    /// What went wrong.
    pub flags: HeapDumpFlags,
    /// The profiler's stats, when the dump has them.
    pub stats: Option<HeapDumpStats>,
    /// One line per callstack.
    pub samples: Vec<HeapSample>,
    /// The dump never closed (see the module's documentation).
    pub unfinished: bool,
}

impl HeapDump {
    /// The heap's name for people: `(unnamed heap)` when empty.
    pub fn heap_label(&self) -> &str {
        if self.heap_name.is_empty() {
            "(unnamed heap)"
        } else {
            &self.heap_name
        }
    }

    /// Sums of the samples: (allocated, freed, alloc_count, free_count).
    pub fn totals(&self) -> (u64, u64, u64, u64) {
        self.samples.iter().fold((0, 0, 0, 0), |t, s| {
            (
                t.0.saturating_add(s.allocated),
                t.1.saturating_add(s.freed),
                t.2.saturating_add(s.alloc_count),
                t.3.saturating_add(s.free_count),
            )
        })
    }

    /// Bytes not freed, summed over the samples ([`HeapSample::unreleased`]).
    pub fn unreleased(&self) -> u64 {
        self.samples
            .iter()
            .fold(0u64, |t, s| t.saturating_add(s.unreleased()))
    }
}

/// What the trace's heap dumps add up to, losses included.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HeapCounts {
    /// Dumps read (one per process and heap and dump).
    pub dumps: u64,
    /// Samples read.
    pub samples: u64,
    /// Samples whose callstack does not resolve.
    pub unresolved: u64,
    /// Those samples by the kind of the first id that did not resolve.
    pub unresolved_by_kind: BTreeMap<&'static str, u64>,
    /// Dumps that never closed: resolved with what was defined.
    pub unfinished: u64,
    /// `ProfilePacket`s missing: gaps in a sequence's `index`.
    pub missing_packets: u64,
    /// Processes not profiled because another session profiles them.
    pub rejected: u64,
    /// `ProfilePacket`s in the old format (tables inside the packet, not
    /// `interned_data`), which this reader does not read.
    pub legacy_packets: u64,
    /// `ProfilePacket`s dropped because they need incremental state their
    /// sequence did not have (`SEQ_NEEDS_INCREMENTAL_STATE` on a sequence
    /// never cleared, or after a loss).
    pub packets_without_state: u64,
    /// Malformed messages left out (a `ProfilePacket`, `process_dumps`
    /// entry or `HeapSample` that does not decode).
    pub malformed: u64,
}

/// One `process_dumps` entry as read, its samples' callstacks still iids.
#[derive(Debug)]
struct RawEntry {
    ts: u64,
    pid: u64,
    heap_name: String,
    sampling_interval_bytes: u64,
    orig_sampling_interval_bytes: u64,
    flags: HeapDumpFlags,
    stats: Option<HeapDumpStats>,
    samples: Vec<HeapSample>,
}

impl RawEntry {
    /// Whether `other` continues this entry: the same process, heap and
    /// time (heapprofd repeats the header in each packet of a split dump).
    fn same_heap(&self, other: &RawEntry) -> bool {
        self.pid == other.pid && self.heap_name == other.heap_name && self.ts == other.ts
    }
}

/// Heap dumps being read, per sequence, and those read.
#[derive(Debug, Default)]
pub(crate) struct HeapReader {
    /// Per sequence, the entries of its open dump.
    open: HashMap<u32, Vec<RawEntry>>,
    /// Per sequence, the `index` expected next.
    next_index: HashMap<u32, u64>,
    pub(crate) dumps: Vec<HeapDump>,
    pub(crate) counts: HeapCounts,
}

fn stats_of(s: &ProcessStatsDecoder<'_>) -> HeapDumpStats {
    HeapDumpStats {
        unwinding_errors: s.unwinding_errors().unwrap_or(0),
        heap_samples: s.heap_samples().unwrap_or(0),
        map_reparses: s.map_reparses().unwrap_or(0),
        total_unwinding_time_us: s.total_unwinding_time_us().unwrap_or(0),
        client_spinlock_blocked_us: s.client_spinlock_blocked_us().unwrap_or(0),
    }
}

impl HeapReader {
    /// Takes in a packet's encoded `ProfilePacket` (`packet` is the
    /// packet's number, `ts` its timestamp); returns whether it closes the
    /// sequence's dump (the caller then calls [`HeapReader::close`] with
    /// the sequence's interning, after taking in the packet's own
    /// `interned_data`).
    pub(crate) fn push(&mut self, sequence: u32, packet: u64, ts: u64, encoded: &[u8]) -> bool {
        let pp = ProfilePacketDecoder::new(encoded);
        if pp.decode_error().is_some() {
            self.counts.malformed += 1;
        }
        if pp.has_strings() || pp.has_mappings() || pp.has_frames() || pp.has_callstacks() {
            self.counts.legacy_packets += 1;
        }
        if let Some(index) = pp.index() {
            let expected = self.next_index.get(&sequence).copied();
            if let Some(e) = expected.filter(|&e| index > e) {
                self.counts.missing_packets = self.counts.missing_packets.saturating_add(index - e);
            }
            self.next_index.insert(sequence, index.saturating_add(1));
        }
        let open = self.open.entry(sequence).or_default();
        for bytes in pp.process_dumps_bytes() {
            let d = ProcessHeapSamplesDecoder::new(bytes);
            if d.decode_error().is_some() {
                self.counts.malformed += 1;
                continue;
            }
            let flags = HeapDumpFlags {
                from_startup: d.from_startup().unwrap_or(false),
                rejected_concurrent: d.rejected_concurrent().unwrap_or(false),
                disconnected: d.disconnected().unwrap_or(false),
                buffer_overran: d.buffer_overran().unwrap_or(false),
                client_error: d.client_error_raw().unwrap_or(0),
                buffer_corrupted: d.buffer_corrupted().unwrap_or(false),
                hit_guardrail: d.hit_guardrail().unwrap_or(false),
            };
            let mut samples = Vec::new();
            for sb in d.samples_bytes() {
                let s = HeapSampleDecoder::new(sb);
                if s.decode_error().is_some() {
                    self.counts.malformed += 1;
                    continue;
                }
                samples.push(HeapSample {
                    stack: Vec::new(),
                    callstack_iid: s.callstack_id().unwrap_or(0),
                    unresolved: None,
                    allocated: s.self_allocated().unwrap_or(0),
                    freed: s.self_freed().unwrap_or(0),
                    alloc_count: s.alloc_count().unwrap_or(0),
                    free_count: s.free_count().unwrap_or(0),
                    self_max: s.self_max(),
                    packet,
                });
            }
            let entry = RawEntry {
                ts: d.timestamp().unwrap_or(ts),
                pid: d.pid().unwrap_or(0),
                heap_name: d.heap_name().unwrap_or_default().to_owned(),
                sampling_interval_bytes: d.sampling_interval_bytes().unwrap_or(0),
                orig_sampling_interval_bytes: d.orig_sampling_interval_bytes().unwrap_or(0),
                flags,
                stats: d.stats().map(|s| stats_of(&s)),
                samples,
            };
            match open.last_mut() {
                Some(last) if last.same_heap(&entry) => {
                    last.samples.extend(entry.samples);
                    // The latest header wins (its stats are the newest).
                    last.flags = entry.flags;
                    last.stats = entry.stats.or(last.stats.take());
                }
                _ => open.push(entry),
            }
        }
        pp.continued() != Some(true)
    }

    /// Whether `sequence` has a dump open.
    pub(crate) fn is_open(&self, sequence: u32) -> bool {
        self.open.get(&sequence).is_some_and(|o| !o.is_empty())
    }

    /// Closes `sequence`'s dump: its samples' callstacks resolved through
    /// `seq` into `tables`. `unfinished`: no closing packet was seen.
    pub(crate) fn close(
        &mut self,
        sequence: u32,
        seq: &mut Sequence,
        tables: &mut Tables,
        unfinished: bool,
    ) {
        let Some(entries) = self.open.remove(&sequence) else {
            return;
        };
        for e in entries {
            let mut samples = e.samples;
            for s in &mut samples {
                self.counts.samples += 1;
                match seq.resolve(s.callstack_iid, tables) {
                    Ok(frames) => s.stack = frames.to_vec(),
                    Err(u) => {
                        self.counts.unresolved += 1;
                        *self.counts.unresolved_by_kind.entry(u.kind()).or_default() += 1;
                        s.unresolved = Some(u);
                    }
                }
            }
            self.counts.dumps += 1;
            if e.flags.rejected_concurrent {
                self.counts.rejected += 1;
            }
            if unfinished {
                self.counts.unfinished += 1;
            }
            self.dumps.push(HeapDump {
                ts: e.ts,
                sequence,
                pid: e.pid,
                heap_name: e.heap_name,
                sampling_interval_bytes: e.sampling_interval_bytes,
                orig_sampling_interval_bytes: e.orig_sampling_interval_bytes,
                flags: e.flags,
                stats: e.stats,
                samples,
                unfinished,
            });
        }
    }

    /// The sequences with a dump open.
    pub(crate) fn open_sequences(&self) -> Vec<u32> {
        let mut s: Vec<u32> = self
            .open
            .iter()
            .filter(|(_, o)| !o.is_empty())
            .map(|(k, _)| *k)
            .collect();
        s.sort_unstable();
        s
    }
}

/// Which value of a heap sample a view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapValue {
    /// Bytes allocated and not freed ([`HeapSample::unreleased`]).
    Unreleased,
    /// Bytes allocated, freed or not.
    Total,
    /// Allocations made, freed or not.
    Count,
}

impl HeapValue {
    /// The sample's value.
    pub fn of(self, s: &HeapSample) -> u64 {
        match self {
            HeapValue::Unreleased => s.unreleased(),
            HeapValue::Total => s.allocated,
            HeapValue::Count => s.alloc_count,
        }
    }

    /// Its unit: `bytes` or `allocations`.
    pub fn unit(self) -> &'static str {
        match self {
            HeapValue::Unreleased | HeapValue::Total => "bytes",
            HeapValue::Count => "allocations",
        }
    }

    /// What it is, for titles: `unreleased bytes`, ...
    pub fn describe(self) -> &'static str {
        match self {
            HeapValue::Unreleased => "unreleased bytes (allocated, not freed)",
            HeapValue::Total => "allocated bytes (freed or not)",
            HeapValue::Count => "allocations (freed or not)",
        }
    }
}
