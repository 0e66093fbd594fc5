//! `counter_leading_intervals!` end to end on an engine: the native
//! operator answers what the window functions of its definition answer,
//! over tables, subqueries and views, NULLs and ties included.

use crate::storage::Storage;
use crate::{TraceProcessor, Value};

fn engine() -> TraceProcessor {
    TraceProcessor::from_storage(Storage::default()).expect("engine")
}

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

/// The intervals as window functions define them (the definition the
/// operator replaced), over table `t`.
const BY_WINDOWS: &str = "
WITH
  input AS (
    SELECT cast(id AS INT) AS id, cast(ts AS INT) AS ts,
      cast(track_id AS INT) AS track_id, cast(value AS REAL) AS value
    FROM t
  ),
  marked AS (
    SELECT id, ts, track_id, value,
      lag(value, 1) OVER w AS b1, lag(value, 2) OVER w AS b2,
      lead(value, 1) OVER w AS a1
    FROM input
    WINDOW w AS (PARTITION BY track_id ORDER BY ts, id)
  ),
  kept AS (
    SELECT id, ts, track_id, value FROM marked
    WHERE b1 IS NULL OR b2 IS NULL OR b1 != value OR b2 != value
      OR (a1 IS NOT NULL AND a1 != value AND ts != 0)
  )
SELECT id, ts, coalesce(lead(ts) OVER k, trace_end()) - ts AS dur, track_id,
  value, lead(value) OVER k AS next_value, value - lag(value) OVER k AS delta_value
FROM kept
WINDOW k AS (PARTITION BY track_id ORDER BY ts, id)
ORDER BY track_id, ts, id";

/// Samples on three tracks (one NULL), runs of equal values at ts 0, in
/// the middle and at the end, NULL values, integers and doubles, given
/// out of order.
const SAMPLES: &str = "
CREATE PERFETTO TABLE t AS
SELECT column1 AS id, column2 AS ts, column3 AS track_id, column4 AS value
FROM (VALUES
  (9, 40, 1, 7), (0, 0, 1, 5), (1, 0, 1, 5), (2, 0, 1, 5), (3, 10, 1, 5),
  (4, 20, 1, 5.5), (5, 25, 1, 5.5), (6, 30, 1, 5.5), (7, 35, 1, 5.5),
  (8, 38, 1, NULL), (10, 41, 1, 7), (11, 42, 1, 7), (12, 43, 1, 7),
  (20, 3, 2, 1), (21, 3, 2, 2), (22, 9, 2, 2), (23, 9, 2, NULL), (24, 12, 2, 2),
  (30, 1, NULL, 4), (31, 2, NULL, 4), (32, 3, NULL, 4), (33, 4, NULL, 4),
  (40, 5, 3, -1.25)
);";

#[test]
fn the_operator_answers_what_the_window_functions_answer() {
    let tp = engine();
    tp.query(SAMPLES).expect("samples");
    tp.query("INCLUDE PERFETTO MODULE counters.intervals")
        .expect("module");
    let want = rows(&tp, BY_WINDOWS);
    assert_eq!(want.len(), 14, "{want:?}");
    let got = rows(
        &tp,
        "SELECT id, ts, dur, track_id, value, next_value, delta_value
         FROM counter_leading_intervals!(t)",
    );
    assert_eq!(got, want);
    // A subquery, and an order the operator's own serves.
    let got = rows(
        &tp,
        "SELECT * FROM counter_leading_intervals!((SELECT * FROM t WHERE id < 100))
         ORDER BY track_id, ts, id",
    );
    assert_eq!(got, want);
    // Joined from outside: every row of the join is there.
    let n = rows(
        &tp,
        "SELECT count(*) FROM t JOIN counter_leading_intervals!(t) AS iv USING (id)",
    );
    assert_eq!(n, vec![vec![Value::Int(14)]]);
}

#[test]
fn no_samples_give_no_intervals_and_foreign_values_are_refused() {
    let tp = engine();
    tp.query("INCLUDE PERFETTO MODULE counters.intervals")
        .expect("module");
    tp.query(
        "CREATE PERFETTO TABLE e AS SELECT 1 AS id, 2 AS ts, 3 AS track_id, 4 AS value WHERE 0",
    )
    .expect("empty");
    assert!(rows(&tp, "SELECT * FROM counter_leading_intervals!(e)").is_empty());
    let err = tp
        .query("SELECT * FROM __intrinsic_counter_leading_intervals(x'00', 5)")
        .expect_err("not samples");
    assert!(
        err.to_string().contains("__intrinsic_counter_samples_agg"),
        "{err}"
    );
    let err = tp
        .query("SELECT __intrinsic_counter_samples_agg(1, 'a', 2, 3)")
        .expect_err("text ts");
    assert!(err.to_string().contains("must be a number"), "{err}");
}
