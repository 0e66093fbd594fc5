//! `cargo xtask tp-conformance --threads-check`: each case's trace loaded
//! on one thread and on several must make the same tables, every row of
//! every table and view (`load/parallel/` in the trace processor keeps the
//! ordered part of the load on one thread so that they do). A case passes
//! when the two loads agree (both failing with the same error counts as
//! agreeing); its query and expected output are not looked at.

use std::path::Path;

use zerotrace_trace_processor::{LoadOptions, TraceProcessor};

/// Threads of the second load (more than the pre-stage's minimum of a
/// framer and one worker, so that batches come back out of order).
const MANY: usize = 4;

/// `None` when a case's `trace` loads to the same tables on 1 and on
/// [`MANY`] threads, else the first table that differs.
pub fn same_tables(trace: &Path) -> Option<String> {
    let one = dump(trace, 1);
    let many = dump(trace, MANY);
    match (one, many) {
        (Ok(a), Ok(b)) => first_difference(&a, &b),
        (Err(a), Err(b)) if a == b => None,
        (a, b) => Some(format!(
            "1 thread: {}; {MANY} threads: {}",
            a.err().unwrap_or_else(|| "loaded".into()),
            b.err().unwrap_or_else(|| "loaded".into())
        )),
    }
}

/// Every table's and view's rows (or its error), by name, after loading
/// `trace` on `threads` threads as the cases load it.
fn dump(trace: &Path, threads: usize) -> Result<Vec<(String, String)>, String> {
    let options = LoadOptions {
        analyze_proto_content: true,
        crop_track_events: true,
        threads,
        ..LoadOptions::default()
    };
    let tp = TraceProcessor::open_with_options(trace, options, |_| {})
        .map_err(|e| format!("load: {e}"))?;
    let names = tp.table_names().map_err(|e| format!("tables: {e}"))?;
    Ok(names
        .into_iter()
        .map(|name| {
            let rows = match tp.query(&format!("SELECT * FROM \"{name}\"")) {
                Ok(r) => format!("{:?}", r.rows),
                Err(e) => format!("error: {e}"),
            };
            (name, rows)
        })
        .collect())
}

/// The first table whose rows differ between the two dumps, if any.
fn first_difference(one: &[(String, String)], many: &[(String, String)]) -> Option<String> {
    if one.len() != many.len() {
        return Some(format!(
            "{} tables on 1 thread, {} on {MANY}",
            one.len(),
            many.len()
        ));
    }
    one.iter()
        .zip(many)
        .find(|(a, b)| a != b)
        .map(|((name, _), _)| format!("table {name} differs between 1 and {MANY} threads"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_table_is_named() {
        let t = |n: &str, r: &str| (n.to_owned(), r.to_owned());
        let a = [t("a", "1"), t("b", "2")];
        assert_eq!(first_difference(&a, &a), None);
        let b = [t("a", "1"), t("b", "3")];
        assert_eq!(
            first_difference(&a, &b).as_deref(),
            Some("table b differs between 1 and 4 threads")
        );
        assert!(first_difference(&a, &b[..1]).is_some());
    }
}
