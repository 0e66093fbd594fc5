//! Our recordings through the trace processor: a trace loads, and every
//! stat that reports an error or a loss is one the test explains.

#![allow(dead_code)]

use zerotrace_trace_processor::{TraceProcessor, Value};

/// Loads a trace (plain protobuf).
pub fn load(trace: &[u8]) -> TraceProcessor {
    TraceProcessor::from_bytes(trace).expect("the trace loads")
}

/// The rows of a query.
pub fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).expect("query").rows
}

/// Fails on any stat with an error or data-loss severity and a non-zero
/// value, other than those named in `explained` (with why, in the test).
pub fn assert_no_unexplained_stats(tp: &TraceProcessor, explained: &[&str]) {
    let bad: Vec<String> = rows(
        tp,
        "SELECT name, idx, severity, value FROM stats \
         WHERE value != 0 AND severity IN ('error', 'data_loss') ORDER BY name, idx",
    )
    .into_iter()
    .filter(|r| !matches!(&r[0], Value::Text(n) if explained.contains(&n.as_str())))
    .map(|r| format!("{r:?}"))
    .collect();
    assert!(bad.is_empty(), "unexplained stats: {bad:#?}");
}
