//! The `graphs.*` modules end to end on an engine: each macro over tables,
//! CTEs and subqueries, against answers worked out by hand.

use crate::storage::Storage;
use crate::{TraceProcessor, Value};

fn engine() -> TraceProcessor {
    TraceProcessor::from_storage(Storage::default()).expect("engine")
}

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

fn i(x: i64) -> Value {
    Value::Int(x)
}

const N: Value = Value::Null;

#[test]
fn searches_walk_edges_in_their_order_from_a_cte_or_a_table() {
    let tp = engine();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE graphs.search;
         WITH foo AS (SELECT 5 AS source_node_id, 10 AS dest_node_id UNION ALL SELECT 10, 10)
         SELECT * FROM graph_reachable_dfs!(foo, (SELECT 5 AS node_id))",
    );
    assert_eq!(got, [vec![i(5), N], vec![i(10), i(5)]]);
    rows(
        &tp,
        "CREATE PERFETTO TABLE edges AS
         SELECT column1 AS source_node_id, column2 AS dest_node_id
         FROM (VALUES (0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (7, NULL))",
    );
    let dfs = rows(
        &tp,
        "SELECT * FROM graph_reachable_dfs!(edges, (SELECT 0 AS node_id))",
    );
    assert_eq!(
        dfs,
        [
            vec![i(0), N],
            vec![i(1), i(0)],
            vec![i(3), i(1)],
            vec![i(4), i(3)],
            vec![i(2), i(0)]
        ]
    );
    let bfs = rows(
        &tp,
        "SELECT * FROM graph_reachable_bfs!(edges, (SELECT 0 AS node_id))",
    );
    assert_eq!(
        bfs,
        [
            vec![i(0), N],
            vec![i(1), i(0)],
            vec![i(2), i(0)],
            vec![i(3), i(1)],
            vec![i(4), i(3)]
        ]
    );
    // No start: no row; a start in no edge: itself.
    assert!(
        rows(
            &tp,
            "SELECT * FROM graph_reachable_bfs!(edges, (SELECT 1 AS node_id WHERE 0))"
        )
        .is_empty()
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT * FROM graph_reachable_dfs!(edges, (SELECT 7 AS node_id))"
        ),
        [vec![i(7), N]]
    );
    let siblings = rows(
        &tp,
        "SELECT * FROM graph_next_sibling!((SELECT 1 AS node_id, 0 AS node_parent_id, 1 AS sort_key
           UNION ALL SELECT 2, 1, 2 UNION ALL SELECT 3, 1, 1)) ORDER BY node_id",
    );
    assert_eq!(siblings, [vec![i(1), N], vec![i(2), N], vec![i(3), i(2)]]);
}

#[test]
fn the_weight_bounded_walk_and_the_ancestors_of_a_tree() {
    let tp = engine();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE graphs.search;
         INCLUDE PERFETTO MODULE graphs.hierarchy;
         CREATE PERFETTO TABLE g AS
         SELECT column1 AS source_node_id, column2 AS dest_node_id, column3 AS edge_weight
         FROM (VALUES (1, 2, 1), (1, 3, 1), (3, 4, 1));
         SELECT * FROM graph_reachable_weight_bounded_dfs!(
           g, (SELECT 1 AS root_node_id, 1 AS root_target_weight), 0)",
    );
    assert_eq!(got, [vec![i(1), i(1), N], vec![i(1), i(2), i(1)]]);
    let floor = rows(
        &tp,
        "SELECT node_id FROM graph_reachable_weight_bounded_dfs!(
           g, (SELECT 1 AS root_node_id, 1 AS root_target_weight), 1)",
    );
    assert_eq!(floor, [vec![i(1)], vec![i(2)], vec![i(3)]]);
    let ancestors = rows(
        &tp,
        "SELECT id FROM _tree_reachable_ancestors_or_self!(
           (SELECT column1 AS id, column2 AS parent_id FROM (VALUES (1, NULL), (2, 1), (3, 2), (4, 1))),
           (SELECT 3 AS id)) ORDER BY id",
    );
    assert_eq!(ancestors, [vec![i(1)], vec![i(2)], vec![i(3)]]);
}

#[test]
fn dominators_and_partitions_through_their_macros() {
    let tp = engine();
    let dom = rows(
        &tp,
        "INCLUDE PERFETTO MODULE graphs.dominator_tree;
         SELECT * FROM graph_dominator_tree!(
           (SELECT column1 AS source_node_id, column2 AS dest_node_id
            FROM (VALUES (1, 2), (1, 3), (2, 4), (3, 4), (4, 5))),
           1)",
    );
    assert_eq!(
        dom,
        [
            vec![i(1), N],
            vec![i(2), i(1)],
            vec![i(4), i(1)],
            vec![i(5), i(4)],
            vec![i(3), i(1)]
        ]
    );
    let err = tp
        .query(
            "SELECT * FROM graph_dominator_tree!(
               (SELECT 1 AS source_node_id, 2 AS dest_node_id), 9)",
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("root node is not in the graph"), "{err}");
    let parts = rows(
        &tp,
        "INCLUDE PERFETTO MODULE graphs.partition;
         SELECT * FROM tree_structural_partition_by_group!(
           (SELECT column1 AS id, column2 AS parent_id, column3 AS group_key
            FROM (VALUES (1, NULL, 1), (2, 1, 2), (3, 2, 1), (4, 3, 2))))
         ORDER BY id",
    );
    assert_eq!(
        parts,
        [
            vec![i(1), N, i(1)],
            vec![i(2), N, i(2)],
            vec![i(3), i(1), i(1)],
            vec![i(4), i(2), i(2)]
        ]
    );
}

#[test]
fn scans_run_the_callers_step_on_each_rows_destinations() {
    let tp = engine();
    rows(
        &tp,
        "INCLUDE PERFETTO MODULE graphs.scan;
         CREATE PERFETTO TABLE e AS
         SELECT column1 AS source_node_id, column2 AS dest_node_id
         FROM (VALUES (1, 2), (1, 3), (2, 4), (3, 4))",
    );
    // A running sum along every path: node 4 is reached twice.
    let sums = rows(
        &tp,
        "SELECT id, total, label FROM _graph_scan!(
           e,
           (SELECT 1 AS id, 10 AS total, 'a' AS label),
           (total, label),
           (SELECT id, total + id AS total, label || id AS label FROM $table)
         ) ORDER BY id, total",
    );
    let t = |s: &str| Value::Text(s.into());
    assert_eq!(
        sums,
        [
            vec![i(1), i(10), t("a")],
            vec![i(2), i(12), t("a2")],
            vec![i(3), i(13), t("a3")],
            vec![i(4), i(16), t("a24")],
            vec![i(4), i(17), t("a34")]
        ]
    );
    // Aggregating: node 4 runs once, after both its parents.
    let agg = rows(
        &tp,
        "SELECT id, total FROM _graph_aggregating_scan!(
           e,
           (SELECT 1 AS id, 1 AS total),
           (total),
           (SELECT id, sum(total) + 1 AS total FROM $table GROUP BY id)
         ) ORDER BY id",
    );
    assert_eq!(
        agg,
        [
            vec![i(1), i(1)],
            vec![i(2), i(2)],
            vec![i(3), i(2)],
            vec![i(4), i(5)]
        ]
    );
    // No first rows: no rows; a query with other columns: an error.
    assert!(
        rows(
            &tp,
            "SELECT * FROM _graph_scan!(e, (SELECT 1 AS id, 1 AS total WHERE 0), (total),
           (SELECT id, total FROM $table))"
        )
        .is_empty()
    );
    let err = tp
        .query(
            "SELECT * FROM _graph_aggregating_scan!(e, (SELECT 1 AS id, 1 AS total), (total),
               (SELECT id, total AS other FROM $table))",
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("do not match"), "{err}");
}

#[test]
fn a_table_becomes_a_tree_and_back_parents_first() {
    let tp = engine();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE std.trees.table_conversion;
         SELECT * FROM _tree_to_table!(
           _tree_from_table!(
             (SELECT column1 AS id, column2 AS parent_id, column3 AS name, column4 AS size
              FROM (VALUES (7, 5, 'leaf', 1.5), (5, NULL, 'root', 2), (9, 5, 'other', NULL))),
             (name, size)),
           (name, size))",
    );
    let t = |s: &str| Value::Text(s.into());
    assert_eq!(
        got,
        [
            vec![i(0), N, i(5), N, t("root"), i(2)],
            vec![i(1), i(0), i(7), i(5), t("leaf"), Value::Real(1.5)],
            vec![i(2), i(0), i(9), i(5), t("other"), N],
        ]
    );
    let err = tp
        .query("SELECT * FROM _tree_to_table!(_tree_from_table!((SELECT 1 AS id, 2 AS parent_id), ()), ())")
        .unwrap_err()
        .to_string();
    assert!(err.contains("parent_id not found"), "{err}");
}
