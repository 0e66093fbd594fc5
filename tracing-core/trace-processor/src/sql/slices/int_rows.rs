//! A read-only eponymous virtual table over rows of integers that a native
//! operator computes from the frozen trace tables: the rows are computed
//! on the first scan and kept, so that an operator costs nothing until a
//! module reads it and is computed once however often it is read. An
//! operator whose rows come sorted says by which columns, and an ORDER BY
//! on a prefix of them (ascending) costs SQLite no sort.

use std::ffi::c_int;
use std::sync::{Arc, OnceLock};

use rusqlite::Connection;
use rusqlite::vtab::{
    Context, Filters, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};

/// The computation behind a table: its rows, flattened, `columns` values
/// each.
pub(crate) type Compute = dyn Fn() -> Vec<i64> + Send + Sync;

/// A table's columns and rows.
pub(crate) struct Rows {
    columns: &'static [&'static str],
    /// The columns (indexes) the rows ascend by, in order.
    sorted_by: Vec<c_int>,
    compute: Box<Compute>,
    values: OnceLock<Vec<i64>>,
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows")
            .field("columns", &self.columns)
            .finish_non_exhaustive()
    }
}

impl Rows {
    /// The values, computed on first use.
    fn values(&self) -> &[i64] {
        self.values.get_or_init(|| (self.compute)())
    }

    /// The row count (a trailing partial row is ignored).
    fn len(&self) -> usize {
        self.values().len() / self.columns.len().max(1)
    }

    /// The value at (row, column).
    fn get(&self, row: usize, col: usize) -> Option<i64> {
        let at = row.checked_mul(self.columns.len())?.checked_add(col)?;
        (col < self.columns.len())
            .then(|| self.values().get(at).copied())
            .flatten()
    }
}

/// Registers table `name` with `columns`, whose rows `compute` gives
/// (row after row, `columns.len()` values each), ascending by the columns
/// `sorted_by` (each one of `columns`) in that order.
pub(crate) fn register(
    conn: &Connection,
    name: &'static str,
    columns: &'static [&'static str],
    sorted_by: &[&str],
    compute: Box<Compute>,
) -> rusqlite::Result<()> {
    let sorted_by = sorted_by
        .iter()
        .map_while(|s| columns.iter().position(|c| c == s))
        .filter_map(|i| c_int::try_from(i).ok())
        .collect();
    conn.create_module(
        name,
        eponymous_only_module::<IntRowsTab>(),
        Some(Arc::new(Rows {
            columns,
            sorted_by,
            compute,
            values: OnceLock::new(),
        })),
    )
}

/// The virtual table.
#[repr(C)]
pub(crate) struct IntRowsTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    rows: Arc<Rows>,
}

// SAFETY: `IntRowsTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for IntRowsTab {
    type Aux = Arc<Rows>;
    type Cursor = IntRowsCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Arc<Rows>>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let rows = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("rows missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        let cols: Vec<String> = rows
            .columns
            .iter()
            .map(|c| format!("\"{c}\" BIGINT"))
            .collect();
        Ok((
            format!("CREATE TABLE x({})", cols.join(", ")),
            IntRowsTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                rows,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        info.set_estimated_cost(1e6);
        // An ascending ORDER BY on a prefix of the rows' order is theirs.
        let prefix = info
            .order_bys()
            .enumerate()
            .all(|(i, o)| !o.is_order_by_desc() && self.rows.sorted_by.get(i) == Some(&o.column()));
        if info.num_of_order_by() > 0 && prefix {
            info.set_order_by_consumed(true);
        }
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<IntRowsCursor> {
        Ok(IntRowsCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            rows: self.rows.clone(),
            pos: 0,
            len: 0,
        })
    }
}

/// A scan.
#[repr(C)]
pub(crate) struct IntRowsCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    rows: Arc<Rows>,
    pos: usize,
    len: usize,
}

// SAFETY: `IntRowsCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor`
// first, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for IntRowsCursor {
    fn filter(
        &mut self,
        _idx_num: c_int,
        _idx_str: Option<&str>,
        _args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        self.pos = 0;
        self.len = self.rows.len();
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.pos >= self.len
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let col = usize::try_from(i).unwrap_or(usize::MAX);
        match self.rows.get(self.pos, col) {
            Some(v) => ctx.set_result(&v),
            None => ctx.set_result(&rusqlite::types::Null),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(i64::try_from(self.pos).unwrap_or(i64::MAX))
    }
}
