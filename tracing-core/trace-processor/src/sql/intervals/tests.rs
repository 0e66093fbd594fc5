//! The `intervals.*` modules run end to end on an engine: their macros
//! over tables made in the test, CTEs and subqueries, with the native
//! operators underneath.

use crate::storage::Storage;
use crate::{TraceProcessor, Value};

fn engine() -> TraceProcessor {
    TraceProcessor::from_storage(Storage::default()).expect("engine")
}

/// Every row of `sql`'s answer, NULL as `None`, integers only.
fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Option<i64>>> {
    tp.query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .rows
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|v| match v {
                    Value::Int(i) => Some(i),
                    Value::Null => None,
                    other => panic!("not an integer: {other:?}"),
                })
                .collect()
        })
        .collect()
}

fn some(v: &[&[i64]]) -> Vec<Vec<Option<i64>>> {
    v.iter()
        .map(|r| r.iter().map(|&x| Some(x)).collect())
        .collect()
}

const TABLES: &str = "
INCLUDE PERFETTO MODULE intervals.intersect;
CREATE PERFETTO TABLE a AS
  SELECT column1 AS id, column2 AS ts, column3 AS dur, column4 AS cpu
  FROM (VALUES (0, 0, 10, 1), (1, 20, 10, 1), (2, 0, 100, 2));
CREATE PERFETTO TABLE b AS
  SELECT column1 AS id, column2 AS ts, column3 AS dur, column4 AS cpu
  FROM (VALUES (10, 5, 20, 1), (11, 8, 1, 1), (12, 50, 0, 2), (13, 0, 5, 3));
";

#[test]
fn interval_intersect_by_partition_with_ids_and_partition_columns() {
    let tp = engine();
    tp.query(TABLES).expect("tables");
    let got = rows(
        &tp,
        "SELECT ts, dur, id_0, id_1, cpu FROM _interval_intersect!((a, b), (cpu))
         ORDER BY ts, id_0, id_1",
    );
    assert_eq!(
        got,
        some(&[
            &[5, 5, 0, 10, 1],
            &[8, 1, 0, 11, 1],
            &[20, 5, 1, 10, 1],
            &[50, 0, 2, 12, 2]
        ])
    );
    // Run again for each row of an outer loop (the last call's rows are
    // kept), the same rows each time.
    assert_eq!(
        rows(
            &tp,
            "SELECT o.k, count(*), sum(ii.dur) FROM (SELECT 1 AS k UNION ALL SELECT 2) AS o
             CROSS JOIN _interval_intersect!((a, b), (cpu)) AS ii GROUP BY o.k"
        ),
        some(&[&[1, 4, 11], &[2, 4, 11]])
    );
    // Without partitions every interval meets every other; the columns
    // are ts, dur and one id per table.
    let r = tp
        .query(
            "SELECT * FROM _interval_intersect!((a, b, (SELECT 7 AS id, 0 AS ts, 6 AS dur)), ())",
        )
        .expect("three tables");
    assert_eq!(r.columns, ["ts", "dur", "id_0", "id_1", "id_2"]);
    assert_eq!(r.rows.len(), 4, "{:?}", r.rows);
    // CTEs of the calling query reach the operator.
    let got = rows(
        &tp,
        "WITH x AS (SELECT 1 AS id, 0 AS ts, 10 AS dur),
              y AS (SELECT 2 AS id, 4 AS ts, 100 AS dur)
         SELECT ts, dur, id_0, id_1 FROM _interval_intersect!((x, y), ())",
    );
    assert_eq!(got, some(&[&[4, 6, 1, 2]]));
    let got = rows(
        &tp,
        "SELECT id, ts, dur FROM _interval_intersect_single!(15, 10, a) ORDER BY id",
    );
    assert_eq!(got, some(&[&[1, 20, 5], &[2, 15, 10]]));
    let got = rows(
        &tp,
        "SELECT ts, dur, id_0, id_1 FROM _interval_intersect_with_col_names!(
           (SELECT id AS i, ts AS t, dur AS d, cpu FROM a WHERE cpu = 1), i, t, d,
           (SELECT id AS j, ts AS s, dur AS e, cpu FROM b), j, s, e, (cpu))
         ORDER BY ts",
    );
    assert_eq!(
        got,
        some(&[&[5, 5, 0, 10], &[8, 1, 0, 11], &[20, 5, 1, 10]])
    );
    // The sets can be made from other column names and fed to the
    // operator directly.
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, id_0, id_1 FROM __intrinsic_interval_intersect('()',
               _interval_agg_with_col_names!((SELECT 9 AS i, 22 AS t, 100 AS d), (), i, t, d),
               _interval_agg!((SELECT * FROM a WHERE cpu = 1), ()))"
        ),
        some(&[&[22, 8, 9, 1]])
    );
    // A negative duration is refused, with upstream's words.
    let e = tp
        .query("SELECT * FROM _interval_intersect!((a, (SELECT 1 AS id, 0 AS ts, -5 AS dur)), ())")
        .unwrap_err()
        .to_string();
    assert!(e.contains("non negative duration"), "{e}");
}

#[test]
fn interval_self_intersect_cuts_at_every_start_and_end() {
    let tp = engine();
    tp.query("INCLUDE PERFETTO MODULE intervals.intersect")
        .expect("include");
    let got = rows(
        &tp,
        "SELECT ts, dur, group_id, id, interval_ends_at_ts
         FROM interval_self_intersect!(
           (SELECT 1 AS id, 10 AS ts, 20 AS dur UNION ALL SELECT 2, 20, 25))
         ORDER BY ts, id",
    );
    assert_eq!(
        got,
        some(&[
            &[10, 10, 1, 1, 0],
            &[20, 10, 2, 1, 0],
            &[20, 10, 2, 2, 0],
            &[30, 15, 3, 1, 1],
            &[30, 15, 3, 2, 0],
            &[45, 0, 4, 2, 1],
        ])
    );
}

#[test]
fn overlap_counts_merges_and_flattening() {
    let tp = engine();
    tp.query(
        "INCLUDE PERFETTO MODULE intervals.overlap;
         CREATE PERFETTO TABLE s AS
           SELECT column1 AS id, column2 AS ts, column3 AS dur, column4 AS g
           FROM (VALUES (1, 0, 10, 'x'), (2, 5, 10, 'x'), (3, 15, 5, 'y'), (4, 30, 2, 'y'))",
    )
    .expect("setup");
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, value FROM intervals_overlap_count!(s, ts, dur)"
        ),
        some(&[
            &[0, 1],
            &[5, 2],
            &[10, 1],
            &[15, 1],
            &[20, 0],
            &[30, 1],
            &[32, 0]
        ])
    );
    let r = tp
        .query("SELECT ts, value, group_name FROM intervals_overlap_count_by_group!(s, ts, dur, g) WHERE group_name = 'x'")
        .expect("by group");
    assert_eq!(r.rows.len(), 4);
    assert_eq!(
        rows(
            &tp,
            "SELECT _intervals_overlap_in_table!(s), _intervals_overlap_in_table!((SELECT * FROM s WHERE id > 2))"
        ),
        some(&[&[1, 0]])
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur FROM interval_merge_overlapping!(s, 0) ORDER BY ts"
        ),
        some(&[&[0, 20], &[30, 2]])
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur FROM interval_merge_overlapping!(s, 10) ORDER BY ts"
        ),
        some(&[&[0, 32]])
    );
    let r = tp
        .query("SELECT ts, dur, g FROM interval_merge_overlapping_partitioned!(s, (g)) ORDER BY ts")
        .expect("partitioned");
    assert_eq!(r.columns, ["ts", "dur", "g"]);
    assert_eq!(
        r.rows,
        [
            vec![Value::Int(0), Value::Int(15), Value::Text("x".into())],
            vec![Value::Int(15), Value::Int(5), Value::Text("y".into())],
            vec![Value::Int(30), Value::Int(2), Value::Text("y".into())],
        ]
    );
    // Root 100 [0, 100) with a child 1 [10, 50) holding 2 [20, 30); root
    // 200 [200, 210) alone.
    let got = rows(
        &tp,
        "SELECT root_id, id, ts, dur FROM _intervals_flatten!(_intervals_merge_root_and_children!(
           (SELECT 100 AS id, 0 AS ts, 100 AS dur UNION ALL SELECT 200, 200, 10),
           (SELECT 100 AS root_id, 1 AS id, 100 AS parent_id, 10 AS ts, 40 AS dur
            UNION ALL SELECT 100, 2, 1, 20, 10)))
         ORDER BY ts",
    );
    assert_eq!(
        got,
        some(&[
            &[100, 100, 0, 10],
            &[100, 1, 10, 10],
            &[100, 2, 20, 10],
            &[100, 1, 30, 20],
            &[100, 100, 50, 50],
            &[200, 200, 200, 10],
        ])
    );
    let got = rows(
        &tp,
        "SELECT ts, dur, id, parent_id, root_id, k
         FROM _intervals_merge_root_and_children_by_intersection!(
           (SELECT 100 AS id, 0 AS ts, 100 AS dur, 1 AS k),
           (SELECT 1 AS id, NULL AS parent_id, 90 AS ts, 20 AS dur, 1 AS k
            UNION ALL SELECT 2, NULL, 10, 10, 2),
           k)",
    );
    assert_eq!(got, some(&[&[90, 10, 1, 100, 100, 1]]));
}

#[test]
fn create_intervals_pairs_each_start_with_the_next_end() {
    let tp = engine();
    tp.query("INCLUDE PERFETTO MODULE intervals.create_intervals")
        .expect("include");
    let got = rows(
        &tp,
        "SELECT ts, dur FROM _interval_create!(
           (SELECT column1 AS ts FROM (VALUES (20), (1), (5), (3), (10))),
           (SELECT column1 AS ts FROM (VALUES (12), (3), (7))))
         ORDER BY ts",
    );
    assert_eq!(got, some(&[&[1, 2], &[3, 4], &[5, 2], &[10, 2]]));
    assert!(
        rows(
            &tp,
            "SELECT * FROM _interval_create!((SELECT 1 AS ts WHERE 0), (SELECT 2 AS ts))"
        )
        .is_empty()
    );
}

#[test]
fn fill_gaps_covers_each_group_between_its_intervals() {
    let tp = engine();
    tp.query("INCLUDE PERFETTO MODULE intervals.fill_gaps")
        .expect("include");
    // The trace's bounds are 0 and 0 here: the gaps from 0 and between a
    // group's intervals are filled.
    let got = rows(
        &tp,
        "SELECT ts, dur, g, v FROM _intervals_fill_gaps!((g), (v),
           (SELECT 0 AS ts, 10 AS dur, 1 AS g, 7 AS v
            UNION ALL SELECT 15, 5, 1, 8
            UNION ALL SELECT 3, 2, 2, 9))
         ORDER BY ts, g",
    );
    assert_eq!(
        got,
        vec![
            vec![Some(0), Some(10), Some(1), Some(7)],
            vec![Some(0), Some(3), Some(2), None],
            vec![Some(3), Some(2), Some(2), Some(9)],
            vec![Some(10), Some(5), Some(1), None],
            vec![Some(15), Some(5), Some(1), Some(8)],
        ]
    );
}

#[test]
fn mipmap_buckets_take_their_dominant_group_and_runs_merge() {
    let tp = engine();
    tp.query(
        "INCLUDE PERFETTO MODULE intervals.mipmap;
         CREATE PERFETTO TABLE src AS
           SELECT column1 AS id, column2 AS ts, column3 AS dur, column4 AS group_hash, 1 AS p
           FROM (VALUES (1, 0, 14, 'a'), (2, 14, 6, 'b'), (3, 20, 10, 'b'), (4, 30, 5, 'a'))",
    )
    .expect("setup");
    assert_eq!(
        rows(
            &tp,
            "SELECT p, trace_min_ts, trace_max_ts, bucket_duration_ns, bucket_count
                   FROM _mipmap_bucket_metadata!(src, p, 10)"
        ),
        some(&[&[1, 0, 35, 10, 4]])
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT id, p, bucket_index, ts, dur FROM _mipmap_buckets_table!(src, p, 10)"
        ),
        some(&[
            &[1, 1, 0, 0, 10],
            &[2, 1, 1, 10, 10],
            &[3, 1, 2, 20, 10],
            &[4, 1, 3, 30, 10]
        ])
    );
    // Buckets: [0,10) a; [10,20) a 4 against b 6: b; [20,30) b; [30,40) a.
    let r = tp
        .query(
            "SELECT p, id, ts, dur, group_hash FROM _mipmap_merged!(
                  src, (SELECT * FROM _mipmap_buckets_table!(src, p, 10)), p, 10)",
        )
        .expect("merged");
    let text = |s: &str| Value::Text(s.into());
    assert_eq!(
        r.rows,
        [
            vec![
                Value::Int(1),
                Value::Int(1),
                Value::Int(0),
                Value::Int(10),
                text("a")
            ],
            vec![
                Value::Int(1),
                Value::Int(2),
                Value::Int(10),
                Value::Int(20),
                text("b")
            ],
            vec![
                Value::Int(1),
                Value::Int(4),
                Value::Int(30),
                Value::Int(10),
                text("a")
            ],
        ]
    );
}
