//! `cargo xtask scale`: issue 32's scale sweep. Builds the soak programs of
//! `zerotrace-interop` (release; the first build of a target directory
//! compiles Perfetto's service from the amalgamation) and runs its `scale`
//! runner: 1, 16, 64 and 256 producer processes, each at the same rate,
//! into one session of `zerotraced` and of Perfetto's genuine service in
//! turn; it prints both services' CPU per MB ingested and read, and writes
//! the plot (`target/scale/scale.svg` unless `--svg` says otherwise).

use std::path::Path;

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
    crate::soak::run_interop_bin(
        root,
        "scale",
        &[
            ("producers", opts.producers.clone()),
            ("seconds", opts.seconds.map(|v| v.to_string())),
            ("rate", opts.rate.map(|v| v.to_string())),
            ("repeat", opts.repeat.map(|v| v.to_string())),
            ("svg", opts.svg.clone()),
        ],
    )
}
