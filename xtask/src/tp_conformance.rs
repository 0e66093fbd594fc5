//! `cargo xtask tp-conformance [DIR]`: runs Perfetto's trace processor diff
//! test cases (default: `perfetto-difftests` in the `shared` directory
//! beside the repository) through our trace processor and says how many
//! give the genuine trace processor's answer, case by case, by suite and
//! by tag, so that CI can require a count that only goes up.
//!
//! The cases are read in place, never copied. `cases.json` lists them
//! (suite, name, tags); a case's trace is the one `trace.*` file in its
//! directory, whatever its format (`trace.pb`, `trace.json`,
//! `trace.systrace`, ...: a format we do not read is a failing case). Its
//! `query.sql` runs and the output, printed as `trace_processor_shell`
//! prints it, is compared with `expected.csv` the way the cases' README
//! says (leading newlines dropped, each line trimmed, then exact equality).
//!
//! A case is untrusted input: each runs in a process of its own (this
//! binary again, `tp-conformance-case DIR`), with a time limit, so that a
//! case that panics, crashes or loops is a failure with a reason and the
//! run goes on; the cases run in parallel, one process per core.
//! `--threads-check` runs every case's trace through the one-thread and
//! the parallel load instead, and passes a case when their tables agree
//! (`tp_threads_check.rs`).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;
use zerotrace_trace_processor::{LoadOptions, TraceProcessor, shell_csv_all};

/// How long one case may take by default (load and query; the slowest
/// case takes well under a second).
pub const DEFAULT_CASE_TIMEOUT: Duration = Duration::from_secs(60);

/// What the child process prints on its stdout for a passing case; a
/// failing one prints [`FAIL`] and the reason.
const PASS: &str = "PASS";
/// See [`PASS`].
const FAIL: &str = "FAIL";

/// One case of `cases.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// Its suite (`parser/android`).
    pub suite: String,
    /// Its name within the suite.
    pub name: String,
    /// Its tags (`include`, `synth`, `format:json`, ...).
    pub tags: Vec<String>,
}

impl Case {
    /// `SUITE/NAME`, the case's directory under the cases' directory.
    pub fn id(&self) -> String {
        format!("{}/{}", self.suite, self.name)
    }
}

/// Reads `cases.json`: every case with its suite and tags.
pub fn read_cases(dir: &Path) -> Result<Vec<Case>, String> {
    let path = dir.join("cases.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let records = value
        .as_array()
        .ok_or_else(|| format!("{}: not a list", path.display()))?;
    let mut cases = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let field = |k: &str| {
            r.get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("{}: record {i} has no string {k:?}", path.display()))
        };
        let (suite, name) = (field("suite")?, field("name")?);
        // A case's path stays inside the cases' directory.
        let id = format!("{suite}/{name}");
        if id.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
            return Err(format!(
                "{}: record {i}: bad case path {id:?}",
                path.display()
            ));
        }
        let tags = match r.get("tags") {
            None => Vec::new(),
            Some(t) => t
                .as_array()
                .ok_or_else(|| format!("{}: record {i}: tags not a list", path.display()))?
                .iter()
                .map(|t| {
                    t.as_str().map(str::to_owned).ok_or_else(|| {
                        format!("{}: record {i}: a tag not a string", path.display())
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        cases.push(Case { suite, name, tags });
    }
    Ok(cases)
}

/// The case's trace: the one `trace.*` file in its directory.
pub fn trace_file(case_dir: &Path) -> Result<PathBuf, String> {
    let entries =
        std::fs::read_dir(case_dir).map_err(|e| format!("{}: {e}", case_dir.display()))?;
    let mut found = Vec::new();
    for e in entries {
        let e = e.map_err(|e| format!("{}: {e}", case_dir.display()))?;
        if e.file_name().to_string_lossy().starts_with("trace.") {
            found.push(e.path());
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err("no trace.* file".to_owned()),
        n => Err(format!("{n} trace.* files")),
    }
}

/// Runs one case in this process: `None` when it passed, else why not.
pub fn run_case(dir: &Path) -> Option<String> {
    let sql = match std::fs::read_to_string(dir.join("query.sql")) {
        Ok(s) => s,
        Err(e) => return Some(format!("query.sql: {e}")),
    };
    let expected = match std::fs::read_to_string(dir.join("expected.csv")) {
        Ok(s) => s,
        Err(e) => return Some(format!("expected.csv: {e}")),
    };
    let trace = match trace_file(dir) {
        Ok(t) => t,
        Err(e) => return Some(e),
    };
    // Upstream's diff test runner loads every trace with
    // `--analyze-trace-proto-content --crop-track-events`.
    let options = LoadOptions {
        analyze_proto_content: true,
        crop_track_events: true,
        ..LoadOptions::default()
    };
    let tp = match TraceProcessor::open_with_options(&trace, options, |_| {}) {
        Ok(tp) => tp,
        Err(e) => return Some(format!("load: {e}")),
    };
    // Every statement's result set, as the shell prints a query of
    // several statements.
    match tp.query_outputs(&sql) {
        Ok(r) => compare(&shell_csv_all(&r), &expected),
        Err(e) => Some(format!("query: {e}")),
    }
}

/// Compares an output with the expected one as the cases' README says:
/// `None` when equal, else the first differing line.
pub fn compare(actual: &str, expected: &str) -> Option<String> {
    let norm = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s
            .trim_start_matches(['\n', '\r'])
            .lines()
            .map(|l| l.trim().to_owned())
            .collect();
        while v.last().is_some_and(String::is_empty) {
            v.pop();
        }
        v
    };
    let (a, e) = (norm(actual), norm(expected));
    if a == e {
        return None;
    }
    let i = a.iter().zip(&e).take_while(|(x, y)| x == y).count();
    Some(format!(
        "line {}: expected {:?}, got {:?} ({} lines expected, {} got)",
        i + 1,
        e.get(i).map_or("<end>", String::as_str),
        a.get(i).map_or("<end>", String::as_str),
        e.len(),
        a.len()
    ))
}

/// The child's side (`cargo xtask tp-conformance-case DIR`): runs the case
/// and prints [`PASS`], or [`FAIL`] and the reason, on one line. A panic
/// is caught and printed as the reason (the panic's own message is kept
/// off stderr, which the parent does not read).
pub fn child(dir: &Path, threads_check: bool) {
    std::panic::set_hook(Box::new(|_| {}));
    let check = || match threads_check {
        true => match trace_file(dir) {
            Ok(trace) => super::tp_threads_check::same_tables(&trace),
            Err(e) => Some(e),
        },
        false => run_case(dir),
    };
    match caught(check) {
        None => println!("{PASS}"),
        Some(reason) => println!("{FAIL} {}", reason.replace('\n', " ")),
    }
}

/// `f`'s verdict, a panic in it the reason `panicked: MESSAGE`.
fn caught(f: impl FnOnce() -> Option<String> + std::panic::UnwindSafe) -> Option<String> {
    std::panic::catch_unwind(f).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        Some(format!("panicked: {msg}"))
    })
}

/// Runs a case's child process: `None` when it passed, else why not (its
/// own reason, or that it crashed, exited without a verdict, or took
/// longer than `timeout`, and was killed).
pub fn run_isolated(mut cmd: Command, timeout: Duration) -> Option<String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Some(format!("could not start the case's process: {e}")),
    };
    // Read stdout beside the wait, so that a chatty case cannot block on
    // a full pipe until its time is up.
    let reader = child.stdout.take().map(|mut out| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.by_ref().take(1 << 20).read_to_string(&mut s);
            // Drain the rest, if any, unread.
            let _ = std::io::copy(&mut out, &mut std::io::sink());
            s
        })
    });
    let status = match child.wait_timeout(timeout) {
        Ok(Some(s)) => Ok(s),
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!(
                "took more than {} s, killed",
                timeout.as_secs_f64()
            ))
        }
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!("waiting for the case's process: {e}"))
        }
    };
    let out = reader.and_then(|r| r.join().ok()).unwrap_or_default();
    let status = match status {
        Ok(s) => s,
        Err(why) => return Some(why),
    };
    verdict(&out, status)
}

/// The verdict of a child that exited with `status` after printing `out`.
fn verdict(out: &str, status: ExitStatus) -> Option<String> {
    let line = out
        .lines()
        .find(|l| l.starts_with(PASS) || l.starts_with(FAIL));
    match line {
        Some(l) if status.success() && l == PASS => None,
        Some(l) if status.success() && l.starts_with(FAIL) => {
            Some(l[FAIL.len()..].trim().to_owned())
        }
        _ => {
            use std::os::unix::process::ExitStatusExt;
            Some(match status.signal() {
                Some(sig) => format!("crashed (signal {sig})"),
                None => format!("exited ({status}) without a verdict"),
            })
        }
    }
}

/// Runs `n` jobs on `jobs` threads (each `job(i)` gives job `i`'s
/// result), results in job order.
fn parallel<T: Send>(n: usize, jobs: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = job(i);
                    if let Ok(mut v) = results.lock() {
                        v[i] = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// How many cases passed, by suite and by tag.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Passed, of all.
    pub passed: usize,
    /// All cases.
    pub cases: usize,
    /// Suite: (cases, passed).
    pub by_suite: BTreeMap<String, (usize, usize)>,
    /// Tag (`(none)` for a case without tags): (cases, passed).
    pub by_tag: BTreeMap<String, (usize, usize)>,
}

/// Counts the outcomes (`outcomes[i]` is `cases[i]`'s).
pub fn tally(cases: &[Case], outcomes: &[Option<String>]) -> Tally {
    let mut t = Tally::default();
    for (case, outcome) in cases.iter().zip(outcomes) {
        let ok = usize::from(outcome.is_none());
        t.cases += 1;
        t.passed += ok;
        let count = |m: &mut BTreeMap<String, (usize, usize)>, k: &str| {
            let e = m.entry(k.to_owned()).or_default();
            e.0 += 1;
            e.1 += ok;
        };
        count(&mut t.by_suite, &case.suite);
        if case.tags.is_empty() {
            count(&mut t.by_tag, "(none)");
        }
        for tag in &case.tags {
            count(&mut t.by_tag, tag);
        }
    }
    t
}

/// Prints a table: a header, then `name | cases | passed` per row.
fn print_table(title: &str, rows: &BTreeMap<String, (usize, usize)>) {
    let w = rows
        .keys()
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max(title.len());
    println!("| {title:w$} | cases | passed |");
    println!("|{}|-------|--------|", "-".repeat(w + 2));
    for (k, (n, p)) in rows {
        println!("| {k:w$} | {n:5} | {p:6} |");
    }
}

/// The run's options.
pub struct Options {
    /// Each case's time limit.
    pub case_timeout: Duration,
    /// Cases run at once (0: one per core).
    pub jobs: usize,
    /// Check that each case's trace loads to the same tables on one thread
    /// and on several, instead of its expected output
    /// (`tp_threads_check.rs`).
    pub threads_check: bool,
}

/// Runs every case of `DIR/cases.json`, each in a child process of this
/// binary; prints each verdict, the tables by suite and by tag, and the
/// totals. Ok(how many passed).
pub fn run(dir: &Path, opts: &Options) -> Result<usize, String> {
    let started = Instant::now();
    let cases = read_cases(dir)?;
    let exe = std::env::current_exe().map_err(|e| format!("this binary's path: {e}"))?;
    let jobs = match opts.jobs {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    };
    let outcomes = parallel(cases.len(), jobs, |i| {
        let mut cmd = Command::new(&exe);
        cmd.arg("tp-conformance-case").arg(dir.join(cases[i].id()));
        if opts.threads_check {
            cmd.arg("--threads-check");
        }
        run_isolated(cmd, opts.case_timeout)
    });
    for (case, outcome) in cases.iter().zip(&outcomes) {
        match outcome {
            None => println!("PASS {}", case.id()),
            Some(reason) => println!("FAIL {}: {reason}", case.id()),
        }
    }
    let t = tally(&cases, &outcomes);
    println!();
    print_table("suite", &t.by_suite);
    println!();
    print_table("tag", &t.by_tag);
    println!();
    println!(
        "tp-conformance: {} passed, {} failed, of {} cases ({jobs} at once, {:.1} s)",
        t.passed,
        t.cases - t.passed,
        t.cases,
        started.elapsed().as_secs_f64()
    );
    Ok(t.passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(dir: &Path, id: &str, trace: &str, sql: &str, expected: &str) -> PathBuf {
        let d = dir.join(id);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(trace), b"").unwrap();
        std::fs::write(d.join("query.sql"), sql).unwrap();
        std::fs::write(d.join("expected.csv"), expected).unwrap();
        d
    }

    #[test]
    fn a_cases_trace_is_its_one_trace_file_whatever_its_format() {
        let dir = tempfile::tempdir().unwrap();
        let json = case(dir.path(), "s/json", "trace.json", "", "");
        assert_eq!(trace_file(&json).unwrap(), json.join("trace.json"));
        let sys = case(dir.path(), "s/sys", "trace.systrace", "", "");
        assert_eq!(trace_file(&sys).unwrap(), sys.join("trace.systrace"));
        let none = dir.path().join("s/none");
        std::fs::create_dir_all(&none).unwrap();
        assert!(trace_file(&none).is_err());
        let two = case(dir.path(), "s/two", "trace.pb", "", "");
        std::fs::write(two.join("trace.json"), b"").unwrap();
        assert!(trace_file(&two).is_err());
    }

    #[test]
    fn a_case_runs_from_its_trace_json() {
        // An empty JSON trace loads as an empty trace (or fails to): either
        // way its verdict names the load or the query, never a missing
        // `trace.pb`.
        let dir = tempfile::tempdir().unwrap();
        let d = case(
            dir.path(),
            "s/c",
            "trace.json",
            "select 1 as x",
            "\"x\"\n1\n",
        );
        std::fs::write(d.join("trace.json"), b"{\"traceEvents\": []}").unwrap();
        let outcome = run_case(&d);
        assert!(
            !outcome.as_deref().unwrap_or("").contains("trace.pb"),
            "{outcome:?}"
        );
    }

    #[test]
    fn cases_json_gives_suites_and_tags_and_stays_inside_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("cases.json"),
            r#"[{"suite": "parser/a", "name": "x", "tags": ["ext", "format:json"], "part": "dev", "trace": "trace.json"},
                {"suite": "stdlib/b", "name": "y", "tags": [], "part": "dev", "trace": "trace.pb"}]"#,
        )
        .unwrap();
        let cases = read_cases(dir.path()).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].id(), "parser/a/x");
        assert_eq!(cases[0].tags, ["ext", "format:json"]);
        let t = tally(&cases, &[None, Some("no".to_owned())]);
        assert_eq!((t.passed, t.cases), (1, 2));
        assert_eq!(t.by_suite["parser/a"], (1, 1));
        assert_eq!(t.by_suite["stdlib/b"], (1, 0));
        assert_eq!(t.by_tag["format:json"], (1, 1));
        assert_eq!(t.by_tag["(none)"], (1, 0));
        std::fs::write(
            dir.path().join("cases.json"),
            r#"[{"suite": "..", "name": "x", "tags": []}]"#,
        )
        .unwrap();
        assert!(read_cases(dir.path()).is_err());
    }

    #[test]
    fn output_compares_as_the_readme_says() {
        assert_eq!(compare("\n\"a\"\n 1 \n\n", "\"a\"\n1"), None);
        assert!(
            compare("\"a\"\n2\n", "\"a\"\n1\n")
                .unwrap()
                .starts_with("line 2")
        );
    }

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn a_case_that_crashes_hangs_or_says_nothing_fails_and_the_run_goes_on() {
        let t = Duration::from_secs(60);
        assert_eq!(run_isolated(sh("echo PASS"), t), None);
        assert_eq!(
            run_isolated(sh("echo FAIL load: bad"), t).as_deref(),
            Some("load: bad")
        );
        let crashed = run_isolated(sh("kill -SEGV $$"), t).unwrap();
        assert!(crashed.contains("signal 11"), "{crashed}");
        let silent = run_isolated(sh("exit 101"), t).unwrap();
        assert!(silent.contains("without a verdict"), "{silent}");
        // PASS printed, then a crash: not a pass.
        assert!(run_isolated(sh("echo PASS; kill -ABRT $$"), t).is_some());
        // A case that never ends is killed at its limit (here a short one:
        // the child sleeps far longer than any limit).
        let hung = run_isolated(sh("exec sleep 1000"), Duration::from_millis(100)).unwrap();
        assert!(hung.contains("killed"), "{hung}");
    }

    #[test]
    fn a_panicking_case_is_a_verdict_not_a_dead_run() {
        assert_eq!(
            caught(|| panic!("boom {}", 1)).as_deref(),
            Some("panicked: boom 1")
        );
        assert_eq!(caught(|| None), None);
        assert_eq!(caught(|| Some("x".into())).as_deref(), Some("x"));
    }

    #[test]
    fn a_missing_cases_directory_fails_the_run_and_names_it() {
        // CI must never pass tp-conformance by finding nothing to run.
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("perfetto-difftests");
        let opts = Options {
            case_timeout: Duration::from_secs(5),
            jobs: 1,
            threads_check: false,
        };
        let err = run(&gone, &opts).expect_err("a missing directory is an error");
        assert!(err.contains("perfetto-difftests"), "{err}");
        // A directory without cases.json fails the same way.
        std::fs::create_dir_all(&gone).unwrap();
        let err = run(&gone, &opts).expect_err("no cases.json is an error");
        assert!(err.contains("cases.json"), "{err}");
    }

    #[test]
    fn parallel_keeps_job_order() {
        let v = parallel(50, 3, |i| i * 2);
        assert_eq!(v, (0..50).map(|i| i * 2).collect::<Vec<_>>());
    }
}
