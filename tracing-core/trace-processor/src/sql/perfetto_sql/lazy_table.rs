//! A PERFETTO TABLE whose columns a native operator builds on the table's
//! first read instead of at its `CREATE` (`native.rs`'s deferred sources:
//! the thread-slice tables of `slices.time_in_state`, `slices.cpu_time`,
//! `slices.flat_slices` and the like, millions of rows each). An
//! `INCLUDE` of the Linux and UI modules made every one of them whether a
//! query ever read it or not: most of the include's time and of the
//! memory it left. The operators read only the trace's frozen tables (or
//! what they read of other tables at the `CREATE`), so a table built
//! later holds exactly the rows it would have held then.
//!
//! The table is declared to SQLite from its column names alone (`id`
//! INTEGER, the others untyped, as a select's table is declared); it is
//! built the first time a statement plans a read of it, and is from then
//! on the columnar virtual table of `sql/vtab.rs` over the built columns,
//! shared by every connection to it. The statements PerfettoSQL prepares
//! only to learn a select's columns (a view's or a function's body,
//! [`planning_only`]) plan over it without building it: nothing of theirs
//! runs.

use std::cell::{Cell, OnceCell};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rusqlite::vtab::{IndexInfo, VTab, VTabConfig, VTabConnection};

use crate::column_store::table::Table;
use crate::sql::vtab::{ColumnarCursor, ColumnarTab};

/// What builds a deferred table's columns: run once, on the first read.
pub(crate) type Deferred = Box<dyn FnOnce() -> rusqlite::Result<Table> + Send>;

/// A table built on its first read.
pub(crate) struct LazyTable {
    /// Its SQL declaration, from the column names.
    schema: String,
    /// The builder, until it has run.
    build: Mutex<Option<Deferred>>,
    /// The built table.
    built: OnceLock<Arc<Table>>,
}

impl std::fmt::Debug for LazyTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyTable")
            .field("schema", &self.schema)
            .field("built", &self.built.get().is_some())
            .finish()
    }
}

impl LazyTable {
    /// A table of columns `names` that `build` makes when first read.
    pub(crate) fn new(names: &[String], build: Deferred) -> LazyTable {
        let cols: Vec<String> = names
            .iter()
            .map(|n| {
                let q = format!("\"{}\"", n.replace('"', "\"\""));
                if n == "id" { format!("{q} INTEGER") } else { q }
            })
            .collect();
        LazyTable {
            schema: format!("CREATE TABLE x({})", cols.join(", ")),
            build: Mutex::new(Some(build)),
            built: OnceLock::new(),
        }
    }

    /// The built table, built now if it was not.
    fn table(&self) -> rusqlite::Result<Arc<Table>> {
        if let Some(t) = self.built.get() {
            return Ok(t.clone());
        }
        let mut pending = self.build.lock().unwrap_or_else(PoisonError::into_inner);
        // Another connection may have built it while this one waited.
        if let Some(t) = self.built.get() {
            return Ok(t.clone());
        }
        let build = pending
            .take()
            .ok_or_else(|| rusqlite::Error::ModuleError("a table's build failed before".into()))?;
        let table = Arc::new(build()?);
        Ok(self.built.get_or_init(|| table).clone())
    }

    /// Whether the table has been built (for tests).
    #[cfg(test)]
    pub(crate) fn is_built(&self) -> bool {
        self.built.get().is_some()
    }
}

thread_local! {
    /// How many [`planning_only`] calls this thread is inside.
    static PLANNING_ONLY: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f`, in which statements are prepared only to be read (their
/// columns), never run: a deferred table they plan over is not built.
pub(crate) fn planning_only<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            PLANNING_ONLY.with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    PLANNING_ONLY.with(|d| d.set(d.get() + 1));
    let _leave = Leave;
    f()
}

fn planning() -> bool {
    PLANNING_ONLY.with(|d| d.get() > 0)
}

/// A deferred table as SQL reads it: the columnar virtual table over the
/// built columns once built.
#[repr(C)]
pub(crate) struct LazyColumnarTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    lazy: Arc<LazyTable>,
    /// The columnar table over the built columns.
    inner: OnceCell<ColumnarTab>,
}

impl LazyColumnarTab {
    fn inner(&self) -> rusqlite::Result<&ColumnarTab> {
        if let Some(t) = self.inner.get() {
            return Ok(t);
        }
        let table = self.lazy.table()?;
        Ok(self.inner.get_or_init(|| ColumnarTab::over(table)))
    }
}

// SAFETY: `LazyColumnarTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for LazyColumnarTab {
    type Aux = Arc<LazyTable>;
    type Cursor = ColumnarCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Arc<LazyTable>>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let lazy = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("table data missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        Ok((
            lazy.schema.clone(),
            LazyColumnarTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                lazy,
                inner: OnceCell::new(),
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        if self.inner.get().is_none() && self.lazy.built.get().is_none() && planning() {
            // A plan that is never run: a whole scan, at a scan's cost.
            info.set_idx_num(0);
            info.set_idx_str("");
            info.set_estimated_cost(1e6);
            return Ok(());
        }
        self.inner()?.best_index(info)
    }

    fn open(&'vtab mut self) -> rusqlite::Result<ColumnarCursor> {
        self.inner()?;
        match self.inner.get_mut() {
            Some(t) => t.open(),
            None => Err(rusqlite::Error::ModuleError("table not built".into())),
        }
    }
}

// Made by `CREATE VIRTUAL TABLE` as the other PERFETTO TABLEs stored as
// columns (`columnar.rs`), so that it is dropped, listed and replaced as a
// table; creating it only connects.
impl rusqlite::vtab::CreateVTab<'_> for LazyColumnarTab {
    const KIND: rusqlite::vtab::VTabKind = rusqlite::vtab::VTabKind::Default;
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rusqlite::Connection;

    use super::{LazyTable, planning_only};
    use crate::column_store::strings::StringPool;
    use crate::column_store::table::Column;
    use crate::sql::perfetto_sql::columnar;

    /// Table `t(id, x)` of three rows on `conn`, counting its builds.
    fn lazy(conn: &Connection, builds: &Arc<AtomicUsize>) {
        let count = builds.clone();
        let names = ["id".to_owned(), "x".to_owned()];
        let table = LazyTable::new(
            &names,
            Box::new(move || {
                count.fetch_add(1, Ordering::SeqCst);
                Ok(columnar::table_of(
                    "t",
                    vec![
                        Column::int("id", vec![0, 1, 2]),
                        Column::int("x", vec![7, 5, 7]),
                    ],
                    3,
                    Arc::new(StringPool::default()),
                ))
            }),
        );
        columnar::register_lazy(conn, "t", table).expect("register");
    }

    #[test]
    fn a_table_is_built_once_on_its_first_read_and_not_for_a_plan_only() {
        let conn = Connection::open_in_memory().expect("conn");
        let builds = Arc::new(AtomicUsize::new(0));
        lazy(&conn, &builds);
        // Declared, listed as a table, and planned over for its columns
        // only: not built.
        let cols = planning_only(|| {
            conn.prepare("SELECT x FROM t WHERE x = 7 ORDER BY id")
                .map(|s| s.column_count())
        })
        .expect("plan");
        assert_eq!(cols, 1);
        conn.execute_batch("CREATE VIEW v AS SELECT x FROM t WHERE x = 7")
            .expect("view");
        assert_eq!(builds.load(Ordering::SeqCst), 0);
        // Read: built, with the rows the builder gave, then never again.
        let read = |sql: &str| -> Vec<i64> {
            let mut s = conn.prepare(sql).expect("prepare");
            s.query_map([], |r| r.get(0))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows")
        };
        assert_eq!(
            read("SELECT id FROM v JOIN t USING (x) ORDER BY 1"),
            [0, 0, 2, 2]
        );
        assert_eq!(read("SELECT id FROM t WHERE x = 5"), [1]);
        assert_eq!(read("SELECT id FROM t WHERE id = 2"), [2]);
        assert_eq!(builds.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_failed_build_is_an_error_of_every_read() {
        let conn = Connection::open_in_memory().expect("conn");
        let names = ["id".to_owned()];
        let table = LazyTable::new(
            &names,
            Box::new(|| Err(rusqlite::Error::ModuleError("no rows".into()))),
        );
        assert!(!table.is_built());
        columnar::register_lazy(&conn, "f", table).expect("register");
        for _ in 0..2 {
            assert!(
                conn.prepare("SELECT * FROM f")
                    .and_then(|mut s| s.query([])?.next().map(|_| ()))
                    .is_err()
            );
        }
    }
}
