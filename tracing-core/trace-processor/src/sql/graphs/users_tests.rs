//! The modules written over the graph operators, on a small trace built
//! here: `slices.flow`'s walk along flows and `viz.slices`' ancestor
//! aggregation and slice table for the UI.

use crate::storage::Storage;
use crate::tables::core::{FlowRow, ProcessRow, SliceRow, ThreadRow, TrackRow};
use crate::{TraceProcessor, Value};

/// Thread "main" (tid 10) of process "app" (pid 10) with thread track 0;
/// a track 1 of no thread. On track 0: A [0, 100) > B [10, 60) >
/// C [20, 30), B > D [40, 50); E [200, 210). On track 1: F [0, 5),
/// G [300, 310). Ids A 0, B 1, C 2, D 3, E 4, F 5, G 6. Flows: C -> E,
/// E -> F, F -> G, and D -> G.
fn trace() -> TraceProcessor {
    let mut s = Storage::default();
    let slice_kind = s.strings.intern("slice");
    let (main, app) = (s.strings.intern("main"), s.strings.intern("app"));
    s.processes.push(ProcessRow::default());
    s.processes.push(ProcessRow {
        pid: 10,
        name: app,
        ..Default::default()
    });
    s.threads.push(ThreadRow::default());
    s.threads.push(ThreadRow {
        tid: 10,
        name: main,
        upid: Some(1),
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
    for (name, ts, dur, track, depth, parent) in [
        ("A", 0, 100, 0, 0, None),
        ("B", 10, 50, 0, 1, Some(0)),
        ("C", 20, 10, 0, 2, Some(1)),
        ("D", 40, 10, 0, 2, Some(1)),
        ("E", 200, 10, 0, 0, None),
        ("F", 0, 5, 1, 0, None),
        ("G", 300, 10, 1, 0, None),
    ] {
        let name = s.strings.intern(name);
        s.slices.push(SliceRow {
            ts,
            dur,
            track_id: track,
            name,
            depth,
            parent_id: parent.into(),
            ..Default::default()
        });
    }
    for (slice_out, slice_in) in [(2, 4), (4, 5), (5, 6), (3, 6)] {
        s.flows.push(FlowRow {
            slice_out,
            slice_in,
            ..Default::default()
        });
    }
    TraceProcessor::from_storage(s).expect("engine")
}

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

fn i(x: i64) -> Value {
    Value::Int(x)
}

fn t(s: &str) -> Value {
    Value::Text(s.into())
}

#[test]
fn following_flow_walks_every_flow_out_of_the_source_slices() {
    let tp = trace();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE slices.flow;
         SELECT * FROM _slice_following_flow!((SELECT id FROM slice WHERE name IN ('C', 'D')))
         ORDER BY root_node_id, node_id",
    );
    // From C: C, then E, F, G along the chain; from D: D and G.
    assert_eq!(
        got,
        [
            vec![i(2), i(2), Value::Null],
            vec![i(2), i(4), i(2)],
            vec![i(2), i(5), i(4)],
            vec![i(2), i(6), i(5)],
            vec![i(3), i(3), Value::Null],
            vec![i(3), i(6), i(3)],
        ]
    );
    // A slice no flow leaves: no walk.
    assert!(
        rows(
            &tp,
            "SELECT * FROM _slice_following_flow!((SELECT 0 AS id))"
        )
        .is_empty()
    );
}

#[test]
fn the_ui_aggregates_ancestors_and_lists_every_slice_with_its_context() {
    let tp = trace();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE viz.slices;
         SELECT id, parentId, name, self_dur, self_count, simple_count
         FROM _viz_slice_ancestor_agg!(
           (SELECT id, dur FROM slice WHERE name IN ('C', 'D')),
           (SELECT id, parent_id, name, dur FROM slice))
         ORDER BY id",
    );
    // B is reached from C and D (20 of its 50 under them); A from B.
    assert_eq!(
        got,
        [
            vec![i(0), Value::Null, t("A"), i(50), i(0), i(1)],
            vec![i(1), i(0), t("B"), i(30), i(0), i(1)],
            vec![i(2), i(1), t("C"), i(10), i(1), i(1)],
            vec![i(3), i(1), t("D"), i(10), i(1), i(1)],
        ]
    );
    let ui = rows(
        &tp,
        "SELECT id, track_name, thread_name, tid, process_name, pid
         FROM _viz_slices_for_ui_table ORDER BY id",
    );
    assert_eq!(ui.len(), 7);
    assert_eq!(ui[0], [i(0), t("main"), t("main"), i(10), t("app"), i(10)]);
    assert_eq!(
        ui[5],
        [
            i(5),
            t("other"),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null
        ]
    );
}
