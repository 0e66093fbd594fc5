//! Heap dumps as Perfetto's heapprofd writes them (data source
//! `android.heapprofd`), as the views see them: each process's heap in
//! each dump, its running totals per callstack as written, with the
//! callstacks as frame indices of the profile, root first, like CPU
//! samples'. The trace processor gathers them
//! (`HeapDumpFacts`, `storage/profile_facts.rs`) while it turns the
//! same packets into `heap_profile_allocation`'s changes between dumps.
//!
//! Dumps repeat (continuous dumps) and their totals are cumulative since
//! the profile began: the last dump of a process and heap holds the whole
//! picture ([`super::Profile::last_heap_dumps`]). Samples whose callstack
//! does not resolve stay, without a stack, and are counted in
//! [`HeapCounts`] with every other loss.

use std::collections::BTreeMap;

use crate::storage::profile_facts::Unresolved;
pub use crate::storage::profile_facts::{HeapDumpFlags, HeapDumpStats};

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
    /// Which packet held it: its index among the trace's packets
    /// (`compressed_packets` expanded), as [`crate::packets::packets`]
    /// lists them.
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

/// One process's heap in one dump, its callstacks resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapDump {
    /// When the books were taken (`ProcessHeapSamples.timestamp` on the
    /// trace clock, else the packet's time).
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
    /// `interned_data`); their callstacks resolve through those tables.
    pub legacy_packets: u64,
    /// `ProfilePacket`s dropped because they need incremental state their
    /// sequence did not have (`SEQ_NEEDS_INCREMENTAL_STATE` on a sequence
    /// never cleared, or after a loss).
    pub packets_without_state: u64,
    /// Malformed messages left out (a `ProfilePacket`, `process_dumps`
    /// entry or `HeapSample` that does not decode).
    pub malformed: u64,
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
