//! End-to-end tests of the operator through the engine: each builds a
//! small flamegraph from literal rows and checks what a query answers.

use crate::storage::Storage;
use crate::{TraceProcessor, Value};

fn tp() -> TraceProcessor {
    TraceProcessor::from_storage(Storage::default()).expect("engine")
}

/// A source: `root` (5) calls `f` (3) twice, once through `g` (2), and
/// `f` calls `h` (7).
const SOURCE: &str = "CREATE VIRTUAL TABLE t USING __intrinsic_flamegraph((
    SELECT 10 AS id, NULL AS parent_id, 'root' AS name, 5 AS value, 'lib0' AS m
    UNION ALL SELECT 11, 10, 'f', 3, 'lib1'
    UNION ALL SELECT 12, 10, 'g', 2, 'lib1'
    UNION ALL SELECT 13, 12, 'f', 3, 'lib2'
    UNION ALL SELECT 14, 11, 'h', 7, 'lib1'
));";

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<String> {
    tp.query(sql)
        .expect(sql)
        .rows
        .into_iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Null => "NULL".to_owned(),
                    Value::Int(i) => i.to_string(),
                    Value::Real(f) => format!("{f:.1}"),
                    Value::Text(t) => t.clone(),
                    Value::Blob(_) => "blob".to_owned(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn top_down_merges_equal_frames_and_lays_out_widest_first() {
    let tp = tp();
    tp.query(SOURCE).expect("create");
    let got = rows(
        &tp,
        "SELECT name, depth, self_value, cumulative_value, parent_cumulative_value, x_start, x_end
         FROM t(__intrinsic_flamegraph_config('value', 'value'))",
    );
    assert_eq!(
        got,
        vec![
            "root 1 5 20 NULL 0 20",
            "f 2 3 10 20 0 10",
            "g 2 2 5 20 10 15",
            "h 3 7 7 10 0 7",
            "f 3 3 3 5 10 13",
        ]
    );
}

#[test]
fn bottom_up_pivot_and_filters_follow_upstream_rules() {
    let tp = tp();
    tp.query(SOURCE).expect("create");
    let q = |args: &str| {
        rows(
            &tp,
            &format!(
                "SELECT name, depth, self_value, cumulative_value
                 FROM t(__intrinsic_flamegraph_config('value', 'value', {args}))"
            ),
        )
    };
    assert_eq!(
        q("'view', 'BOTTOM_UP'"),
        vec![
            "h -1 7 7",
            "f -1 6 6",
            "root -1 5 5",
            "g -1 2 2",
            "f -2 0 7",
            "root -2 0 3",
            "g -2 0 3",
            "root -2 0 2",
            "root -3 0 7",
            "root -3 0 3",
        ]
    );
    assert_eq!(
        q("'view', 'PIVOT', 'view_pattern', '^g$', ''"),
        vec!["g 1 2 5", "g -1 5 5", "f 2 3 3", "root -2 0 5"]
    );
    // HIDE_FRAME folds g into root; SHOW_STACK keeps the stacks through h.
    assert_eq!(
        q("'filter', 'HIDE_FRAME', '^G$', 'i'"),
        vec!["root 1 7 20", "f 2 6 13", "h 3 7 7"]
    );
    assert_eq!(
        q("'filter', 'SHOW_STACK', 'h', ''"),
        vec!["root 1 0 7", "f 2 0 7", "h 3 7 7"]
    );
    assert_eq!(
        q("'filter', 'HIDE_STACK', '^g$', ''"),
        vec!["root 1 5 15", "f 2 3 10", "h 3 7 7"]
    );
}

#[test]
fn grouping_aggregates_and_the_super_root() {
    let tp = tp();
    tp.query(SOURCE).expect("create");
    assert_eq!(
        rows(
            &tp,
            "SELECT name, m, cumulative_value FROM t(__intrinsic_flamegraph_config(
               'value', 'value', 'view', 'BOTTOM_UP', 'grouping', 'm'))
             WHERE depth = -1"
        ),
        vec![
            "h lib1 7",
            "root lib0 5",
            "f lib1 3",
            "f lib2 3",
            "g lib1 2"
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, m FROM t(__intrinsic_flamegraph_config(
               'value', 'value', 'view', 'BOTTOM_UP',
               'aggregate', 'ONE_OR_SUMMARY', 'm', 'm'))
             WHERE depth = -1"
        ),
        vec!["h lib1", "f lib1 and 2 others", "root lib0", "g lib1"]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, m FROM t(__intrinsic_flamegraph_config(
               'value', 'value', 'aggregate', 'CONCAT_WITH_COMMA', 'm', 'm'))
             WHERE name = 'f'"
        ),
        vec!["f lib1", "f lib2"]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT _tree_id, _tree_parent_id, depth, name, cumulative_value
             FROM t(__intrinsic_flamegraph_config('value', 'value'))
             WHERE __intrinsic_flamegraph_find(_tree_id, 'SUPER_ROOT')"
        ),
        vec!["0 NULL 0 NULL 20.0"]
    );
}

#[test]
fn bad_sources_and_configs_are_errors_not_panics() {
    let tp = tp();
    let err = |sql: &str| tp.query(sql).expect_err(sql).to_string();
    assert!(
        err("CREATE VIRTUAL TABLE bad USING __intrinsic_flamegraph((
               SELECT 1 AS id, 2 AS parent_id, 'x' AS name, 1 AS value))")
        .contains("parent_id not found")
    );
    tp.query(SOURCE).expect("create");
    assert!(
        err("SELECT * FROM t(__intrinsic_flamegraph_config('value', 'nope'))")
            .contains("value column: column 'nope' does not exist")
    );
    assert!(err("SELECT __intrinsic_flamegraph_config('view')").contains("expects 1 value"));
    assert!(err("SELECT * FROM t('garbage')").contains("expected a flamegraph config"));
    assert!(
        err("SELECT * FROM t(__intrinsic_flamegraph_config('value', 'value', 'filter', 'HIDE_FRAME', '(', ''))")
            .contains("invalid regex")
    );
    tp.query(
        "CREATE VIRTUAL TABLE neg USING __intrinsic_flamegraph((
           SELECT 1 AS id, NULL AS parent_id, 'x' AS name, -1 AS value))",
    )
    .expect("create");
    assert!(
        err("SELECT * FROM neg(__intrinsic_flamegraph_config('value', 'value'))")
            .contains("non-negative")
    );
}

#[test]
fn loading_a_source_keeps_the_connection_s_file_guard() {
    let tp = tp();
    tp.query(SOURCE).expect("create");
    let path = std::env::temp_dir().join(format!("zt-flamegraph-guard-{}.db", std::process::id()));
    let attached = tp.query(&format!("ATTACH DATABASE '{}' AS x", path.display()));
    let _ = std::fs::remove_file(&path);
    assert!(
        attached.is_err(),
        "SQL reached a file after a flamegraph load"
    );
}
