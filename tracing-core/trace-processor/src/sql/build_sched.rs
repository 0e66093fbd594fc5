//! The scheduling and raw ftrace rows into their intrinsic tables, with
//! upstream's names, columns and types: `__intrinsic_sched_slice`,
//! `__intrinsic_thread_state`, `__intrinsic_ftrace_event` (the views
//! `sched`, `sched_slice`, `thread_state`, `ftrace_event` and `raw` over
//! them are in `views_sched.rs`).

use std::sync::Arc;

use crate::storage::sched_rows::SchedRows;
use crate::storage::strings::StringPool;

use super::table::{Column, Table};

fn ids(n: usize) -> Vec<i64> {
    (0..n as i64).collect()
}

fn opt(v: Option<u32>) -> Option<i64> {
    v.map(i64::from)
}

/// Column 1 (`ts`) when its values ascend.
fn ts_sorted(t: &Table) -> Option<usize> {
    t.columns.get(1)?.ascends().then_some(1)
}

/// Builds the three tables.
pub fn build(s: &SchedRows, strings: &Arc<StringPool>) -> Vec<Table> {
    let table = |name: &'static str, columns: Vec<Column>, len: usize| {
        let mut t = Table {
            name,
            columns,
            len,
            has_id: true,
            sorted_by: None,
            strings: strings.clone(),
            orders: Default::default(),
        };
        t.sorted_by = ts_sorted(&t);
        t
    };
    let sl = &s.slices;
    let ts = &s.thread_states;
    let fe = &s.ftrace_events;
    vec![
        table(
            "__intrinsic_sched_slice",
            vec![
                Column::int("id", ids(sl.len())),
                Column::int("ts", sl.iter().map(|r| r.ts).collect()),
                Column::int("dur", sl.iter().map(|r| r.dur).collect()),
                Column::int("utid", sl.iter().map(|r| i64::from(r.utid)).collect()),
                Column::str("end_state", sl.iter().map(|r| r.end_state).collect()),
                Column::int(
                    "priority",
                    sl.iter().map(|r| i64::from(r.priority)).collect(),
                ),
                Column::int("ucpu", sl.iter().map(|r| i64::from(r.ucpu)).collect()),
            ],
            sl.len(),
        ),
        table(
            "__intrinsic_thread_state",
            vec![
                Column::int("id", ids(ts.len())),
                Column::int("ts", ts.iter().map(|r| r.ts).collect()),
                Column::int("dur", ts.iter().map(|r| r.dur).collect()),
                Column::int("utid", ts.iter().map(|r| i64::from(r.utid)).collect()),
                Column::str("state", ts.iter().map(|r| r.state).collect()),
                Column::opt_int(
                    "io_wait",
                    ts.iter().map(|r| r.io_wait.map(i64::from)).collect(),
                ),
                Column::str(
                    "blocked_function",
                    ts.iter().map(|r| r.blocked_function).collect(),
                ),
                Column::opt_int("waker_utid", ts.iter().map(|r| opt(r.waker_utid)).collect()),
                Column::opt_int("waker_id", ts.iter().map(|r| opt(r.waker_id)).collect()),
                Column::opt_int(
                    "irq_context",
                    ts.iter().map(|r| opt(r.irq_context)).collect(),
                ),
                Column::opt_int("ucpu", ts.iter().map(|r| opt(r.ucpu)).collect()),
            ],
            ts.len(),
        ),
        table(
            "__intrinsic_ftrace_event",
            vec![
                Column::int("id", ids(fe.len())),
                Column::int("ts", fe.iter().map(|r| r.ts).collect()),
                Column::str("name", fe.iter().map(|r| r.name).collect()),
                Column::int("utid", fe.iter().map(|r| i64::from(r.utid)).collect()),
                Column::opt_int("arg_set_id", fe.iter().map(|r| opt(r.arg_set_id)).collect()),
                Column::int(
                    "common_flags",
                    fe.iter().map(|r| i64::from(r.common_flags)).collect(),
                ),
                Column::int("ucpu", fe.iter().map(|r| i64::from(r.ucpu)).collect()),
            ],
            fe.len(),
        ),
    ]
}
