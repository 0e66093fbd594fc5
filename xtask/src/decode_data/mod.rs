//! `cargo xtask decode-data`: records the decode bench's data sets
//! (`protos/decode-bench`), so that the bench itself depends on no crate
//! above `zerotrace-protos`. Each data set is a trace recorded through
//! zerotrace's in-process service: the TrackEvent [`workload`] and the
//! system [`probes`] (ftrace where tracefs can be had) in one session.
//!
//! Each is written as `NAME.pftrace` beside `NAME.size` (the recording's
//! size, `key value` lines the bench's tests check the trace against), by
//! default into `target/decode-bench-data/` (`$CARGO_TARGET_DIR` when set;
//! `$ZEROTRACE_DECODE_DATA` names the directory itself), where the bench,
//! its tests and its examples read them (`zerotrace_decode_bench::data`).

mod probes;
pub mod record;
mod workload;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use record::Size;

/// A data set: its file name and how much it records.
struct DataSet {
    name: &'static str,
    size: Size,
}

/// The data sets, by the names the bench reads: `recorded` for the bench
/// and its examples, `recorded-small` for its tests.
const DATA_SETS: [DataSet; 2] = [
    DataSet {
        name: "recorded",
        size: Size::BENCH,
    },
    DataSet {
        name: "recorded-small",
        size: Size::SMALL,
    },
];

/// What to record and where.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The directory (default: see the module docs).
    pub out: Option<PathBuf>,
    /// Only this data set (default: every one).
    pub only: Option<String>,
    /// How many times over the trace is written (traces concatenate; a
    /// larger file for timing the command-line tools). Default 1.
    pub copies: Option<usize>,
}

/// The directory the data sets go to when `--out` is not given, as the
/// bench finds it.
fn default_dir(root: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("ZEROTRACE_DECODE_DATA") {
        return PathBuf::from(dir);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    root.join(target).join("decode-bench-data")
}

/// Records the data sets asked for. The TrackEvent backend registers once
/// per process, so with more than one data set each is recorded by a child
/// process of this program (`decode-data --only NAME`).
pub fn run(root: &Path, opts: &Options) -> Result<(), String> {
    let dir = opts.out.clone().unwrap_or_else(|| default_dir(root));
    let copies = opts.copies.unwrap_or(1);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Some(only) = &opts.only {
        let set = DATA_SETS.iter().find(|s| s.name == only).ok_or_else(|| {
            let names: Vec<&str> = DATA_SETS.iter().map(|s| s.name).collect();
            format!("no data set {only}; there are {}", names.join(", "))
        })?;
        return write(&dir, set, copies);
    }
    let me = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    for set in &DATA_SETS {
        let status = Command::new(&me)
            .args(["decode-data", "--only", set.name, "--copies"])
            .arg(copies.to_string())
            .arg("--out")
            .arg(&dir)
            .status()
            .map_err(|e| format!("running {}: {e}", me.display()))?;
        if !status.success() {
            return Err(format!("recording {} failed ({status})", set.name));
        }
    }
    Ok(())
}

/// Records `set` in this process and writes it, `copies` times over, with
/// its size beside it.
fn write(dir: &Path, set: &DataSet, copies: usize) -> Result<(), String> {
    let started = std::time::Instant::now();
    let trace = record::record(set.size)?;
    let path = dir.join(format!("{}.pftrace", set.name));
    let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for _ in 0..copies {
        out.write_all(&trace)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    out.flush()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let Size {
        workers,
        frames,
        probes_ms,
        ..
    } = set.size;
    let size_path = dir.join(format!("{}.size", set.name));
    std::fs::write(
        &size_path,
        format!("workers {workers}\nframes {frames}\nprobes_ms {probes_ms}\ncopies {copies}\n"),
    )
    .map_err(|e| format!("{}: {e}", size_path.display()))?;
    println!(
        "{}: {} bytes ({copies} × {}), recorded in {:.2?}",
        path.display(),
        trace.len() * copies,
        trace.len(),
        started.elapsed()
    );
    Ok(())
}
