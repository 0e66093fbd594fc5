//! `cargo xtask perf-cost`: issue #39's cost of `linux.perf` at 1 kHz per
//! CPU next to `perf record` at the same rate. Builds and runs the probes'
//! `perf_cost` example (release, `cargo run`): rounds of two CPU-bound
//! fixture programs unprofiled, sampled by our data source (DWARF), and
//! by `perf record --call-graph dwarf` read back by `perf script`; it
//! prints the workload's slowdown, each sampler's CPU time per sample, the
//! samples lost and the bytes per sample, as medians, and the ratios to
//! the goals. Needs root (perf events of every CPU), `perf` and `rustc`.

use std::path::Path;
use std::process::Command;

/// What to run (`None`: the example's default).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Rounds; the table takes medians.
    pub rounds: Option<u32>,
    /// Seconds each workload runs.
    pub seconds: Option<f64>,
    /// Our ring buffer's pages per CPU.
    pub pages: Option<u32>,
    /// Sampling frequency per CPU.
    pub frequency: Option<u64>,
}

/// Builds and runs the comparison; `Ok(false)` when a step failed.
pub fn run(root: &Path, opts: &Options) -> Result<bool, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut args: Vec<String> = [
        "run",
        "--release",
        "-p",
        "zerotrace-probes",
        "--example",
        "perf_cost",
        "--",
        "run",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let flags = [
        ("rounds", opts.rounds.map(|v| v.to_string())),
        ("seconds", opts.seconds.map(|v| v.to_string())),
        ("pages", opts.pages.map(|v| v.to_string())),
        ("frequency", opts.frequency.map(|v| v.to_string())),
    ];
    for (name, value) in flags {
        if let Some(v) = value {
            args.push(format!("--{name}"));
            args.push(v);
        }
    }
    println!("== cargo {}", args.join(" "));
    let status = Command::new(&cargo)
        .current_dir(root)
        .args(&args)
        .status()
        .map_err(|e| format!("running cargo: {e}"))?;
    Ok(status.success())
}
