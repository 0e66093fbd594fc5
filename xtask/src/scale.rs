//! `cargo xtask scale`: issue 32's scale sweep. Builds the soak programs of
//! `zerotrace-interop` (release; the first build of a target directory
//! compiles Perfetto's service from the amalgamation) and runs its `scale`
//! runner: 1, 16, 64 and 256 producer processes, each at the same rate,
//! into one session of `zerotraced` and of Perfetto's genuine service in
//! turn; it prints both services' CPU per MB ingested and read, and writes
//! the plot (`target/scale/scale.svg` unless `--svg` says otherwise).

use std::path::Path;
use std::process::Command;

/// What to sweep (`None`: the runner's default).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Producer counts, comma-separated.
    pub producers: Option<String>,
    /// Seconds each run writes.
    pub seconds: Option<f64>,
    /// Packets a second per producer.
    pub rate: Option<u32>,
    /// Runs of each service per point.
    pub repeat: Option<u32>,
    /// Where the SVG goes.
    pub svg: Option<String>,
}

/// Builds and runs the sweep; `Ok(false)` when a run failed or lost data.
pub fn run(root: &Path, opts: &Options) -> Result<bool, String> {
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
        "scale",
        "--",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut flag = |name: &str, v: Option<String>| {
        if let Some(v) = v {
            args.push(format!("--{name}"));
            args.push(v);
        }
    };
    flag("producers", opts.producers.clone());
    flag("seconds", opts.seconds.map(|v| v.to_string()));
    flag("rate", opts.rate.map(|v| v.to_string()));
    flag("repeat", opts.repeat.map(|v| v.to_string()));
    flag("svg", opts.svg.clone());
    println!("== cargo {}", args.join(" "));
    let status = Command::new(&cargo)
        .current_dir(root)
        .args(&args)
        .status()
        .map_err(|e| format!("running cargo: {e}"))?;
    Ok(status.success())
}
