//! `/proc` and `/sys` files as typed values: every line and field parsed
//! with bounds checks, a typed error for what does not parse, and the
//! `process_tree`, `process_stats`, `sys_stats` and `cpu_info` packets
//! built from them.
//!
//! Reading and parsing are separate: each parser takes the bytes of one
//! file (so tests and fuzzers feed it anything), and [`ProcRoot`] reads
//! files under a root directory, `/` on a live system or a fixture tree in
//! tests, never more than a per-file cap. The packet builders in
//! [`packets`] take parsed values only (no I/O).

pub mod buddyinfo;
pub mod cmdline;
pub mod config;
pub mod cpufreq;
pub mod cpuidle;
pub mod cpuinfo;
pub mod devfreq;
pub mod diskstats;
pub mod meminfo;
pub mod packets;
pub mod pid_stat;
pub mod pid_status;
pub mod psi;
pub mod sample;
pub mod smaps_rollup;
pub mod stat;
pub mod thermal;
pub mod vmstat;
pub mod walk;

/// Where `/proc` and `/sys` are read from, and why a file could not be
/// read or parsed: kept with the unwinder, which reads `/proc` too.
pub use zerotrace_unwind::{ProcError, ProcRoot};
/// `ProcRoot` and its per-file cap.
pub mod root {
    pub use zerotrace_unwind::proc_root::{DEFAULT_CAP, ProcRoot};
}

/// Splits `text` into lines of the form `key<sep>rest`, trimming both;
/// lines without `sep` are skipped.
pub(crate) fn key_values(text: &str, sep: char) -> impl Iterator<Item = (&str, &str)> {
    text.lines().filter_map(move |l| {
        let (k, v) = l.split_once(sep)?;
        Some((k.trim(), v.trim()))
    })
}

/// The first whitespace-separated word of `value` as a `u64`.
pub(crate) fn first_u64(value: &str) -> Option<u64> {
    value.split_whitespace().next()?.parse().ok()
}
