//! `cargo xtask tp-bench [TRACE]`: the trace processor's performance
//! figures (issue 49) in one run, by its bench program
//! (`tracing-core/trace-processor/examples/tp_bench.rs`, release): load
//! throughput, the split into tokenize + sort + parse + table build, the
//! scanner floor and the ratio to it, peak memory against the trace's
//! size, and the standard queries with their plans. Without TRACE it loads
//! `cargo xtask tp-data`'s trace, recording it first when missing.

use std::path::{Path, PathBuf};

use crate::tp_data;

/// What to measure.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The trace (default: tp-data's).
    pub trace: Option<PathBuf>,
    /// Loads timed (default: the program's).
    pub runs: Option<u32>,
}

/// Runs the bench; `Ok(false)` when the program failed.
pub fn run(root: &Path, opts: &Options) -> Result<bool, String> {
    let trace = match &opts.trace {
        Some(t) => t.clone(),
        None => {
            let t = tp_data::default_trace(root);
            if !t.exists() {
                println!("tp-bench: {} is missing; recording it", t.display());
                tp_data::run(root, &tp_data::Options::default())?
            } else {
                t
            }
        }
    };
    let mut c = tp_data::bench_program(root);
    if let Some(n) = opts.runs {
        c.arg("--runs").arg(n.to_string());
    }
    c.arg(&trace);
    let status = c.status().map_err(|e| format!("running cargo: {e}"))?;
    Ok(status.success())
}
