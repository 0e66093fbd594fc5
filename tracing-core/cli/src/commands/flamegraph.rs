//! `zerotrace flamegraph`: the CPU samples of a trace (Perfetto's
//! `linux.perf` data source) as an interactive flame graph, an SVG any
//! browser opens (hover for counts, click to zoom, search), drawn by the
//! `inferno` crate from the samples' folded stacks (root at the bottom).
//! Samples may be narrowed to a process, a thread and a time window.

use std::path::PathBuf;

use crate::profile::{Filter, folded};

use super::trace_reader::cpu_profile;
use super::{CliError, read_input, write_output};

/// `zerotrace flamegraph`'s arguments.
#[derive(Debug, clap::Args)]
pub struct FlamegraphArgs {
    /// The trace file (`-` for stdin).
    pub trace: PathBuf,
    /// The SVG to write (`-` for stdout).
    #[arg(short, long, default_value = "flamegraph.svg")]
    pub output: PathBuf,
    /// Only samples of this process.
    #[arg(long)]
    pub pid: Option<u32>,
    /// Only samples of this thread.
    #[arg(long)]
    pub tid: Option<u32>,
    /// Only samples at or after this timestamp (ns, the trace's clock).
    #[arg(long, value_name = "NS")]
    pub from: Option<u64>,
    /// Only samples at or before this timestamp (ns, the trace's clock).
    #[arg(long, value_name = "NS")]
    pub to: Option<u64>,
    /// The title drawn at the top [default: "CPU samples of TRACE"].
    #[arg(long)]
    pub title: Option<String>,
}

/// Runs `flamegraph`.
pub fn run(args: &FlamegraphArgs) -> Result<(), CliError> {
    let name = args.trace.display().to_string();
    let bytes = read_input(&args.trace)?;
    let profile = cpu_profile(&name, &bytes)?;
    let filter = Filter {
        pid: args.pid,
        tid: args.tid,
        from: args.from,
        to: args.to,
    };
    let stacks = folded(&profile, &filter);
    if stacks.stacks.is_empty() {
        let what = if profile.samples().is_empty() {
            "holds no CPU samples (linux.perf's perf_sample packets)".to_owned()
        } else {
            format!(
                "holds {} CPU samples, none with a callstack that resolves{}",
                profile.samples().len(),
                if filter == Filter::default() {
                    ""
                } else {
                    " among those --pid/--tid/--from/--to keep"
                }
            )
        };
        return Err(CliError::Usage(format!("{name} {what}: nothing to draw")));
    }
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("CPU samples of {name}"));
    opts.count_name = "samples".into();
    opts.hash = true;
    opts.deterministic = true;
    let lines = stacks.lines();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| CliError::io(args.output.display(), e))?;
    write_output(&args.output, &svg, false)?;
    if stacks.without_stack > 0 {
        eprintln!(
            "zerotrace: {}: {} samples drawn; {} without a callstack that resolves left out \
             (`zerotrace stats` says why)",
            args.output.display(),
            stacks.samples(),
            stacks.without_stack
        );
    }
    Ok(())
}
