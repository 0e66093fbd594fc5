//! The native `sched.time_in_state` and `sched.thread_level_parallelism`
//! tables against the SQL they replace (written here as the modules
//! wrote it before, over the same engine), on random traces: a few
//! threads (some idle), thread states of a few states and NULL, of
//! durations -1 (unfinished), 0 and positive, many sharing a time, and
//! sched slices the same way.

use crate::storage::Storage;
use crate::tables::core::ThreadRow;
use crate::tables::sched::{SchedSliceRow, ThreadStateRow};
use crate::{TraceProcessor, Value};

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> i64 {
        i64::try_from(self.next() % n).unwrap_or(0)
    }
}

/// A random trace of `threads` threads, `states` thread states and
/// `slices` sched slices.
fn trace(seed: u64, threads: u64, states: usize, slices: usize) -> TraceProcessor {
    let mut rng = Rng(seed);
    let mut s = Storage::default();
    for t in 0..threads {
        s.threads.push(ThreadRow {
            tid: i64::try_from(t).unwrap_or(0),
            is_idle: t == 0 || rng.below(5) == 0,
            ..Default::default()
        });
    }
    let names = ["R", "R+", "D", "S", "Running", "", "x"]
        .map(|n| (!n.is_empty()).then(|| s.strings.intern(n)));
    let dur = |rng: &mut Rng| match rng.below(6) {
        0 => -1,
        1 => 0,
        _ => rng.below(40),
    };
    let mut ts = 0;
    for _ in 0..states {
        ts += rng.below(3) * rng.below(10);
        let state = names[rng.below(names.len() as u64) as usize].unwrap_or_default();
        let utid = u32::try_from(rng.below(threads)).unwrap_or(0);
        let d = dur(&mut rng);
        s.sched.thread_states.push(ThreadStateRow {
            ts,
            dur: d,
            utid,
            state,
            ..Default::default()
        });
    }
    let mut ts = 0;
    for _ in 0..slices {
        ts += rng.below(3) * rng.below(10);
        let utid = u32::try_from(rng.below(threads + 1)).unwrap_or(0);
        let d = dur(&mut rng);
        s.sched.slices.push(SchedSliceRow {
            ts,
            dur: d,
            utid,
            ..Default::default()
        });
    }
    TraceProcessor::from_storage(s).expect("engine")
}

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).expect(sql).rows
}

/// The SQL `sched_time_in_state_for_thread` was.
const TIME_IN_STATE: &str = "
    WITH
      per_thread AS (SELECT utid, sum(dur) AS total FROM thread_state GROUP BY utid),
      per_state AS (
        SELECT utid, state, sum(dur) AS time_in_state
        FROM thread_state
        GROUP BY utid, state
      )
    SELECT per_state.utid, per_thread.total, per_state.state, per_state.time_in_state,
      (per_state.time_in_state * 100) / per_thread.total
    FROM per_state JOIN per_thread USING (utid)
    ORDER BY 1, 3";

/// The SQL of `sched.thread_level_parallelism`'s count of `rows`.
fn count_sql(rows: &str) -> String {
    format!(
        "WITH x AS ({rows})
         SELECT ts, value FROM intervals_overlap_count!(x, ts, dur) ORDER BY ts"
    )
}

#[test]
fn the_native_tables_answer_what_their_sql_answered() {
    for seed in 0..40 {
        let threads = 1 + seed % 6;
        let n = usize::try_from(seed * 7 % 90).unwrap_or(0);
        let tp = trace(seed, threads, n, n / 2 + 3);
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE sched.time_in_state;
             INCLUDE PERFETTO MODULE sched.thread_level_parallelism",
        );
        let native = rows(
            &tp,
            "SELECT * FROM sched_time_in_state_for_thread ORDER BY utid, state",
        );
        assert_eq!(native, rows(&tp, TIME_IN_STATE), "seed {seed}");
        for (table, reference) in [
            (
                "sched_runnable_thread_count",
                "SELECT ts, dur FROM thread_state WHERE state = 'R'",
            ),
            (
                "sched_uninterruptible_sleep_thread_count",
                "SELECT ts, dur FROM thread_state WHERE state = 'D'",
            ),
            (
                "sched_active_cpu_count",
                "SELECT ts, dur FROM sched
                 WHERE utid NOT IN (SELECT utid FROM thread WHERE is_idle)",
            ),
        ] {
            let native = rows(&tp, &format!("SELECT * FROM {table}"));
            assert_eq!(
                native,
                rows(&tp, &count_sql(reference)),
                "seed {seed}: {table}"
            );
        }
    }
}

#[test]
fn the_tables_keep_their_types_and_the_other_tables_read_them() {
    let tp = trace(7, 4, 60, 20);
    let types = rows(
        &tp,
        "INCLUDE PERFETTO MODULE sched.time_in_state;
         SELECT DISTINCT typeof(utid), typeof(total_runtime), typeof(time_in_state)
         FROM sched_time_in_state_for_thread",
    );
    assert_eq!(
        types,
        [[
            Value::Text("integer".into()),
            Value::Text("integer".into()),
            Value::Text("integer".into())
        ]]
    );
    // The percentages table over it: one row per thread.
    let per_thread = rows(
        &tp,
        "SELECT count(*) = count(DISTINCT utid) FROM sched_percentage_of_time_in_state",
    );
    assert_eq!(per_thread, [[Value::Int(1)]]);
}

#[test]
fn an_empty_trace_has_empty_tables() {
    let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
    let counts = rows(
        &tp,
        "INCLUDE PERFETTO MODULE sched.time_in_state;
         INCLUDE PERFETTO MODULE sched.thread_level_parallelism;
         SELECT (SELECT count(*) FROM sched_time_in_state_for_thread),
           (SELECT count(*) FROM sched_runnable_thread_count),
           (SELECT count(*) FROM sched_active_cpu_count)",
    );
    assert_eq!(counts, [[Value::Int(0), Value::Int(0), Value::Int(0)]]);
}
