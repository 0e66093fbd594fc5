//! `sched.thread_executing_span` (written over the critical path walk)
//! on a trace built here: the wakeup graph of two threads, the roots of
//! a window and the critical path of a thread over it.

use crate::storage::Storage;
use crate::tables::core::{ProcessRow, SliceRow, ThreadRow, TrackRow};
use crate::tables::sched::ThreadStateRow;
use crate::{TraceProcessor, Value};

/// Thread 2 is runnable [0, 5) then runs [5, 40); thread 1 runs [0, 10),
/// sleeps (S) [10, 30), is woken by thread 2's run (state 1) and is
/// runnable [30, 35), then runs [35, 45). State ids in that order: 0 and
/// 1 thread 2's, 2 to 5 thread 1's. Thread 1 is "ui" of process "app",
/// thread 2 "server" of process "srv", which runs slice "serve" [10, 30).
fn trace() -> TraceProcessor {
    let mut s = Storage::default();
    s.processes.push(ProcessRow::default());
    for (pid, name) in [(1, "app"), (2, "srv")] {
        let name = s.strings.intern(name);
        s.processes.push(ProcessRow {
            pid,
            name,
            ..Default::default()
        });
    }
    s.threads.push(ThreadRow::default());
    for (tid, name, upid) in [(11, "ui", 1), (12, "server", 2)] {
        let name = s.strings.intern(name);
        s.threads.push(ThreadRow {
            tid,
            name,
            upid: Some(upid),
            ..Default::default()
        });
    }
    let (thread_track, slice_kind) = (s.strings.intern("thread_track"), s.strings.intern("slice"));
    s.tracks.push(TrackRow {
        classification: thread_track,
        event_type: slice_kind,
        utid: Some(2),
        ..Default::default()
    });
    let serve = s.strings.intern("serve");
    s.slices.push(SliceRow {
        ts: 10,
        dur: 20,
        track_id: 0,
        name: serve,
        ..Default::default()
    });
    let [running, sleeping, runnable] = ["Running", "S", "R"].map(|n| s.strings.intern(n));
    for (utid, ts, dur, state, waker) in [
        (2, 0, 5, runnable, None),
        (2, 5, 35, running, None),
        (1, 0, 10, running, None),
        (1, 10, 20, sleeping, None),
        (1, 30, 5, runnable, Some(1)),
        (1, 35, 10, running, None),
    ] {
        s.sched.thread_states.push(ThreadStateRow {
            ts,
            dur,
            utid,
            state,
            waker_id: waker,
            waker_utid: waker.map(|_| 2),
            irq_context: waker.map(|_| 0),
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

const N: Value = Value::Null;

#[test]
fn the_wakeup_graph_links_each_span_to_the_span_that_woke_it() {
    let tp = trace();
    let graph = rows(
        &tp,
        "INCLUDE PERFETTO MODULE sched.thread_executing_span;
         SELECT id, utid, waker_id, prev_id, ts, dur, idle_state, idle_dur FROM _wakeup_graph",
    );
    assert_eq!(
        graph,
        [
            // Thread 2's first (runnable) state starts a span lasting to
            // its thread's end.
            vec![i(0), i(2), N, N, i(0), i(40), N, N],
            // Thread 1's wakeup: woken by thread 2's span 0 after 20 of S.
            vec![
                i(4),
                i(1),
                i(0),
                N,
                i(30),
                i(15),
                Value::Text("S".into()),
                i(20)
            ],
        ]
    );
    let roots = rows(
        &tp,
        "SELECT * FROM _intervals_to_roots!((SELECT 1 AS utid, 10 AS ts, 35 AS dur), _wakeup_graph)",
    );
    assert_eq!(roots, [vec![i(4), i(0)]]);
}

#[test]
fn the_critical_path_gives_the_sleep_to_the_waker_and_the_run_to_the_thread() {
    let tp = trace();
    let path = rows(
        &tp,
        "INCLUDE PERFETTO MODULE sched.thread_executing_span;
         SELECT * FROM _thread_executing_span_critical_path(1, 10, 35) ORDER BY ts",
    );
    // root_utid, root_id, id, ts, dur, utid.
    assert_eq!(
        path,
        [
            vec![i(1), i(4), i(0), i(10), i(20), i(2)],
            vec![i(1), i(4), i(4), i(30), i(15), i(1)],
        ]
    );
    let frames = rows(
        &tp,
        "SELECT root_id, depth, ts, dur, id, parent_id
         FROM _critical_path_with_depth_by_roots!((SELECT 4 AS root_node_id), _wakeup_graph)",
    );
    assert_eq!(
        frames,
        [
            vec![i(4), i(0), i(30), i(15), i(4), i(4)],
            vec![i(4), i(1), i(10), i(20), i(0), i(4)],
        ]
    );
}

#[test]
fn the_stack_shows_the_thread_then_the_thread_blocking_it() {
    let tp = trace();
    let stack = rows(
        &tp,
        "INCLUDE PERFETTO MODULE sched.thread_executing_span_with_slice;
         SELECT ts, dur, stack_depth, name, table_name
         FROM _thread_executing_span_critical_path_stack(1, 10, 35)
         ORDER BY ts, stack_depth",
    );
    let t = |s: &str| Value::Text(s.into());
    let frame = |ts, dur, depth, name: Option<&str>, table: &str| {
        vec![i(ts), i(dur), i(depth), name.map_or(N, t), t(table)]
    };
    let own = |ts, dur, state: &str| {
        vec![
            frame(
                ts,
                dur,
                0,
                Some(&format!("thread_state: {state}")),
                "thread_state",
            ),
            frame(ts, dur, 1, None, "thread_state"),
            frame(ts, dur, 2, None, "thread_state"),
            frame(ts, dur, 3, Some("process_name: app"), "thread_state"),
            frame(ts, dur, 4, Some("thread_name: ui"), "thread_state"),
        ]
    };
    let mut want = own(10, 20, "S");
    want.extend([
        frame(
            10,
            20,
            5,
            Some("blocking thread_state: Running"),
            "thread_state",
        ),
        frame(
            10,
            20,
            6,
            Some("blocking process_name: srv"),
            "thread_state",
        ),
        frame(
            10,
            20,
            7,
            Some("blocking thread_name: server"),
            "thread_state",
        ),
        frame(10, 20, 8, None, "thread_state"),
        frame(10, 20, 9, None, "thread_state"),
        frame(10, 20, 10, Some("serve"), "slice"),
        frame(10, 20, 11, None, "thread_state"),
    ]);
    want.extend(own(30, 5, "R"));
    want.extend(own(35, 10, "Running"));
    want.push(frame(35, 10, 5, None, "thread_state"));
    assert_eq!(stack, want);
}
