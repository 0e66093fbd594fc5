//! `__intrinsic_slice_self_dur`, the operator behind `slices.self_dur`:
//! each slice's duration less the summed durations of its direct
//! children, in one pass over the slice table. Written in SQL (a grouped
//! sum by `parent_id` joined back to every slice) SQLite took minutes on
//! a trace of millions of slices; here it is two linear passes.
//!
//! Rows: `id`, `self_dur`, one per slice, by id. A child whose
//! `parent_id` names no slice adds to nothing; sums saturate rather than
//! wrap.

use std::sync::Arc;

use super::super::table::Table;
use super::col;

/// The table's columns.
pub(crate) const COLUMNS: &[&str] = &["id", "self_dur"];

/// The rows of `slices`, `COLUMNS` values each.
pub(crate) fn compute(slices: &Arc<Table>) -> Vec<i64> {
    let t = slices.as_ref();
    let column = |name: &str| col(t, name).and_then(|c| t.columns.get(c));
    let (dur_col, parent_col) = (column("dur"), column("parent_id"));
    let dur = |row: usize| dur_col.and_then(|c| c.int_at(row)).unwrap_or(0);
    let mut children = vec![0i64; t.len];
    for row in 0..t.len {
        let parent = parent_col
            .and_then(|c| c.int_at(row))
            .and_then(|p| usize::try_from(p).ok());
        if let Some(sum) = parent.and_then(|p| children.get_mut(p)) {
            *sum = sum.saturating_add(dur(row));
        }
    }
    let mut out = Vec::with_capacity(t.len * COLUMNS.len());
    for (row, child_dur) in children.iter().enumerate() {
        out.extend([
            i64::try_from(row).unwrap_or(i64::MAX),
            dur(row).saturating_sub(*child_dur),
        ]);
    }
    out
}
