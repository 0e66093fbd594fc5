//! The `slices.*` and `viz.summary.*` modules over small traces built
//! here: stack ids, flattening, the hierarchy walks, self durations,
//! slices with their thread, and the UI's track summaries and ordering.

use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tables::core::{ProcessRow, SliceRow, ThreadRow, TrackRow};
use crate::tables::sched::{SchedSliceRow, ThreadStateRow};
use crate::{TraceProcessor, Value};

/// Thread 1 (tid 10, "main") of process 1 (pid 10, "app"), its track 0;
/// a track 1 of no thread or process. On track 0: R [0, 100) holding
/// A [10, 50) > B [10, 30) (same start) and C [60, 80) > D [70, 80)
/// (same end), a zero-length Z at 90 under R; a root S [200, 210); on
/// track 1: P [0, 10). Ids: R 0, A 1, B 2, C 3, D 4, Z 5, S 6, P 7.
/// The thread runs [0, 30) and [70, 150) (Running), sleeps [30, 70) (S).
fn trace() -> TraceProcessor {
    let mut s = Storage::default();
    let slice_kind = s.strings.intern("slice");
    let main = s.strings.intern("main");
    let app = s.strings.intern("app");
    s.processes.push(ProcessRow::default()); // upid 0: the swapper's
    s.processes.push(ProcessRow {
        pid: 10,
        name: app,
        ..Default::default()
    });
    s.threads.push(ThreadRow::default()); // utid 0
    s.threads.push(ThreadRow {
        tid: 10,
        name: main,
        upid: Some(1),
        is_main_thread: Some(true),
        ..Default::default()
    });
    let thread_track = s.strings.intern("thread_track");
    s.tracks.push(TrackRow {
        name: main,
        classification: thread_track,
        event_type: slice_kind,
        utid: Some(1),
        ..Default::default()
    });
    let other = s.strings.intern("other");
    s.tracks.push(TrackRow {
        name: other,
        classification: other,
        event_type: slice_kind,
        ..Default::default()
    });
    let cat = s.strings.intern("cat");
    for (name, ts, dur, track, depth, parent) in [
        ("R", 0, 100, 0, 0, None),
        ("A", 10, 40, 0, 1, Some(0)),
        ("B", 10, 20, 0, 2, Some(1)),
        ("C", 60, 20, 0, 1, Some(0)),
        ("D", 70, 10, 0, 2, Some(3)),
        ("Z", 90, 0, 0, 1, Some(0)),
        ("S", 200, 10, 0, 0, None),
        ("P", 0, 10, 1, 0, None),
    ] {
        let name = s.strings.intern(name);
        s.slices.push(SliceRow {
            ts,
            dur,
            track_id: track,
            // One slice with a category: its stack differs from a
            // namesake's without.
            category: if ts == 200 { cat } else { Default::default() },
            name,
            depth,
            parent_id: parent.into(),
            ..Default::default()
        });
    }
    let (running, sleeping) = (s.strings.intern("Running"), s.strings.intern("S"));
    for (ts, dur, state) in [(0, 30, running), (30, 40, sleeping), (70, 80, running)] {
        s.sched.thread_states.push(ThreadStateRow {
            ts,
            dur,
            utid: 1,
            state,
            ..Default::default()
        });
        if state == running {
            s.sched.slices.push(SchedSliceRow {
                ts,
                dur,
                utid: 1,
                ..Default::default()
            });
        }
    }
    TraceProcessor::from_storage(s).expect("engine")
}

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).expect(sql).rows
}

fn ints(tp: &TraceProcessor, sql: &str) -> Vec<Vec<i64>> {
    rows(tp, sql)
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|v| match v {
                    Value::Int(v) => v,
                    other => panic!("not an integer: {other:?} in {sql}"),
                })
                .collect()
        })
        .collect()
}

#[test]
fn stack_ids_hash_the_path_from_the_root_as_upstream() {
    let tp = trace();
    // Upstream's rule spelled with `hash`: the slice's own element, then
    // its ancestors' from the root, as decimal text joined by '|'.
    let got = ints(
        &tp,
        "INCLUDE PERFETTO MODULE slices.stack;
         SELECT
           (SELECT stack_id FROM slice_with_stack_id WHERE id = 0)
             = hash(CAST(hash('|R') AS TEXT)),
           (SELECT stack_id FROM slice_with_stack_id WHERE id = 2)
             = hash(hash('|B') || '|' || hash('|R') || '|' || hash('|A')),
           (SELECT parent_stack_id FROM slice_with_stack_id WHERE id = 2)
             = (SELECT stack_id FROM slice_with_stack_id WHERE id = 1),
           (SELECT parent_stack_id FROM slice_with_stack_id WHERE id = 0),
           (SELECT stack_id FROM slice_with_stack_id WHERE id = 6)
             = hash(CAST(hash('cat|S') AS TEXT))",
    );
    assert_eq!(got, [[1, 1, 1, 0, 1]]);
    // The slices of B's stack with their ancestors, and of R's with
    // their descendants (R is the only slice of its stack).
    let got = ints(
        &tp,
        "SELECT id FROM ancestor_slice_by_stack(
           (SELECT stack_id FROM slice_with_stack_id WHERE id = 2))
         ORDER BY id",
    );
    assert_eq!(got, [[0], [1], [2]]);
    let got = ints(
        &tp,
        "SELECT id FROM descendant_slice_by_stack(
           (SELECT stack_id FROM slice_with_stack_id WHERE id = 0))
         ORDER BY id",
    );
    assert_eq!(got, [[0], [1], [2], [3], [4], [5]]);
    assert!(ints(&tp, "SELECT id FROM ancestor_slice_by_stack(12345)").is_empty());
}

#[test]
fn flat_slices_give_each_instant_to_one_slice_of_the_stack() {
    let tp = trace();
    let got = ints(
        &tp,
        "INCLUDE PERFETTO MODULE slices.flat_slices;
         SELECT slice_id, ts, dur, root_id, depth, utid, pid FROM _slice_flattened
         ORDER BY ts",
    );
    // A and B start together: the outer A holds [10, 30) (upstream's
    // tie rule); C and D end together: R holds on from 80. Z, of no
    // length, takes no part; S has no child and is one row; P, on no
    // thread's track, is left out.
    assert_eq!(
        got,
        [
            [0, 0, 10, 0, 0, 1, 10],
            [1, 10, 20, 0, 1, 1, 10],
            [1, 30, 20, 0, 1, 1, 10],
            [0, 50, 10, 0, 0, 1, 10],
            [3, 60, 10, 0, 1, 1, 10],
            [4, 70, 10, 0, 2, 1, 10],
            [0, 80, 20, 0, 0, 1, 10],
            [6, 200, 10, 6, 0, 1, 10],
        ]
    );
}

#[test]
fn hierarchy_walks_keep_the_slice_and_reparenting_skips_removed_rows() {
    let tp = trace();
    let got = ints(
        &tp,
        "INCLUDE PERFETTO MODULE slices.hierarchy;
         SELECT id FROM _slice_ancestor_and_self(2)",
    );
    assert_eq!(got, [[2], [0], [1]]);
    let got = ints(&tp, "SELECT id FROM _slice_descendant_and_self(3)");
    assert_eq!(got, [[3], [4]]);
    // A (id 1) removed: B hangs off R; D keeps C.
    let got = rows(
        &tp,
        "SELECT id, parent_id, depth, name FROM _slice_remove_nulls_and_reparent!(
           (SELECT id, parent_id, depth, IIF(id = 1, NULL, name) AS name FROM slice),
           name)",
    );
    let row = |id: i64, parent: Option<i64>, depth: i64, name: &str| {
        vec![
            Value::Int(id),
            parent.map_or(Value::Null, Value::Int),
            Value::Int(depth),
            Value::Text(name.into()),
        ]
    };
    assert_eq!(
        got,
        [
            row(0, None, 0, "R"),
            row(6, None, 0, "S"),
            row(7, None, 0, "P"),
            row(2, Some(0), 0, "B"),
            row(3, Some(0), 0, "C"),
            row(4, Some(3), 1, "D"),
            row(5, Some(0), 0, "Z"),
        ]
    );
}

#[test]
fn self_dur_and_thread_context() {
    let tp = trace();
    let got = ints(
        &tp,
        "INCLUDE PERFETTO MODULE slices.self_dur;
         SELECT id, self_dur FROM slice_self_dur WHERE id < 4 ORDER BY id",
    );
    assert_eq!(got, [[0, 40], [1, 20], [2, 20], [3, 10]]);
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE slices.with_context;
         SELECT count(*), min(thread_name), min(tid), min(process_name), min(pid),
                min(is_main_thread)
         FROM thread_slice",
    );
    assert_eq!(
        got,
        [[
            Value::Int(7),
            Value::Text("main".into()),
            Value::Int(10),
            Value::Text("app".into()),
            Value::Int(10),
            Value::Int(1),
        ]]
    );
    let got = ints(
        &tp,
        "SELECT (SELECT count(*) FROM thread_or_process_slice),
                (SELECT count(*) FROM process_slice)",
    );
    assert_eq!(got, [[7, 0]]);
}

#[test]
fn viz_summaries_count_slices_per_track_and_thread() {
    let tp = trace();
    let got = ints(
        &tp,
        "INCLUDE PERFETTO MODULE viz.summary.threads;
         SELECT id, cnt, min_dur, max_dur, max_depth FROM _slice_track_summary ORDER BY id",
    );
    assert_eq!(got, [[0, 7, 0, 100, 2], [1, 1, 10, 10, 0]]);
    let got = ints(
        &tp,
        "SELECT utid, slice_count, running_count, max_running_dur, sum_running_dur
         FROM _thread_available_info_summary",
    );
    assert_eq!(got, [[1, 7, 2, 80, 110]]);
    // No metadata says Linux: no kernel threads, every thread flagged so.
    let got = ints(
        &tp,
        "INCLUDE PERFETTO MODULE viz.threads;
         SELECT (SELECT count(*) FROM _kernel_threads), count(*), sum(is_kernel_thread)
         FROM _threads_with_kernel_flag",
    );
    assert_eq!(got, [[0, 2, 0]]);
    // Every module of ours includes on this trace.
    tp.query(
        "INCLUDE PERFETTO MODULE slices.*; INCLUDE PERFETTO MODULE viz.summary.*;
         INCLUDE PERFETTO MODULE viz.track_event_callstacks",
    )
    .expect("include");
}

/// Track event tracks under a parent with `child_ordering` `ordering`:
/// children "b" (rank 1, first slice at 5), "a" (rank 2, first slice at
/// 1) and "c" (rank 0, no slice).
fn ordered(ordering: &str) -> TraceProcessor {
    let mut s = Storage::default();
    let slice_kind = s.strings.intern("slice");
    let kind = s.strings.intern("global_track_event");
    let (child_ordering, rank) = (
        s.strings.intern("child_ordering"),
        s.strings.intern("sibling_order_rank"),
    );
    let value = s.strings.intern(ordering);
    let mut b = ArgSetBuilder::default();
    b.add(child_ordering, child_ordering, ArgValue::String(value));
    let parent_args = s.args.add_set(&b);
    let parent_name = s.strings.intern("parent");
    s.tracks.push(TrackRow {
        name: parent_name,
        classification: kind,
        event_type: slice_kind,
        source_arg_set_id: parent_args,
        ..Default::default()
    });
    for (name, r) in [("b", 1), ("a", 2), ("c", 0)] {
        let mut b = ArgSetBuilder::default();
        b.add(rank, rank, ArgValue::Int(r));
        let args = s.args.add_set(&b);
        let name = s.strings.intern(name);
        s.tracks.push(TrackRow {
            name,
            classification: kind,
            event_type: slice_kind,
            parent_id: Some(0),
            source_arg_set_id: args,
            ..Default::default()
        });
    }
    for (ts, track) in [(1, 2), (5, 1)] {
        s.slices.push(SliceRow {
            ts,
            dur: 1,
            track_id: track,
            ..Default::default()
        });
    }
    TraceProcessor::from_storage(s).expect("engine")
}

#[test]
fn track_event_tracks_are_placed_by_their_parents_ordering() {
    let names = |ordering: &str| -> Vec<(String, i64)> {
        let tp = ordered(ordering);
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE viz.summary.track_event;
             SELECT name, order_id FROM _track_event_tracks_ordered_groups
             WHERE parent_id = 0 ORDER BY order_id",
        )
        .into_iter()
        .map(|r| match (&r[0], &r[1]) {
            (Value::Text(n), Value::Int(o)) => (n.clone(), *o),
            other => panic!("{other:?}"),
        })
        .collect()
    };
    let want = |v: &[&str]| -> Vec<(String, i64)> {
        v.iter()
            .enumerate()
            .map(|(i, n)| ((*n).to_owned(), i as i64 + 1))
            .collect()
    };
    assert_eq!(names("lexicographic"), want(&["a", "b", "c"]));
    assert_eq!(names("explicit"), want(&["c", "b", "a"]));
    // Without a first event a track comes first (NULL sorts first).
    assert_eq!(names("chronological"), want(&["c", "a", "b"]));
    let tp = ordered("explicit");
    let got = ints(
        &tp,
        "INCLUDE PERFETTO MODULE viz.summary.track_event;
         SELECT has_data, has_children, min_track_id FROM _track_event_tracks_ordered_groups
         ORDER BY min_track_id",
    );
    assert_eq!(got, [[0, 1, 0], [1, 0, 1], [1, 0, 2], [0, 0, 3]]);
}

#[test]
fn time_in_state_sums_each_slices_overlap_with_its_threads_states() {
    let tp = trace();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE slices.time_in_state;
         SELECT id, state, dur, thread_name FROM thread_slice_time_in_state
         WHERE id < 2 ORDER BY id, state",
    );
    let row = |id: i64, state: &str, dur: i64| {
        vec![
            Value::Int(id),
            Value::Text(state.into()),
            Value::Int(dur),
            Value::Text("main".into()),
        ]
    };
    assert_eq!(
        got,
        [
            row(0, "Running", 60),
            row(0, "S", 40),
            row(1, "Running", 20),
            row(1, "S", 20),
        ]
    );
}

#[test]
fn cpu_time_sums_each_slices_overlap_with_its_threads_sched_slices() {
    let tp = trace();
    let got = ints(
        &tp,
        "INCLUDE PERFETTO MODULE slices.cpu_time;
         SELECT id, utid, cpu_time FROM thread_slice_cpu_time ORDER BY id",
    );
    // S ran never (no row), Z has no length.
    assert_eq!(
        got,
        [[0, 1, 60], [1, 1, 20], [2, 1, 20], [3, 1, 10], [4, 1, 10]]
    );
    // Without CPU frequencies no slice's cycles are known.
    let got = ints(
        &tp,
        "SELECT count(*), count(millicycles) FROM thread_slice_cpu_cycles",
    );
    assert_eq!(got, [[7, 0]]);
}

/// A forest of `n` slices on one track: every fifth slice is a root, the
/// others children of one of the four slices before them; lengths vary,
/// some are incomplete (-1).
fn forest(n: u32) -> TraceProcessor {
    let mut s = Storage::default();
    let name = s.strings.intern("x");
    s.tracks.push(TrackRow::default());
    for i in 0..n {
        let parent = (i % 5 != 0).then(|| i.saturating_sub(1 + (i * 13) % 4));
        s.slices.push(SliceRow {
            ts: i64::from(i),
            dur: if i % 11 == 3 {
                -1
            } else {
                i64::from((i * 13) % 97)
            },
            name,
            parent_id: parent.into(),
            ..Default::default()
        });
    }
    TraceProcessor::from_storage(s).expect("engine")
}

#[test]
fn the_self_dur_operator_agrees_with_a_grouped_sum_in_sql() {
    let reference = "SELECT s.id, s.dur - coalesce(
                       (SELECT sum(c.dur) FROM slice AS c WHERE c.parent_id = s.id), 0)
                     FROM slice AS s ORDER BY s.id";
    for tp in [trace(), forest(500)] {
        let want = ints(&tp, reference);
        assert!(!want.is_empty());
        assert_eq!(
            ints(&tp, "SELECT id, self_dur FROM __intrinsic_slice_self_dur"),
            want
        );
        assert_eq!(
            ints(
                &tp,
                "INCLUDE PERFETTO MODULE slices.self_dur;
                 SELECT id, self_dur FROM slice_self_dur ORDER BY id"
            ),
            want
        );
    }
}

/// Whether SQLite's plan for `sql` sorts (a temporary B-tree).
fn sorts(tp: &TraceProcessor, sql: &str) -> bool {
    rows(tp, &format!("EXPLAIN QUERY PLAN {sql}"))
        .iter()
        .flatten()
        .any(|v| matches!(v, Value::Text(t) if t.contains("TEMP B-TREE")))
}

#[test]
fn operators_declare_their_row_order_so_that_sqlite_does_not_sort() {
    let tp = forest(200);
    for (sql, reference) in [
        (
            "SELECT slice_id, ts, dur, root_id FROM __intrinsic_slice_flattened
             ORDER BY root_id, ts",
            "SELECT slice_id, ts, dur, root_id FROM __intrinsic_slice_flattened
             ORDER BY root_id + 0, ts + 0, slice_id + 0",
        ),
        (
            "SELECT id, self_dur FROM __intrinsic_slice_self_dur ORDER BY id",
            "SELECT id, self_dur FROM __intrinsic_slice_self_dur ORDER BY id + 0",
        ),
    ] {
        assert!(!sorts(&tp, sql), "{sql}");
        assert!(sorts(&tp, reference), "{reference}");
        let got = ints(&tp, sql);
        assert!(!got.is_empty());
        // The same rows in the same order as SQLite's own sort gives.
        assert_eq!(got, ints(&tp, reference), "{sql}");
    }
    // An order the rows do not have is sorted.
    assert!(sorts(
        &tp,
        "SELECT * FROM __intrinsic_slice_flattened ORDER BY ts"
    ));
}
