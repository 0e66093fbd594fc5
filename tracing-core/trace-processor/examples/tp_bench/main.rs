//! The trace processor's performance figures (issue 49) in one run, as
//! `cargo xtask tp-bench` prints them for BENCHMARKS.md:
//!
//! * load throughput: the wall time of [`TraceProcessor::open`] on the
//!   trace (best and median of `--runs`), in MB/s of the trace;
//! * the split: [`Loader::push`] (the stream split, sequence state,
//!   interning, clocks), [`Loader::finish`] (the sort and the parsers) and
//!   [`TraceProcessor::from_storage`] (the columns and SQLite's tables),
//!   each timed over the trace held in memory;
//! * the scanner floor ([`scan`]) and the ratio of the load to it;
//! * peak memory of a child process that loads the trace ([`memory`]),
//!   against the trace's size;
//! * the standard queries ([`queries`]) with their times and plans;
//! * with `--stdlib TRACE [--skip MODULE]...`, the standard library's
//!   figures ([`stdlib`]);
//! * with `--sql TRACE SQL...`, each statement's time and first rows, for
//!   looking into one query's cost.
//!
//! ```sh
//! cargo run --release -p zerotrace-trace-processor --example tp_bench -- [--runs N] TRACE
//! cargo run --release -p zerotrace-trace-processor --example tp_bench -- --composition TRACE
//! ```
//!
//! `--threads TRACE` ([`threads`]) the load on one core and on all of
//! them, wall and CPU; `--compress-packets TRACE OUT` writes TRACE with its
//! packets in `compressed_packets` (the bench measures both on such a copy
//! of its trace, made beside it when missing).
//! `--peak-rss TRACE` is the memory child's mode; `--load-cost TRACE`
//! ([`load_cost`]) one load's CPU time and peak memory, any format, for
//! `cargo xtask tp-bench --json` / `--perf-text`.

mod load_cost;
mod memory;
mod queries;
mod scan;
mod stdlib;
mod threads;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use zerotrace_trace_processor::{LoadOptions, Loader, TraceProcessor};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// The whole bench, `runs` timed loads.
    Bench { trace: PathBuf, runs: u32 },
    /// Only the trace's size and packets per kind.
    Composition(PathBuf),
    /// The memory child.
    PeakRss(PathBuf),
    /// One load's CPU time and peak memory.
    LoadCost(PathBuf),
    /// Only the standard queries' best times, one line each, for
    /// `cargo xtask tp-parquet --bench` to set beside DuckDB's.
    QueriesOnly(PathBuf),
    /// The standard library's figures (issue 63); the modules named are
    /// not included (`--skip MOD`, for one known not to finish).
    Stdlib(PathBuf, Vec<String>),
    /// Statements timed one by one on the loaded trace.
    Sql(PathBuf, Vec<String>),
    /// The load on one core and on all, `runs` times each.
    Threads { trace: PathBuf, runs: u32 },
    /// A copy of the trace with its packets in `compressed_packets`.
    CompressPackets(PathBuf, PathBuf),
}

/// Timed loads when `--runs` is not given.
const DEFAULT_RUNS: u32 = 3;
/// Runs of each query (the best counts).
const QUERY_RUNS: u32 = 3;
/// The issue's goals.
const GOAL_MB_S: f64 = 200.0;
const GOAL_FLOOR_RATIO: f64 = 4.0;
const GOAL_MEMORY_RATIO: f64 = 1.0;
/// The issue's goal for what stays resident once the tables are built
/// (issue 62), against the trace's size.
const GOAL_RESIDENT_RATIO: f64 = 0.6;

/// Reads the arguments (the program's name left out).
fn parse_args(args: &[String]) -> Result<Mode, String> {
    let mut runs = DEFAULT_RUNS;
    let mut trace = None;
    let mut mode = None;
    let mut skip = Vec::new();
    if args.first().map(String::as_str) == Some("--sql") {
        let trace = args.get(1).ok_or("usage: tp_bench --sql TRACE SQL...")?;
        return Ok(Mode::Sql(PathBuf::from(trace), args[2..].to_vec()));
    }
    if args.first().map(String::as_str) == Some("--compress-packets") {
        let [_, trace, out] = args else {
            return Err("usage: tp_bench --compress-packets TRACE OUT".into());
        };
        return Ok(Mode::CompressPackets(trace.into(), out.into()));
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => {
                let v = it.next().ok_or("--runs needs a number")?;
                runs = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--runs: not a positive number: {v}"))?;
            }
            "--skip" => skip.push(it.next().ok_or("--skip needs a module")?.clone()),
            "--composition" | "--peak-rss" | "--queries-only" | "--stdlib" | "--load-cost"
            | "--threads" => mode = Some(a.clone()),
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s if trace.is_none() => trace = Some(PathBuf::from(s)),
            s => return Err(format!("one trace only (also given {s})")),
        }
    }
    let trace = trace.ok_or("usage: tp_bench [--runs N | --composition | --peak-rss] TRACE")?;
    Ok(match mode.as_deref() {
        Some("--composition") => Mode::Composition(trace),
        Some("--queries-only") => Mode::QueriesOnly(trace),
        Some("--stdlib") => Mode::Stdlib(trace, skip),
        Some("--load-cost") => Mode::LoadCost(trace),
        Some("--threads") => Mode::Threads { trace, runs },
        Some(_) => Mode::PeakRss(trace),
        None => Mode::Bench { trace, runs },
    })
}

/// The best and the median of some timings (the upper median of an even
/// count); zero for none.
fn best_median(times: &[Duration]) -> (Duration, Duration) {
    let mut v = times.to_vec();
    v.sort();
    (
        v.first().copied().unwrap_or_default(),
        v.get(v.len() / 2).copied().unwrap_or_default(),
    )
}

/// MB (10^6 bytes) per second.
fn mb_s(bytes: u64, t: Duration) -> f64 {
    bytes as f64 / 1e6 / t.as_secs_f64().max(1e-9)
}

/// A duration as a table shows it: ms below 10 s, else s.
fn show(t: Duration) -> String {
    let ms = t.as_secs_f64() * 1e3;
    if ms < 1.0 {
        format!("{:.0} µs", ms * 1e3)
    } else if ms < 10_000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", t.as_secs_f64())
    }
}

/// `met` or `not met` for a figure against its goal.
fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "**not met**" }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let res = match parse_args(&args) {
        Ok(Mode::Bench { trace, runs }) => bench(&trace, runs),
        Ok(Mode::Composition(trace)) => composition(&trace),
        Ok(Mode::PeakRss(trace)) => memory::child(&trace),
        Ok(Mode::LoadCost(trace)) => load_cost::run(&trace),
        Ok(Mode::QueriesOnly(trace)) => queries_only(&trace),
        Ok(Mode::Stdlib(trace, skip)) => stdlib::run(&trace, &skip),
        Ok(Mode::Sql(trace, statements)) => stdlib::statements(&trace, &statements),
        Ok(Mode::Threads { trace, runs }) => threads::measure(&trace, runs).map(|f| {
            println!("{}", f.rows(&trace.display().to_string()));
        }),
        Ok(Mode::CompressPackets(trace, out)) => threads::compress_packets(&trace, &out),
        Err(e) => Err(e),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tp_bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read(trace: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(trace).map_err(|e| format!("{}: {e}", trace.display()))
}

/// The trace's size and composition, one line each kind.
fn composition_text(bytes: usize, s: &scan::Scan) -> String {
    let kinds: Vec<String> = scan::composition(s)
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    format!(
        "{bytes} bytes ({:.1} MB), {} packets: {}; {} ftrace events in the bundles",
        bytes as f64 / 1e6,
        s.packets,
        kinds.join(", "),
        s.ftrace_events
    )
}

fn composition(trace: &Path) -> Result<(), String> {
    let bytes = read(trace)?;
    let s = scan::scan(&bytes)?;
    println!("{}: {}", trace.display(), composition_text(bytes.len(), &s));
    Ok(())
}

/// The machine in one line: CPU model, cores, memory, kernel.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|x| x.1))
        .unwrap_or("?")
        .trim()
        .to_string();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gb = memory::status_kb(&meminfo, "MemTotal").unwrap_or(0) as f64 / 1024.0 / 1024.0;
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{model}, {cores} cores, {mem_gb:.0} GiB, Linux {}",
        kernel.trim()
    )
}

fn bench(trace: &Path, runs: u32) -> Result<(), String> {
    let bytes = read(trace)?;
    let size = bytes.len() as u64;
    eprintln!(
        "tp_bench: {} ({} bytes), {runs} runs",
        trace.display(),
        size
    );

    // The floor, with the composition.
    let mut floor = Vec::new();
    let mut walked = scan::Scan::default();
    for _ in 0..runs.max(3) {
        let t = Instant::now();
        walked = scan::scan(std::hint::black_box(&bytes))?;
        floor.push(t.elapsed());
    }
    let (floor_best, floor_med) = best_median(&floor);
    eprintln!("tp_bench: floor {}", show(floor_best));

    // TraceProcessor::open, from the file (in the page cache), on one
    // thread: the headline.
    let mut open = Vec::new();
    let one_thread = LoadOptions {
        threads: 1,
        ..LoadOptions::default()
    };
    for i in 0..runs {
        let t = Instant::now();
        let tp = TraceProcessor::open_with_options(trace, one_thread, |_| {})
            .map_err(|e| e.to_string())?;
        open.push(t.elapsed());
        drop(tp);
        eprintln!("tp_bench: open {i}: {}", show(open[open.len() - 1]));
    }
    let (open_best, open_med) = best_median(&open);

    // The split, over the bytes in memory, in the driver's 1 MiB chunks.
    let (mut push, mut finish, mut build) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for i in 0..runs {
        drop(last.take());
        let t = Instant::now();
        let mut loader = Loader::new();
        for chunk in bytes.chunks(1 << 20) {
            loader.push(chunk).map_err(|e| e.to_string())?;
        }
        push.push(t.elapsed());
        let t = Instant::now();
        let storage = loader.finish().map_err(|e| e.to_string())?;
        finish.push(t.elapsed());
        let t = Instant::now();
        let tp = TraceProcessor::from_storage(storage).map_err(|e| e.to_string())?;
        build.push(t.elapsed());
        last = Some(tp);
        eprintln!(
            "tp_bench: split {i}: push {} finish {} build {}",
            show(push[push.len() - 1]),
            show(finish[finish.len() - 1]),
            show(build[build.len() - 1])
        );
    }
    let tp = last.ok_or("no run")?;
    let (_, push_med) = best_median(&push);
    let (_, finish_med) = best_median(&finish);
    let (_, build_med) = best_median(&build);

    // The standard queries.
    let mut query_rows = Vec::new();
    for q in &queries::QUERIES {
        let outcome = queries::run(&tp, q, QUERY_RUNS);
        eprintln!("tp_bench: {}: {outcome:?}", q.label);
        query_rows.push((q, outcome));
    }
    let counts = tp
        .query(
            "SELECT (SELECT COUNT(*) FROM slice), (SELECT COUNT(*) FROM counter), \
             (SELECT COUNT(*) FROM thread), (SELECT COUNT(*) FROM args)",
        )
        .map_err(|e| e.to_string())?;
    drop(tp);

    // One core against all of them, on the trace and on a copy of it with
    // its packets in compressed_packets.
    let plain = threads::measure(trace, runs)?;
    let compressed_path = trace.with_extension("compressed.pftrace");
    if !compressed_path.exists() {
        threads::compress_packets(trace, &compressed_path)?;
    }
    let compressed = threads::measure(&compressed_path, runs)?;

    // Peak memory, in a child.
    let rss = memory::measure(trace)?;
    let peak = rss.peak_kb.saturating_sub(rss.baseline_kb) * 1024;
    let after = rss.after_kb.saturating_sub(rss.baseline_kb) * 1024;

    let ratio = open_med.as_secs_f64() / floor_med.as_secs_f64().max(1e-9);
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line("## Trace processor (issue 49)".into());
    line(String::new());
    line(format!(
        "`cargo xtask tp-bench` (the trace recorded by `cargo xtask tp-data`; release build) on {}.",
        machine()
    ));
    line(format!(
        "The trace: {}.",
        composition_text(bytes.len(), &walked)
    ));
    if let Some(row) = counts.rows.first() {
        let v: Vec<String> = row.iter().map(|c| format!("{c:?}")).collect();
        line(format!(
            "Loaded: slices, counters, threads, args = {}.",
            v.join(", ")
        ));
    }
    line(String::new());
    line("| figure | measured | goal | anchor |".into());
    line("|---|---|---|---|".into());
    line(format!(
        "| load throughput, one core (`TraceProcessor::open_with_options`, one thread, {runs} runs) | {:.1} MB/s median ({}), best {:.1} MB/s ({}) | ≥ {GOAL_MB_S:.0} MB/s: {} | Perfetto's trace processor ~40 MB/s for protobuf (CHANGELOG v22) |",
        mb_s(size, open_med),
        show(open_med),
        mb_s(size, open_best),
        show(open_best),
        verdict(mb_s(size, open_med) >= GOAL_MB_S)
    ));
    line(plain.rows("the trace"));
    line(compressed.rows(&format!(
        "its copy in `compressed_packets` ({:.1} MB)",
        compressed.bytes as f64 / 1e6
    )));
    line(format!(
        "| the load's split (medians): `Loader::push` (split, sequences, interning, clocks) / `finish` (sort + parsers) / `from_storage` (columns + SQLite) | {} / {} / {} ({:.0}% / {:.0}% / {:.0}%) | — | — |",
        show(push_med),
        show(finish_med),
        show(build_med),
        pct(push_med, push_med + finish_med + build_med),
        pct(finish_med, push_med + finish_med + build_med),
        pct(build_med, push_med + finish_med + build_med)
    ));
    line(format!(
        "| scanner floor (framing, packet fields one level, ftrace events; no tables) | {:.0} MB/s median ({}), best {} | — | — |",
        mb_s(size, floor_med),
        show(floor_med),
        show(floor_best)
    ));
    line(format!(
        "| load time / floor (medians) | {ratio:.1}× | ≤ {GOAL_FLOOR_RATIO:.0}×: {} | — |",
        verdict(ratio <= GOAL_FLOOR_RATIO)
    ));
    line(format!(
        "| peak memory of the load (child's VmHWM − its baseline RSS) | {:.0} MB = {:.2}× the trace | ≤ {GOAL_MEMORY_RATIO:.1}×: {} | Perfetto documents 2-4× |",
        peak as f64 / 1e6,
        peak as f64 / size as f64,
        verdict(peak as f64 <= GOAL_MEMORY_RATIO * size as f64)
    ));
    line(format!(
        "| resident after the load (tables built; VmRSS − baseline) | {:.0} MB = {:.2}× the trace | ≤ {GOAL_RESIDENT_RATIO:.1}×: {} | Perfetto documents 2-4× |",
        after as f64 / 1e6,
        after as f64 / size as f64,
        verdict(after as f64 <= GOAL_RESIDENT_RATIO * size as f64)
    ));
    let mb = |kb: u64| kb.saturating_sub(rss.baseline_kb) as f64 * 1024.0 / 1e6;
    let [pushed, finished, built] = rss.steps_kb;
    line(format!(
        "| memory by step, resident / high-water mark (MB over the baseline) | after `push` {:.0} / {:.0}; after `finish` {:.0} / {:.0}; after `from_storage` {:.0} / {:.0} | — | — |",
        mb(pushed.0),
        mb(pushed.1),
        mb(finished.0),
        mb(finished.1),
        mb(built.0),
        mb(built.1)
    ));
    line(String::new());
    line(format!(
        "| standard query | SQL | first run (builds the indexes it uses) | time (best of {QUERY_RUNS}) | rows | plan (`EXPLAIN QUERY PLAN`) |"
    ));
    line("|---|---|---|---|---|---|".into());
    for (q, o) in &query_rows {
        let sql = q.sql.split_whitespace().collect::<Vec<_>>().join(" ");
        match o {
            queries::Outcome::Ran {
                first,
                best,
                rows,
                plan,
            } => line(format!(
                "| {} | `{sql}` | {} | {} | {rows} | {plan} |",
                q.label,
                show(*first),
                show(*best)
            )),
            queries::Outcome::NotAvailable(why) => line(format!(
                "| {} | `{sql}` | not available | — | — | {} |",
                q.label,
                why.replace('|', "/")
            )),
        }
    }
    print!("{out}");
    Ok(())
}

/// Prints `query I: best SECONDS` for each standard query (best of 5).
fn queries_only(trace: &Path) -> Result<(), String> {
    let tp = TraceProcessor::open(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    for (i, q) in queries::QUERIES.iter().enumerate() {
        match queries::run(&tp, q, 5) {
            queries::Outcome::Ran { best, .. } => {
                println!("query {i}: best {:.6}", best.as_secs_f64());
            }
            queries::Outcome::NotAvailable(why) => println!("query {i}: not available: {why}"),
        }
    }
    Ok(())
}

/// `part` as a percentage of `whole`.
fn pct(part: Duration, whole: Duration) -> f64 {
    100.0 * part.as_secs_f64() / whole.as_secs_f64().max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_command_line_reads_each_mode() {
        assert_eq!(
            parse_args(&args(&["t.pftrace"])),
            Ok(Mode::Bench {
                trace: "t.pftrace".into(),
                runs: DEFAULT_RUNS
            })
        );
        assert_eq!(
            parse_args(&args(&["--runs", "5", "t"])),
            Ok(Mode::Bench {
                trace: "t".into(),
                runs: 5
            })
        );
        assert_eq!(
            parse_args(&args(&["--composition", "t"])),
            Ok(Mode::Composition("t".into()))
        );
        assert_eq!(
            parse_args(&args(&["t", "--peak-rss"])),
            Ok(Mode::PeakRss("t".into()))
        );
        assert_eq!(
            parse_args(&args(&["--load-cost", "t"])),
            Ok(Mode::LoadCost("t".into()))
        );
        assert_eq!(
            parse_args(&args(&["--threads", "--runs", "2", "t"])),
            Ok(Mode::Threads {
                trace: "t".into(),
                runs: 2
            })
        );
        assert_eq!(
            parse_args(&args(&["--compress-packets", "t", "o"])),
            Ok(Mode::CompressPackets("t".into(), "o".into()))
        );
        assert_eq!(
            parse_args(&args(&["--stdlib", "t"])),
            Ok(Mode::Stdlib("t".into(), vec![]))
        );
        assert_eq!(
            parse_args(&args(&["--stdlib", "--skip", "a.b", "t"])),
            Ok(Mode::Stdlib("t".into(), vec!["a.b".into()]))
        );
        assert_eq!(
            parse_args(&args(&["--sql", "t", "SELECT 1", "SELECT 2"])),
            Ok(Mode::Sql(
                "t".into(),
                vec!["SELECT 1".into(), "SELECT 2".into()]
            ))
        );
        for bad in [
            &[][..],
            &["--runs"],
            &["--runs", "0", "t"],
            &["--frob", "t"],
            &["a", "b"],
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn timings_summarise_as_best_and_median() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|m| Duration::from_millis(*m))
                .collect::<Vec<_>>()
        };
        let (b, m) = best_median(&ms(&[30, 10, 20]));
        assert_eq!(
            (b, m),
            (Duration::from_millis(10), Duration::from_millis(20))
        );
        assert_eq!(best_median(&[]), (Duration::ZERO, Duration::ZERO));
        assert!((mb_s(200_000_000, Duration::from_secs(2)) - 100.0).abs() < 1e-9);
        assert_eq!(show(Duration::from_micros(250)), "250 µs");
        assert_eq!(show(Duration::from_millis(1500)), "1500.0 ms");
        assert_eq!(show(Duration::from_secs(12)), "12.00 s");
        assert!((pct(Duration::from_secs(1), Duration::from_secs(4)) - 25.0).abs() < 1e-9);
    }
}
