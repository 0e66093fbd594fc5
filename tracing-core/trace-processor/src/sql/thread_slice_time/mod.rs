//! Native operators for the standard-library modules that measure each
//! thread slice against its thread's scheduling, and `slices.flat_slices`'
//! table of flattened thread slices. Upstream writes them as interval
//! intersections of every thread slice with every thread state, sched
//! slice or frequency piece, joined back to `thread_slice` and grouped in
//! SQL; here one pass over the frozen tables (`inputs.rs`) computes the
//! rows: `time_in_state.rs` (`slices.time_in_state`: the time in each
//! thread state), `cpu_time.rs` (`slices.cpu_time`: the time on a CPU),
//! and `cycles.rs` (`linux.cpu.utilization.slice`: the CPU cycles, from
//! the module's frequency pieces, summed as SQLite sums, `sql_sum.rs`).
//! These and the flattened slices (`slices/flatten.rs`) are built as the
//! modules' tables' columns with the slices' thread context
//! (`context.rs`, `built.rs`), which the modules take as they are
//! (`perfetto_sql/native.rs`); so is `sched.runnable`'s table of each
//! running state's latest runnable states before it
//! (`previous_runnable.rs`). Each table is built on its first read, not
//! at the include (`perfetto_sql/lazy_table.rs`); the cycles read their
//! frequency pieces at the include. Typed errors in `error.rs`.

mod built;
mod context;
mod cpu_time;
mod cycles;
mod error;
mod inputs;
mod previous_runnable;
mod sql_sum;
mod time_in_state;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use rusqlite::Connection;

use super::perfetto_sql::native::{Built, NativeTables, Pending};
use crate::column_store::table::Table;
use inputs::Tables;

/// Registers on `natives`, over the trace's tables `all`, the native
/// sources `__intrinsic_thread_slice_time_in_state`,
/// `__intrinsic_thread_slice_cpu_time`,
/// `__intrinsic_cpu_cycles_per_thread_slice`,
/// `__intrinsic_sched_previous_runnable` and
/// `__intrinsic_thread_slice_flattened`.
pub(super) fn register(
    conn: &Connection,
    all: &[Arc<Table>],
    natives: &mut NativeTables,
) -> rusqlite::Result<()> {
    let tables = Arc::new(Tables::find(all));
    // What builds each table later, over the trace's tables.
    fn later(tables: &Arc<Tables>, build: fn(&Tables) -> Built) -> Pending {
        let t = tables.clone();
        Box::new(move || Ok(build(&t)))
    }
    let t = tables.clone();
    natives.register_deferred(
        conn,
        "__intrinsic_thread_slice_time_in_state",
        built::TIME_IN_STATE,
        Box::new(move |_| Ok(later(&t, built::time_in_state))),
    )?;
    let t = tables.clone();
    natives.register_deferred(
        conn,
        "__intrinsic_thread_slice_cpu_time",
        built::CPU_TIME,
        Box::new(move |_| Ok(later(&t, built::cpu_time))),
    )?;
    let t = tables.clone();
    natives.register_deferred(
        conn,
        "__intrinsic_cpu_cycles_per_thread_slice",
        built::CYCLES,
        Box::new(move |db| {
            // The module's frequency pieces as they are at the include.
            let pieces = cycles::read_pieces(db)?;
            let t = t.clone();
            Ok(Box::new(move || Ok(built::cycles_of(&t, &pieces))) as Pending)
        }),
    )?;
    let t = tables.clone();
    natives.register_deferred(
        conn,
        "__intrinsic_sched_previous_runnable",
        built::PREVIOUS_RUNNABLE,
        Box::new(move |_| Ok(later(&t, built::previous_runnable))),
    )?;
    natives.register_deferred(
        conn,
        "__intrinsic_thread_slice_flattened",
        built::FLATTENED,
        Box::new(move |_| Ok(later(&tables, built::flattened))),
    )
}
