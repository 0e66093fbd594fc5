//! `zerotrace flamegraph`: the CPU samples of a trace (Perfetto's
//! `linux.perf` data source) as an interactive flame graph, an SVG any
//! browser opens (hover for counts, click to zoom, search), drawn by the
//! `inferno` crate from the samples' folded stacks (root at the bottom).
//! Samples may be narrowed to a process, a thread and a time window.
//!
//! With `--heap`, the trace's heap dumps (`android.heapprofd`) instead:
//! the last dump of each process and heap (dumps are cumulative), each
//! stack's unreleased bytes, allocated bytes, or allocations; `--pid`
//! narrows them to a process.

use std::path::PathBuf;

use zerotrace_trace_processor::profile_view::{
    Filter, Folded, HeapValue, Profile, folded, heap_folded,
};

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
    /// Only samples (with --heap, heap dumps) of this process.
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
    /// The title drawn at the top [default: "CPU samples of TRACE", or
    /// with --heap "Heap profile of TRACE: ..."].
    #[arg(long)]
    pub title: Option<String>,
    /// Draw the heap dumps (android.heapprofd) instead of CPU samples: the
    /// last dump of each process and heap, by bytes allocated and not
    /// freed (`unreleased`), bytes allocated (`total`) or allocations
    /// (`count`).
    #[arg(long, value_enum, value_name = "VIEW", conflicts_with_all = ["tid", "from", "to"])]
    pub heap: Option<HeapView>,
}

/// What `--heap` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HeapView {
    /// Bytes allocated and not freed (at the peak, for dumps at the peak).
    Unreleased,
    /// Bytes allocated, freed or not.
    Total,
    /// Allocations, freed or not.
    Count,
}

impl HeapView {
    fn value(self) -> HeapValue {
        match self {
            HeapView::Unreleased => HeapValue::Unreleased,
            HeapView::Total => HeapValue::Total,
            HeapView::Count => HeapValue::Count,
        }
    }
}

/// The heap dumps' folded stacks, or why there is nothing to draw.
fn heap_stacks(
    name: &str,
    profile: &Profile,
    pid: Option<u32>,
    value: HeapValue,
) -> Result<Folded, CliError> {
    let stacks = heap_folded(profile, pid.map(u64::from), value);
    if stacks.stacks.is_empty() {
        let dumps = profile.heap_dumps().len();
        let what = if dumps == 0 {
            "holds no heap dumps (android.heapprofd's profile_packet packets)".to_owned()
        } else {
            format!(
                "holds {dumps} heap dumps, but no {} on a callstack that resolves{}",
                value.unit(),
                if pid.is_some() {
                    " in the last dumps of the process --pid names"
                } else {
                    " in the last dump of each process and heap"
                }
            )
        };
        return Err(CliError::Usage(format!("{name} {what}: nothing to draw")));
    }
    Ok(stacks)
}

/// Runs `flamegraph`.
pub fn run(args: &FlamegraphArgs) -> Result<(), CliError> {
    let name = args.trace.display().to_string();
    let bytes = read_input(&args.trace)?;
    let profile = cpu_profile(&name, &bytes)?;
    if let Some(view) = args.heap {
        let value = view.value();
        let stacks = heap_stacks(&name, &profile, args.pid, value)?;
        let title = args
            .title
            .clone()
            .unwrap_or_else(|| format!("Heap profile of {name}: {}", value.describe()));
        return draw(args, &stacks, title, value.unit(), " samples with a value");
    }
    if profile.samples().is_empty() && !profile.heap_dumps().is_empty() {
        return Err(CliError::Usage(format!(
            "{name} holds no CPU samples but {} heap dumps (android.heapprofd): draw them \
             with --heap unreleased|total|count",
            profile.heap_dumps().len()
        )));
    }
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
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("CPU samples of {name}"));
    draw(args, &stacks, title, "samples", "")
}

/// Draws `stacks` into the output file; `count_name` is what the numbers
/// count; `kept` qualifies the samples left out in the note on stderr.
fn draw(
    args: &FlamegraphArgs,
    stacks: &Folded,
    title: String,
    count_name: &str,
    kept: &str,
) -> Result<(), CliError> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title;
    opts.count_name = count_name.into();
    opts.hash = true;
    opts.deterministic = true;
    let lines = stacks.lines();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| CliError::io(args.output.display(), e))?;
    write_output(&args.output, &svg, false)?;
    if stacks.without_stack > 0 {
        eprintln!(
            "zerotrace: {}: {} {count_name} drawn; {}{kept} without a callstack that resolves \
             left out (`zerotrace stats` says why)",
            args.output.display(),
            stacks.samples(),
            stacks.without_stack,
        );
    }
    Ok(())
}
