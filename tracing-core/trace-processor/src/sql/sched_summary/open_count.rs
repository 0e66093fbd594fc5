//! `sched.thread_level_parallelism`'s tables: how many intervals are open
//! from each time on, as `intervals_overlap_count!` counts them, over the
//! thread states in state `R` (`sched_runnable_thread_count`), in state `D`
//! (`sched_uninterruptible_sleep_thread_count`) and the sched slices of
//! threads other than the idle ones (`sched_active_cpu_count`). Each
//! interval adds 1 at its start and, unless its duration is -1 (never
//! ended), takes 1 away at its end; a row for each distinct time a start
//! or end falls on (even where the count does not change), with the count
//! from then on, by time. An end past 2^63 - 1 is taken there.

use std::sync::Arc;

use crate::column_store::strings::StringPool;
use crate::column_store::table::Table;
use crate::sql::perfetto_sql::native::Built;

use super::{column, ints};

/// `sched_runnable_thread_count`'s columns.
pub(crate) const RUNNABLE: &[&str] = &["ts", "runnable_thread_count"];
/// `sched_uninterruptible_sleep_thread_count`'s columns.
pub(crate) const UNINTERRUPTIBLE: &[&str] = &["ts", "uninterruptible_sleep_thread_count"];
/// `sched_active_cpu_count`'s columns.
pub(crate) const ACTIVE_CPUS: &[&str] = &["ts", "active_cpu_count"];

/// The open count of the intervals `(ts, dur)`: per distinct time, the
/// count from then on.
pub(crate) fn count(spans: impl Iterator<Item = (i64, i64)>) -> (Vec<i64>, Vec<i64>) {
    let mut points: Vec<(i64, i64)> = Vec::new();
    for (ts, dur) in spans {
        points.push((ts, 1));
        if dur != -1 {
            points.push((ts.saturating_add(dur), -1));
        }
    }
    points.sort_unstable_by_key(|p| p.0);
    let (mut times, mut values) = (Vec::new(), Vec::new());
    let mut open = 0i64;
    let mut i = 0;
    while let Some(&(at, _)) = points.get(i) {
        while let Some(&(t, step)) = points.get(i) {
            if t != at {
                break;
            }
            open += step;
            i += 1;
        }
        times.push(at);
        values.push(open);
    }
    (times, values)
}

/// The table of the counts, its columns named `names`.
fn table(names: &'static [&'static str], (times, values): (Vec<i64>, Vec<i64>)) -> Built {
    let len = times.len();
    let ts = names.first().copied().unwrap_or("ts");
    let value = names.get(1).copied().unwrap_or("value");
    Built {
        columns: vec![ints(ts, times), ints(value, values)],
        len,
        strings: Arc::new(StringPool::default()),
    }
}

/// The open count of the thread states in state `state`, columns `names`.
pub(crate) fn in_state(
    states: Option<&Table>,
    state: &str,
    names: &'static [&'static str],
) -> Built {
    let Some(t) = states else {
        return table(names, (Vec::new(), Vec::new()));
    };
    let want = t.strings.find(state);
    let (ts, dur, st) = (column(t, "ts"), column(t, "dur"), column(t, "state"));
    let spans = (0..t.len).filter_map(|row| {
        let here = st.and_then(|c| c.str_at(row));
        if want.is_none() || here != want {
            return None;
        }
        Some((ts?.int_at(row)?, dur?.int_at(row)?))
    });
    table(names, count(spans))
}

/// The open count of the sched slices of threads that are not idle.
pub(crate) fn active_cpus(sched: Option<&Table>, threads: Option<&Table>) -> Built {
    let Some(t) = sched else {
        return table(ACTIVE_CPUS, (Vec::new(), Vec::new()));
    };
    // The idle threads, by utid (a thread's utid is its row).
    let is_idle = threads.and_then(|th| column(th, "is_idle"));
    let idle: Vec<bool> = threads.map_or_else(Vec::new, |th| {
        (0..th.len)
            .map(|r| is_idle.and_then(|c| c.int_at(r)).is_some_and(|v| v != 0))
            .collect()
    });
    let none_idle = !idle.contains(&true);
    let (ts, dur, utid) = (column(t, "ts"), column(t, "dur"), column(t, "utid"));
    let spans = (0..t.len).filter_map(|row| {
        // `utid NOT IN (idle utids)`: NULL only passes an empty list.
        let busy = match utid.and_then(|c| c.int_at(row)) {
            Some(u) => !usize::try_from(u).is_ok_and(|u| idle.get(u).copied().unwrap_or(false)),
            None => none_idle,
        };
        if !busy {
            return None;
        }
        Some((ts?.int_at(row)?, dur?.int_at(row)?))
    });
    table(ACTIVE_CPUS, count(spans))
}
