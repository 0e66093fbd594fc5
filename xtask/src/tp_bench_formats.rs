//! `cargo xtask tp-bench --json` / `--perf-text` (issue 65): the load of
//! the text formats measured as CPU time on one core and peak memory.
//! Makes the trace (`tp_bench_json.rs`, `tp_bench_perf.rs`; deterministic,
//! so kept in `target/tp-bench-data/` and made again only when missing)
//! or takes the one given, then runs the bench program's `--load-cost`
//! mode once per run, each a process of its own (so each high-water mark
//! is one load's), and prints the medians as a BENCHMARKS.md table.

use std::path::{Path, PathBuf};

use crate::{tp_bench_json, tp_bench_perf, tp_data};

/// The goals for Chrome JSON.
const GOAL_JSON_MB_S: f64 = 300.0;
const GOAL_MEMORY_RATIO: f64 = 1.0;

/// Which format to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Chrome's JSON trace format.
    Json,
    /// `perf script` text.
    PerfText,
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct Options {
    /// The format.
    pub format: Format,
    /// A trace to load instead of the generated one.
    pub trace: Option<PathBuf>,
    /// The generated trace's size in MB (default 300).
    pub mb: Option<u64>,
    /// Loads measured (default 3).
    pub runs: Option<u32>,
}

/// One load's line from the bench program, read back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cost {
    bytes: u64,
    push_ns: u64,
    finish_ns: u64,
    build_ns: u64,
    baseline_kb: u64,
    finish_peak_kb: u64,
    peak_kb: u64,
}

impl Cost {
    /// Reads the `cost ...` line from anywhere in `out`.
    fn parse(out: &str) -> Option<Cost> {
        let line = out.lines().find(|l| l.starts_with("cost "))?;
        let field = |name: &str| -> Option<u64> {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))?
                .parse()
                .ok()
        };
        Some(Cost {
            bytes: field("bytes")?,
            push_ns: field("push_ns")?,
            finish_ns: field("finish_ns")?,
            build_ns: field("build_ns")?,
            baseline_kb: field("baseline_kb")?,
            finish_peak_kb: field("finish_peak_kb")?,
            peak_kb: field("peak_kb")?,
        })
    }
}

/// The median (the upper one of an even count) of `v`; 0 for none.
fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// MB (10^6 bytes) per CPU second.
fn mb_s(bytes: u64, ns: u64) -> f64 {
    bytes as f64 / 1e6 / (ns.max(1) as f64 / 1e9)
}

/// The generated trace for `format` of `mb` MB, made when missing.
fn generated(root: &Path, format: Format, mb: u64) -> Result<PathBuf, String> {
    let dir = root.join("target").join("tp-bench-data");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = match format {
        Format::Json => dir.join(format!("chrome-{mb}mb.json")),
        Format::PerfText => dir.join(format!("perf-script-{mb}mb.txt")),
    };
    if !path.exists() {
        // Written under another name first: a cut-short file is never
        // taken for the trace.
        let tmp = path.with_extension("partial");
        let n = match format {
            Format::Json => tp_bench_json::write(&tmp, mb)?,
            Format::PerfText => tp_bench_perf::write(&tmp, mb)?,
        };
        std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("tp-bench: wrote {} ({n} bytes)", path.display());
    }
    Ok(path)
}

/// Runs the bench; `Ok(false)` when the program failed.
pub fn run(root: &Path, opts: &Options) -> Result<bool, String> {
    let trace = match &opts.trace {
        Some(t) => t.clone(),
        None => generated(root, opts.format, opts.mb.unwrap_or(300))?,
    };
    let runs = opts.runs.unwrap_or(3).max(1);
    let mut costs = Vec::new();
    for i in 0..runs {
        let out = tp_data::bench_program(root)
            .arg("--load-cost")
            .arg(&trace)
            .output()
            .map_err(|e| format!("running cargo: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let Some(c) = Cost::parse(&text) else {
            eprintln!(
                "tp-bench: the load failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            return Ok(false);
        };
        eprintln!(
            "tp-bench: run {i}: push {:.2} s, finish {:.2} s, from_storage {:.2} s CPU; peak {} MB",
            c.push_ns as f64 / 1e9,
            c.finish_ns as f64 / 1e9,
            c.build_ns as f64 / 1e9,
            c.peak_kb.saturating_sub(c.baseline_kb) * 1024 / 1_000_000
        );
        costs.push(c);
    }
    print!("{}", table(&trace, opts.format, runs, &costs));
    Ok(true)
}

/// The figures as a markdown table.
fn table(trace: &Path, format: Format, runs: u32, costs: &[Cost]) -> String {
    let bytes = costs.first().map_or(0, |c| c.bytes);
    let med = |f: &dyn Fn(&Cost) -> u64| median(costs.iter().map(f).collect());
    let push = med(&|c| c.push_ns);
    let finish = med(&|c| c.finish_ns);
    let build = med(&|c| c.build_ns);
    let load = med(&|c| c.push_ns + c.finish_ns);
    let open = med(&|c| c.push_ns + c.finish_ns + c.build_ns);
    let peak = med(&|c| c.peak_kb.saturating_sub(c.baseline_kb)) * 1024;
    let finish_peak = med(&|c| c.finish_peak_kb.saturating_sub(c.baseline_kb)) * 1024;
    let ratio = |b: u64| b as f64 / bytes.max(1) as f64;
    let name = match format {
        Format::Json => "Chrome JSON",
        Format::PerfText => "`perf script` text",
    };
    let goal = |mb: f64| match format {
        Format::Json if mb >= GOAL_JSON_MB_S => format!("≥ {GOAL_JSON_MB_S:.0} MB/s: met"),
        Format::Json => format!("≥ {GOAL_JSON_MB_S:.0} MB/s: **not met**"),
        Format::PerfText => "a figure".to_owned(),
    };
    let mem_goal = |b: u64| match format {
        Format::Json if ratio(b) <= GOAL_MEMORY_RATIO => {
            format!("≤ {GOAL_MEMORY_RATIO:.0}× the file: met")
        }
        Format::Json => format!("≤ {GOAL_MEMORY_RATIO:.0}× the file: **not met**"),
        Format::PerfText => "—".to_owned(),
    };
    let mut s = String::new();
    s.push_str(&format!(
        "{name}: {} ({bytes} bytes, {:.1} MB); medians of {runs} loads, each in a process of its own; CPU time (user + system, all threads).\n\n",
        trace.display(),
        bytes as f64 / 1e6
    ));
    s.push_str("| figure | measured | goal |\n|---|---|---|\n");
    s.push_str(&format!(
        "| load into the tables (`Loader::push` + `finish`), CPU | {:.2} s = {:.1} MB/s (push {:.2} s, finish {:.2} s) | {} |\n",
        load as f64 / 1e9,
        mb_s(bytes, load),
        push as f64 / 1e9,
        finish as f64 / 1e9,
        goal(mb_s(bytes, load))
    ));
    s.push_str(&format!(
        "| whole open (+ `from_storage`: columns and SQLite's tables), CPU | {:.2} s = {:.1} MB/s (from_storage {:.2} s) | {} |\n",
        open as f64 / 1e9,
        mb_s(bytes, open),
        build as f64 / 1e9,
        goal(mb_s(bytes, open))
    ));
    s.push_str(&format!(
        "| peak memory after `finish` (VmHWM − baseline RSS) | {:.0} MB = {:.2}× the file | {} |\n",
        finish_peak as f64 / 1e6,
        ratio(finish_peak),
        mem_goal(finish_peak)
    ));
    s.push_str(&format!(
        "| peak memory of the whole open (VmHWM − baseline RSS) | {:.0} MB = {:.2}× the file | {} |\n",
        peak as f64 / 1e6,
        ratio(peak),
        mem_goal(peak)
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_programs_line_reads_back_and_summarises() {
        let line = "noise\ncost bytes=300000000 push_ns=500000000 finish_ns=500000000 build_ns=1000000000 baseline_kb=1000 finish_peak_kb=2000 peak_kb=301000\n";
        let c = Cost::parse(line).unwrap();
        assert_eq!(c.bytes, 300_000_000);
        assert_eq!(c.peak_kb, 301_000);
        assert_eq!(Cost::parse("cost bytes=1"), None);
        assert_eq!(median(vec![3, 1, 2]), 2);
        assert_eq!(median(vec![]), 0);
        assert!((mb_s(300_000_000, 1_000_000_000) - 300.0).abs() < 1e-9);
        let t = table(Path::new("t.json"), Format::Json, 1, &[c]);
        assert!(t.contains("300.0 MB/s"), "{t}");
        assert!(t.contains("≥ 300 MB/s: met"), "{t}");
        assert!(t.contains("150.0 MB/s"), "{t}");
        assert!(
            t.contains("1.02× the file | ≤ 1× the file: **not met**"),
            "{t}"
        );
    }
}
