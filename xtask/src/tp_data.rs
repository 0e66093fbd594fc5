//! `cargo xtask tp-data`: records the trace the trace processor's bench
//! (`cargo xtask tp-bench`) loads: TrackEvent from several threads, the
//! system probes with ftrace's scheduler events and `linux.perf`'s CPU
//! samples with callstacks, through zerotrace's own in-process service, by
//! the decode bench's recorder ([`crate::decode_data`]) sized for a target
//! byte count (default 200 MB), read at the end of the session; with
//! `--long-trace`, recorded as Perfetto records a long trace
//! (`write_into_file`, written every 2.5 s, flushed periodically:
//! [`record::LONG_TRACE`]) so that it carries the service's flush and
//! read-completed events the trace processor's sort window releases
//! packets on (not the default while that mode loses most of the probes'
//! packets). Written as `tp.pftrace` into
//! `$CARGO_TARGET_DIR/tp-bench-data/` (`target/` when unset) unless
//! `--out` names a directory; never committed. What it holds (packets per
//! kind) is printed by the bench program's `--composition`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::decode_data::record::{self, Size};

/// The trace's file name in its directory.
pub const FILE_NAME: &str = "tp.pftrace";
/// The default target size, MB (10^6 bytes).
pub const DEFAULT_MB: u64 = 200;

/// What to record and where.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The directory (default: see the module docs).
    pub out: Option<PathBuf>,
    /// The target size in MB (default [`DEFAULT_MB`]).
    pub mb: Option<u64>,
    /// Record as Perfetto records a long trace (`write_into_file` with
    /// periodic flushes and file writes, [`record::LONG_TRACE`]), so that
    /// the trace carries the service's flush and read-completed events the
    /// trace processor's sort window releases packets on. Not the default:
    /// in this mode most of the probes' packets are lost today (the
    /// periodic flushes are never acknowledged), which changes the
    /// trace's composition.
    pub long_trace: bool,
}

/// The directory the trace goes to when `--out` is not given.
pub fn default_dir(root: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    root.join(target).join("tp-bench-data")
}

/// The trace's path when `--out` is not given.
pub fn default_trace(root: &Path) -> PathBuf {
    default_dir(root).join(FILE_NAME)
}

/// Records the trace (in this process: the TrackEvent backend registers
/// once per process) and prints its size and composition; returns its
/// path.
pub fn run(root: &Path, opts: &Options) -> Result<PathBuf, String> {
    let dir = opts.out.clone().unwrap_or_else(|| default_dir(root));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mb = opts.mb.unwrap_or(DEFAULT_MB);
    let mut size = Size::for_bytes(mb * 1_000_000);
    if opts.long_trace {
        size.long_trace = Some(record::LONG_TRACE);
    }
    let long = size
        .long_trace
        .map(|l| {
            format!(
                ", written into the file every {} ms (flush_period_ms {})",
                l.file_write_period_ms, l.flush_period_ms
            )
        })
        .unwrap_or_default();
    println!(
        "tp-data: recording about {mb} MB: {} workers x {} frames of TrackEvent, the probes \
         (ftrace sched, process and sys stats) and linux.perf at 1 kHz, buffer {} MiB{long}",
        size.workers,
        size.frames,
        size.buffer_kb / 1024
    );
    let started = std::time::Instant::now();
    let trace = record::record(size)?;
    let path = dir.join(FILE_NAME);
    std::fs::write(&path, &trace).map_err(|e| format!("{}: {e}", path.display()))?;
    println!(
        "tp-data: {}: {} bytes ({:.1} MB), recorded in {:.1?}",
        path.display(),
        trace.len(),
        trace.len() as f64 / 1e6,
        started.elapsed()
    );
    if (trace.len() as u64) < mb * 1_000_000 {
        println!(
            "tp-data: below the {mb} MB asked for (the service dropped chunks, or fewer \
             probe events than expected)"
        );
    }
    drop(trace);
    composition(root, &path)?;
    Ok(path)
}

/// Prints what the trace holds, packets per kind, with the bench program
/// (release build).
pub fn composition(root: &Path, trace: &Path) -> Result<(), String> {
    let status = bench_program(root)
        .arg("--composition")
        .arg(trace)
        .status()
        .map_err(|e| format!("running cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the bench program failed ({status})"))
    }
}

/// `cargo run --release` of the trace processor's bench program
/// (`tracing-core/trace-processor/examples/tp_bench.rs`), its arguments
/// to follow.
pub fn bench_program(root: &Path) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut c = Command::new(cargo);
    c.current_dir(root).args([
        "run",
        "--quiet",
        "--release",
        "-p",
        "zerotrace-trace-processor",
        "--example",
        "tp_bench",
        "--",
    ]);
    c
}
