//! `sched.time_in_state`'s `sched_time_in_state_for_thread` in one pass
//! over the thread states: per thread and scheduling state, the time in
//! it (the sum of the states' durations, an unfinished state's -1
//! included, as the SQL sums them), the thread's total over all its
//! states, and the first as a whole percentage of the second (rounded
//! toward zero; NULL when the total is 0). A state of no thread is left
//! out. Rows by thread, then state (NULL first, then by bytes), the order
//! the SQL's GROUP BY gives. The sums overflow as SQLite's `sum` does:
//! an error; the percentage is computed exactly where SQLite would go
//! over to floating point (a state's time over 2^63 / 100 ns).

use std::sync::Arc;

use crate::column_store::strings::{StrId, StringPool};
use crate::column_store::table::{Column, Table};
use crate::hash::HashMap;
use crate::sql::perfetto_sql::native::Built;

use super::{column, ints, opt_ints};

/// The table's columns.
pub(crate) const COLUMNS: &[&str] = &[
    "utid",
    "total_runtime",
    "state",
    "time_in_state",
    "percentage_in_state",
];

/// A sum as SQLite's `sum` of integers keeps it: NULL until a value comes.
#[derive(Debug, Clone, Copy, Default)]
struct Sum(Option<i64>);

impl Sum {
    /// Adds `v` (NULL adds nothing); the error SQLite's `sum` raises when
    /// the sum leaves 64 bits.
    fn add(&mut self, v: Option<i64>) -> rusqlite::Result<()> {
        let Some(v) = v else {
            return Ok(());
        };
        self.0 = Some(match self.0 {
            None => v,
            Some(s) => s
                .checked_add(v)
                .ok_or_else(|| rusqlite::Error::ModuleError("integer overflow".into()))?,
        });
        Ok(())
    }
}

/// `time * 100 / total` rounded toward zero, NULL when either is NULL or
/// the total is 0.
fn percentage(time: Option<i64>, total: Option<i64>) -> Option<i64> {
    let (time, total) = (i128::from(time?), i128::from(total?));
    if total == 0 {
        return None;
    }
    i64::try_from(time * 100 / total).ok()
}

/// The rows over `states` (`__intrinsic_thread_state`; none when absent).
pub(crate) fn build(states: Option<&Table>) -> rusqlite::Result<Built> {
    let Some(t) = states else {
        return Ok(finish(Vec::new(), Arc::new(StringPool::default())));
    };
    let (utid, state, dur) = (column(t, "utid"), column(t, "state"), column(t, "dur"));
    let mut per_state: HashMap<(i64, StrId), Sum> = HashMap::default();
    let mut per_thread: HashMap<i64, Sum> = HashMap::default();
    for row in 0..t.len {
        let Some(u) = utid.and_then(|c| c.int_at(row)) else {
            continue;
        };
        let s = state.and_then(|c| c.str_at(row)).unwrap_or(StrId::NULL);
        let d = dur.and_then(|c| c.int_at(row));
        per_state.entry((u, s)).or_default().add(d)?;
        per_thread.entry(u).or_default().add(d)?;
    }
    let mut groups: Vec<((i64, StrId), Sum)> = per_state.into_iter().collect();
    let name = |s: StrId| t.strings.get(s);
    groups.sort_unstable_by(|((ua, sa), _), ((ub, sb), _)| {
        ua.cmp(ub).then_with(|| name(*sa).cmp(&name(*sb)))
    });
    let rows = groups
        .into_iter()
        .map(|((u, s), time)| {
            let total = per_thread.get(&u).copied().unwrap_or_default().0;
            (u, total, s, time.0)
        })
        .collect();
    Ok(finish(rows, t.strings.clone()))
}

/// The table of `rows` (utid, total, state, time), strings in `strings`.
fn finish(rows: Vec<(i64, Option<i64>, StrId, Option<i64>)>, strings: Arc<StringPool>) -> Built {
    let len = rows.len();
    let states: Vec<StrId> = rows.iter().map(|r| r.2).collect();
    let state = if states.iter().all(|s| s.is_null()) {
        Column::opt_int("state", vec![None; len])
    } else {
        Column::str("state", states)
    };
    let columns = vec![
        ints("utid", rows.iter().map(|r| r.0).collect()),
        opt_ints("total_runtime", rows.iter().map(|r| r.1).collect()),
        state,
        opt_ints("time_in_state", rows.iter().map(|r| r.3).collect()),
        opt_ints(
            "percentage_in_state",
            rows.iter().map(|r| percentage(r.3, r.1)).collect(),
        ),
    ];
    Built {
        columns,
        len,
        strings,
    }
}
