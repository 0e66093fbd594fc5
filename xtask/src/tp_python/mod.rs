//! `cargo xtask tp-python [--cases DIR] [TRACE...]`: Google's Python client
//! (the `perfetto` package from PyPI) as the oracle of our trace processor
//! RPC (issue 50). In a virtual environment of its own
//! (`target/tp-python/venv`, made with `perfetto` and `pandas` on first
//! use, or the interpreter given with `--python`), `oracle.py` queries:
//!
//! - `TraceProcessor(trace=T, config=TraceProcessorConfig(bin_path=zerotrace-tp))`,
//!   which starts our binary as it starts `trace_processor_shell`;
//! - `TraceProcessor(addr=...)` against `zerotrace sql --httpd ADDR T`;
//! - `TraceProcessor(trace=T, addr=...)` against `zerotrace sql --httpd ADDR`,
//!   the trace sent over `/parse`.
//!
//! Every answer (rows iterated, and `as_pandas_dataframe()` checked to have
//! the same shape) must equal `zerotrace sql T -q FILE --format json` row for
//! row, a query that fails there must fail in Python too, and bad SQL must
//! raise. The traces: a `zerotrace demo` recording, any TRACE given, and with
//! `--cases` each Perfetto diff test case's `trace.pb` and `query.sql`
//! (through `bin_path` only).
//!
//! With `--throughput ROWS` it measures instead (release binaries): the
//! cells per second a large answer (ROWS rows of an integer, a double, a
//! string and an integer) reaches the Python client, through `query()`,
//! through iterating the rows, and as a pandas frame (issue 50's figure).
//!
//! Without Python, `venv` or the package the step says why and passes,
//! unless `ZEROTRACE_REQUIRE_PYTHON_PERFETTO=1` (CI), where that fails.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The client side, run by the venv's interpreter.
const ORACLE_PY: &str = include_str!("oracle.py");

/// What our own recordings are asked.
const QUERIES: &[&str] = &[
    "SELECT id, ts, dur, name, depth, track_id, parent_id FROM slice ORDER BY id",
    "SELECT utid, tid, name, upid FROM thread ORDER BY utid",
    "SELECT upid, pid, name FROM process ORDER BY upid",
    "SELECT id, name, type FROM track ORDER BY id",
    "SELECT id, ts, track_id, value FROM counter ORDER BY id",
    "SELECT slice_out, slice_in FROM flow ORDER BY slice_out, slice_in",
    "SELECT name, COUNT(*) AS n, SUM(dur) AS total, AVG(dur) AS mean FROM slice \
     GROUP BY name ORDER BY name",
    "SELECT arg_set_id, flat_key, key, int_value, string_value, real_value FROM args \
     ORDER BY arg_set_id, key",
    "SELECT 1 AS one, 2.5 AS half, 'text' AS s, NULL AS nothing, x'00ff10' AS bytes",
    "CREATE TABLE mine AS SELECT 1 AS x; SELECT x FROM mine",
];

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The interpreter (with `perfetto` installed) instead of the venv's.
    pub python: Option<PathBuf>,
    /// A directory of Perfetto diff test cases (index.json).
    pub cases: Option<PathBuf>,
    /// More traces to ask [`QUERIES`].
    pub traces: Vec<PathBuf>,
    /// Measure the throughput of an answer this many rows long instead.
    pub throughput: Option<u64>,
    /// Take `zerotrace` and `zerotrace-tp` from here instead of building
    /// them (CI: the ones `cargo test` built).
    pub bins: Option<PathBuf>,
}

/// Runs the comparison; `Ok(false)` when an answer differs.
pub fn run(root: &Path, opts: &Options) -> Result<bool, String> {
    let required = std::env::var("ZEROTRACE_REQUIRE_PYTHON_PERFETTO").is_ok_and(|v| v == "1");
    let work = root.join("target").join("tp-python");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let python = match opts.python.clone().map_or_else(|| venv_python(&work), Ok) {
        Ok(p) => p,
        Err(why) if required => {
            return Err(format!("ZEROTRACE_REQUIRE_PYTHON_PERFETTO=1 but: {why}"));
        }
        Err(why) => {
            println!("tp-python: skipped: {why}");
            return Ok(true);
        }
    };
    let bins = match &opts.bins {
        Some(dir) => prebuilt(dir)?,
        None => build(root, opts.throughput.is_some())?,
    };
    let script = work.join("oracle.py");
    std::fs::write(&script, ORACLE_PY).map_err(|e| format!("{}: {e}", script.display()))?;

    let demo = work.join("demo.pftrace");
    let status = Command::new(bins.join("zerotrace"))
        .args(["demo", "-o"])
        .arg(&demo)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("zerotrace demo: {e}"))?;
    if !status.success() {
        return Err(format!("zerotrace demo: {status}"));
    }
    let ctx = Ctx {
        python,
        script,
        bins,
        work,
    };
    if let Some(rows) = opts.throughput {
        return ctx.throughput(&demo, rows);
    }
    let queries: Vec<String> = QUERIES.iter().map(|q| (*q).to_owned()).collect();
    let mut ok = true;
    for trace in std::iter::once(&demo).chain(&opts.traces) {
        for mode in ["bin", "addr", "addr+trace"] {
            ok &= ctx.compare(trace, &queries, mode)?;
        }
    }
    if let Some(dir) = &opts.cases {
        let index = std::fs::read_to_string(dir.join("index.json"))
            .map_err(|e| format!("{}: {e}", dir.join("index.json").display()))?;
        let cases: Vec<String> =
            serde_json::from_str(&index).map_err(|e| format!("index.json: {e}"))?;
        let mut jobs = Vec::new();
        let mut unreadable = 0;
        for case in &cases {
            let d = dir.join(case);
            let Ok(sql) = std::fs::read_to_string(d.join("query.sql")) else {
                continue;
            };
            // The case's trace in whatever format it is (JSON, zip,
            // systrace, ...), as tp-conformance finds it.
            match crate::tp_conformance::trace_file(&d) {
                Ok(trace) => jobs.push((trace, vec![sql])),
                Err(why) => {
                    println!("FAIL {case}: {why}");
                    unreadable += 1;
                }
            }
        }
        let total = jobs.len() + unreadable;
        let passed = ctx.compare_many(&jobs)?;
        ok &= passed == total;
        println!("tp-python: {passed} of {total} cases answer alike");
    }
    Ok(ok)
}

/// The venv's interpreter, made (with `perfetto`, `pandas` and, for
/// `cargo xtask tp-parquet`, `duckdb`) if missing.
pub(crate) fn venv_python(work: &Path) -> Result<PathBuf, String> {
    let venv = work.join("venv");
    let python = venv.join("bin").join("python");
    let has_perfetto = |p: &Path| {
        Command::new(p)
            .args(["-c", "import perfetto.trace_processor, pandas, duckdb"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if has_perfetto(&python) {
        return Ok(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .map_err(|e| format!("python3 -m venv: {e}"))?;
    if !made.success() {
        return Err(format!("python3 -m venv {}: {made}", venv.display()));
    }
    let pip = Command::new(venv.join("bin").join("pip"))
        .args(["install", "--quiet", "perfetto", "pandas", "duckdb"])
        .status()
        .map_err(|e| format!("pip: {e}"))?;
    if !pip.success() || !has_perfetto(&python) {
        return Err(format!("pip install perfetto pandas duckdb: {pip}"));
    }
    Ok(python)
}

/// `dir`, made absolute, once it holds `zerotrace` and `zerotrace-tp`.
pub(crate) fn prebuilt(dir: &Path) -> Result<PathBuf, String> {
    let dir = std::path::absolute(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for bin in ["zerotrace", "zerotrace-tp"] {
        if !dir.join(bin).is_file() {
            return Err(format!("--bins: {} has no {bin}", dir.display()));
        }
    }
    Ok(dir)
}

/// Builds `zerotrace` and `zerotrace-tp` (optimised if `release`); the
/// directory holding them.
pub(crate) fn build(root: &Path, release: bool) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut c = Command::new(cargo);
    c.current_dir(root)
        .args(["build", "--quiet", "-p", "zerotrace-cli", "--bins"]);
    if release {
        c.arg("--release");
    }
    let status = c.status().map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build -p zerotrace-cli: {status}"));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| if t.is_absolute() { t } else { root.join(t) })
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join(if release { "release" } else { "debug" }))
}

struct Ctx {
    python: PathBuf,
    script: PathBuf,
    bins: PathBuf,
    work: PathBuf,
}

/// A server child killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Ctx {
    /// Prints the cells per second of a `rows`-row answer to the client.
    fn throughput(&self, trace: &Path, rows: u64) -> Result<bool, String> {
        let spec = serde_json::json!({
            "mode": "throughput",
            "bin": self.bins.join("zerotrace-tp"),
            "trace": trace,
            "rows": rows,
        });
        let spec_file = self.work.join("spec.json");
        std::fs::write(&spec_file, spec.to_string())
            .map_err(|e| format!("{}: {e}", spec_file.display()))?;
        let out = Command::new(&self.python)
            .arg(&self.script)
            .arg(&spec_file)
            .output()
            .map_err(|e| format!("{}: {e}", self.python.display()))?;
        if !out.status.success() {
            println!(
                "tp-python: the client failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return Ok(false);
        }
        let got: Value =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("the client's output: {e}"))?;
        println!("tp-python: {rows} rows x 4 columns to Google's Python client (best of 3):");
        for (key, what) in [
            ("query", "query() (transfer and decode)"),
            ("iterate", "query() and iterating the rows"),
            ("pandas", "as_pandas_dataframe()"),
        ] {
            if let (Some(s), Some(c)) = (
                got[key]["seconds"].as_f64(),
                got[key]["cells_per_s"].as_f64(),
            ) {
                println!("  {what}: {s:.3} s, {:.2} M cells/s", c / 1e6);
            }
        }
        Ok(true)
    }

    /// What `zerotrace sql TRACE -q FILE --format json` answers: the rows,
    /// or Err with its message.
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

    /// Starts `zerotrace sql --httpd` (with `trace` loaded, if given) on a
    /// free loopback port; its address once it answers.
    fn serve(&self, trace: Option<&Path>) -> Result<(Served, String), String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("a free port: {e}"))?
            .port();
        let addr = format!("127.0.0.1:{port}");
        let mut c = Command::new(self.bins.join("zerotrace"));
        c.args(["sql", "--httpd", &addr]).stderr(Stdio::null());
        if let Some(t) = trace {
            c.arg(t);
        }
        let child = Served(
            c.spawn()
                .map_err(|e| format!("zerotrace sql --httpd: {e}"))?,
        );
        let started = Instant::now();
        while TcpStream::connect(&addr).is_err() {
            if started.elapsed() > Duration::from_secs(120) {
                return Err(format!("zerotrace sql --httpd {addr} never listened"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok((child, addr))
    }

    /// Asks `queries` of `trace` through the client in `mode`; prints PASS
    /// or FAIL; Ok(true) when every answer matches.
    fn compare(&self, trace: &Path, queries: &[String], mode: &str) -> Result<bool, String> {
        let mut expected = Vec::new();
        for q in queries {
            expected.push(self.expected(trace, q)?);
        }
        let (server, addr) = match mode {
            "addr" => {
                let (s, a) = self.serve(Some(trace))?;
                (Some(s), a)
            }
            "addr+trace" => {
                let (s, a) = self.serve(None)?;
                (Some(s), a)
            }
            _ => (None, String::new()),
        };
        let spec = serde_json::json!({
            "mode": mode,
            "bin": self.bins.join("zerotrace-tp"),
            "addr": addr,
            "trace": trace,
            "queries": queries,
        });
        let spec_file = self.work.join("spec.json");
        std::fs::write(&spec_file, spec.to_string())
            .map_err(|e| format!("{}: {e}", spec_file.display()))?;
        let out = Command::new(&self.python)
            .arg(&self.script)
            .arg(&spec_file)
            .output()
            .map_err(|e| format!("{}: {e}", self.python.display()))?;
        drop(server);
        let label = format!("{} ({mode})", trace.display());
        if !out.status.success() {
            println!(
                "FAIL {label}: the client failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return Ok(false);
        }
        let got: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("{label}: the client's output: {e}"))?;
        Ok(check(&label, queries, &expected, &got))
    }

    /// Asks each trace its queries through `bin_path` (one interpreter for
    /// all, so the client's imports are paid once); how many traces
    /// answered alike.
    fn compare_many(&self, jobs: &[(PathBuf, Vec<String>)]) -> Result<usize, String> {
        let mut expected = Vec::with_capacity(jobs.len());
        let mut specs = Vec::with_capacity(jobs.len());
        for (trace, queries) in jobs {
            let mut want = Vec::new();
            for q in queries {
                want.push(self.expected(trace, q)?);
            }
            expected.push(want);
            specs.push(serde_json::json!({
                "mode": "bin",
                "bin": self.bins.join("zerotrace-tp"),
                "trace": trace,
                "queries": queries,
            }));
        }
        let spec_file = self.work.join("spec.json");
        std::fs::write(&spec_file, serde_json::json!({ "jobs": specs }).to_string())
            .map_err(|e| format!("{}: {e}", spec_file.display()))?;
        let out = Command::new(&self.python)
            .arg(&self.script)
            .arg(&spec_file)
            .output()
            .map_err(|e| format!("{}: {e}", self.python.display()))?;
        if !out.status.success() {
            return Err(format!(
                "the client failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let got: Value =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("the client's output: {e}"))?;
        let results = got["results"].as_array().cloned().unwrap_or_default();
        if results.len() != jobs.len() {
            return Err(format!(
                "{} results for {} traces",
                results.len(),
                jobs.len()
            ));
        }
        let mut passed = 0;
        for (((trace, queries), want), got) in jobs.iter().zip(&expected).zip(&results) {
            let label = format!("{} (bin)", trace.display());
            if let Some(fatal) = got.get("fatal") {
                match refused_alike(fatal.as_str().unwrap_or_default(), want) {
                    Some(reason) => {
                        println!("PASS {label}: both refuse the trace: {reason}");
                        passed += 1;
                    }
                    None => println!("FAIL {label}: the client failed: {fatal}"),
                }
            } else if check(&label, queries, want, got) {
                passed += 1;
            }
        }
        Ok(passed)
    }
}

/// The reason, when the client could not load a trace (`fatal`) and
/// `zerotrace sql` refused it for that same reason for every query: the
/// server's parse error, as the client quotes it, in each of `zerotrace
/// sql`'s messages. None when the two disagree.
fn refused_alike(fatal: &str, expected: &[Result<Vec<Value>, String>]) -> Option<String> {
    const QUOTE: &str = "Failed while parsing trace. Error message: ";
    let reason = fatal.split_once(QUOTE)?.1.trim();
    let alike = !reason.is_empty()
        && !expected.is_empty()
        && expected
            .iter()
            .all(|e| e.as_ref().is_err_and(|msg| msg.contains(reason)));
    alike.then(|| reason.to_owned())
}

/// Compares what the client `got` for `queries` with what `zerotrace sql`
/// answered; prints PASS or FAIL; true when every answer matches.
fn check(
    label: &str,
    queries: &[String],
    expected: &[Result<Vec<Value>, String>],
    got: &Value,
) -> bool {
    let answers = got["answers"].as_array().cloned().unwrap_or_default();
    let mut fails = Vec::new();
    for ((q, want), got) in queries.iter().zip(expected).zip(&answers) {
        match (want, got.get("rows")) {
            (Ok(rows), Some(Value::Array(got_rows))) if rows == got_rows => {}
            (Err(_), None) if got.get("error").is_some() => {}
            (want, _) => fails.push(format!(
                "{q:?}: zerotrace sql gave {}, Python {}",
                short(&format!("{want:?}")),
                short(&got.to_string())
            )),
        }
    }
    if answers.len() != queries.len() {
        fails.push(format!(
            "{} answers for {} queries",
            answers.len(),
            queries.len()
        ));
    }
    for e in got["pandas_errors"].as_array().into_iter().flatten() {
        fails.push(e.as_str().unwrap_or_default().to_owned());
    }
    match got["bad_sql_error"].as_str() {
        Some(e) if e.contains("no_such_table") || e.contains("no such table") => {}
        other => fails.push(format!("bad SQL did not raise as expected: {other:?}")),
    }
    // metric() and trace_summary() raise with the server's reason (an
    // older client without the method says so instead).
    for (name, e) in got["unsupported"].as_object().into_iter().flatten() {
        match e.as_str() {
            Some(e) if e.contains("is not supported") || e.starts_with("AttributeError") => {}
            other => fails.push(format!("{name}() did not raise our reason: {other:?}")),
        }
    }
    if fails.is_empty() {
        println!(
            "PASS {label}: {} queries{}",
            queries.len(),
            if got["pandas"] == Value::Bool(true) {
                ", pandas frames alike"
            } else {
                ""
            }
        );
        true
    } else {
        println!("FAIL {label}:");
        for f in fails {
            println!("  {f}");
        }
        false
    }
}

/// `s` cut to a readable length.
fn short(s: &str) -> String {
    if s.len() <= 300 {
        return s.to_owned();
    }
    let mut end = 300;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    const FATAL: &str = "PerfettoException: Failed while parsing trace. Error message: \
                         not a protobuf trace: bad field at byte 0 (after 0 packets)";

    #[test]
    fn a_trace_both_refuse_for_one_reason_is_alike() {
        let ours = Err(
            "zerotrace: t.json: not a valid trace: not a protobuf trace: \
                        bad field at byte 0 (after 0 packets)"
                .to_owned(),
        );
        assert_eq!(
            refused_alike(FATAL, &[ours]).as_deref(),
            Some("not a protobuf trace: bad field at byte 0 (after 0 packets)")
        );
    }

    #[test]
    fn another_reason_an_answer_or_another_failure_is_not() {
        let other = Err("zerotrace: t.json: not a valid trace: truncated".to_owned());
        assert_eq!(refused_alike(FATAL, &[other]), None);
        assert_eq!(refused_alike(FATAL, &[Ok(Vec::new())]), None);
        assert_eq!(refused_alike(FATAL, &[]), None);
        let ours = Err("not a protobuf trace: bad field at byte 0 (after 0 packets)".to_owned());
        assert_eq!(
            refused_alike("ConnectionError: refused", &[ours]),
            None,
            "a client that failed otherwise is a failure"
        );
    }
}
