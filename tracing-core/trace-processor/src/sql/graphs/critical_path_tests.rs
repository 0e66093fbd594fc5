//! `sched.thread_executing_span` (written over the critical path walk)
//! on a trace built here: the wakeup graph of two threads, the roots of
//! a window and the critical path of a thread over it.

use crate::storage::Storage;
use crate::tables::core::ThreadRow;
use crate::tables::sched::ThreadStateRow;
use crate::{TraceProcessor, Value};

/// Thread 2 is runnable [0, 5) then runs [5, 40); thread 1 runs [0, 10),
/// sleeps (S) [10, 30), is woken by thread 2's run (state 1) and is
/// runnable [30, 35), then runs [35, 45). State ids in that order: 0 and
/// 1 thread 2's, 2 to 5 thread 1's.
fn trace() -> TraceProcessor {
    let mut s = Storage::default();
    for tid in [0, 11, 12] {
        s.threads.push(ThreadRow {
            tid,
            ..Default::default()
        });
    }
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
