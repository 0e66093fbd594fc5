//! `__intrinsic_slice_self_dur`, the operator behind `slices.self_dur`:
//! each slice's duration less the summed durations of its direct
//! children, in one pass over the slice table. Written in SQL (a grouped
//! sum by `parent_id` joined back to every slice) SQLite took minutes on
//! a trace of millions of slices; here it is two linear passes.
//!
//! Rows: `id`, `self_dur`, one per slice, by id. A child whose
//! `parent_id` names no slice adds to nothing; sums saturate rather than
//! wrap. Also built as the columns of `slices.self_dur`'s table
//! ([`columns`], a native source of `perfetto_sql/native.rs`).

use std::sync::Arc;

use super::super::perfetto_sql::native::Built;
use super::col;
use crate::column_store::table::{Column, Table};

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

/// The rows of `slices` as the columns `id` and `self_dur` (stored as a
/// select's rows would be: no rows is two columns of no values).
pub(crate) fn columns(slices: &Arc<Table>) -> Built {
    let rows = compute(slices);
    let len = rows.len() / COLUMNS.len();
    let (mut id, mut self_dur) = (Vec::with_capacity(len), Vec::with_capacity(len));
    for r in rows.chunks_exact(COLUMNS.len()) {
        if let &[i, d] = r {
            id.push(i);
            self_dur.push(d);
        }
    }
    let columns = if len == 0 {
        vec![
            Column::opt_int("id", Vec::new()),
            Column::opt_int("self_dur", Vec::new()),
        ]
    } else {
        vec![Column::int("id", id), Column::int("self_dur", self_dur)]
    };
    Built {
        columns,
        len,
        strings: Arc::default(),
    }
}
