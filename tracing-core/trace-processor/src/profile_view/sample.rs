//! A CPU sample as the views see it, with its callstack as frame indices,
//! and the counts that say what a trace lost or could not resolve. Enum
//! values are kept as numbers (a trace may carry values newer than our
//! schema) and named here.

use std::collections::BTreeMap;

use zerotrace_protos::protos::perf_events::Counter;
use zerotrace_protos::protos::perf_sample::SampleSkipReason;
use zerotrace_protos::protos::profiling::{CpuMode, StackUnwindError};

pub use crate::storage::profile_facts::Timebase;
use crate::storage::profile_facts::Unresolved;

/// One CPU sample (`TracePacket.perf_sample` with a callstack, or none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// When it was taken, on the trace clock (BOOTTIME unless the trace
    /// said otherwise).
    pub ts: u64,
    /// `trusted_packet_sequence_id`.
    pub sequence: u32,
    /// Which packet held it: its index among the trace's packets
    /// (`compressed_packets` expanded), as [`crate::packets::packets`]
    /// lists them.
    pub packet: u64,
    /// The CPU it was taken on.
    pub cpu: Option<u32>,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// `Profiling.CpuMode` as a number (see [`cpu_mode_name`]).
    pub cpu_mode: i32,
    /// The timebase counter's value.
    pub timebase_count: Option<u64>,
    /// The callstack as frame indices of the profile, **root first, leaf
    /// last**; empty when the sample has none or it does not resolve.
    pub stack: Vec<usize>,
    /// `Profiling.StackUnwindError` as a number, when unwinding failed.
    pub unwind_error: Option<i32>,
    /// Why the callstack does not resolve, if it does not.
    pub unresolved: Option<Unresolved>,
    /// How many samples this one stands for: 1 for a recorded sample, the
    /// value of an aggregated profile's sample (a pprof input's).
    pub weight: u64,
}

/// What the trace's `linux.perf` packets add up to, losses included.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Samples read (with or without a callstack).
    pub samples: u64,
    /// Samples without `callstack_iid`.
    pub without_callstack: u64,
    /// Samples whose callstack does not resolve.
    pub unresolved: u64,
    /// Those samples by the kind of the first id that did not resolve.
    pub unresolved_by_kind: BTreeMap<&'static str, u64>,
    /// Kernel records lost (`kernel_records_lost`, summed).
    pub kernel_records_lost: u64,
    /// Samples the recorder skipped, by `SampleSkipReason` name.
    pub skipped: BTreeMap<String, u64>,
    /// Samples whose unwinding failed, by `StackUnwindError` name.
    pub unwind_errors: BTreeMap<String, u64>,
    /// `producer_event`s: the data source stopped (by reason name).
    pub producer_events: BTreeMap<String, u64>,
    /// Packets dropped because they need incremental state their sequence
    /// did not have (never cleared, or invalidated by a loss).
    pub packets_without_state: u64,
    /// Malformed entries left out: undecodable `perf_sample`s, interned
    /// entries without an iid, `ModuleSymbols` entries without an address
    /// or lines.
    pub malformed: u64,
}

impl Timebase {
    /// Nanoseconds of CPU time one sample stands for: the period of a
    /// `SW_CPU_CLOCK` timebase sampled by period (the cpu-clock counts
    /// nanoseconds); `None` for any other timebase.
    pub fn cpu_ns_per_sample(&self) -> Option<u64> {
        (self.counter == Some(Counter::SwCpuClock.as_i32()))
            .then_some(self.period)
            .flatten()
            .filter(|&p| p > 0)
    }
}

/// `MODE_USER`-style name of a `Profiling.CpuMode` number.
pub fn cpu_mode_name(v: i32) -> String {
    CpuMode::from_i32(v).map_or_else(|| format!("CpuMode({v})"), |m| m.as_str_name().to_owned())
}

/// `UNWIND_ERROR_...` name of a `Profiling.StackUnwindError` number.
pub fn unwind_error_name(v: i32) -> String {
    StackUnwindError::from_i32(v).map_or_else(
        || format!("StackUnwindError({v})"),
        |e| e.as_str_name().to_owned(),
    )
}

/// `PROFILER_SKIP_...` name of a `SampleSkipReason` number.
pub fn skip_reason_name(v: i32) -> String {
    SampleSkipReason::from_i32(v).map_or_else(
        || format!("SampleSkipReason({v})"),
        |r| r.as_str_name().to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_known_and_unknown_values() {
        assert_eq!(cpu_mode_name(2), "MODE_USER");
        assert_eq!(cpu_mode_name(77), "CpuMode(77)");
        assert_eq!(unwind_error_name(6), "UNWIND_ERROR_MAX_FRAMES_EXCEEDED");
        assert_eq!(skip_reason_name(3), "PROFILER_SKIP_UNWIND_ENQUEUE");
        assert_eq!(skip_reason_name(-1), "SampleSkipReason(-1)");
    }

    #[test]
    fn only_a_cpu_clock_period_is_cpu_time() {
        let t = |counter, period, frequency| Timebase {
            counter,
            period,
            frequency,
        };
        assert_eq!(
            t(Some(1), Some(1_000_000), None).cpu_ns_per_sample(),
            Some(1_000_000)
        );
        assert_eq!(t(Some(1), None, Some(100)).cpu_ns_per_sample(), None);
        assert_eq!(t(Some(2), Some(1000), None).cpu_ns_per_sample(), None);
        assert_eq!(t(None, Some(1000), None).cpu_ns_per_sample(), None);
    }
}
