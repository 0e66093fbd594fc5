//! `CREATE PERFETTO FUNCTION … RETURNS TABLE(col TYPE, …)`: a table-valued
//! function, callable as `name(args)` in a FROM clause. It is an
//! eponymous virtual table whose declared columns are the returned ones
//! and whose arguments are hidden columns, which is how SQLite passes a
//! table-valued function's arguments (they may be columns of the tables
//! to its left). Each scan checks the arguments' types, runs the body on
//! the calling connection with them bound to `$name`, and serves its rows;
//! the body's columns must be the declared ones (by name, any order).

use std::ffi::c_int;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rusqlite::Connection;
use rusqlite::types::{Null, Value};
use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};

use super::functions::nest_guard;
use super::nested::NestedDb;
use super::types::ArgType;

/// Rows one call may return.
pub(crate) const MAX_ROWS: usize = 1 << 26;

/// A created table-valued function.
#[derive(Debug, Clone)]
pub(crate) struct TableFunction {
    /// Its name.
    pub name: String,
    /// Its arguments' names and types.
    pub args: Vec<(String, ArgType)>,
    /// The columns it returns.
    pub columns: Vec<String>,
    /// Its body.
    pub sql: String,
}

/// What the module of one function holds.
#[derive(Debug, Clone)]
pub struct Aux {
    function: Arc<TableFunction>,
    db: NestedDb,
    /// Created functions' calls in progress on the connection.
    depth: Arc<AtomicUsize>,
}

/// Registers `f` on `conn` (replacing a module of its name); `depth`
/// counts the created functions' calls in progress on the connection.
pub(crate) fn register(
    conn: &Connection,
    f: TableFunction,
    depth: Arc<AtomicUsize>,
) -> rusqlite::Result<()> {
    // SAFETY: the handle is used only by the module registered on this
    // connection below, which SQLite drops before closing it.
    let db = unsafe { NestedDb::of(conn) };
    let name = f.name.clone();
    conn.create_module(
        name.as_str(),
        eponymous_only_module::<FunctionTab>(),
        Some(Aux {
            function: Arc::new(f),
            db,
            depth,
        }),
    )
}

/// Quotes a name for SQLite.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The function's virtual table.
#[repr(C)]
pub struct FunctionTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    aux: Aux,
}

// SAFETY: `FunctionTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for FunctionTab {
    type Aux = Aux;
    type Cursor = FunctionCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Aux>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let aux = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("function missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        let f = &aux.function;
        let mut cols: Vec<String> = f.columns.iter().map(|c| quote(c)).collect();
        cols.extend(
            f.args
                .iter()
                .map(|(a, _)| format!("{} HIDDEN", quote(&format!("__arg_{a}")))),
        );
        let schema = format!("CREATE TABLE x({})", cols.join(", "));
        Ok((
            schema,
            FunctionTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                aux,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let f = &self.aux.function;
        let first_arg = f.columns.len();
        let mut found: Vec<Option<usize>> = vec![None; f.args.len()];
        for (i, c) in info.constraints().enumerate() {
            let col = usize::try_from(c.column()).unwrap_or(usize::MAX);
            if c.is_usable()
                && c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ
                && col >= first_arg
            {
                if let Some(slot) = found.get_mut(col - first_arg) {
                    slot.get_or_insert(i);
                }
            }
        }
        if found.iter().all(Option::is_some) {
            for (k, i) in found.iter().enumerate() {
                if let Some(i) = i {
                    let mut u = info.constraint_usage(*i);
                    u.set_argv_index(c_int::try_from(k + 1).unwrap_or(c_int::MAX));
                    u.set_omit(true);
                }
            }
            info.set_idx_num(1);
            info.set_estimated_cost(1000.0);
        } else {
            info.set_idx_num(0);
            info.set_estimated_cost(1e15);
        }
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<FunctionCursor> {
        Ok(FunctionCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            aux: self.aux.clone(),
            rows: Vec::new(),
            args: Vec::new(),
            pos: 0,
        })
    }
}

/// The rows of one call.
#[repr(C)]
pub struct FunctionCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    aux: Aux,
    /// Each row's values, in the declared columns' order.
    rows: Vec<Vec<Value>>,
    /// The call's arguments.
    args: Vec<Value>,
    pos: usize,
}

impl FunctionCursor {
    fn run(&mut self, args: &Filters<'_>) -> Result<(), String> {
        let f = &self.aux.function;
        let mut values = Vec::with_capacity(f.args.len());
        for (i, (_, ty)) in f.args.iter().enumerate() {
            let v = args
                .iter()
                .nth(i)
                .ok_or_else(|| format!("argument {i} missing"))?;
            ty.check(v).map_err(|why| format!("argument {i} {why}"))?;
            values.push(Value::from(v));
        }
        let names: Vec<String> = f.args.iter().map(|(a, _)| format!("${a}")).collect();
        let binds: Vec<(Option<&str>, Value)> = names
            .iter()
            .map(|s| Some(s.as_str()))
            .zip(values.iter().cloned())
            .collect();
        let out = self.aux.db.query(&f.sql, &binds, MAX_ROWS)?;
        let mut order = Vec::with_capacity(f.columns.len());
        for c in &f.columns {
            let i = out
                .columns
                .iter()
                .position(|o| o == c)
                .ok_or_else(|| format!("the body returns no column '{c}'"))?;
            order.push(i);
        }
        if let Some(extra) = out.columns.iter().find(|o| !f.columns.contains(o)) {
            return Err(format!(
                "the body returns column '{extra}', which is not declared"
            ));
        }
        self.rows = out
            .rows
            .into_iter()
            .map(|r| {
                order
                    .iter()
                    .map(|&i| r.get(i).cloned().unwrap_or(Value::Null))
                    .collect()
            })
            .collect();
        self.args = values;
        Ok(())
    }
}

// SAFETY: `FunctionCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor`
// first, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for FunctionCursor {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        self.rows.clear();
        self.args.clear();
        self.pos = 0;
        let name = self.aux.function.name.clone();
        if idx_num != 1 {
            return Err(rusqlite::Error::ModuleError(format!(
                "{name}: every argument must be given"
            )));
        }
        let level = self.aux.depth.fetch_add(1, Ordering::Relaxed);
        let result = nest_guard(level).and_then(|()| self.run(args));
        self.aux.depth.fetch_sub(1, Ordering::Relaxed);
        result.map_err(|e| rusqlite::Error::ModuleError(format!("{name}: {e}")))
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.pos >= self.rows.len()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let i = usize::try_from(i).unwrap_or(usize::MAX);
        let n = self.aux.function.columns.len();
        let v = if i < n {
            self.rows.get(self.pos).and_then(|r| r.get(i))
        } else {
            self.args.get(i - n)
        };
        match v {
            Some(v) => ctx.set_result(v),
            None => ctx.set_result(&Null),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(i64::try_from(self.pos).unwrap_or(i64::MAX))
    }
}
