//! The standard library's figures (issue 63) on one trace, in a process of
//! its own (`--stdlib TRACE`), so that its resident set is the load's and
//! the includes' alone:
//!
//! * the load time (`TraceProcessor::open`) and the resident set after it;
//! * `INCLUDE PERFETTO MODULE` of the module set the Linux analyses and the
//!   UI's load use ([`MODULE_SET`]), timed against the load (goal ≤ 0.5×),
//!   and the resident set after it against the trace's size (goal ≤ 1×);
//! * every other module of the index, included one by one after the set
//!   (`--skip MODULE` leaves one out), each against the load (the goal
//!   of each include, ≤ 0.5×), in a table of every module's time;
//! * beside each wall time, the CPU time the including thread spent
//!   (`/proc/thread-self/schedstat`), and the load's CPU time (every
//!   thread's, `/proc/self/stat`): on a machine other work keeps busy the
//!   wall times stretch, the CPU times much less, so the ratios are taken
//!   on CPU time;
//! * CPU utilisation per process (`linux.cpu.utilization.process`): its
//!   include, the per-process table and the busiest process's per-second
//!   series, in seconds per 100 MB of trace (goal ≤ 1 s).

use std::path::Path;
use std::time::{Duration, Instant};

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::memory::status_kb;
use crate::{show, verdict};

/// What the UI includes when a trace loads and what the Linux analyses
/// reach for: every module of these packages (a wildcard each).
pub const MODULE_SET: &[&str] = &[
    "linux.*",
    "sched.*",
    "slices.*",
    "viz.*",
    "counters.*",
    "intervals.*",
    "time.*",
    "std.*",
];

/// The goals.
const GOAL_INCLUDE_RATIO: f64 = 0.5;
const GOAL_MEMORY_RATIO: f64 = 1.0;
const GOAL_CPU_S_PER_100MB: f64 = 1.0;

fn rss_kb() -> Result<u64, String> {
    let s = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc: {e}"))?;
    status_kb(&s, "VmRSS").ok_or_else(|| "no VmRSS in /proc/self/status".to_owned())
}

/// This thread's CPU time (`/proc/thread-self/schedstat`'s first field,
/// nanoseconds on a CPU); zero where the kernel does not say.
fn thread_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// The process's CPU time, every thread's, ended ones too (user and
/// system time of `/proc/self/stat`, in the kernel's 1/100 s ticks).
fn process_cpu() -> Duration {
    let ticks = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command's closing parenthesis; utime and stime
            // are the 12th and 13th of them.
            let rest = s.get(s.rfind(')')? + 1..)?;
            let mut f = rest.split_whitespace().skip(11);
            let user: u64 = f.next()?.parse().ok()?;
            let system: u64 = f.next()?.parse().ok()?;
            Some(user + system)
        });
    ticks.map_or(Duration::ZERO, |t| Duration::from_millis(t * 10))
}

/// A statement's wall time and this thread's CPU time.
#[derive(Debug, Clone, Copy, Default)]
struct Took {
    wall: Duration,
    cpu: Duration,
}

impl std::ops::Add for Took {
    type Output = Took;
    fn add(self, o: Took) -> Took {
        Took {
            wall: self.wall + o.wall,
            cpu: self.cpu + o.cpu,
        }
    }
}

/// `t` as "CPU (wall)".
fn show_both(t: Took) -> String {
    format!("{} CPU ({} wall)", show(t.cpu), show(t.wall))
}

fn timed(tp: &TraceProcessor, sql: &str) -> Result<(Took, usize), String> {
    let c = thread_cpu();
    let t = Instant::now();
    let r = tp.query(sql).map_err(|e| format!("{sql}: {e}"))?;
    let took = Took {
        wall: t.elapsed(),
        cpu: thread_cpu().saturating_sub(c),
    };
    Ok((took, r.rows.len()))
}

/// Includes each module of the index that `filter` (an SQL condition on
/// `module`) selects, in the index's order, except those of `skip`, and
/// returns each one's time.
fn include_each(
    tp: &TraceProcessor,
    filter: &str,
    skip: &[String],
) -> Result<Vec<(Took, String)>, String> {
    let modules = tp
        .query(&format!(
            "SELECT DISTINCT module FROM __intrinsic_stdlib_objects WHERE {filter} ORDER BY module"
        ))
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for row in &modules.rows {
        let Some(Value::Text(m)) = row.first() else {
            continue;
        };
        if skip.iter().any(|s| s == m) {
            eprintln!("tp_bench: INCLUDE {m}: skipped");
            continue;
        }
        match timed(tp, &format!("INCLUDE PERFETTO MODULE {m}")) {
            Ok((t, _)) => {
                eprintln!("tp_bench: INCLUDE {m}: {}", show_both(t));
                out.push((t, m.clone()));
            }
            // A module the trace cannot serve is reported, not fatal.
            Err(e) => eprintln!("tp_bench: INCLUDE {m}: failed: {e}"),
        }
    }
    Ok(out)
}

/// The `--stdlib` mode: prints a Markdown table of the figures.
pub fn run(trace: &Path, skip: &[String]) -> Result<(), String> {
    let size = std::fs::metadata(trace)
        .map_err(|e| format!("{}: {e}", trace.display()))?
        .len();
    let mb = size as f64 / 1e6;
    let baseline = rss_kb()?;
    let c = process_cpu();
    let t = Instant::now();
    let tp = TraceProcessor::open(trace).map_err(|e| e.to_string())?;
    let load = Took {
        wall: t.elapsed(),
        cpu: process_cpu().saturating_sub(c),
    };
    let after_load = rss_kb()?;

    // Each module of the set on its own, in the index's order, so that the
    // costly ones show (a module's time includes the modules it includes
    // that were not included before it); then every other module of the
    // index the same way.
    let globs: Vec<String> = MODULE_SET
        .iter()
        .map(|m| format!("module GLOB '{m}'"))
        .collect();
    let in_set = format!("({})", globs.join(" OR "));
    let mut per_module = include_each(&tp, &in_set, skip)?;
    let include = per_module.iter().fold(Took::default(), |a, (t, _)| a + *t);
    let mut every = per_module.clone();
    per_module.sort_by_key(|m| std::cmp::Reverse(m.0.cpu));
    let after_include = rss_kb()?;
    let includes: String = MODULE_SET
        .iter()
        .map(|m| format!("INCLUDE PERFETTO MODULE {m};\n"))
        .collect();
    // The wildcards would include a skipped module: not measured then.
    let again = if skip.is_empty() {
        Some(timed(&tp, &includes)?.0)
    } else {
        None
    };
    every.extend(include_each(&tp, &format!("NOT {in_set}"), skip)?);

    // CPU utilisation per process on a fresh load (nothing included yet).
    drop(tp);
    let tp = TraceProcessor::open(trace).map_err(|e| e.to_string())?;
    let (util_include, _) = timed(&tp, "INCLUDE PERFETTO MODULE linux.cpu.utilization.process")?;
    let (per_process, processes) = timed(&tp, "SELECT * FROM cpu_cycles_per_process")?;
    let busiest = tp
        .query(
            "SELECT upid FROM thread JOIN sched_slice USING (utid) WHERE upid IS NOT NULL \
             GROUP BY upid ORDER BY SUM(dur) DESC LIMIT 1",
        )
        .map_err(|e| e.to_string())?;
    let upid = match busiest.rows.first().and_then(|r| r.first()) {
        Some(Value::Int(u)) => Some(*u),
        _ => None,
    };
    let (per_second, seconds) = match upid {
        None => (Took::default(), 0),
        Some(upid) => timed(
            &tp,
            &format!("SELECT * FROM cpu_process_utilization_per_second({upid})"),
        )?,
    };
    let sched = tp
        .query("SELECT COUNT(*) FROM sched_slice")
        .map_err(|e| e.to_string())?;
    let sched_rows = match sched.rows.first().and_then(|r| r.first()) {
        Some(Value::Int(n)) => *n,
        _ => 0,
    };
    let util = util_include + per_process + per_second;
    let util_per_100mb = util.cpu.as_secs_f64() / (mb / 100.0).max(1e-9);

    let ratio = |t: Took| t.cpu.as_secs_f64() / load.cpu.as_secs_f64().max(1e-9);
    let include_ratio = ratio(include);
    let mem_ratio = (after_include.saturating_sub(baseline) as f64 * 1024.0) / size as f64;
    println!(
        "Trace: {} ({mb:.1} MB), {sched_rows} sched slices.",
        trace.display()
    );
    println!();
    println!("| figure | value | goal | |");
    println!("|---|---:|---|---|");
    println!(
        "| load (`TraceProcessor::open`; CPU of every thread) | {} | — | |",
        show_both(load)
    );
    println!(
        "| `INCLUDE` of {} | {} ({include_ratio:.2}× the load's CPU) | ≤ {GOAL_INCLUDE_RATIO}× | {} |",
        MODULE_SET.join(", "),
        show_both(include),
        verdict(include_ratio <= GOAL_INCLUDE_RATIO)
    );
    let slowest: Vec<String> = per_module
        .iter()
        .take(5)
        .map(|(t, m)| format!("{m} {}", show(t.cpu)))
        .collect();
    println!(
        "| of which the slowest modules ({} in all; CPU) | {} | — | |",
        per_module.len(),
        slowest.join(", ")
    );
    println!(
        "| the same includes again | {} | — | |",
        again.map_or_else(|| "not measured (modules skipped)".to_owned(), show_both)
    );
    println!(
        "| resident after the load | {:.1} MB ({:.2}× the trace) | — | |",
        after_load.saturating_sub(baseline) as f64 * 1024.0 / 1e6,
        after_load.saturating_sub(baseline) as f64 * 1024.0 / size as f64
    );
    println!(
        "| resident after the includes | {:.1} MB ({mem_ratio:.2}× the trace) | ≤ {GOAL_MEMORY_RATIO}× | {} |",
        after_include.saturating_sub(baseline) as f64 * 1024.0 / 1e6,
        verdict(mem_ratio <= GOAL_MEMORY_RATIO)
    );
    println!(
        "| `linux.cpu.utilization.process`: include {}, `cpu_cycles_per_process` {} ({processes} rows), per second of the busiest process {} ({seconds} rows) | {util_per_100mb:.2} s CPU per 100 MB | ≤ {GOAL_CPU_S_PER_100MB} s | {} |",
        show_both(util_include),
        show_both(per_process),
        show_both(per_second),
        verdict(util_per_100mb <= GOAL_CPU_S_PER_100MB)
    );
    if !skip.is_empty() {
        println!("| modules skipped (`--skip`) | {} | — | |", skip.join(", "));
    }
    println!();
    println!("Every module's include, in the order included (the set's, then the others'; a");
    println!("module's time holds the modules it includes that were not included before):");
    println!();
    println!("| module | include CPU | wall | × the load's CPU | ≤ {GOAL_INCLUDE_RATIO}× |");
    println!("|---|---:|---:|---:|---|");
    for (t, m) in &every {
        let r = ratio(*t);
        println!(
            "| {m} | {} | {} | {r:.3} | {} |",
            show(t.cpu),
            show(t.wall),
            verdict(r <= GOAL_INCLUDE_RATIO)
        );
    }
    Ok(())
}

/// The `--sql` mode: loads the trace, then runs each statement in turn
/// (its wall and CPU time, and the resident set after it),
/// printing its time and its first rows.
pub fn statements(trace: &Path, statements: &[String]) -> Result<(), String> {
    let t = Instant::now();
    let tp = TraceProcessor::open(trace).map_err(|e| e.to_string())?;
    println!("load: {}, resident {} kB", show(t.elapsed()), rss_kb()?);
    for sql in statements {
        let t = Instant::now();
        let cpu = thread_cpu();
        let r = tp.query(sql).map_err(|e| format!("{sql}: {e}"))?;
        println!(
            "{}: {} rows, {} ({} CPU), resident {} kB",
            sql,
            r.rows.len(),
            show(t.elapsed()),
            show(thread_cpu().saturating_sub(cpu)),
            rss_kb()?
        );
        for row in r.rows.iter().take(20) {
            println!("  {row:?}");
        }
    }
    Ok(())
}
