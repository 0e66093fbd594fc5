//! `zerotrace export TRACE... --format parquet -o DIR`: traces (files, or
//! directories of them) loaded in parallel, one per core as memory allows,
//! each written as a hive-partitioned Parquet dataset
//! (`DIR/TABLE/trace=ID/part-0.parquet`) that DuckDB, DataFusion, Spark or
//! Trino read as one table per name with a `trace` column. A trace that
//! does not load is named and the others still go out; the exit code then
//! says a trace was bad.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use zerotrace_trace_processor::TraceProcessor;
use zerotrace_trace_processor::parquet_export::{
    Compression, ExportOptions, ExportSummary, trace_ids,
};

use super::CliError;
use super::sql::load_error;
use super::trace_set::{available_memory, expand, human, parallel_loads, trace_bytes};

/// What `zerotrace export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Apache Parquet, one file per table and trace, hive-partitioned.
    Parquet,
}

/// The pages' compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportCompression {
    /// Snappy (what every reader reads).
    Snappy,
    /// None.
    None,
}

/// `zerotrace export`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Trace files, or directories standing for every file under them.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// The format written.
    #[arg(long, value_enum, default_value = "parquet")]
    pub format: ExportFormat,
    /// The dataset's directory (created if missing; other traces'
    /// partitions in it are left alone, this trace's replaced).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Write the internal tables (`__intrinsic_*`) too.
    #[arg(long)]
    pub internal: bool,
    /// The pages' compression.
    #[arg(long, value_enum, default_value = "snappy")]
    pub compression: ExportCompression,
    /// Traces loaded at once [default: one per core, fewer if memory is
    /// short].
    #[arg(short, long)]
    pub jobs: Option<usize>,
}

/// One trace's outcome.
struct Done {
    id: String,
    result: Result<ExportSummary, CliError>,
}

/// Runs the command.
pub fn run(args: &ExportArgs) -> Result<(), CliError> {
    let ExportFormat::Parquet = args.format;
    let paths = expand(&args.traces)?;
    let ids = trace_ids(&paths);
    let mut sizes = Vec::with_capacity(paths.len());
    for p in &paths {
        sizes.push((p.clone(), trace_bytes(p)?));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = parallel_loads(&sizes, args.jobs.unwrap_or(cores), available_memory())?;
    std::fs::create_dir_all(&args.output).map_err(|e| CliError::io(args.output.display(), e))?;
    let options = ExportOptions {
        internal: args.internal,
        compression: match args.compression {
            ExportCompression::Snappy => Compression::SNAPPY,
            ExportCompression::None => Compression::UNCOMPRESSED,
        },
        // Cores not loading a trace write tables of one.
        threads: (cores / jobs.max(1)).max(1),
    };

    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Done>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let (Some(path), Some(id)) = (paths.get(i), ids.get(i)) else {
                        break;
                    };
                    let t = Instant::now();
                    let result = TraceProcessor::open(path)
                        .map_err(|e| load_error(path, e))
                        .and_then(|tp| {
                            tp.export_parquet(&args.output, id, &options)
                                .map_err(|e| CliError::io(args.output.display(), e))
                        });
                    if let Ok(s) = &result {
                        eprintln!(
                            "{}: trace={id}: {} tables, {} rows, {} of Parquet, in {:.2} s",
                            path.display(),
                            s.files,
                            s.rows,
                            human(s.bytes),
                            t.elapsed().as_secs_f64()
                        );
                    }
                    if let Ok(mut d) = done.lock() {
                        d.push(Done {
                            id: id.clone(),
                            result,
                        });
                    }
                }
            });
        }
    });
    let done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    let secs = started.elapsed().as_secs_f64();
    let read: u64 = sizes.iter().map(|(_, s)| s).sum();
    let mut failed = Vec::new();
    let mut written = 0u64;
    for d in &done {
        match &d.result {
            Ok(s) => written += s.bytes,
            Err(e) => failed.push(format!("trace={}: {e}", d.id)),
        }
    }
    eprintln!(
        "exported {} of {} traces ({} of trace, {} of Parquet) to {} in {secs:.2} s \
         ({:.1} MB/s of trace, {jobs} at once)",
        done.len() - failed.len(),
        paths.len(),
        human(read),
        human(written),
        args.output.display(),
        read as f64 / 1e6 / secs.max(1e-9),
    );
    if failed.is_empty() {
        return Ok(());
    }
    for f in &failed {
        eprintln!("zerotrace: {f}");
    }
    Err(CliError::BadTrace {
        path: args.output.display().to_string(),
        reason: format!(
            "{} of {} traces were not exported (named above)",
            failed.len(),
            paths.len()
        ),
    })
}
