//! `cargo xtask tp-conformance [DIR]`: runs Perfetto's trace processor diff
//! test cases (default: `perfetto-difftests` in the `shared` directory
//! beside the repository) through our trace processor: each case's `trace.pb` loaded,
//! `query.sql` run, the output printed as `trace_processor_shell` prints
//! it and compared with `expected.csv` the way the cases' README says
//! (leading newlines dropped, each line trimmed, then exact equality).
//! Prints PASS or FAIL per case with the first differing line, then the
//! totals per suite and overall. The cases are read in place, never copied.

use std::collections::BTreeMap;
use std::path::Path;

use zerotrace_trace_processor::{TraceProcessor, shell_csv};

/// Why a case failed, or None when it passed.
fn run_case(dir: &Path) -> Option<String> {
    let sql = match std::fs::read_to_string(dir.join("query.sql")) {
        Ok(s) => s,
        Err(e) => return Some(format!("query.sql: {e}")),
    };
    let expected = match std::fs::read_to_string(dir.join("expected.csv")) {
        Ok(s) => s,
        Err(e) => return Some(format!("expected.csv: {e}")),
    };
    let tp = match TraceProcessor::open(&dir.join("trace.pb")) {
        Ok(tp) => tp,
        Err(e) => return Some(format!("load: {e}")),
    };
    let actual = match tp.query(&sql) {
        Ok(r) => shell_csv(&r),
        Err(e) => return Some(format!("query: {e}")),
    };
    let norm = |s: &str| -> Vec<String> {
        s.trim_start_matches(['\n', '\r'])
            .lines()
            .map(|l| l.trim().to_owned())
            .collect::<Vec<_>>()
    };
    let mut a = norm(&actual);
    let mut e = norm(&expected);
    while a.last().is_some_and(String::is_empty) {
        a.pop();
    }
    while e.last().is_some_and(String::is_empty) {
        e.pop();
    }
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

/// Runs every case listed in `DIR/index.json`; Ok(how many passed).
pub fn run(dir: &Path) -> Result<usize, String> {
    let index = std::fs::read_to_string(dir.join("index.json"))
        .map_err(|e| format!("{}: {e}", dir.join("index.json").display()))?;
    let cases: Vec<String> =
        serde_json::from_str(&index).map_err(|e| format!("index.json: {e}"))?;
    let mut per_suite: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut passed = 0;
    for case in &cases {
        let suite = case
            .rsplit_once('/')
            .map_or(case.as_str(), |(s, _)| s)
            .to_owned();
        let entry = per_suite.entry(suite).or_default();
        entry.1 += 1;
        match run_case(&dir.join(case)) {
            None => {
                println!("PASS {case}");
                passed += 1;
                entry.0 += 1;
            }
            Some(reason) => println!("FAIL {case}: {reason}"),
        }
    }
    println!();
    for (suite, (p, n)) in &per_suite {
        println!("{suite}: {p}/{n}");
    }
    println!(
        "tp-conformance: {passed} passed, {} failed, of {} cases",
        cases.len() - passed,
        cases.len()
    );
    Ok(passed)
}
