//! Traces from outside zerotrace (the genuine SDK's, the genuine service's
//! with our probes, an Android-like one) through our trace processor: a
//! trace loads, its rows read as text for comparison, and every stat that
//! reports an error or a data loss is one the test names with its reason.

#![allow(dead_code)]

use zerotrace_trace_processor::{TraceProcessor, Value};

/// Loads a trace (protobuf, as written).
pub fn load(trace: &[u8]) -> TraceProcessor {
    TraceProcessor::from_bytes(trace).expect("the trace loads")
}

/// One value as text: integers and doubles as Rust prints them, NULL as
/// `NULL`, bytes by their length.
pub fn text(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_owned(),
        Value::Int(i) => i.to_string(),
        Value::Real(r) => r.to_string(),
        Value::Text(t) => t.clone(),
        Value::Blob(b) => format!("<{} bytes>", b.len()),
    }
}

/// The rows of `sql`, each row's values as text joined by `|`.
pub fn rows(tp: &TraceProcessor, sql: &str) -> Vec<String> {
    tp.query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .rows
        .iter()
        .map(|r| r.iter().map(text).collect::<Vec<_>>().join("|"))
        .collect()
}

/// The single integer `sql` answers.
pub fn int(tp: &TraceProcessor, sql: &str) -> i64 {
    match tp
        .query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .rows
        .as_slice()
    {
        [row] => match row.as_slice() {
            [Value::Int(i)] => *i,
            other => panic!("{sql}: not one integer: {other:?}"),
        },
        other => panic!("{sql}: not one row: {other:?}"),
    }
}

/// Every stat with an error or data-loss severity and a non-zero value, as
/// `name[idx]=value` (idx only when the stat is indexed).
pub fn problem_stats(tp: &TraceProcessor) -> Vec<(String, String)> {
    rows(
        tp,
        "SELECT name, idx, value FROM stats \
         WHERE value != 0 AND severity IN ('error', 'data_loss') ORDER BY name, idx",
    )
    .into_iter()
    .map(|r| {
        let mut parts = r.split('|');
        let name = parts.next().unwrap_or_default().to_owned();
        let idx = parts.next().unwrap_or_default();
        let value = parts.next().unwrap_or_default();
        let shown = if idx == "NULL" {
            format!("{name}={value}")
        } else {
            format!("{name}[{idx}]={value}")
        };
        (name, shown)
    })
    .collect()
}

/// Fails on any error or data-loss stat not named in `explained`, whose
/// entries are `(stat, why the test expects it)`; the reason is there to be
/// read in the test, and is printed with the stat when it is present.
pub fn assert_no_unexplained_stats(tp: &TraceProcessor, explained: &[(&str, &str)]) {
    let mut unexplained = Vec::new();
    for (name, shown) in problem_stats(tp) {
        match explained.iter().find(|(n, _)| *n == name) {
            Some((_, why)) => println!("expected stat {shown}: {why}"),
            None => unexplained.push(shown),
        }
    }
    assert!(
        unexplained.is_empty(),
        "unexplained stats: {unexplained:#?}"
    );
}
