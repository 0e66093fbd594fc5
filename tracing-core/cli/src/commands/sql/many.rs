//! `zerotrace sql` over several traces, or a directory of them: each loaded
//! on its own core (as many at once as memory allows), then shown as one
//! set of tables with a `trace` column (`TraceProcessor::union`), the
//! partition names of `zerotrace export`, so a query reads the same here
//! and over the Parquet dataset. Whether every trace fits is decided from
//! their sizes and the machine's available memory before any is loaded.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use zerotrace_trace_processor::trace_ids::trace_ids;
use zerotrace_trace_processor::{LoadOptions, TraceProcessor};

use super::super::CliError;
use super::super::trace_set::{available_memory, human, parallel_loads, trace_bytes};
use super::load_error;

/// Memory the union holds per byte of trace, all traces loaded and their
/// tables copied into the union (each trace is dropped as it is copied,
/// so at worst one trace's tables twice): about the 0.93x each trace keeps
/// resident, plus the union's columns, with room to spare.
const UNION_PER_BYTE: u64 = 3;

/// Loads `paths` and makes their union; an error naming the trace that
/// did not load, or saying before any load that they do not fit.
pub fn load_many(paths: &[PathBuf], options: LoadOptions) -> Result<TraceProcessor, CliError> {
    let ids = trace_ids(paths);
    let mut sizes = Vec::with_capacity(paths.len());
    for p in paths {
        sizes.push((p.clone(), trace_bytes(p)?));
    }
    let available = available_memory();
    let total: u64 = sizes.iter().map(|(_, s)| *s).sum();
    let need = total.saturating_mul(UNION_PER_BYTE);
    if let Some(avail) = available {
        if need > avail {
            return Err(CliError::Usage(format!(
                "{} traces of {} in all need about {} of memory once loaded together, and \
                 {} is available; nothing was loaded (ask fewer traces, or export them with \
                 `zerotrace export --format parquet` and query the dataset)",
                paths.len(),
                human(total),
                human(need),
                human(avail)
            )));
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = parallel_loads(&sizes, cores, available.map(|a| a.saturating_sub(need)))?;
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let loaded: Mutex<Vec<Option<Result<TraceProcessor, CliError>>>> =
        Mutex::new((0..paths.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = paths.get(i) else {
                        break;
                    };
                    let r = TraceProcessor::open_with_options(path, options, |_| {})
                        .map_err(|e| load_error(path, e));
                    if let Ok(tp) = &r {
                        super::warn_dropped(path, tp);
                    }
                    if let Ok(mut l) = loaded.lock() {
                        if let Some(slot) = l.get_mut(i) {
                            *slot = Some(r);
                        }
                    }
                }
            });
        }
    });
    let loaded = loaded.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut traces = Vec::with_capacity(paths.len());
    for (id, r) in ids.into_iter().zip(loaded) {
        match r {
            Some(Ok(tp)) => traces.push((id, tp)),
            Some(Err(e)) => return Err(e),
            None => return Err(CliError::Usage(format!("trace {id} was not loaded"))),
        }
    }
    let n = traces.len();
    let tp = TraceProcessor::union(traces).map_err(|e| CliError::BadTrace {
        path: format!("{n} traces"),
        reason: e.to_string(),
    })?;
    tp.set_sql_file_access(options.sql_file_access);
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!(
            "{n} traces ({}) loaded as one set of tables with a `trace` column in {:.1} s",
            human(total),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(tp)
}
