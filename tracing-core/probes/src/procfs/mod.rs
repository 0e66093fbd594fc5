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
pub mod root;
pub mod sample;
pub mod smaps_rollup;
pub mod stat;
pub mod thermal;
pub mod vmstat;
pub mod walk;

pub use root::ProcRoot;

use std::path::PathBuf;

/// Why a `/proc` or `/sys` file could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    /// The file could not be opened or read (a process that exited
    /// meanwhile shows up as [`std::io::ErrorKind::NotFound`] or `ESRCH`;
    /// see [`ProcError::is_gone`]).
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than the cap its reader allows.
    #[error("{path} is larger than its {cap}-byte cap")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The cap, in bytes.
        cap: usize,
    },
    /// The contents do not have the expected shape.
    #[error("{file}: {detail}")]
    Malformed {
        /// Which kind of file (`/proc/PID/stat`, `/proc/meminfo`, ...).
        file: &'static str,
        /// What was wrong.
        detail: String,
    },
}

impl ProcError {
    /// Whether the error means the file's process or thread no longer
    /// exists (it exited between listing and reading), which a scan skips.
    pub fn is_gone(&self) -> bool {
        const ESRCH: i32 = 3;
        match self {
            ProcError::Io { source, .. } => {
                source.kind() == std::io::ErrorKind::NotFound
                    || source.raw_os_error() == Some(ESRCH)
            }
            _ => false,
        }
    }

    pub(crate) fn malformed(file: &'static str, detail: impl Into<String>) -> Self {
        ProcError::Malformed {
            file,
            detail: detail.into(),
        }
    }
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
