//! The CPU time and peak memory of one load, for traces in any format
//! (issue 65: Chrome JSON and `perf script` text, where the figure is CPU
//! time on one core, not wall time, since the machines the bench runs on
//! are shared): `--load-cost TRACE` loads the trace as
//! `TraceProcessor::open` does (the file read in 1 MiB chunks into
//! [`Loader::push`], then `finish`, then `from_storage`) and prints one
//! line with the CPU time of each step, summed over the process's threads
//! from `/proc/self/task/*/schedstat` (nanoseconds on a CPU, user and
//! system alike), and the resident set before and its high-water mark
//! after. Run once per process, so that the high-water mark is this load's.

use std::io::Read as _;
use std::path::Path;

use zerotrace_trace_processor::{Loader, TraceProcessor};

use crate::memory;

/// CPU time (ns) the process's threads have run so far.
fn cpu_ns() -> Result<u64, String> {
    let tasks = std::fs::read_dir("/proc/self/task").map_err(|e| format!("/proc: {e}"))?;
    let mut sum = 0u64;
    for t in tasks {
        let t = t.map_err(|e| format!("/proc: {e}"))?;
        let text = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
        if let Some(ns) = text
            .split_whitespace()
            .next()
            .and_then(|w| w.parse::<u64>().ok())
        {
            sum += ns;
        }
    }
    Ok(sum)
}

fn own_kb(key: &str) -> Result<u64, String> {
    let s = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc: {e}"))?;
    memory::status_kb(&s, key).ok_or_else(|| format!("no {key} in /proc/self/status"))
}

/// What one load cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// The trace's size in bytes.
    pub bytes: u64,
    /// CPU ns of the pushes (the file's reads included).
    pub push_ns: u64,
    /// CPU ns of `finish`.
    pub finish_ns: u64,
    /// CPU ns of `from_storage`.
    pub build_ns: u64,
    /// Resident KiB before the load.
    pub baseline_kb: u64,
    /// The high-water mark after `finish` (the loaded storage).
    pub finish_peak_kb: u64,
    /// The high-water mark after `from_storage` (KiB).
    pub peak_kb: u64,
}

impl Cost {
    /// The line printed.
    pub fn line(&self) -> String {
        format!(
            "cost bytes={} push_ns={} finish_ns={} build_ns={} baseline_kb={} finish_peak_kb={} peak_kb={}",
            self.bytes,
            self.push_ns,
            self.finish_ns,
            self.build_ns,
            self.baseline_kb,
            self.finish_peak_kb,
            self.peak_kb
        )
    }
}

/// Loads `trace` once and prints its [`Cost`] line.
pub fn run(trace: &Path) -> Result<(), String> {
    let baseline_kb = own_kb("VmRSS")?;
    let t0 = cpu_ns()?;
    let mut f = std::fs::File::open(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let mut loader = Loader::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        loader.push(&buf[..n]).map_err(|e| e.to_string())?;
    }
    drop(buf);
    let t1 = cpu_ns()?;
    let storage = loader.finish().map_err(|e| e.to_string())?;
    let t2 = cpu_ns()?;
    let finish_peak_kb = own_kb("VmHWM")?;
    let tp = TraceProcessor::from_storage(storage).map_err(|e| e.to_string())?;
    let t3 = cpu_ns()?;
    let cost = Cost {
        bytes,
        push_ns: t1 - t0,
        finish_ns: t2 - t1,
        build_ns: t3 - t2,
        baseline_kb,
        finish_peak_kb,
        peak_kb: own_kb("VmHWM")?,
    };
    println!("{}", cost.line());
    drop(tp);
    Ok(())
}
