//! The native operators of the `slices.*` modules (their SQL is in
//! `perfetto_sql/modules/slices_*.sql`): `stack_id.rs` (the stack ids of
//! `slices.stack`), `flatten.rs` (the flattened slices of
//! `slices.flat_slices`), `self_dur.rs` (the self durations of
//! `slices.self_dur`), `track_summary.rs` (`viz.summary.slices`' figures
//! per track), served by `int_rows.rs` (a table of computed
//! integer rows). Each computes from the frozen slice table on first use.

pub(super) mod flatten;
#[cfg(test)]
mod flatten_tests;
mod int_rows;
mod self_dur;
mod stack_id;
mod track_summary;

use std::sync::Arc;

use rusqlite::Connection;

use super::perfetto_sql::native::{Built, NativeTables, Pending};
use crate::column_store::table::Table;

/// Column `name`'s index in `t`.
fn col(t: &Table, name: &str) -> Option<usize> {
    t.columns.iter().position(|c| c.name == name)
}

/// The parent row of every row of slice table `t`: only a parent with a
/// smaller id counts (ids ascend down a tree), so that every walk up ends.
fn parents(t: &Table) -> Vec<Option<usize>> {
    let parent = col(t, "parent_id").and_then(|c| t.columns.get(c));
    (0..t.len)
        .map(|row| {
            parent
                .and_then(|c| c.int_at(row))
                .and_then(|p| usize::try_from(p).ok())
                .filter(|p| *p < row)
        })
        .collect()
}

/// Registers the operators over slice table `slices`:
/// `__intrinsic_slice_stack_id(slice_id)` and the tables
/// `__intrinsic_slice_flattened` and `__intrinsic_slice_self_dur`.
pub(super) fn register(conn: &Connection, slices: Arc<Table>) -> rusqlite::Result<()> {
    stack_id::register(conn, slices.clone())?;
    let for_self_dur = slices.clone();
    int_rows::register(
        conn,
        "__intrinsic_slice_self_dur",
        self_dur::COLUMNS,
        &["id"],
        Box::new(move || self_dur::compute(&for_self_dur)),
    )?;
    int_rows::register(
        conn,
        "__intrinsic_slice_flattened",
        flatten::COLUMNS,
        &["root_id", "ts"],
        Box::new(move || flatten::compute(&slices)),
    )
}

/// Registers on `natives` the sources `__intrinsic_slice_self_dur_columns`
/// (`slices.self_dur`'s table, built as columns),
/// `__intrinsic_slice_track_summary` (`viz.summary.slices`' table) and
/// `__intrinsic_slice_min_ts_per_track` (each track's earliest slice, for
/// `viz.summary.track_event`) over the slice table of `all`.
pub(super) fn register_native(
    conn: &Connection,
    all: &[Arc<Table>],
    natives: &mut NativeTables,
) -> rusqlite::Result<()> {
    let Some(slices) = all.iter().find(|t| t.name == "__intrinsic_slice").cloned() else {
        return Ok(());
    };
    // Each built on its table's first read, over the slice table.
    fn later(
        slices: &Arc<Table>,
        build: impl FnOnce(&Arc<Table>) -> Built + Send + 'static,
    ) -> Pending {
        let s = slices.clone();
        Box::new(move || Ok(build(&s)))
    }
    let for_summary = slices.clone();
    natives.register_deferred(
        conn,
        "__intrinsic_slice_track_summary",
        track_summary::COLUMNS,
        Box::new(move |_| Ok(later(&for_summary, |s| track_summary::columns(s)))),
    )?;
    let for_min_ts = slices.clone();
    natives.register_deferred(
        conn,
        "__intrinsic_slice_min_ts_per_track",
        track_summary::MIN_TS,
        Box::new(move |_| Ok(later(&for_min_ts, |s| track_summary::min_ts(s)))),
    )?;
    natives.register_deferred(
        conn,
        "__intrinsic_slice_self_dur_columns",
        self_dur::COLUMNS,
        Box::new(move |_| Ok(later(&slices, self_dur::columns))),
    )
}

#[cfg(test)]
mod tests;
