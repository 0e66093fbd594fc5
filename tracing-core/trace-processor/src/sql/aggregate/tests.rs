//! The native aggregates answer as SQLite does: each shape is recognised
//! (or left to SQLite), and a differential property test compares the
//! rewritten query with SQLite's own answer on random tables and queries.

use std::sync::Arc;

use proptest::prelude::*;
use rusqlite::types::ValueRef;

use super::rewrite;
use crate::column_store::strings::{StrId, StringPool};
use crate::column_store::table::{Column, Table};
use crate::sql::{Engine, QueryResult, Value};

/// One fact row: `k` (nullable small int), `g` (nullable text), `v`
/// (nullable int), `r` (nullable double), ordered by `ts`.
type FactRow = (Option<i64>, Option<usize>, Option<i64>, Option<f64>);

const WORDS: &[&str] = &["apple", "a", "b", "ab", "B", "bar", "", "zeta"];

/// An engine over fact table `t` (id, ts sorted, k, g, v, r) and
/// dimension table `d` (id, name), each also seen through a view.
fn engine(rows: &[FactRow], dims: usize) -> Engine {
    let mut pool = StringPool::default();
    let ids: Vec<StrId> = WORDS.iter().map(|w| pool.intern(w)).collect();
    let n = rows.len();
    let t = Table {
        name: "t",
        columns: vec![
            Column::int("id", (0..n as i64).collect()),
            Column::int("ts", (0..n as i64).map(|i| i * 10).collect()),
            Column::opt_int("k", rows.iter().map(|r| r.0).collect()),
            Column::str(
                "g",
                rows.iter()
                    .map(|r| r.1.and_then(|i| ids.get(i).copied()).unwrap_or(StrId::NULL))
                    .collect(),
            ),
            Column::opt_int("v", rows.iter().map(|r| r.2).collect()),
            Column::opt_real("r", rows.iter().map(|r| r.3).collect()),
        ],
        len: n,
        has_id: true,
        sorted_by: Some(1),
        strings: Arc::new(pool),
        orders: Default::default(),
    };
    let mut dpool = StringPool::default();
    let names: Vec<StrId> = (0..dims)
        .map(|i| dpool.intern(&format!("d{}", i % 3)))
        .collect();
    let d = Table {
        name: "d",
        columns: vec![
            Column::int("id", (0..dims as i64).collect()),
            Column::str("name", names),
        ],
        len: dims,
        has_id: true,
        sorted_by: None,
        strings: Arc::new(dpool),
        orders: Default::default(),
    };
    let e = Engine::new_union(vec![t, d], &[]).unwrap();
    e.conn
        .execute_batch(
            "CREATE VIEW tv AS SELECT id, ts, k AS key, g, v, r, v * 2 AS twice FROM t;
             CREATE VIEW tf AS SELECT x.id, x.k, x.g, x.v, dd.name AS dname FROM t AS x
               LEFT JOIN d AS dd ON dd.id = x.k WHERE x.v > 0;",
        )
        .unwrap();
    e
}

/// SQLite's own answer, the rewrite bypassed.
fn plain(e: &Engine, sql: &str) -> Result<QueryResult, String> {
    let mut stmt = e.conn.prepare(sql).map_err(|x| x.to_string())?;
    let columns: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let n = columns.len();
    let mut q = stmt.raw_query();
    let mut rows = Vec::new();
    while let Some(row) = q.next().map_err(|x| x.to_string())? {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(match row.get_ref(i).map_err(|x| x.to_string())? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(v) => Value::Int(v),
                ValueRef::Real(v) => Value::Real(v),
                ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
            });
        }
        rows.push(out);
    }
    Ok(QueryResult { columns, rows })
}

/// Asserts the query is rewritten (or not) and answers as SQLite does.
fn same(e: &Engine, sql: &str, native: bool) {
    assert_eq!(rewrite(e, sql).is_some(), native, "{sql}");
    let ours = e.query(sql).map_err(|x| x.to_string());
    let theirs = plain(e, sql);
    match (ours, theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{sql}"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("{sql}: {a:?} vs {b:?}"),
    }
}

fn sample() -> Vec<FactRow> {
    vec![
        (Some(1), Some(0), Some(5), Some(0.5)),
        (Some(2), Some(2), None, Some(-1.25)),
        (None, Some(1), Some(-3), None),
        (Some(1), None, Some(7), Some(2.0)),
        (Some(2), Some(0), Some(1), Some(0.25)),
        (Some(3), Some(4), Some(2), Some(-0.0)),
        (Some(1), Some(3), None, Some(1.5)),
    ]
}

#[test]
fn the_shapes_are_computed_over_the_columns() {
    let e = engine(&sample(), 3);
    for sql in [
        "SELECT k, COUNT(*) FROM t GROUP BY k",
        "select k, count(*) AS n, sum(v), avg(v), min(v), max(v) from t group by k",
        "SELECT g, COUNT(*) AS n FROM t WHERE g GLOB 'a*' GROUP BY g",
        "SELECT g, MIN(r), MAX(r), SUM(r), AVG(r), COUNT(r) FROM t GROUP BY g",
        "SELECT MIN(g), MAX(g), COUNT(g) FROM t",
        "SELECT COUNT(*), SUM(v) FROM t WHERE ts >= 20 AND ts < 50",
        "SELECT COUNT(*), SUM(v) FROM t WHERE v > 100",
        "SELECT k, g, COUNT(*) FROM t GROUP BY k, g ORDER BY 3 DESC, k LIMIT 3",
        "SELECT k, SUM(v) AS s FROM t GROUP BY k HAVING s > 1 ORDER BY s DESC",
        "SELECT k, SUM(v) s FROM t GROUP BY k HAVING COUNT(*) > 1",
        "SELECT key, COUNT(*) FROM tv WHERE r <= 1 GROUP BY key",
        "SELECT k, d.name, SUM(v) AS s FROM t JOIN d ON d.id = t.k GROUP BY k",
        "SELECT t.k, d.name, SUM(t.v) AS s FROM t LEFT JOIN d ON t.k = d.id GROUP BY t.k",
        "SELECT x.k, COUNT(*) FROM t AS x JOIN d AS y ON y.id = x.k GROUP BY y.id",
        "SELECT k, COUNT(*), SUM(v) FROM tf GROUP BY k",
        "SELECT g, COUNT(*) FROM t WHERE g = 'b' AND k IS NOT NULL GROUP BY g",
        "SELECT k, COUNT(*) FROM t WHERE k = 1 GROUP BY k",
        "SELECT k, abs(SUM(v)) FROM t WHERE 2 < ts GROUP BY k",
    ] {
        same(&e, sql, true);
    }
}

#[test]
fn other_queries_are_left_to_sqlite() {
    let e = engine(&sample(), 3);
    for sql in [
        // A bare column of the table (SQLite picks its row).
        "SELECT ts, MAX(v) FROM t",
        "SELECT k, v, COUNT(*) FROM t GROUP BY k",
        // Other aggregates, DISTINCT, expressions inside.
        "SELECT k, group_concat(g) FROM t GROUP BY k",
        "SELECT k, COUNT(DISTINCT g) FROM t GROUP BY k",
        "SELECT k, SUM(v + 1) FROM t GROUP BY k",
        // A computed column of a view, a join not on the id, no GROUP BY
        // with a join, a comma join, a subquery, a window.
        "SELECT key, SUM(twice) FROM tv GROUP BY key",
        "SELECT dname, COUNT(*) FROM tf GROUP BY dname",
        "SELECT t.k, COUNT(*) FROM t JOIN d ON d.name = t.g GROUP BY t.k",
        "SELECT COUNT(*) FROM t JOIN d ON d.id = t.k",
        "SELECT t.k, COUNT(*) FROM t, d WHERE d.id = t.k GROUP BY t.k",
        "SELECT k, COUNT(*) FROM (SELECT * FROM t) GROUP BY k",
        "SELECT k, COUNT(*) OVER () FROM t",
        // Grouped by the joined table's column alone.
        "SELECT d.name, SUM(t.v) FROM t JOIN d ON d.id = t.k GROUP BY d.name",
        // A condition SQLite converts (text against a number), or an OR.
        "SELECT COUNT(*) FROM t WHERE v = '5'",
        "SELECT COUNT(*) FROM t WHERE v = 5 OR k = 1",
        // SUM of text; no aggregate.
        "SELECT SUM(g) FROM t",
        "SELECT k FROM t GROUP BY k",
    ] {
        same(&e, sql, false);
    }
    // Two statements: each is looked at on its own.
    assert!(rewrite(&e, "SELECT COUNT(*) FROM t; SELECT 1").is_none());
}

#[test]
fn an_overflowing_sum_is_sqlites_error() {
    let rows = vec![
        (Some(1), None, Some(i64::MAX), None),
        (Some(1), None, Some(1), None),
        (Some(2), None, Some(i64::MAX), None),
        (Some(2), None, Some(-1), None),
    ];
    let e = engine(&rows, 1);
    // Group 1 overflows: SQLite answers (its error).
    assert!(rewrite(&e, "SELECT k, SUM(v) FROM t GROUP BY k").is_none());
    assert!(e.query("SELECT k, SUM(v) FROM t GROUP BY k").is_err());
    // AVG does not fail, but the magnitudes are past 2^63 too.
    same(
        &e,
        "SELECT k, AVG(v), COUNT(v) FROM t WHERE k = 2 GROUP BY k",
        true,
    );
}

#[test]
fn empty_input_gives_sqlites_empty_answers() {
    let e = engine(&[], 0);
    same(&e, "SELECT COUNT(*), SUM(v), AVG(r), MIN(g) FROM t", true);
    same(&e, "SELECT k, COUNT(*) FROM t GROUP BY k", true);
    let e = engine(&sample(), 3);
    same(
        &e,
        "SELECT COUNT(*), SUM(v), MAX(g) FROM t WHERE v > 1000",
        true,
    );
}

fn fact_row() -> impl Strategy<Value = FactRow> {
    (
        proptest::option::of(-2i64..4),
        proptest::option::of(0usize..WORDS.len()),
        proptest::option::of(prop_oneof![
            -50i64..50,
            Just(i64::MAX / 2),
            Just(i64::MIN / 2)
        ]),
        // Quarters: sums are exact whatever the order.
        proptest::option::of((-40i32..40).prop_map(|q| f64::from(q) / 4.0)),
    )
}

/// A random query of the shape (or near it).
fn query() -> impl Strategy<Value = String> {
    let aggs = proptest::collection::vec(
        prop_oneof![
            Just("COUNT(*)"),
            Just("COUNT(g)"),
            Just("SUM(v)"),
            Just("SUM(r)"),
            Just("AVG(v)"),
            Just("AVG(r)"),
            Just("MIN(v)"),
            Just("MAX(r)"),
            Just("MIN(g)"),
            Just("MAX(g)"),
            Just("COUNT(k)"),
        ],
        1..4,
    );
    let group = prop_oneof![Just(""), Just("k"), Just("g"), Just("k, g"), Just("g, k")];
    let conds = proptest::collection::vec(
        prop_oneof![
            (-10i64..10).prop_map(|n| format!("v > {n}")),
            (0i64..80).prop_map(|n| format!("ts >= {n}")),
            (0i64..80).prop_map(|n| format!("ts < {n}")),
            (-2i64..4).prop_map(|n| format!("k = {n}")),
            Just("k IS NULL".to_owned()),
            Just("g IS NOT NULL".to_owned()),
            Just("g GLOB 'a*'".to_owned()),
            Just("g GLOB '*a*'".to_owned()),
            Just("g = 'b'".to_owned()),
            Just("g >= 'b'".to_owned()),
            Just("r != 0.5".to_owned()),
            Just("r < 1".to_owned()),
        ],
        0..3,
    );
    let join = prop_oneof![
        Just(""),
        Just(" JOIN d ON d.id = t.k"),
        Just(" LEFT JOIN d ON t.k = d.id")
    ];
    (aggs, group, conds, join, any::<bool>()).prop_map(|(aggs, group, conds, join, order)| {
        let join = if group.contains('k') { join } else { "" };
        let mut items: Vec<String> = Vec::new();
        if !group.is_empty() {
            items.push(group.replace("k", "t.k").replace("g", "t.g"));
        }
        if !join.is_empty() {
            items.push("d.name".into());
        }
        items.extend(aggs.iter().map(|a| a.to_string()));
        let mut sql = format!("SELECT {} FROM t{join}", items.join(", "));
        if !conds.is_empty() {
            sql += &format!(" WHERE {}", conds.join(" AND "));
        }
        if !group.is_empty() {
            sql += &format!(
                " GROUP BY {}",
                group.replace("k", "t.k").replace("g", "t.g")
            );
            if order {
                sql += " ORDER BY 2 DESC LIMIT 3";
            }
        }
        sql
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// On random tables and queries, the rewritten query answers exactly
    /// as SQLite does, and every query of the shape is rewritten (unless a
    /// sum could overflow).
    #[test]
    fn native_aggregates_answer_as_sqlite(
        rows in proptest::collection::vec(fact_row(), 0..40),
        dims in 0usize..4,
        sql in query(),
    ) {
        let e = engine(&rows, dims);
        let big = rows.iter().any(|r| r.2.is_some_and(|v| v.unsigned_abs() > 1000));
        let sums = sql.contains("SUM(v)");
        let native = rewrite(&e, &sql).is_some();
        prop_assert!(native || (big && sums), "{} not rewritten", sql);
        let ours = e.query(&sql).map_err(|x| x.to_string());
        let theirs = plain(&e, &sql);
        match (ours, theirs) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", sql),
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "{}: {:?} vs {:?}", sql, a, b),
        }
    }
}
