//! PERFETTO TABLEs that a native operator builds as columns itself. A
//! module's `CREATE PERFETTO TABLE t AS SELECT * FROM source` over such a
//! source takes the operator's columns as table `t`'s storage as they are
//! (strings as ids of the trace's pool, nothing interned again), instead
//! of running the select and reading every value back through SQLite into
//! new columns, which was most of the time of the standard library's
//! modules over every thread slice. The source is also an ordinary
//! eponymous table of SQL (its rows built for each scan and dropped with
//! it), so the module's select names its columns, and any other query of
//! it gives the same rows. A builder is given its connection's handle
//! (`nested.rs`), to read a table a module made before (the frequency
//! pieces of `linux.cpu.utilization.general`). A deferred source
//! ([`NativeTables::register_deferred`]) reads what it needs of the
//! connection at the `CREATE` and builds its columns on the table's first
//! read (`lazy_table.rs`): an include then makes none of the big tables no
//! query reads.

use std::ffi::c_int;
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Null;
use rusqlite::vtab::{
    Context, Filters, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};

use super::columnar;
use super::lazy_table::LazyTable;
use super::nested::NestedDb;
use crate::column_store::strings::StringPool;
use crate::column_store::table::{Cell, Column, Table};

/// What a native source builds: its columns, in the order it declares
/// them, and the pool their strings live in.
#[derive(Debug)]
pub(crate) struct Built {
    /// The columns (declared as a select's would be: see `columnar.rs`).
    pub columns: Vec<Column>,
    /// Their length.
    pub len: usize,
    /// Their strings.
    pub strings: Arc<StringPool>,
}

/// What builds a source's columns, after its builder read what it needs
/// of the connection.
pub(crate) type Pending = Box<dyn FnOnce() -> rusqlite::Result<Built> + Send>;

/// A source's builder: given its connection's handle, it reads what it
/// needs of it now (a table a module made) and returns what builds the
/// columns, at once for a scan of the source, on the first read of a
/// table made from it.
pub(crate) type DeferredBuild = dyn Fn(&NestedDb) -> rusqlite::Result<Pending> + Send + Sync;

/// A native source: its name, its columns' names, its builder.
pub(crate) struct Source {
    name: &'static str,
    columns: &'static [&'static str],
    build: Box<DeferredBuild>,
    /// The connection it is registered on.
    db: NestedDb,
}

/// `built` as table `name`, when its columns are `columns`.
fn checked(name: &str, columns: &[&str], built: Built) -> Option<Table> {
    let same = built.columns.len() == columns.len()
        && built.columns.iter().zip(columns).all(|(c, n)| c.name == *n);
    same.then(|| columnar::table_of(name, built.columns, built.len, built.strings))
}

impl Source {
    /// The built table, named `name`, when its columns are `columns`.
    fn table(&self, name: &str) -> rusqlite::Result<Option<Table>> {
        let built = (self.build)(&self.db)?()?;
        Ok(checked(name, self.columns, built))
    }

    /// Table `name` of columns `names`, built on its first read.
    fn native_table(&self, name: &str, names: &[String]) -> rusqlite::Result<Option<NativeTable>> {
        let pending = (self.build)(&self.db)?;
        let (owned, columns, source) = (name.to_owned(), self.columns, self.name);
        Ok(Some(NativeTable::Later(LazyTable::new(
            names,
            Box::new(move || {
                checked(&owned, columns, pending()?).ok_or_else(|| {
                    rusqlite::Error::ModuleError(format!("{source}: built other columns"))
                })
            }),
        ))))
    }
}

/// A table a native source made for a `CREATE PERFETTO TABLE`.
#[derive(Debug)]
pub(crate) enum NativeTable {
    /// Built on its first read.
    Later(LazyTable),
}

/// The native sources of one connection.
#[derive(Default, Clone)]
pub(crate) struct NativeTables(Vec<Arc<Source>>);

impl std::fmt::Debug for NativeTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|s| s.name))
            .finish()
    }
}

impl NativeTables {
    /// Registers source `name` with `columns` (their names, in order) on
    /// `conn`, `build` making its columns; a table made from it is built
    /// on its first read: `build` reads what it needs of the connection
    /// at the `CREATE` and returns what builds the columns, which must
    /// depend on nothing else that may change between the two (the
    /// trace's frozen tables).
    pub(crate) fn register_deferred(
        &mut self,
        conn: &Connection,
        name: &'static str,
        columns: &'static [&'static str],
        build: Box<DeferredBuild>,
    ) -> rusqlite::Result<()> {
        let source = Arc::new(Source {
            name,
            columns,
            build,
            // SAFETY: the handle is used by the source's builder alone,
            // which runs from the virtual table registered on `conn` below
            // or from a statement `conn` runs (`table_for`), so while
            // `conn` is open.
            db: unsafe { NestedDb::of(conn) },
        });
        conn.create_module(
            name,
            eponymous_only_module::<SourceTab>(),
            Some(source.clone()),
        )?;
        self.0.push(source);
        Ok(())
    }

    /// Table `name` built by the source `select` reads whole (`SELECT *
    /// FROM source`, any case and spacing, an optional `;`), when its
    /// columns are `names`; None for any other select.
    pub(crate) fn table_for(
        &self,
        name: &str,
        select: &str,
        names: &[String],
    ) -> rusqlite::Result<Option<NativeTable>> {
        let Some(from) = source_of(select) else {
            return Ok(None);
        };
        let Some(source) = self.0.iter().find(|s| s.name.eq_ignore_ascii_case(from)) else {
            return Ok(None);
        };
        let same = names.len() == source.columns.len()
            && names.iter().zip(source.columns).all(|(a, b)| a == b);
        if !same {
            return Ok(None);
        }
        source.native_table(name, names)
    }
}

/// The table `select` reads whole when it is `SELECT * FROM name`.
fn source_of(select: &str) -> Option<&str> {
    let mut words = select.trim().trim_end_matches(';').split_whitespace();
    let ok = words.next()?.eq_ignore_ascii_case("select")
        && words.next()? == "*"
        && words.next()?.eq_ignore_ascii_case("from");
    let name = words.next()?;
    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (ok && plain && words.next().is_none()).then_some(name)
}

/// A source as SQL reads it.
#[repr(C)]
pub(crate) struct SourceTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    source: Arc<Source>,
}

// SAFETY: `SourceTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for SourceTab {
    type Aux = Arc<Source>;
    type Cursor = SourceCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Arc<Source>>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let source = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("source missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        let cols: Vec<String> = source.columns.iter().map(|c| format!("\"{c}\"")).collect();
        Ok((
            format!("CREATE TABLE x({})", cols.join(", ")),
            SourceTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                source,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        info.set_estimated_cost(1e6);
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<SourceCursor> {
        Ok(SourceCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            source: self.source.clone(),
            table: None,
            row: 0,
        })
    }
}

/// A scan: the rows built when it starts.
#[repr(C)]
pub(crate) struct SourceCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    source: Arc<Source>,
    table: Option<Table>,
    row: usize,
}

// SAFETY: `SourceCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor`
// first, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for SourceCursor {
    fn filter(&mut self, _: c_int, _: Option<&str>, _: &Filters<'_>) -> rusqlite::Result<()> {
        self.row = 0;
        let table = self.source.table(self.source.name)?;
        self.table = Some(table.ok_or_else(|| {
            rusqlite::Error::ModuleError(format!("{}: built other columns", self.source.name))
        })?);
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.row += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.table.as_ref().is_none_or(|t| self.row >= t.len)
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let Some(t) = &self.table else {
            return ctx.set_result(&Null);
        };
        match t.cell(self.row, usize::try_from(i).unwrap_or(usize::MAX)) {
            Cell::Null => ctx.set_result(&Null),
            Cell::Int(v) => ctx.set_result(&v),
            Cell::Real(v) => ctx.set_result(&v),
            Cell::Str(v) => ctx.set_result(&v),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(i64::try_from(self.row).unwrap_or(i64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::source_of;

    #[test]
    fn only_a_whole_read_of_one_table_is_a_source() {
        assert_eq!(source_of("SELECT * FROM __x"), Some("__x"));
        assert_eq!(source_of("  select *\n from  __x ; "), Some("__x"));
        assert_eq!(source_of("SELECT * FROM __x WHERE 1"), None);
        assert_eq!(source_of("SELECT id FROM __x"), None);
        assert_eq!(source_of("SELECT * FROM \"__x\""), None);
        assert_eq!(source_of("SELECT * FROM"), None);
    }
}
