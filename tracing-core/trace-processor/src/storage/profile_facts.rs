//! What the profile views (`zerotrace flamegraph`, `convert --format
//! pprof`, the profiles' sections of `stats` and `dump`) print that
//! Perfetto's tables do not hold, gathered by the same parsers that fill
//! those tables, so a trace's samples and heap dumps are decoded once.
//!
//! Upstream keeps these as aggregate stats or not at all: why a callstack
//! did not resolve (only `stackprofile_invalid_*_id` counts), which packet
//! held a sample, a sequence's sampling timebase, the reasons a sample was
//! skipped or a data source stopped, and heapprofd's dumps as they were
//! written (running totals per callstack, each dump's flags and stats)
//! where `heap_profile_allocation` holds the changes between dumps. The
//! rows here point into the tables (`__intrinsic_profiler_sample`,
//! `stack_profile_callsite`) for everything the tables do hold. The counts
//! of losses are kept in every load; the samples and dumps only when asked
//! for.

use std::collections::BTreeMap;

/// Why a callstack does not resolve: the first iid that is not interned
/// on its sequence (inputs are untrusted; nothing here panics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unresolved {
    /// `callstack_iid` is not interned.
    #[error("callstack iid {0} is not interned")]
    Callstack(u64),
    /// A frame iid of the callstack is not interned.
    #[error("frame iid {0} is not interned")]
    Frame(u64),
    /// A frame's `mapping_id` is not interned.
    #[error("mapping iid {0} is not interned")]
    Mapping(u64),
    /// A frame's `function_name_id` is not interned.
    #[error("function name iid {0} is not interned")]
    FunctionName(u64),
    /// A mapping's `build_id` is not interned.
    #[error("build id iid {0} is not interned")]
    BuildId(u64),
    /// A mapping's path component is not interned.
    #[error("mapping path iid {0} is not interned")]
    MappingPath(u64),
    /// The callstack has no frames.
    #[error("callstack iid {0} has no frames")]
    EmptyCallstack(u64),
}

impl Unresolved {
    /// The kind of id, for counts (`"frame"`, `"mapping"`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Unresolved::Callstack(_) => "callstack",
            Unresolved::Frame(_) => "frame",
            Unresolved::Mapping(_) => "mapping",
            Unresolved::FunctionName(_) => "function name",
            Unresolved::BuildId(_) => "build id",
            Unresolved::MappingPath(_) => "mapping path",
            Unresolved::EmptyCallstack(_) => "empty callstack",
        }
    }
}

/// A CPU sample's facts beyond its `__intrinsic_profiler_sample` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfSampleFacts {
    /// Its row in `__intrinsic_profiler_sample` (`ProfilingRows::samples`).
    pub row: u32,
    /// `trusted_packet_sequence_id`.
    pub sequence: u32,
    /// Which packet held it: its index among the trace's packets
    /// (`compressed_packets` expanded), as [`crate::packets::packets`]
    /// lists them.
    pub packet: u64,
    /// The CPU, as the sample gave it.
    pub cpu: Option<u32>,
    /// `callstack_iid`, when the sample has one.
    pub callstack_iid: Option<u64>,
    /// Why the callstack does not resolve, if it does not.
    pub unresolved: Option<Unresolved>,
    /// The timebase counter's value.
    pub timebase_count: Option<u64>,
}

/// A sequence's sampling timebase (`PerfSampleDefaults.timebase`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timebase {
    /// `PerfEvents.Counter` as a number, if the timebase is a counter.
    pub counter: Option<i32>,
    /// Events per sample, when sampling by period.
    pub period: Option<u64>,
    /// Samples per second, when sampling by frequency.
    pub frequency: Option<u64>,
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

/// One callstack's line of a heap dump, as heapprofd wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapSampleFacts {
    /// `HeapSample.callstack_id`.
    pub callstack_iid: u64,
    /// Its callsite (`stack_profile_callsite`), once the dump closed.
    pub callsite: Option<u32>,
    /// Why the callstack does not resolve, if it does not.
    pub unresolved: Option<Unresolved>,
    /// `self_allocated`.
    pub allocated: u64,
    /// `self_freed`.
    pub freed: u64,
    /// `alloc_count`.
    pub alloc_count: u64,
    /// `free_count`.
    pub free_count: u64,
    /// `self_max`, for a dump at the heap's peak.
    pub self_max: Option<u64>,
    /// Which packet held it (see [`PerfSampleFacts::packet`]).
    pub packet: u64,
}

/// One process's heap in one dump (a `process_dumps` entry, continued
/// over the packets of a split dump).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapDumpFacts {
    /// `ProcessHeapSamples.timestamp` on the trace clock (raw when it does
    /// not convert), else the packet's time.
    pub ts: i64,
    /// `trusted_packet_sequence_id`.
    pub sequence: u32,
    /// The process.
    pub pid: u64,
    /// The heap's name (empty when unnamed).
    pub heap_name: String,
    /// The sampling interval in force, bytes.
    pub sampling_interval_bytes: u64,
    /// The interval configured, bytes.
    pub orig_sampling_interval_bytes: u64,
    /// What went wrong.
    pub flags: HeapDumpFlags,
    /// The profiler's stats, when the dump has them.
    pub stats: Option<HeapDumpStats>,
    /// One line per callstack.
    pub samples: Vec<HeapSampleFacts>,
    /// No closing packet was seen (the trace ended, or the sequence was
    /// cleared, first): resolved with what was defined.
    pub unfinished: bool,
}

impl HeapDumpFacts {
    /// Whether `other` continues this entry: the same process, heap and
    /// time (heapprofd repeats the header in each packet of a split dump).
    pub fn same_heap(&self, other: &HeapDumpFacts) -> bool {
        self.pid == other.pid && self.heap_name == other.heap_name && self.ts == other.ts
    }
}

/// Losses of the profiling packets that no stat of upstream's names.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProfileLosses {
    /// `perf_sample` packets dropped because their sequence's incremental
    /// state was invalid (part of
    /// `packet_skipped_seq_needs_incremental_state_invalid`).
    pub perf_packets_without_state: u64,
    /// `profile_packet` packets dropped likewise.
    pub heap_packets_without_state: u64,
    /// Samples skipped by the recorder, by `SampleSkipReason` number
    /// (upstream counts `perf_samples_skipped` without the reason).
    pub perf_skipped: BTreeMap<i32, u64>,
    /// `producer_event`s, by `DataSourceStopReason` number.
    pub perf_producer_events: BTreeMap<i32, u64>,
    /// Malformed profiling entries left out: undecodable `perf_sample`s,
    /// stack-profile `InternedData` entries without an iid, and
    /// `ModuleSymbols` entries without a path, an address or lines.
    pub perf_malformed: u64,
    /// `ProfilePacket`s missing: the sum of the gaps in each sequence's
    /// `index` (upstream's `heapprofd_missing_packet` counts gaps).
    pub heap_missing_packets: u64,
    /// `ProfilePacket`s with tables of their own (the old format; the
    /// trace processor resolves their callstacks through those tables).
    pub heap_legacy_packets: u64,
    /// Malformed heap messages left out (a `ProfilePacket`,
    /// `process_dumps` entry or `HeapSample` that does not decode).
    pub heap_malformed: u64,
}

/// Every fact of the profile views, for one trace. Gathered only when the
/// loader is asked to ([`crate::Loader::with_profile_facts`]): a load for
/// SQL alone keeps no copy of each sample.
#[derive(Debug, Default)]
pub struct ProfileFacts {
    /// Whether the samples and dumps are gathered.
    pub gathered: bool,
    /// CPU samples (`linux.perf`), in parse order.
    pub perf_samples: Vec<PerfSampleFacts>,
    /// Each perf sequence's latest timebase.
    pub perf_timebases: BTreeMap<u32, Timebase>,
    /// Heap dumps, in the order they closed.
    pub heap_dumps: Vec<HeapDumpFacts>,
    /// Losses no stat names.
    pub losses: ProfileLosses,
}
