//! Native operators for the `sched.time_in_state` and
//! `sched.thread_level_parallelism` modules. Written in SQL they read every
//! thread state (or sched slice) through SQLite's VM into a GROUP BY sort
//! and a window function, which took over a second each on a sched-heavy
//! trace; here one pass over the frozen tables computes the rows and
//! builds them as the modules' tables' columns (`perfetto_sql/native.rs`):
//! `time_in_state.rs` (each thread's time per scheduling state) and
//! `open_count.rs` (how many intervals are open over time: runnable and
//! uninterruptible threads, busy CPUs). Both are tested against the SQL
//! they replace on random data (`tests.rs`).

mod open_count;
mod time_in_state;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use rusqlite::Connection;

use super::perfetto_sql::native::{NativeTables, Pending};
use crate::column_store::table::{Column, Table};

/// The frozen table `name` of `all`.
fn find(all: &[Arc<Table>], name: &str) -> Option<Arc<Table>> {
    all.iter().find(|t| t.name == name).cloned()
}

/// Column `name` of `t`.
fn column<'a>(t: &'a Table, name: &str) -> Option<&'a Column> {
    t.columns.iter().find(|c| c.name == name)
}

/// A column of integers none of which is NULL, stored as a select's would
/// be (no rows at all read as a column of NULLs).
fn ints(name: &'static str, v: Vec<i64>) -> Column {
    if v.is_empty() {
        Column::opt_int(name, Vec::new())
    } else {
        Column::int(name, v)
    }
}

/// A column of nullable integers stored as a select's would be.
fn opt_ints(name: &'static str, v: Vec<Option<i64>>) -> Column {
    if !v.is_empty() && v.iter().all(Option::is_some) {
        Column::int(name, v.into_iter().flatten().collect())
    } else {
        Column::opt_int(name, v)
    }
}

/// Registers on `natives`, over the trace's tables `all`, the sources
/// `__intrinsic_sched_time_in_state_for_thread`,
/// `__intrinsic_sched_runnable_thread_count`,
/// `__intrinsic_sched_uninterruptible_sleep_thread_count` and
/// `__intrinsic_sched_active_cpu_count`.
pub(super) fn register(
    conn: &Connection,
    all: &[Arc<Table>],
    natives: &mut NativeTables,
) -> rusqlite::Result<()> {
    let states = find(all, "__intrinsic_thread_state");
    let sched = find(all, "__intrinsic_sched_slice");
    let threads = find(all, "__intrinsic_thread");
    let s = states.clone();
    natives.register_deferred(
        conn,
        "__intrinsic_sched_time_in_state_for_thread",
        time_in_state::COLUMNS,
        Box::new(move |_| {
            let s = s.clone();
            Ok(Box::new(move || time_in_state::build(s.as_deref())) as Pending)
        }),
    )?;
    let s = states.clone();
    natives.register_deferred(
        conn,
        "__intrinsic_sched_runnable_thread_count",
        open_count::RUNNABLE,
        Box::new(move |_| {
            let s = s.clone();
            Ok(Box::new(move || {
                Ok(open_count::in_state(
                    s.as_deref(),
                    "R",
                    open_count::RUNNABLE,
                ))
            }) as Pending)
        }),
    )?;
    natives.register_deferred(
        conn,
        "__intrinsic_sched_uninterruptible_sleep_thread_count",
        open_count::UNINTERRUPTIBLE,
        Box::new(move |_| {
            let s = states.clone();
            Ok(Box::new(move || {
                Ok(open_count::in_state(
                    s.as_deref(),
                    "D",
                    open_count::UNINTERRUPTIBLE,
                ))
            }) as Pending)
        }),
    )?;
    natives.register_deferred(
        conn,
        "__intrinsic_sched_active_cpu_count",
        open_count::ACTIVE_CPUS,
        Box::new(move |_| {
            let (sched, threads) = (sched.clone(), threads.clone());
            Ok(Box::new(move || {
                Ok(open_count::active_cpus(
                    sched.as_deref(),
                    threads.as_deref(),
                ))
            }) as Pending)
        }),
    )
}
