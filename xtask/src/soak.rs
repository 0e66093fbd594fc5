//! `cargo xtask soak`: the long soak of issue #22. Builds the soak programs
//! of `zerotrace-interop` (release; the first build of a target directory
//! compiles Perfetto's service from the amalgamation) and runs its `soak`
//! runner: producer processes write into a ring-buffer session of
//! `zerotraced`, then of Perfetto's genuine service, while a consumer reads
//! it every second; it prints each service's resident set over time, the
//! packet counts and losses, and the two side by side.

use std::path::Path;
use std::process::Command;

/// What to soak (`None`: the runner's default).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `ours`, `genuine` or `both`.
    pub which: Option<String>,
    /// Producer processes.
    pub producers: Option<u32>,
    /// Writer threads per producer.
    pub threads: Option<u32>,
    /// Seconds of writing.
    pub seconds: Option<f64>,
    /// Packets a second per thread (0: unpaced).
    pub rate: Option<u32>,
    /// Ring buffer size in KiB.
    pub buffer_kb: Option<u32>,
    /// Writing samples per table row.
    pub table_step: Option<u32>,
}

/// Builds and runs the soak; `Ok(false)` when a check failed.
pub fn run(root: &Path, opts: &Options) -> Result<bool, String> {
    run_interop_bin(
        root,
        "soak",
        &[
            ("which", opts.which.clone()),
            ("producers", opts.producers.map(|v| v.to_string())),
            ("threads", opts.threads.map(|v| v.to_string())),
            ("seconds", opts.seconds.map(|v| v.to_string())),
            ("rate", opts.rate.map(|v| v.to_string())),
            ("buffer-kb", opts.buffer_kb.map(|v| v.to_string())),
            ("table-step", opts.table_step.map(|v| v.to_string())),
        ],
    )
}

/// Builds `zerotrace-interop`'s programs (release) and runs `bin` with the
/// `flags` that have a value (`--name value`); whether it succeeded. The
/// soak's and the scale sweep's runners start their sibling programs, so
/// all are built first.
pub fn run_interop_bin(
    root: &Path,
    bin: &str,
    flags: &[(&str, Option<String>)],
) -> Result<bool, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(&cargo)
        .current_dir(root)
        .args(["build", "--release", "-p", "zerotrace-interop", "--bins"])
        .status()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !build.success() {
        return Ok(false);
    }
    let mut args: Vec<String> = [
        "run",
        "--release",
        "-p",
        "zerotrace-interop",
        "--bin",
        bin,
        "--",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (name, value) in flags {
        if let Some(v) = value {
            args.push(format!("--{name}"));
            args.push(v.clone());
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
