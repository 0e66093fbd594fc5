//! The native thread-slice operators against plain-SQL references written
//! here (a join of every thread slice with every state or sched slice of
//! its thread that overlaps it, grouped), over a small trace with the
//! edge cases: a state that changes mid-slice, nested slices, an
//! unfinished slice and state (duration -1), zero-length slices, a thread
//! without any scheduling data, the swapper's and a process track's
//! slices, states of one key apart in time, and a thread whose states
//! overlap one another (which no kernel writes, but a trace may hold).

use crate::storage::Storage;
use crate::tables::core::{ProcessRow, SliceRow, ThreadRow, TrackRow};
use crate::tables::sched::{SchedSliceRow, ThreadStateRow};
use crate::{TraceProcessor, Value};

/// Threads: utid 0 (swapper), 1 "main" and 2 "idle-less" of process 1
/// "app", 3 "odd" of no process. Tracks: 0 of utid 1, 1 of utid 2, 2 of
/// utid 0, 3 of process 1 (no thread), 4 of utid 3.
fn trace() -> TraceProcessor {
    let mut s = Storage::default();
    let slice_kind = s.strings.intern("slice");
    let app = s.strings.intern("app");
    s.processes.push(ProcessRow::default());
    s.processes.push(ProcessRow {
        pid: 10,
        name: app,
        ..Default::default()
    });
    s.threads.push(ThreadRow::default());
    for (tid, name, upid) in [
        (10, "main", Some(1)),
        (11, "quiet", Some(1)),
        (12, "odd", None),
    ] {
        let name = s.strings.intern(name);
        s.threads.push(ThreadRow {
            tid,
            name,
            upid,
            ..Default::default()
        });
    }
    let thread_track = s.strings.intern("thread_track");
    for (utid, upid) in [
        (Some(1), None),
        (Some(2), None),
        (Some(0), None),
        (None, Some(1)),
        (Some(3), None),
    ] {
        s.tracks.push(TrackRow {
            classification: thread_track,
            event_type: slice_kind,
            utid,
            upid,
            ..Default::default()
        });
    }
    // Slice ids in order: 0 A, 1 B, 2 C (unfinished), 3 Z (zero), 4 E,
    // 5 F (after the last finished state), 6 Q (quiet thread), 7 W
    // (swapper), 8 P (process track), 9 O (odd thread), 10 G (a slice
    // inside one state only).
    for (name, ts, dur, track, depth, parent) in [
        ("A", 0, 100, 0, 0, None),
        ("B", 10, 65, 0, 1, Some(0)),
        ("C", 20, -1, 0, 2, Some(1)),
        ("Z", 50, 0, 0, 2, Some(1)),
        ("E", 85, 100, 0, 0, None),
        ("F", 300, 50, 0, 0, None),
        ("Q", 0, 40, 1, 0, None),
        ("W", 0, 40, 2, 0, None),
        ("P", 0, 40, 3, 0, None),
        ("O", 0, 40, 4, 0, None),
        ("G", 31, 5, 0, 0, None),
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
    let st = |s: &mut Storage, v: &str| s.strings.intern(v);
    let (running, sleeping, blocked, runnable) = (
        st(&mut s, "Running"),
        st(&mut s, "S"),
        st(&mut s, "D"),
        st(&mut s, "R"),
    );
    let (f, g) = (st(&mut s, "f"), st(&mut s, "g"));
    let none = Default::default();
    for (ts, dur, utid, state, io_wait, function) in [
        (0, 30, 1, running, None, none),
        (30, 30, 1, sleeping, None, none),
        (60, 10, 1, blocked, Some(true), f),
        (70, 10, 1, blocked, Some(false), none),
        (80, 10, 1, blocked, Some(true), f),
        (90, 5, 1, blocked, Some(true), g),
        (95, 60, 1, runnable, None, none),
        (155, -1, 1, running, None, none),
        (0, 50, 0, running, None, none),
        (0, 30, 3, sleeping, None, none),
        (10, 10, 3, running, None, none),
        (25, 0, 3, runnable, None, none),
    ] {
        s.sched.thread_states.push(ThreadStateRow {
            ts,
            dur,
            utid,
            state,
            io_wait,
            blocked_function: function,
            ..Default::default()
        });
    }
    for (ts, dur, utid) in [
        (0, 30, 1),
        (95, 5, 1),
        (110, 20, 1),
        (155, -1, 1),
        (0, 50, 0),
        (10, 10, 3),
        (5, 20, 3),
        (30, 0, 3),
    ] {
        s.sched.slices.push(SchedSliceRow {
            ts,
            dur,
            utid,
            ..Default::default()
        });
    }
    TraceProcessor::from_storage(s).expect("engine")
}

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).expect(sql).rows
}

#[test]
fn time_in_state_answers_what_a_plain_join_answers() {
    let tp = trace();
    let native = rows(
        &tp,
        "INCLUDE PERFETTO MODULE slices.time_in_state;
         SELECT id, name, utid, thread_name, upid, process_name, state, io_wait,
           blocked_function, dur
         FROM thread_slice_time_in_state",
    );
    let reference = rows(
        &tp,
        "SELECT s.id, s.name, s.utid, s.thread_name, s.upid, s.process_name,
           st.state, st.io_wait, st.blocked_function,
           sum(min(s.ts + s.dur, st.ts + st.dur) - max(s.ts, st.ts))
         FROM thread_slice AS s
         JOIN thread_state AS st
           ON st.utid = s.utid AND st.ts < s.ts + s.dur AND s.ts < st.ts + st.dur
         WHERE s.utid > 0 AND s.dur > 0 AND st.dur > 0
         GROUP BY s.id, st.state, st.io_wait, st.blocked_function
         ORDER BY s.id, st.state, st.io_wait, st.blocked_function",
    );
    assert_eq!(native, reference);
    // The cases the trace was built for are there: B's states split at
    // each change, the two D/io/f stretches summed, the odd thread's
    // overlapping states both counted, no row of C, Z, F, Q, W, P.
    let ids: Vec<i64> = native
        .iter()
        .filter_map(|r| match r.first() {
            Some(Value::Int(v)) => Some(*v),
            _ => None,
        })
        .collect();
    for present in [0, 1, 4, 9, 10] {
        assert!(
            ids.contains(&present),
            "slice {present} has no rows: {native:?}"
        );
    }
    for absent in [2, 3, 5, 6, 7, 8] {
        assert!(
            !ids.contains(&absent),
            "slice {absent} has rows: {native:?}"
        );
    }
    let a_blocked_f = rows(
        &tp,
        "SELECT dur FROM thread_slice_time_in_state
         WHERE id = 0 AND state = 'D' AND io_wait = 1 AND blocked_function = 'f'",
    );
    assert_eq!(a_blocked_f, [[Value::Int(20)]]);
    // The table's types are upstream's.
    let types = rows(
        &tp,
        "SELECT typeof(id), typeof(name), typeof(state), typeof(dur)
         FROM thread_slice_time_in_state WHERE id = 0 LIMIT 1",
    );
    assert_eq!(
        types,
        [[
            Value::Text("integer".into()),
            Value::Text("text".into()),
            Value::Text("text".into()),
            Value::Text("integer".into())
        ]]
    );
}

#[test]
fn cpu_time_answers_what_a_plain_join_answers() {
    let tp = trace();
    let native = rows(
        &tp,
        "INCLUDE PERFETTO MODULE slices.cpu_time;
         SELECT id, name, utid, thread_name, upid, process_name, cpu_time
         FROM thread_slice_cpu_time",
    );
    let reference = rows(
        &tp,
        "SELECT s.id, s.name, s.utid, s.thread_name, s.upid, s.process_name,
           sum(min(s.ts + s.dur, r.ts + r.dur) - max(s.ts, r.ts))
         FROM thread_slice AS s
         JOIN sched AS r
           ON r.utid = s.utid AND r.ts < s.ts + s.dur AND s.ts < r.ts + r.dur
         WHERE s.utid > 0 AND s.dur > 0 AND r.dur > 0
         GROUP BY s.id
         ORDER BY s.id",
    );
    assert_eq!(native, reference);
    // A [0, 100) ran [0, 30) and [95, 100); the odd thread's overlapping
    // sched slices both count.
    let a = rows(
        &tp,
        "SELECT cpu_time FROM thread_slice_cpu_time WHERE id IN (0, 9) ORDER BY id",
    );
    assert_eq!(a, [[Value::Int(35)], [Value::Int(30)]]);
}

/// The trace with `linux.cpu.utilization.slice` included and its
/// frequency pieces replaced by `pieces` (rows of ts, dur, utid, freq):
/// this trace has no CPU frequencies of its own.
fn with_pieces(pieces: &str) -> TraceProcessor {
    let tp = trace();
    tp.query(&format!(
        "INCLUDE PERFETTO MODULE linux.cpu.utilization.general;
         DROP TABLE _cpu_freq_per_thread;
         CREATE TABLE _cpu_freq_per_thread AS
         SELECT row_number() OVER () - 1 AS id, column1 AS ts, column2 AS dur,
           column3 AS utid, column4 AS freq
         FROM (VALUES {pieces})"
    ))
    .expect("pieces");
    tp
}

/// The plain-SQL reference of `cpu_cycles_per_thread_slice`.
const CYCLES_REFERENCE: &str = "
    WITH cycles AS (
      SELECT s.id, sum(min(s.ts + s.dur, p.ts + p.dur) - max(s.ts, p.ts)) AS dur,
        CAST(sum((min(s.ts + s.dur, p.ts + p.dur) - max(s.ts, p.ts)) * p.freq / 1000) AS INT)
          AS millicycles,
        CAST(sum((min(s.ts + s.dur, p.ts + p.dur) - max(s.ts, p.ts)) * p.freq / 1000) / 1e9 AS INT)
          AS megacycles
      FROM thread_slice AS s
      JOIN _cpu_freq_per_thread AS p
        ON p.utid = s.utid AND p.ts < s.ts + s.dur AND s.ts < p.ts + p.dur
      WHERE s.utid > 0 AND s.dur > 0 AND p.dur > 0 AND p.freq IS NOT NULL
      GROUP BY s.id
    )
    SELECT s.id, s.name, s.utid, s.thread_name, s.upid, s.process_name,
      c.millicycles, c.megacycles
    FROM thread_slice AS s
    LEFT JOIN cycles AS c ON c.id = s.id AND c.dur = s.dur
    ORDER BY s.id";

#[test]
fn cycles_answer_what_a_plain_join_answers() {
    // Pieces of utid 1 at doubles (one NULL, one of no length) covering G
    // [31, 36) whole and A [0, 100) and B [10, 75) in part; of the odd
    // thread at integer frequencies covering O [0, 40) whole; of the
    // quiet thread, at a frequency whose product with a duration
    // overflows an integer, covering Q [0, 40) whole; of the swapper.
    let tp = with_pieces(
        "(0, 20, 1, 1804800.0), (20, 10, 1, 2995200.5), (30, 10, 1, 2995200.25),
         (95, 5, 1, NULL), (110, 20, 1, 300000.25), (130, 0, 1, 5.0),
         (0, 25, 3, 1400000), (25, 15, 3, 7), (0, 40, 2, 4611686018427387904),
         (0, 50, 0, 1000.0)",
    );
    let native = rows(
        &tp,
        "INCLUDE PERFETTO MODULE linux.cpu.utilization.slice;
         SELECT * FROM cpu_cycles_per_thread_slice",
    );
    let reference = rows(&tp, CYCLES_REFERENCE);
    assert_eq!(native, reference);
    let known = rows(
        &tp,
        "SELECT id FROM cpu_cycles_per_thread_slice WHERE millicycles IS NOT NULL ORDER BY id",
    );
    assert_eq!(known, [[Value::Int(6)], [Value::Int(9)], [Value::Int(10)]]);
    // The source read directly gives the same rows.
    let direct = rows(&tp, "SELECT * FROM __intrinsic_cpu_cycles_per_thread_slice");
    assert_eq!(direct, native);
}

#[test]
fn without_frequencies_no_slice_has_cycles() {
    let tp = trace();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE linux.cpu.utilization.slice;
         SELECT count(*), count(millicycles), count(megacycles)
         FROM cpu_cycles_per_thread_slice",
    );
    let slices = rows(&tp, "SELECT count(*), 0, 0 FROM thread_slice");
    assert_eq!(got, slices);
    // A piece's frequency that is text is refused, not read as a number.
    let bad = with_pieces("(0, 20, 1, 'fast')");
    assert!(
        bad.query("INCLUDE PERFETTO MODULE linux.cpu.utilization.slice")
            .is_err()
    );
}

#[test]
fn the_flattened_slices_answer_what_a_join_with_thread_slice_answers() {
    let tp = trace();
    let native = rows(
        &tp,
        "INCLUDE PERFETTO MODULE slices.flat_slices;
         SELECT * FROM _slice_flattened",
    );
    let reference = rows(
        &tp,
        "SELECT f.slice_id, f.ts, f.dur, t.depth, t.name, f.root_id, t.track_id,
           t.utid, t.tid, t.thread_name, t.upid, t.pid, t.process_name
         FROM __intrinsic_slice_flattened AS f
         JOIN thread_slice AS t ON t.id = f.slice_id
         ORDER BY f.root_id, f.ts",
    );
    assert_eq!(native, reference);
    assert!(!native.is_empty());
    let types = rows(
        &tp,
        "SELECT DISTINCT typeof(slice_id), typeof(name), typeof(process_name)
         FROM _slice_flattened WHERE slice_id = 0",
    );
    assert_eq!(
        types,
        [[
            Value::Text("integer".into()),
            Value::Text("text".into()),
            Value::Text("text".into())
        ]]
    );
}

/// Upstream's definition as window functions, our module's text before
/// the native source took its place.
const PREVIOUS_RUNNABLE_SQL: &str = "
  WITH running_or_runnable AS (
    SELECT id, state,
      max(CASE WHEN state != 'Running' THEN id END) OVER by_thread AS prev_runnable_id,
      max(CASE WHEN waker_utid IS NOT NULL AND (irq_context IS NULL OR irq_context != 1)
          THEN id END) OVER by_thread AS prev_wakeup_runnable_id
    FROM thread_state
    WHERE state IN ('R', 'R+', 'Running') AND dur != -1
    WINDOW by_thread AS (PARTITION BY utid ORDER BY id))
  SELECT id, prev_runnable_id, prev_wakeup_runnable_id
  FROM running_or_runnable WHERE state = 'Running' ORDER BY id";

#[test]
fn previous_runnable_answers_what_the_window_functions_answer() {
    let mut s = Storage::default();
    let states: Vec<_> = ["Running", "R", "R+", "S", "D", "Running "]
        .iter()
        .map(|v| s.strings.intern(v))
        .collect();
    // Three threads interleaved: runnable then running, running with no
    // runnable before it, an unfinished runnable (skipped), other states
    // between, wakeups from interrupts and not, a wakeup on a running
    // state itself, and a state name that only looks like `Running`.
    // (utid, state, dur, waker_utid, irq_context)
    type State = (u32, usize, i64, Option<u32>, Option<u32>);
    let rows: &[State] = &[
        (1, 0, 10, None, None),
        (2, 1, 5, Some(1), None),
        (1, 1, 5, Some(2), Some(1)),
        (1, 0, 10, None, None),
        (2, 0, 10, None, None),
        (1, 2, -1, Some(2), Some(0)),
        (1, 0, 10, Some(3), Some(0)),
        (3, 3, 10, Some(1), None),
        (3, 0, 10, None, None),
        (2, 4, 10, Some(1), None),
        (2, 2, 7, Some(1), Some(0)),
        (2, 5, 10, None, None),
        (2, 0, 10, None, None),
        (1, 2, 3, None, None),
        (1, 0, 10, None, None),
    ];
    for (i, &(utid, state, dur, waker_utid, irq_context)) in rows.iter().enumerate() {
        s.sched.thread_states.push(ThreadStateRow {
            ts: i as i64 * 10,
            dur,
            utid,
            state: states[state],
            waker_utid,
            irq_context,
            ..Default::default()
        });
    }
    let tp = TraceProcessor::from_storage(s).expect("engine");
    let native = rows_of(
        &tp,
        "INCLUDE PERFETTO MODULE sched.runnable;
         SELECT id, prev_runnable_id, prev_wakeup_runnable_id
         FROM sched_previous_runnable_on_thread",
    );
    assert_eq!(native, rows_of(&tp, PREVIOUS_RUNNABLE_SQL));
    let int = |v: i64| Value::Int(v);
    assert_eq!(native.len(), 7, "{native:?}");
    // Thread 1's running state 6: runnable 2 (5 is unfinished), woken by
    // itself (6) not from an interrupt.
    assert!(native.contains(&vec![int(6), int(2), int(6)]), "{native:?}");
    // Thread 2's first running state: runnable 1, whose wakeup counts.
    assert!(native.contains(&vec![int(4), int(1), int(1)]), "{native:?}");
    // Thread 3's running state: no runnable state before it.
    assert!(
        native.contains(&vec![int(8), Value::Null, Value::Null]),
        "{native:?}"
    );
}

fn rows_of(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    rows(tp, sql)
}
