//! `__intrinsic_slice_stack_id(slice_id)`, the stack ids of `slices.stack`:
//! a slice's stack id names the categories and names on its path from its
//! root, so that slices reached by the same path share it. As upstream
//! defines it, each slice on the path contributes the `hash()` of
//! `category || '|' || name` (an empty category for NULL); the id is the
//! `hash()` of those values as decimal text joined by `|`, the slice's own
//! first, then its ancestors root first. Computed natively for every slice
//! on first use and kept (the slice table is frozen), in one pass rather
//! than an SQL walk of ancestors per slice.

use std::sync::{Arc, OnceLock};

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;

use super::super::string_functions::{FNV_OFFSET, fnv};
use super::{col, parents};
use crate::column_store::table::{Cell, Table};

/// The slice table and the stack ids computed from it.
#[derive(Debug)]
pub(crate) struct StackIds {
    slices: Arc<Table>,
    ids: OnceLock<Vec<i64>>,
}

impl StackIds {
    /// Stack ids over `slices` (computed when first asked for).
    pub(crate) fn new(slices: Arc<Table>) -> Self {
        StackIds {
            slices,
            ids: OnceLock::new(),
        }
    }

    /// The stack id of the slice with id `id`; None when no slice has it.
    pub(crate) fn get(&self, id: i64) -> Option<i64> {
        let row = usize::try_from(id).ok()?;
        self.ids
            .get_or_init(|| compute(&self.slices))
            .get(row)
            .copied()
    }
}

/// Every slice's stack id, by row. A slice whose path has no name (every
/// element NULL, which upstream's `hash` would refuse) gets 0, upstream's
/// value for a slice without a stack.
fn compute(t: &Table) -> Vec<i64> {
    let (name, category) = (col(t, "name"), col(t, "category"));
    let text = |row: usize, c: Option<usize>| match c.map(|c| t.cell(row, c)) {
        Some(Cell::Str(s)) => Some(s),
        _ => None,
    };
    // Each slice's own element, as the decimal text the join reads.
    let elements: Vec<Option<String>> = (0..t.len)
        .map(|row| {
            let name = text(row, name)?;
            let mut h = fnv(FNV_OFFSET, text(row, category).unwrap_or("").as_bytes());
            h = fnv(h, b"|");
            h = fnv(h, name.as_bytes());
            Some((h as i64).to_string())
        })
        .collect();
    let parents = parents(t);
    let mut chain = Vec::new();
    (0..t.len)
        .map(|row| {
            chain.clear();
            let mut next = parents.get(row).copied().flatten();
            while let Some(p) = next {
                chain.push(p);
                next = parents.get(p).copied().flatten();
            }
            let mut h = FNV_OFFSET;
            let mut empty = true;
            for r in std::iter::once(row).chain(chain.iter().rev().copied()) {
                if let Some(Some(e)) = elements.get(r) {
                    if !empty {
                        h = fnv(h, b"|");
                    }
                    h = fnv(h, e.as_bytes());
                    empty = false;
                }
            }
            if empty { 0 } else { h as i64 }
        })
        .collect()
}

/// Registers `__intrinsic_slice_stack_id(slice_id)`: the slice's stack id,
/// NULL for NULL, a value that is not an integer, or an unknown id.
pub(crate) fn register(conn: &Connection, slices: Arc<Table>) -> rusqlite::Result<()> {
    let ids = StackIds::new(slices);
    conn.create_scalar_function(
        "__intrinsic_slice_stack_id",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| {
            Ok(match ctx.get_raw(0) {
                ValueRef::Integer(id) => ids.get(id),
                _ => None,
            })
        },
    )
}
