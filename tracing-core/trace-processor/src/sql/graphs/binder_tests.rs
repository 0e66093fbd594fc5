//! `android.binder` (written over `slices.flow`) on a trace built here:
//! transactions paired with their replies by flow, the transaction whose
//! end was lost left out, a nested one kept, one-way transactions, the
//! OOM scores and the time each end spent per thread state.

use crate::storage::Storage;
use crate::tables::core::{CounterRow, FlowRow, ProcessRow, SliceRow, ThreadRow, TrackRow};
use crate::tables::sched::ThreadStateRow;
use crate::{TraceProcessor, Value};

/// Client "app" (pid 10, main thread tid 10, utid 1) and server
/// "system_server" (pid 20, thread tid 21 "binder:20_1", utid 2), thread
/// tracks 0 and 1; the client's oom_score_adj (track 2) is 0 from 0 and
/// 900 from 500.
/// Client slices: T1 'binder transaction' [100, 200) -> server reply R1
/// [110, 190) holding 'AIDL::java::IFoo::bar::server' [120, 180);
/// T2 'binder transaction' [300, 400) holding a child and without a flow
/// (its end was lost); T3 'binder transaction async' [600, 610) ->
/// 'binder async rcv' [620, 630) followed by 'AIDL::java::IBaz::qux::server'
/// [640, 650). The client's thread runs [100, 130), sleeps [130, 200).
fn trace() -> TraceProcessor {
    let mut s = Storage::default();
    let slice_kind = s.strings.intern("slice");
    let counter_kind = s.strings.intern("counter");
    s.processes.push(ProcessRow::default());
    for (pid, name) in [(10, "app"), (20, "system_server")] {
        let name = s.strings.intern(name);
        s.processes.push(ProcessRow {
            pid,
            name,
            ..Default::default()
        });
    }
    s.threads.push(ThreadRow::default());
    for (tid, name, upid, main) in [(10, "app", 1, true), (21, "binder:20_1", 2, false)] {
        let name = s.strings.intern(name);
        s.threads.push(ThreadRow {
            tid,
            name,
            upid: Some(upid),
            is_main_thread: Some(main),
            ..Default::default()
        });
    }
    let thread_track = s.strings.intern("thread_track");
    for utid in [1, 2] {
        s.tracks.push(TrackRow {
            classification: thread_track,
            event_type: slice_kind,
            utid: Some(utid),
            ..Default::default()
        });
    }
    let oom = s.strings.intern("oom_score_adj");
    s.tracks.push(TrackRow {
        name: oom,
        classification: oom,
        event_type: counter_kind,
        upid: Some(1),
        ..Default::default()
    });
    for (ts, value) in [(0, 0.0), (500, 900.0)] {
        s.counters.push(CounterRow {
            ts,
            track_id: 2,
            value,
            ..Default::default()
        });
    }
    for (name, ts, dur, track, depth, parent) in [
        ("binder transaction", 100, 100, 0, 0, None), // 0 T1
        ("binder reply", 110, 80, 1, 0, None),        // 1 R1
        ("AIDL::java::IFoo::bar::server", 120, 60, 1, 1, Some(1)), // 2
        ("binder transaction", 300, 100, 0, 0, None), // 3 T2
        ("inner", 310, 10, 0, 1, Some(3)),            // 4
        ("binder transaction async", 600, 10, 0, 0, None), // 5 T3
        ("binder async rcv", 620, 10, 1, 0, None),    // 6
        ("AIDL::java::IBaz::qux::server", 640, 10, 1, 0, None), // 7
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
    for (slice_out, slice_in) in [(0, 1), (5, 6)] {
        s.flows.push(FlowRow {
            slice_out,
            slice_in,
            ..Default::default()
        });
    }
    let (running, sleeping) = (s.strings.intern("Running"), s.strings.intern("S"));
    for (ts, dur, state) in [(100, 30, running), (130, 70, sleeping)] {
        s.sched.thread_states.push(ThreadStateRow {
            ts,
            dur,
            utid: 1,
            state,
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
fn transactions_pair_with_their_replies_by_flow() {
    let tp = trace();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE android.binder;
         SELECT binder_txn_id, binder_reply_id, aidl_name, interface, method_name,
           client_process, server_process, server_tid, client_ts, client_dur,
           server_ts, server_dur, client_oom_score, is_sync, is_main_thread
         FROM android_binder_txns",
    );
    assert_eq!(
        got,
        [
            vec![
                i(0),
                i(1),
                t("AIDL::java::IFoo::bar::server"),
                t("IFoo"),
                t("bar"),
                t("app"),
                t("system_server"),
                i(21),
                i(100),
                i(100),
                i(110),
                i(80),
                i(0),
                i(1),
                i(1)
            ],
            vec![
                i(5),
                i(6),
                t("AIDL::java::IBaz::qux::server"),
                t("IBaz"),
                t("qux"),
                t("app"),
                t("system_server"),
                i(21),
                i(600),
                i(10),
                i(620),
                i(10),
                i(900),
                i(0),
                i(1)
            ],
        ]
    );
    let counts = rows(
        &tp,
        "SELECT process_name, slice_name, event_count FROM android_binder_metrics_by_process
         ORDER BY process_name, slice_name",
    );
    assert_eq!(
        counts,
        [
            vec![t("app"), t("binder transaction"), i(2)],
            vec![t("app"), t("binder transaction async"), i(1)],
            vec![t("system_server"), t("binder async rcv"), i(1)],
            vec![t("system_server"), t("binder reply"), i(1)],
        ]
    );
    let states = rows(
        &tp,
        "SELECT binder_txn_id, thread_state_type, thread_state, thread_state_dur, thread_state_count
         FROM android_sync_binder_thread_state_by_txn ORDER BY thread_state",
    );
    assert_eq!(
        states,
        [
            vec![i(0), t("binder_txn"), t("Running"), i(30), i(1)],
            vec![i(0), t("binder_txn"), t("S"), i(70), i(1)],
        ]
    );
}

#[test]
fn named_synchronous_transactions_are_critical_blocking_calls() {
    let tp = trace();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE android.critical_blocking_calls;
         SELECT name, ts, dur, id, process_name, utid, upid, ts_end
         FROM _android_critical_blocking_calls ORDER BY id, name",
    );
    // T2 ('binder transaction') is a relevant slice by its name; T1 is
    // there by name and, once more, as the endpoint the server named.
    assert_eq!(
        got,
        [
            vec![
                t("AIDL::java::IFoo::bar::server"),
                i(100),
                i(100),
                i(0),
                t("app"),
                i(1),
                i(1),
                i(200)
            ],
            vec![
                t("binder transaction"),
                i(100),
                i(100),
                i(0),
                t("app"),
                i(1),
                i(1),
                i(200)
            ],
            vec![
                t("binder transaction"),
                i(300),
                i(100),
                i(3),
                t("app"),
                i(1),
                i(1),
                i(400)
            ],
            vec![
                t("binder transaction async"),
                i(600),
                i(10),
                i(5),
                t("app"),
                i(1),
                i(1),
                i(610)
            ],
        ]
    );
}

#[test]
fn the_breakdown_gives_each_stretch_of_a_call_its_reason() {
    let tp = trace();
    let client = rows(
        &tp,
        "INCLUDE PERFETTO MODULE android.binder_breakdown;
         SELECT binder_txn_id, binder_reply_id, ts, dur, reason
         FROM android_binder_client_breakdown ORDER BY ts",
    );
    // The client's thread ran, then slept in its own transaction.
    assert_eq!(
        client,
        [
            vec![i(0), i(1), i(100), i(30), t("Running")],
            vec![i(0), i(1), i(130), i(70), t("S")],
        ]
    );
    // No state is known for the server's thread: the client's reasons.
    let both = rows(
        &tp,
        "SELECT binder_txn_id, ts, dur, server_reason, client_reason, reason, reason_type
         FROM android_binder_client_server_breakdown ORDER BY ts",
    );
    assert_eq!(
        both,
        [
            vec![
                i(0),
                i(100),
                i(30),
                Value::Null,
                t("Running"),
                t("Running"),
                t("client")
            ],
            vec![
                i(0),
                i(130),
                i(70),
                Value::Null,
                t("S"),
                t("S"),
                t("client")
            ],
        ]
    );
    assert!(rows(&tp, "SELECT * FROM android_binder_server_breakdown").is_empty());
    assert_eq!(
        rows(
            &tp,
            "SELECT _binder_reason('binder reply', 'S', 0, 1, 2, 3),
               _binder_reason('x', 'D', 1, 1, 2, 3), _binder_reason('GC: Wait For X', 'R', 0, 1, 2, 3)"
        ),
        [vec![t("binder"), t("io"), t("userspace_memory_reclaim")]]
    );
}
