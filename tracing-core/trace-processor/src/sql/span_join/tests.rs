//! Tests of the span joins: the sweep over lists of rows (no SQLite), and
//! the virtual tables over SQLite tables made in each test.

use rusqlite::Connection;
use rusqlite::types::Value;

use super::args::{JoinKind, Partitioning};
use super::error::SpanJoinError;
use super::side::{Rows, Shadows, Side};
use super::sweep::Sweep;

/// A row as (partition, ts, dur).
type Row = (Option<i64>, i64, i64);

/// A side for [`sweep`]: its rows, whether it is partitioned, its shadows.
type SideArg<'a> = (&'a [Row], bool, Shadows);

/// Rows given as (partition, ts, dur), already in order.
struct ListRows {
    rows: Vec<Row>,
    at: Option<usize>,
}

impl ListRows {
    fn new(rows: &[Row]) -> Self {
        ListRows {
            rows: rows.to_vec(),
            at: None,
        }
    }

    fn row(&self) -> Row {
        self.at
            .and_then(|i| self.rows.get(i))
            .copied()
            .unwrap_or((None, 0, 0))
    }
}

impl Rows for ListRows {
    fn restart(&mut self) -> Result<(), SpanJoinError> {
        self.at = None;
        Ok(())
    }

    fn step(&mut self) -> Result<bool, SpanJoinError> {
        let next = self.at.map_or(0, |i| i + 1);
        self.at = Some(next);
        Ok(next < self.rows.len())
    }

    fn ts(&self) -> i64 {
        self.row().1
    }

    fn dur(&self) -> i64 {
        self.row().2
    }

    fn partition(&self) -> Result<Option<i64>, SpanJoinError> {
        Ok(self.row().0)
    }
}

/// The joined spans (ts, dur, partition) of a sweep.
fn sweep(
    kind: JoinKind,
    partitioning: Partitioning,
    left: SideArg<'_>,
    right: SideArg<'_>,
) -> Vec<(i64, i64, i64)> {
    let l = Side::new(ListRows::new(left.0), left.1, left.2);
    let r = Side::new(ListRows::new(right.0), right.1, right.2);
    let mut s = Sweep::start(kind, partitioning, l, r).expect("start");
    let mut out = Vec::new();
    while !s.is_end() {
        out.push((s.ts(), s.dur(), s.partition()));
        s.advance().expect("advance");
    }
    out
}

#[test]
fn the_sweep_intersects_spans_per_partition_skipping_null_partitions() {
    let left = [
        (Some(1), 0, 10),
        (Some(1), 20, 10),
        (None, 0, 1000),
        (Some(2), 5, 5),
    ];
    let right = [(Some(1), 5, 20), (Some(2), 0, 100), (Some(3), 0, 100)];
    let got = sweep(
        JoinKind::Inner,
        Partitioning::Same,
        (&left, true, Shadows::None),
        (&right, true, Shadows::None),
    );
    assert_eq!(got, vec![(5, 5, 1), (20, 5, 1), (5, 5, 2)]);
}

#[test]
fn zero_and_minus_one_durations_meet_spans_they_start_in() {
    // A span of no duration inside another is a joined span of no
    // duration; one of -1 lasts -1; two starting together always meet.
    let left = [(None, 5, 0), (None, 20, -1), (None, 30, 0)];
    let right = [(None, 0, 10), (None, 20, 5), (None, 30, 0)];
    let got = sweep(
        JoinKind::Inner,
        Partitioning::None,
        (&left, false, Shadows::None),
        (&right, false, Shadows::None),
    );
    assert_eq!(
        got.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(),
        vec![(5, 0), (20, -1), (30, 0)]
    );
}

#[test]
fn an_outer_join_fills_both_sides_gaps_and_missing_partitions() {
    let left = [(Some(1), 10, 10)];
    let right = [(Some(1), 15, 10), (Some(2), 0, 5)];
    let got = sweep(
        JoinKind::Outer,
        Partitioning::Same,
        (&left, true, Shadows::All),
        (&right, true, Shadows::All),
    );
    assert_eq!(got, vec![(10, 5, 1), (15, 5, 1), (20, 5, 1), (0, 5, 2)]);
}

fn conn() -> Connection {
    let c = Connection::open_in_memory().expect("open");
    super::register(&c).expect("register");
    c.execute_batch(
        "CREATE TABLE a(ts BIGINT, dur BIGINT, cpu BIGINT, name TEXT);
         INSERT INTO a VALUES (0, 100, 0, 'a0'), (200, 100, 0, 'a1'), (50, 10, 1, 'a2');
         CREATE TABLE b(ts BIGINT, dur BIGINT, cpu BIGINT, freq BIGINT);
         INSERT INTO b VALUES (50, 200, 0, 1000), (0, 1000, 2, 2000);
         CREATE TABLE u(ts BIGINT, dur BIGINT, level BIGINT);
         INSERT INTO u VALUES (40, 20, 7), (250, 100, 8);",
    )
    .expect("tables");
    c
}

fn rows(c: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut stmt = c.prepare(sql).expect("prepare");
    let n = stmt.column_count();
    stmt.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn i(v: i64) -> Value {
    Value::Integer(v)
}

fn t(s: &str) -> Value {
    Value::Text(s.to_owned())
}

#[test]
fn span_join_intersects_partitioned_tables_with_both_sides_columns() {
    let c = conn();
    c.execute_batch("CREATE VIRTUAL TABLE j USING SPAN_JOIN(a PARTITIONED cpu, b PARTITIONED cpu)")
        .expect("create");
    let cols: Vec<String> = c
        .prepare("SELECT * FROM j")
        .expect("prepare")
        .column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(cols, ["ts", "dur", "cpu", "name", "freq"]);
    assert_eq!(
        rows(&c, "SELECT * FROM j"),
        vec![
            vec![i(50), i(50), i(0), t("a0"), i(1000)],
            vec![i(200), i(50), i(0), t("a1"), i(1000)],
        ]
    );
    // Constraints given to the sides' queries change nothing.
    assert_eq!(
        rows(
            &c,
            "SELECT ts FROM j WHERE name = 'a1' AND freq = 1000 AND ts <= 200"
        ),
        vec![vec![i(200)]]
    );
    assert_eq!(
        rows(&c, "SELECT ts FROM j WHERE cpu = 1"),
        Vec::<Vec<Value>>::new()
    );
}

#[test]
fn a_left_join_keeps_the_left_spans_with_nulls_where_the_right_has_none() {
    let c = conn();
    c.execute_batch(
        "CREATE VIRTUAL TABLE j USING SPAN_LEFT_JOIN(a PARTITIONED cpu, b PARTITIONED cpu)",
    )
    .expect("create");
    // A constraint on the side that yields shadows stays out of its
    // query (its gaps need all its rows); one on the other side goes in.
    assert_eq!(
        rows(&c, "SELECT ts FROM j WHERE freq IS NULL"),
        vec![vec![i(0)], vec![i(250)], vec![i(50)]]
    );
    assert_eq!(
        rows(&c, "SELECT ts FROM j WHERE name = 'a1' AND cpu = 0"),
        vec![vec![i(200)], vec![i(250)]]
    );
    assert_eq!(
        rows(&c, "SELECT ts, dur, cpu, name, freq FROM j"),
        vec![
            vec![i(0), i(50), i(0), t("a0"), Value::Null],
            vec![i(50), i(50), i(0), t("a0"), i(1000)],
            vec![i(200), i(50), i(0), t("a1"), i(1000)],
            vec![i(250), i(50), i(0), t("a1"), Value::Null],
            vec![i(50), i(10), i(1), t("a2"), Value::Null],
        ]
    );
}

#[test]
fn an_unpartitioned_side_applies_to_every_partition_of_the_other() {
    let c = conn();
    c.execute_batch("CREATE VIRTUAL TABLE j USING SPAN_JOIN(a PARTITIONED cpu, u)")
        .expect("create");
    assert_eq!(
        rows(&c, "SELECT ts, dur, cpu, name, level FROM j"),
        vec![
            vec![i(40), i(20), i(0), t("a0"), i(7)],
            vec![i(250), i(50), i(0), t("a1"), i(8)],
            vec![i(50), i(10), i(1), t("a2"), i(7)],
        ]
    );
    // A span join of a span join reads the inner one's columns.
    c.execute_batch("CREATE VIRTUAL TABLE k USING SPAN_JOIN(j PARTITIONED cpu, b PARTITIONED cpu)")
        .expect("nested");
    assert_eq!(
        rows(&c, "SELECT ts, dur, cpu, level, freq FROM k"),
        vec![vec![i(50), i(10), i(0), i(7), i(1000)]]
    );
}

#[test]
fn an_outer_join_of_unpartitioned_tables_covers_both() {
    let c = conn();
    c.execute_batch(
        "CREATE TABLE p(ts BIGINT, dur BIGINT, x BIGINT);
         INSERT INTO p VALUES (0, 10, 1), (30, 10, 2);
         CREATE TABLE q(ts BIGINT, dur BIGINT, y BIGINT);
         INSERT INTO q VALUES (5, 30, 3);
         CREATE VIRTUAL TABLE j USING span_outer_join(p, q);",
    )
    .expect("create");
    assert_eq!(
        rows(&c, "SELECT ts, dur, x, y FROM j"),
        vec![
            vec![i(0), i(5), i(1), Value::Null],
            vec![i(5), i(5), i(1), i(3)],
            vec![i(10), i(20), Value::Null, i(3)],
            vec![i(30), i(5), i(2), i(3)],
            vec![i(35), i(5), i(2), Value::Null],
        ]
    );
}

fn create_error(c: &Connection, sql: &str) -> String {
    match c.execute_batch(sql) {
        Ok(()) => panic!("{sql} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_arguments_and_partitions_are_errors() {
    let c = conn();
    c.execute_batch(
        "CREATE TABLE nots(t BIGINT, dur BIGINT);
         CREATE TABLE nodur(ts BIGINT, cpu BIGINT);
         CREATE TABLE nodur2(ts BIGINT, level2 BIGINT);
         CREATE TABLE s(ts BIGINT, dur BIGINT, cpu TEXT);
         INSERT INTO s VALUES (0, 10, 'zero');",
    )
    .expect("tables");
    let cases = [
        ("SPAN_JOIN(a)", "expected exactly two arguments"),
        ("SPAN_JOIN(a PARTITIONED, b)", "Missing partitioning column"),
        ("SPAN_JOIN(a BY cpu, b)", "Invalid token"),
        (
            "SPAN_JOIN(a PARTITIONED ts, b)",
            "partition column cannot be any of {ts, dur}",
        ),
        (
            "SPAN_JOIN(a PARTITIONED cpu, b PARTITIONED freq)",
            "mismatching partitions",
        ),
        (
            "SPAN_JOIN(a, nosuch)",
            "Unknown table or view name 'nosuch'",
        ),
        ("SPAN_JOIN(a, nots)", "Missing ts column in table nots"),
        (
            "SPAN_JOIN(u PARTITIONED level, a PARTITIONED level)",
            "Missing partition column 'level' in table 'a'",
        ),
        ("SPAN_JOIN(nodur, nodur2)", "column dur must be present"),
        (
            "SPAN_JOIN(a, b)",
            "column cpu present in both tables a and b",
        ),
    ];
    for (args, want) in cases {
        let e = create_error(&c, &format!("CREATE VIRTUAL TABLE x USING {args}"));
        assert!(e.contains(want), "{args}: {e}");
    }
    c.execute_batch("CREATE VIRTUAL TABLE j USING SPAN_JOIN(s PARTITIONED cpu, b PARTITIONED cpu)")
        .expect("created: the partition is checked when read");
    let e = c
        .prepare("SELECT * FROM j")
        .and_then(|mut s| s.query_map([], |_| Ok(()))?.collect::<Result<Vec<()>, _>>())
        .map_or_else(|e| e.to_string(), |r| format!("{} rows", r.len()));
    assert!(e.contains("partition is not an INT column"), "{e}");
}

#[test]
fn the_engine_joins_a_trace_table_with_a_user_table() {
    use crate::storage::Storage;
    use crate::tables::core::SliceRow;
    use crate::{TraceProcessor, Value as V};

    let mut s = Storage::default();
    for (ts, dur, track_id) in [(0, 100, 0), (100, 10, 0), (10, 10, 1)] {
        s.slices.push(SliceRow {
            ts,
            dur,
            track_id,
            ..Default::default()
        });
    }
    let tp = TraceProcessor::from_storage(s).expect("engine");
    let got = tp
        .query(
            "CREATE TABLE w(ts BIGINT, dur BIGINT, track_id BIGINT, weight BIGINT);
             INSERT INTO w VALUES (90, 20, 0, 3), (0, 15, 1, 4);
             CREATE VIRTUAL TABLE j USING SPAN_JOIN(slice PARTITIONED track_id, w PARTITIONED track_id);
             SELECT ts, dur, track_id, weight FROM j",
        )
        .expect("query");
    let want: Vec<Vec<V>> = [[90, 10, 0, 3], [100, 10, 0, 3], [10, 5, 1, 4]]
        .iter()
        .map(|r| r.iter().map(|v| V::Int(*v)).collect())
        .collect();
    assert_eq!(got.rows, want);
}
