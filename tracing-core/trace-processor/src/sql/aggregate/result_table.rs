//! How SQLite reads an aggregate computed over the columns: the eponymous
//! table function `__intrinsic_aggregate_result(handle)`, whose rows are
//! the groups the native pass left in the process-wide registry under
//! `handle` (one row per group, the group's keys then its aggregates, in
//! columns `c0`, `c1`, ...). The rewritten query reads it in place of the
//! table it aggregated; the entry lives as long as the query's
//! [`Handle`].

use std::ffi::c_int;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rusqlite::Connection;
use rusqlite::types::{Null, ValueRef};
use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};

use crate::hash::HashMap;

/// The table function's name.
pub(crate) const NAME: &str = "__intrinsic_aggregate_result";

/// The most columns (keys and aggregates together) a result can have.
pub(crate) const MAX_COLUMNS: usize = 32;

/// One value of a result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A double (NaN reaches SQLite as NULL, as a column's NaN does).
    Real(f64),
    /// Text.
    Text(String),
}

/// The groups of one aggregate: rows of equally many values.
pub(crate) type Rows = Vec<Vec<Val>>;

/// Results waiting to be read, by handle.
#[derive(Default)]
struct Registry {
    next: AtomicI64,
    results: Mutex<HashMap<i64, Arc<Rows>>>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

/// A result in the registry; dropping it takes the result out.
#[derive(Debug)]
pub(crate) struct Handle(i64);

impl Handle {
    /// Puts `rows` in the registry.
    pub(crate) fn store(rows: Rows) -> Handle {
        let r = registry();
        let id = r.next.fetch_add(1, Ordering::Relaxed);
        r.results
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Arc::new(rows));
        Handle(id)
    }

    /// The number the rewritten query names the result by.
    pub(crate) fn id(&self) -> i64 {
        self.0
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        registry()
            .results
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.0);
    }
}

/// The result's rows, if still registered.
fn lookup(id: i64) -> Option<Arc<Rows>> {
    registry()
        .results
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
        .cloned()
}

/// The virtual table of the function.
#[repr(C)]
pub struct ResultTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
}

/// The column of the hidden argument.
const HANDLE: c_int = MAX_COLUMNS as c_int;

// SAFETY: `ResultTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for ResultTab {
    type Aux = ();
    type Cursor = ResultCursor;

    fn connect(
        db: &mut VTabConnection,
        _aux: Option<&()>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        db.config(VTabConfig::Innocuous)?;
        // Untyped columns: an aggregate's value has no affinity, and the
        // rewritten query gives each group key its column's type by CAST.
        let cols: Vec<String> = (0..MAX_COLUMNS).map(|i| format!("c{i}")).collect();
        Ok((
            format!("CREATE TABLE x({}, handle HIDDEN)", cols.join(", ")),
            ResultTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let arg = info.constraints().position(|c| {
            c.is_usable()
                && c.column() == HANDLE
                && c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ
        });
        match arg {
            Some(i) => {
                let mut u = info.constraint_usage(i);
                u.set_argv_index(1);
                u.set_omit(true);
                info.set_idx_num(1);
                info.set_estimated_cost(10.0);
            }
            None => {
                info.set_idx_num(0);
                info.set_estimated_cost(1e12);
            }
        }
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<ResultCursor> {
        Ok(ResultCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            rows: Arc::new(Vec::new()),
            pos: 0,
        })
    }
}

/// A visit of one result's rows.
#[repr(C)]
pub struct ResultCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    rows: Arc<Rows>,
    pos: usize,
}

// SAFETY: `ResultCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor` first,
// as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for ResultCursor {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        self.pos = 0;
        self.rows = Arc::new(Vec::new());
        if idx_num == 1 {
            if let Some(ValueRef::Integer(id)) = args.iter().next() {
                if let Some(rows) = lookup(id) {
                    self.rows = rows;
                }
            }
        }
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.pos >= self.rows.len()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let v = usize::try_from(i)
            .ok()
            .and_then(|i| self.rows.get(self.pos)?.get(i));
        match v {
            Some(Val::Int(x)) => ctx.set_result(x),
            Some(Val::Real(x)) => ctx.set_result(x),
            Some(Val::Text(s)) => ctx.set_result(s),
            Some(Val::Null) | None => ctx.set_result(&Null),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.pos as i64)
    }
}

/// Registers the table function on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_module(NAME, eponymous_only_module::<ResultTab>(), None)
}
