//! `android.critical_blocking_calls` tests its slice names once per
//! distinct name (`_android_critical_blocking_calls_relevant_names`)
//! instead of once per slice: on random traces of thread and process
//! slices, its table holds exactly the rows of the per-slice select it
//! replaced (the relevance test and the standardized name per slice, the
//! DrawFrames less their buffer waits, the drawLayer copies).

use crate::storage::Storage;
use crate::tables::core::{ProcessRow, SliceRow, ThreadRow, TrackRow};
use crate::{TraceProcessor, Value};

/// The names drawn from: relevant ones of each kind (fixed, prefixed,
/// handler messages, standardized to another name), irrelevant ones
/// (Choreographer's, input's), the DrawFrames and buffer waits.
const NAMES: &[&str] = &[
    "layout",
    "measure",
    "input",
    "other work",
    "DrawFrames 1234",
    "waitForBufferRelease",
    "drawLayer [Node] 5.0 x 5.0",
    "monitor contention with owner Thread-2 (123)",
    "Lock contention on a monitor lock",
    "android.os.Handler: com.foo.Bar$1",
    "com.foo.Bar$Baz: #42",
    "Choreographer#doFrame 99",
    "Input dispatch",
    "android.os.Handler: #17",
    "binder transaction",
    "inflate",
    "GC: Wait For Completion",
];

/// A small linear congruential generator (the tests need no more).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Three threads of two processes (and a thread of none), a thread track
/// each and a process track; `n` random slices over the four tracks,
/// some unfinished.
fn trace(seed: u64, n: usize) -> TraceProcessor {
    let mut r = Lcg(seed);
    let mut s = Storage::default();
    let slice_kind = s.strings.intern("slice");
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
    for (tid, upid) in [(10, Some(1)), (11, Some(1)), (21, Some(2)), (30, None)] {
        let name = s.strings.intern(&format!("t{tid}"));
        s.threads.push(ThreadRow {
            tid,
            name,
            upid,
            ..Default::default()
        });
    }
    let thread_track = s.strings.intern("thread_track");
    for utid in 1..=4 {
        s.tracks.push(TrackRow {
            classification: thread_track,
            event_type: slice_kind,
            utid: Some(utid),
            ..Default::default()
        });
    }
    let process_track = s.strings.intern("process_track");
    s.tracks.push(TrackRow {
        classification: process_track,
        event_type: slice_kind,
        upid: Some(1),
        ..Default::default()
    });
    let names: Vec<_> = NAMES.iter().map(|n| s.strings.intern(n)).collect();
    let mut ts = 0;
    for _ in 0..n {
        ts += r.next(20) as i64;
        let dur = if r.next(10) == 0 {
            -1
        } else {
            r.next(100) as i64
        };
        let name = names
            .get(r.next(names.len() as u64) as usize)
            .copied()
            .unwrap_or_default();
        s.slices.push(SliceRow {
            ts,
            dur,
            track_id: r.next(5) as u32,
            name,
            ..Default::default()
        });
    }
    TraceProcessor::from_storage(s).expect("engine")
}

/// The per-slice select the module's table was before.
const PER_SLICE: &str = "
WITH
  waited AS (
    SELECT d.id, sum(w.dur) AS dur
    FROM _android_critical_blocking_calls_wait_for_buffer_release AS w
    JOIN _android_critical_blocking_calls_draw_frames AS d
      ON d.utid = w.utid AND w.ts >= d.ts AND w.ts < d.ts + d.dur
    GROUP BY d.id
  ),
  relevant AS (
    SELECT
      android_standardize_slice_name(s.name) AS name,
      s.ts,
      iif(waited.dur IS NULL OR s.dur = -1, s.dur, max(s.dur - waited.dur, 0)) AS dur,
      s.id,
      s.process_name,
      th.utid,
      s.upid
    FROM thread_slice AS s
    JOIN thread AS th USING (utid)
    LEFT JOIN waited USING (id)
    WHERE _is_relevant_blocking_call_expr!(s.name)
  )
SELECT name, ts, dur, id, process_name, utid, upid, ts + dur AS ts_end
FROM relevant
UNION ALL
SELECT 'drawLayer', s.ts, s.dur, s.id, s.process_name, th.utid, s.upid, s.ts + s.dur
FROM thread_slice AS s
JOIN thread AS th USING (utid)
WHERE s.name GLOB 'drawLayer *'
UNION ALL
SELECT b.aidl_name, b.client_ts, b.client_dur, b.binder_txn_id, b.client_process,
  b.client_utid, b.client_upid, b.client_ts + b.client_dur
FROM android_binder_txns AS b
WHERE b.aidl_name IS NOT NULL AND b.is_sync = 1
ORDER BY id, name, ts, dur";

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

#[test]
fn blocking_calls_by_distinct_name_are_the_per_slice_rows() {
    for seed in 0..12 {
        let tp = trace(seed, 40 + 30 * seed as usize);
        let got = rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.critical_blocking_calls;
             SELECT * FROM _android_critical_blocking_calls ORDER BY id, name, ts, dur",
        );
        let want = rows(&tp, PER_SLICE);
        assert_eq!(got, want, "seed {seed}");
        // The random traces hold relevant calls, standardized names and
        // DrawFrames shortened by their waits.
        if seed == 11 {
            let names: Vec<Value> = rows(
                &tp,
                "SELECT DISTINCT name FROM _android_critical_blocking_calls ORDER BY 1",
            )
            .into_iter()
            .flatten()
            .collect();
            for n in [
                "DrawFrames",
                "drawLayer",
                "monitor contention with <...>",
                "layout",
            ] {
                assert!(names.contains(&Value::Text(n.into())), "{n}: {names:?}");
            }
        }
    }
}
