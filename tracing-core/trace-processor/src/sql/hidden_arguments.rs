//! A table-valued function's arguments, as SQLite's planner offers them:
//! each argument of a call is an `=` constraint on one of the virtual
//! table's hidden columns. Our table functions take them the same way in
//! `best_index`: the first usable `=` on each hidden column becomes the
//! next `argv` of `filter`, in column order, and a bit of `idx_num` says
//! which columns came.

use std::ffi::c_int;

use rusqlite::vtab::{IndexConstraintOp, IndexInfo};

/// Binds the `=` constraints on the `hidden` columns that follow the
/// first `visible` ones to `filter`'s arguments, in column order (each
/// omitted from SQLite's own check); returns the mask of the hidden
/// columns bound (bit 0: the first hidden column). At most 31 hidden
/// columns are considered.
pub fn bind_hidden_arguments(info: &mut IndexInfo, visible: usize, hidden: usize) -> c_int {
    let hidden = hidden.min(31);
    let mut by_column: Vec<Option<usize>> = vec![None; hidden];
    for (i, c) in info.constraints().enumerate() {
        if !c.is_usable() || c.operator() != IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ {
            continue;
        }
        let Some(h) = usize::try_from(c.column())
            .ok()
            .and_then(|col| col.checked_sub(visible))
        else {
            continue;
        };
        if let Some(slot @ None) = by_column.get_mut(h) {
            *slot = Some(i);
        }
    }
    let mut mask: c_int = 0;
    let mut argv = 0;
    for (h, found) in by_column.iter().enumerate() {
        if let Some(i) = found {
            argv += 1;
            let mut u = info.constraint_usage(*i);
            u.set_argv_index(argv);
            u.set_omit(true);
            mask |= 1 << h;
        }
    }
    mask
}
