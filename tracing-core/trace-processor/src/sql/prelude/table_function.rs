//! A table-valued function of the prelude as an eponymous virtual table:
//! `name(arg, ...)` answers the rows an operator computes from its
//! arguments. The arguments are hidden columns that must be given (as
//! SQLite passes a table function's arguments: equality constraints); the
//! operator ([`TableFn`]) gets them as values and answers whole rows, or
//! an error message. One call computes once; the cursor then walks the
//! rows.

use std::ffi::c_int;
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::{Null, Value, ValueRef};
use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};

/// An operator that answers a table for its arguments.
pub trait TableFn: Send + Sync {
    /// The result's columns: (name, SQL type), in upstream's order.
    fn columns(&self) -> Vec<(&'static str, &'static str)>;
    /// The arguments' names (hidden columns after the result's).
    fn arguments(&self) -> Vec<&'static str>;
    /// The rows for `args` (one value per argument), each as long as
    /// [`TableFn::columns`]; an error message when the arguments are bad.
    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String>;
}

/// The operator a module serves.
pub type Aux = Arc<dyn TableFn>;

/// Registers `op` under `name`.
pub fn register(conn: &Connection, name: &str, op: Aux) -> rusqlite::Result<()> {
    conn.create_module(name, eponymous_only_module::<FnTab>(), Some(op))
}

/// One registered function.
#[repr(C)]
pub struct FnTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    op: Aux,
    /// How many result columns precede the arguments.
    width: usize,
    /// How many arguments.
    arity: usize,
}

// SAFETY: `FnTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for FnTab {
    type Aux = Aux;
    type Cursor = FnCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Aux>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let op = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("operator missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        let columns = op.columns();
        let arguments = op.arguments();
        let mut cols: Vec<String> = columns
            .iter()
            .map(|(n, t)| format!("\"{n}\" {t}"))
            .collect();
        cols.extend(arguments.iter().map(|a| format!("\"{a}\" HIDDEN")));
        let (width, arity) = (columns.len(), arguments.len());
        Ok((
            format!("CREATE TABLE x({})", cols.join(", ")),
            FnTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                op,
                width,
                arity,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        // For each argument, the constraint that gives it.
        let mut given: Vec<Option<usize>> = vec![None; self.arity];
        for (i, c) in info.constraints().enumerate() {
            let col = usize::try_from(c.column()).unwrap_or(usize::MAX);
            if c.is_usable()
                && c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ
                && col >= self.width
                && let Some(slot) = given.get_mut(col - self.width)
            {
                *slot = Some(i);
            }
        }
        let mut all = true;
        for (n, at) in given.iter().enumerate() {
            match at {
                Some(i) => {
                    let mut u = info.constraint_usage(*i);
                    u.set_argv_index(c_int::try_from(n + 1).unwrap_or(c_int::MAX));
                    u.set_omit(true);
                }
                None => all = false,
            }
        }
        if all {
            info.set_idx_num(1);
            info.set_estimated_cost(1000.0);
        } else {
            info.set_idx_num(0);
            info.set_estimated_cost(1e15);
        }
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<FnCursor> {
        Ok(FnCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            op: self.op.clone(),
            width: self.width,
            args: Vec::new(),
            rows: Vec::new(),
            pos: 0,
        })
    }
}

/// The rows of one call.
#[repr(C)]
pub struct FnCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    op: Aux,
    width: usize,
    args: Vec<Value>,
    rows: Vec<Vec<Value>>,
    pos: usize,
}

fn owned(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

// SAFETY: `FnCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor` first,
// as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for FnCursor {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        self.pos = 0;
        self.rows.clear();
        if idx_num != 1 {
            return Err(rusqlite::Error::ModuleError(
                "every argument of the table function must be given".into(),
            ));
        }
        self.args = args.iter().map(owned).collect();
        self.rows = self
            .op
            .run(&self.args)
            .map_err(rusqlite::Error::ModuleError)?;
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
        let i = usize::try_from(i).unwrap_or(usize::MAX);
        let v = if i >= self.width {
            self.args.get(i - self.width)
        } else {
            self.rows.get(self.pos).and_then(|r| r.get(i))
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
