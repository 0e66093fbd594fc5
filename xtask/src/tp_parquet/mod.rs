//! `cargo xtask tp-parquet [--cases DIR] [--bench TRACE]`: DuckDB (PyPI)
//! as the oracle of `zerotrace export --format parquet` (issue 50). In the
//! virtual environment `cargo xtask tp-python` makes (`duckdb` added),
//! `duckdb_oracle.py` reads the exported dataset as it is, hive partitions
//! and all, and every answer must equal `zerotrace sql`'s:
//!
//! - per trace (each table seen as that trace's rows): the standard query
//!   list of issue 49 (with tie-breaking orders, so the answer is one), and
//!   every exported table in full for the first traces and one diff test
//!   trace in eight;
//! - over the whole dataset of at least 20 traces (20 `zerotrace demo`
//!   recordings, and with `--cases` every Perfetto diff test trace), two
//!   fleet queries: rows and total duration of `slice` per trace, and
//!   slices per name over all traces, each equal to what `zerotrace sql`
//!   answers trace by trace, added up, and to what `zerotrace sql DIR`
//!   answers over all of them at once.
//!
//! With `--bench TRACE` it measures instead (release binaries): the
//! export's throughput, and the standard queries' best times in DuckDB
//! over the exported tables held in memory, beside the trace processor's
//! own (`tp_bench`), as ratios.
//!
//! Without Python, `venv` or the packages the step says why and passes,
//! unless `ZEROTRACE_REQUIRE_PYTHON_PERFETTO=1` (CI), where that fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::Value;

use crate::tp_python::{build, prebuilt, venv_python};

/// The client side, run by the venv's interpreter.
const ORACLE_PY: &str = include_str!("duckdb_oracle.py");

/// Issue 49's standard query list, each ordered so that one answer is
/// right (ties broken by an id), in SQL both engines read alike.
const STANDARD: &[&str] = &[
    "SELECT id, name, dur FROM slice ORDER BY dur DESC, id LIMIT 10",
    "SELECT utid, thread.name, SUM(sched_slice.dur) AS cpu_ns \
     FROM sched_slice JOIN thread USING (utid) \
     GROUP BY utid, thread.name ORDER BY cpu_ns DESC, utid LIMIT 10",
    "SELECT name, COUNT(*) AS n FROM slice WHERE name GLOB 'r*' GROUP BY name",
    "SELECT track_id, MAX(value) AS max_value FROM counter GROUP BY track_id",
    "SELECT callsite_id, COUNT(*) AS samples FROM perf_sample \
     GROUP BY callsite_id ORDER BY samples DESC, callsite_id LIMIT 10",
];

/// Issue 49's standard query list as `tp_bench` times it.
const BENCH: &[&str] = &[
    "SELECT id, name, dur FROM slice ORDER BY dur DESC LIMIT 10",
    "SELECT utid, thread.name, SUM(sched_slice.dur) AS cpu_ns \
     FROM sched_slice JOIN thread USING (utid) \
     GROUP BY utid, thread.name ORDER BY cpu_ns DESC LIMIT 10",
    "SELECT name, COUNT(*) AS n FROM slice WHERE name GLOB 'r*' GROUP BY name",
    "SELECT track_id, MAX(value) AS max_value FROM counter GROUP BY track_id",
    "SELECT callsite_id, COUNT(*) AS samples FROM perf_sample \
     GROUP BY callsite_id ORDER BY samples DESC LIMIT 10",
];

/// The tables [`BENCH`] reads.
const BENCH_TABLES: &[&str] = &["slice", "sched_slice", "thread", "counter", "perf_sample"];

/// Demo recordings in every fleet.
const DEMOS: usize = 20;

/// The first traces whose every table is compared in full...
const FULL_TABLES: usize = 3;
/// ... and of the diff test traces, one in this many too.
const FULL_TABLES_EVERY: usize = 8;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The interpreter (with `duckdb`) instead of the venv's.
    pub python: Option<PathBuf>,
    /// A directory of Perfetto diff test cases (index.json): their traces
    /// join the fleet.
    pub cases: Option<PathBuf>,
    /// Measure on this trace instead of comparing.
    pub bench: Option<PathBuf>,
    /// Take `zerotrace` from here instead of building it.
    pub bins: Option<PathBuf>,
}

/// Runs the comparison; `Ok(false)` when an answer differs.
pub fn run(root: &Path, opts: &Options) -> Result<bool, String> {
    let required = std::env::var("ZEROTRACE_REQUIRE_PYTHON_PERFETTO").is_ok_and(|v| v == "1");
    let work = root.join("target").join("tp-parquet");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let python = match opts
        .python
        .clone()
        .map_or_else(|| venv_python(&root.join("target").join("tp-python")), Ok)
    {
        Ok(p) => p,
        Err(why) if required => {
            return Err(format!("ZEROTRACE_REQUIRE_PYTHON_PERFETTO=1 but: {why}"));
        }
        Err(why) => {
            println!("tp-parquet: skipped: {why}");
            return Ok(true);
        }
    };
    let bins = match &opts.bins {
        Some(dir) => prebuilt(dir)?,
        None => build(root, opts.bench.is_some())?,
    };
    let ctx = Ctx {
        python,
        script: work.join("duckdb_oracle.py"),
        bins,
        work: work.clone(),
    };
    std::fs::write(&ctx.script, ORACLE_PY).map_err(|e| format!("oracle: {e}"))?;
    if let Some(trace) = &opts.bench {
        return ctx.bench(root, trace);
    }

    // The fleet: demo recordings, and the diff test traces.
    let traces_dir = work.join("traces");
    std::fs::create_dir_all(&traces_dir).map_err(|e| format!("{e}"))?;
    let mut traces = Vec::new();
    for i in 0..DEMOS {
        let t = traces_dir.join(format!("demo{i:02}.pftrace"));
        ctx.zerotrace(&[OsArg::S("demo"), OsArg::S("-o"), OsArg::P(&t)])?;
        traces.push(t);
    }
    if let Some(dir) = &opts.cases {
        let index = std::fs::read_to_string(dir.join("index.json"))
            .map_err(|e| format!("{}: {e}", dir.join("index.json").display()))?;
        let cases: Vec<String> =
            serde_json::from_str(&index).map_err(|e| format!("index.json: {e}"))?;
        for case in cases {
            let t = dir.join(&case).join("trace.pb");
            if t.is_file() {
                let name: String = case
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '-' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                let link = traces_dir.join(format!("case-{name}.pb"));
                std::fs::copy(&t, &link).map_err(|e| format!("{}: {e}", t.display()))?;
                traces.push(link);
            }
        }
    }
    let dataset = work.join("dataset");
    let started = Instant::now();
    let mut args = vec![OsArg::S("export"), OsArg::P(&traces_dir)];
    args.extend([OsArg::S("--format"), OsArg::S("parquet"), OsArg::S("-o")]);
    args.push(OsArg::P(&dataset));
    ctx.zerotrace(&args)?;
    println!(
        "tp-parquet: {} traces exported in {:.1} s",
        traces.len(),
        started.elapsed().as_secs_f64()
    );
    let ids: Vec<String> = traces
        .iter()
        .map(|t| {
            t.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
                .trim_end_matches(".pftrace")
                .trim_end_matches(".pb")
                .to_owned()
        })
        .collect();
    let tables: Vec<String> = {
        let mut v: Vec<String> = std::fs::read_dir(&dataset)
            .map_err(|e| format!("{}: {e}", dataset.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };

    // Per trace: the standard list, and for the first few every table.
    let mut jobs = Vec::new();
    let mut expected = Vec::new();
    let pick: Vec<usize> = (0..traces.len())
        .filter(|&i| i == 0 || i >= DEMOS || i == DEMOS - 1)
        .collect();
    for (n, &i) in pick.iter().enumerate() {
        let mut queries: Vec<String> = STANDARD.iter().map(|q| (*q).to_owned()).collect();
        if n < FULL_TABLES || (i >= DEMOS && (i - DEMOS) % FULL_TABLES_EVERY == 0) {
            queries.extend(tables.iter().map(|t| format!("SELECT * FROM \"{t}\"")));
        }
        let mut want = Vec::new();
        for q in &queries {
            want.push(ctx.expected(&traces[i], q)?);
        }
        jobs.push(serde_json::json!({"trace": ids[i], "queries": queries}));
        expected.push((ids[i].clone(), queries, want));
    }
    // The fleet: both queries answered trace by trace, added up.
    let mut per_trace = Vec::new();
    let mut per_name: BTreeMap<String, (Value, i64)> = BTreeMap::new();
    for (t, id) in traces.iter().zip(&ids) {
        let one = ctx
            .expected(t, "SELECT COUNT(*) AS n, SUM(dur) AS total FROM slice")?
            .map_err(|e| format!("{id}: {e}"))?;
        let row = one.first().cloned().unwrap_or(Value::Null);
        // A trace without slices has no group.
        if row["n"].as_i64().unwrap_or(0) > 0 {
            per_trace.push(serde_json::json!({"trace": id, "n": row["n"], "total": row["total"]}));
        }
        let names = ctx
            .expected(t, "SELECT name, COUNT(*) AS n FROM slice GROUP BY name")?
            .map_err(|e| format!("{id}: {e}"))?;
        for r in names {
            let e = per_name
                .entry(r["name"].to_string())
                .or_insert((r["name"].clone(), 0));
            e.1 += r["n"].as_i64().unwrap_or(0);
        }
    }
    per_trace.sort_by_key(|r| r["trace"].as_str().unwrap_or_default().to_owned());
    let fleet_queries = vec![
        "SELECT trace, COUNT(*) AS n, SUM(dur) AS total FROM slice GROUP BY trace ORDER BY trace"
            .to_owned(),
        "SELECT name, COUNT(*) AS n FROM slice GROUP BY name".to_owned(),
    ];
    let per_name: Vec<Value> = per_name
        .into_values()
        .map(|(name, n)| serde_json::json!({"name": name, "n": n}))
        .collect();
    // The same queries of `zerotrace sql` over the directory: every trace
    // as one set of tables with a `trace` column.
    let mut union = Vec::new();
    for q in &fleet_queries {
        union.push(ctx.expected(&traces_dir, q)?);
    }
    jobs.push(serde_json::json!({"trace": null, "queries": fleet_queries}));
    expected.push((
        format!("{} traces", traces.len()),
        fleet_queries.clone(),
        vec![Ok(per_trace), Ok(per_name)],
    ));
    jobs.push(serde_json::json!({"trace": null, "queries": fleet_queries}));
    expected.push((
        format!("{} traces through zerotrace sql DIR", traces.len()),
        fleet_queries,
        union,
    ));

    let got = ctx.oracle(&serde_json::json!({
        "dataset": dataset, "jobs": jobs, "bench": null
    }))?;
    let answers = got["answers"].as_array().cloned().unwrap_or_default();
    let mut ok = answers.len() == expected.len();
    let mut compared = 0;
    for ((label, queries, want), got) in expected.iter().zip(&answers) {
        let got = got.as_array().cloned().unwrap_or_default();
        let mut fails = Vec::new();
        for ((q, w), g) in queries.iter().zip(want).zip(&got) {
            compared += 1;
            if let Err(why) = same(q, w, g) {
                fails.push(format!("{q:?}: {why}"));
            }
        }
        if got.len() != queries.len() {
            fails.push(format!(
                "{} answers for {} queries",
                got.len(),
                queries.len()
            ));
        }
        if fails.is_empty() {
            println!("PASS {label}: {} queries alike in DuckDB", queries.len());
        } else {
            ok = false;
            println!("FAIL {label}:");
            for f in fails {
                println!("  {f}");
            }
        }
    }
    println!("tp-parquet: {compared} answers compared");
    Ok(ok)
}

/// Whether DuckDB's answer `got` equals `zerotrace sql`'s `want` (rows as
/// JSON objects): in order when the query orders, as a multiset otherwise.
fn same(q: &str, want: &Result<Vec<Value>, String>, got: &Value) -> Result<(), String> {
    let want = match want {
        Ok(rows) => rows,
        Err(e) => return Err(format!("zerotrace sql failed: {e}")),
    };
    if let Some(e) = got.get("error") {
        return Err(format!("DuckDB failed: {e}"));
    }
    let columns: Vec<String> = got["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c.as_str().unwrap_or_default().to_owned())
        .collect();
    let mut rows: Vec<Vec<Value>> = got["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r.as_array().cloned().unwrap_or_default())
        .collect();
    let mut want_rows: Vec<Vec<Value>> = want
        .iter()
        .map(|r| columns.iter().map(|c| r[c.as_str()].clone()).collect())
        .collect();
    if let Some(r) = want.first().and_then(Value::as_object) {
        if r.len() != columns.len() || columns.iter().any(|c| !r.contains_key(c)) {
            return Err(format!(
                "columns differ: {:?} against DuckDB's {columns:?}",
                r.keys().collect::<Vec<_>>()
            ));
        }
    }
    if rows.len() != want_rows.len() {
        return Err(format!(
            "{} rows against DuckDB's {}",
            want_rows.len(),
            rows.len()
        ));
    }
    if !q.to_ascii_uppercase().contains("ORDER BY") {
        let key = |r: &Vec<Value>| {
            r.iter()
                .map(|v| match v.as_f64() {
                    Some(f) => format!("{f:e}"),
                    None => v.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\u{1}")
        };
        rows.sort_by_cached_key(key);
        want_rows.sort_by_cached_key(key);
    }
    for (i, (w, g)) in want_rows.iter().zip(&rows).enumerate() {
        if w.len() != g.len() || w.iter().zip(g).any(|(a, b)| !cell_eq(a, b)) {
            return Err(format!(
                "row {i}: {} against DuckDB's {}",
                Value::from(w.clone()),
                Value::from(g.clone())
            ));
        }
    }
    Ok(())
}

/// Cells alike: integers exactly, doubles to a relative 1e-9.
fn cell_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
                _ => false,
            },
        },
        _ => a == b,
    }
}

/// An argument: text or a path.
enum OsArg<'a> {
    S(&'a str),
    P(&'a Path),
}

struct Ctx {
    python: PathBuf,
    script: PathBuf,
    bins: PathBuf,
    work: PathBuf,
}

impl Ctx {
    /// Runs `zerotrace ARGS`, its stdout quiet.
    fn zerotrace(&self, args: &[OsArg<'_>]) -> Result<(), String> {
        let mut c = Command::new(self.bins.join("zerotrace"));
        for a in args {
            match a {
                OsArg::S(s) => c.arg(s),
                OsArg::P(p) => c.arg(p),
            };
        }
        let out = c
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("zerotrace: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "zerotrace failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(())
    }

    /// What `zerotrace sql TRACE -q FILE --format json` answers.
    fn expected(&self, trace: &Path, sql: &str) -> Result<Result<Vec<Value>, String>, String> {
        let file = self.work.join("query.sql");
        std::fs::write(&file, sql).map_err(|e| format!("{}: {e}", file.display()))?;
        let out = Command::new(self.bins.join("zerotrace"))
            .arg("sql")
            .arg(trace)
            .arg("-q")
            .arg(&file)
            .args(["--format", "json"])
            .output()
            .map_err(|e| format!("zerotrace sql: {e}"))?;
        if !out.status.success() {
            return Ok(Err(String::from_utf8_lossy(&out.stderr).into_owned()));
        }
        match serde_json::from_slice::<Value>(&out.stdout) {
            Ok(Value::Array(rows)) => Ok(Ok(rows)),
            _ => Err(format!("zerotrace sql printed no JSON array for {sql:?}")),
        }
    }

    /// Runs the oracle on `spec`; its answer.
    fn oracle(&self, spec: &Value) -> Result<Value, String> {
        let spec_file = self.work.join("spec.json");
        std::fs::write(&spec_file, spec.to_string())
            .map_err(|e| format!("{}: {e}", spec_file.display()))?;
        let out = Command::new(&self.python)
            .arg(&self.script)
            .arg(&spec_file)
            .output()
            .map_err(|e| format!("{}: {e}", self.python.display()))?;
        if !out.status.success() {
            return Err(format!(
                "DuckDB's side failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("the oracle's output: {e}"))
    }

    /// Export throughput and DuckDB's query times beside ours.
    fn bench(&self, root: &Path, trace: &Path) -> Result<bool, String> {
        let size = std::fs::metadata(trace)
            .map_err(|e| format!("{}: {e}", trace.display()))?
            .len();
        let dataset = self.work.join("bench-dataset");
        let started = Instant::now();
        self.zerotrace(&[
            OsArg::S("export"),
            OsArg::P(trace),
            OsArg::S("-o"),
            OsArg::P(&dataset),
        ])?;
        let whole = started.elapsed().as_secs_f64();
        let load = Instant::now();
        self.expected(trace, "SELECT 1")?
            .map_err(|e| format!("zerotrace sql: {e}"))?;
        let load = load.elapsed().as_secs_f64();
        println!(
            "export of {} ({:.0} MB): {whole:.2} s in all, {:.1} MB/s of trace; \
             the load alone (zerotrace sql -Q 'SELECT 1') {load:.2} s, so the writing \
             {:.2} s, {:.1} MB/s of trace",
            trace.display(),
            size as f64 / 1e6,
            size as f64 / 1e6 / whole,
            (whole - load).max(1e-3),
            size as f64 / 1e6 / (whole - load).max(1e-3)
        );
        let got = self.oracle(&serde_json::json!({
            "dataset": dataset, "jobs": [],
            "bench": {"queries": BENCH, "tables": BENCH_TABLES, "runs": 5}
        }))?;
        let duck: Vec<f64> = got["bench"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_f64)
            .collect();
        // Ours, in process, as tp_bench times them (best of its runs).
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .current_dir(root)
            .args([
                "run",
                "--quiet",
                "--release",
                "-p",
                "zerotrace-trace-processor",
                "--example",
                "tp_bench",
                "--",
                "--queries-only",
            ])
            .arg(trace)
            .output()
            .map_err(|e| format!("tp_bench: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        println!("standard queries: DuckDB in memory (best of 5) beside the trace processor:");
        for (i, q) in BENCH.iter().enumerate() {
            let ours = text
                .lines()
                .find_map(|l| l.strip_prefix(&format!("query {i}: best ")))
                .and_then(|s| s.split_whitespace().next())
                .and_then(|s| s.parse::<f64>().ok());
            let d = duck.get(i).copied();
            match (ours, d) {
                (Some(o), Some(d)) => println!(
                    "  {:.3} ms ours, {:.3} ms DuckDB: {:.2}x  {q}",
                    o * 1e3,
                    d * 1e3,
                    o / d
                ),
                _ => println!("  (no figure) {q}"),
            }
        }
        self.fleet_bench()?;
        Ok(true)
    }

    /// A fleet query over [`FLEET`] copies of a demo recording: the
    /// export's cost, DuckDB over the dataset (cold, from the files), and
    /// the same answer from `zerotrace sql` trace by trace.
    fn fleet_bench(&self) -> Result<(), String> {
        let dir = self.work.join("fleet");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let first = dir.join("t000.pftrace");
        self.zerotrace(&[OsArg::S("demo"), OsArg::S("-o"), OsArg::P(&first)])?;
        let mut traces = vec![first.clone()];
        for i in 1..FLEET {
            let t = dir.join(format!("t{i:03}.pftrace"));
            std::fs::copy(&first, &t).map_err(|e| format!("{}: {e}", t.display()))?;
            traces.push(t);
        }
        let size: u64 = traces
            .iter()
            .filter_map(|t| std::fs::metadata(t).ok())
            .map(|m| m.len())
            .sum();
        let dataset = self.work.join("fleet-dataset");
        let started = Instant::now();
        self.zerotrace(&[
            OsArg::S("export"),
            OsArg::P(&dir),
            OsArg::S("-o"),
            OsArg::P(&dataset),
        ])?;
        let export = started.elapsed().as_secs_f64();
        let q = "SELECT name, COUNT(*) AS n, SUM(dur) AS total FROM slice GROUP BY name";
        let got = self.oracle(&serde_json::json!({
            "dataset": dataset, "jobs": [], "bench": null,
            "fleet": {"query": FLEET_QUERY, "runs": 3}
        }))?;
        let duck = got["fleet"].as_f64().unwrap_or(f64::NAN);
        let started = Instant::now();
        for t in &traces {
            self.expected(t, q)?
                .map_err(|e| format!("zerotrace sql: {e}"))?;
        }
        let ours = started.elapsed().as_secs_f64();
        // All of them at once: loaded in parallel, one set of tables.
        let started = Instant::now();
        self.expected(&dir, FLEET_QUERY)?
            .map_err(|e| format!("zerotrace sql DIR: {e}"))?;
        let union = started.elapsed().as_secs_f64();
        println!(
            "fleet: zerotrace sql DIR (all {FLEET} loaded in parallel as one set of tables, \
             and the fleet query): {union:.2} s"
        );
        println!(
            "fleet of {FLEET} demo recordings ({:.1} MB): export {export:.2} s ({:.1} MB/s, both cores); DuckDB over the dataset (from the files, best of 3) {:.1} ms for {FLEET_QUERY:?}; zerotrace sql trace by trace (load and query, one at a time) {ours:.2} s",
            size as f64 / 1e6,
            size as f64 / 1e6 / export,
            duck * 1e3
        );
        Ok(())
    }
}

/// Traces in the fleet measure.
const FLEET: usize = 100;

/// The fleet measure's query, over the whole dataset.
const FLEET_QUERY: &str =
    "SELECT trace, name, COUNT(*) AS n, SUM(dur) AS total FROM slice GROUP BY trace, name";
