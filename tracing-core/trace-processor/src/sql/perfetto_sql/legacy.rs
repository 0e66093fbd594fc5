//! PerfettoSQL's older function API, still in use: `SELECT
//! CREATE_FUNCTION('name(arg TYPE, …)', 'TYPE', 'body')` defines the same
//! scalar function as `CREATE OR REPLACE PERFETTO FUNCTION`,
//! `CREATE_VIEW_FUNCTION('name(arg TYPE, …)', 'col TYPE, …', 'SELECT …')`
//! the same table function as `CREATE OR REPLACE PERFETTO FUNCTION … RETURNS
//! TABLE(col TYPE, …)`, and `SELECT EXPERIMENTAL_MEMOIZE('name')` makes a
//! function of one LONG argument keep the values it computed.
//!
//! SQLite calls `CREATE_FUNCTION` in the middle of a statement, where a
//! function cannot be registered on the connection; the call queues the
//! definition and the driver (`mod.rs`) creates it as soon as the
//! statement has run, so the next statement can call it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Null, ValueRef};

use super::functions::Memo;

/// A `CREATE_FUNCTION` or `CREATE_VIEW_FUNCTION` call waiting for its
/// statement to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// The function called, for errors.
    pub caller: &'static str,
    /// `name(arg TYPE, …)`.
    pub prototype: String,
    /// The return type: a scalar's type, or `TABLE(col TYPE, …)`.
    pub returns: String,
    /// The body.
    pub body: String,
}

/// The created functions' memo tables by lower-case name, each with
/// whether the function takes one LONG argument (only those memoize).
type MemoTables = HashMap<String, (Arc<Memo>, bool)>;

/// The queue of definitions and the created functions' memo tables.
#[derive(Debug, Default)]
pub(crate) struct Legacy {
    pending: Arc<Mutex<Vec<Request>>>,
    memos: Arc<Mutex<MemoTables>>,
}

/// The error a call fails with.
fn fail(message: String) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(message.into())
}

/// Argument `i` as text, or an error naming the function.
fn text(ctx: &Context<'_>, i: usize, function: &str) -> rusqlite::Result<String> {
    match ctx.get_raw(i) {
        ValueRef::Text(t) => Ok(String::from_utf8_lossy(t).into_owned()),
        _ => Err(fail(format!("{function}: argument {i} must be a string"))),
    }
}

impl Legacy {
    /// Registers `CREATE_FUNCTION`, `CREATE_VIEW_FUNCTION` and
    /// `EXPERIMENTAL_MEMOIZE` on `conn`.
    pub(crate) fn register(&self, conn: &Connection) -> rusqlite::Result<()> {
        for (caller, table) in [("CREATE_FUNCTION", false), ("CREATE_VIEW_FUNCTION", true)] {
            let pending = self.pending.clone();
            conn.create_scalar_function(
                caller,
                3,
                FunctionFlags::SQLITE_UTF8,
                move |ctx: &Context<'_>| -> rusqlite::Result<Null> {
                    let returns = text(ctx, 1, caller)?;
                    let request = Request {
                        caller,
                        prototype: text(ctx, 0, caller)?,
                        returns: if table {
                            format!("TABLE({returns})")
                        } else {
                            returns
                        },
                        body: text(ctx, 2, caller)?,
                    };
                    pending
                        .lock()
                        .map_err(|_| fail(format!("{caller}: queue poisoned")))?
                        .push(request);
                    super::void_calls::mark_void();
                    Ok(Null)
                },
            )?;
        }
        let memos = self.memos.clone();
        conn.create_scalar_function(
            "experimental_memoize",
            1,
            FunctionFlags::SQLITE_UTF8,
            move |ctx: &Context<'_>| -> rusqlite::Result<Null> {
                let name = text(ctx, 0, "EXPERIMENTAL_MEMOIZE")?;
                let memos = memos
                    .lock()
                    .map_err(|_| fail("EXPERIMENTAL_MEMOIZE: poisoned".into()))?;
                match memos.get(&name.to_ascii_lowercase()) {
                    Some((memo, true)) => {
                        memo.enable();
                        super::void_calls::mark_void();
                        Ok(Null)
                    }
                    Some((_, false)) => Err(fail(format!(
                        "EXPERIMENTAL_MEMOIZE: Function {name} should take one int argument"
                    ))),
                    None => Err(fail(format!(
                        "EXPERIMENTAL_MEMOIZE: Function '{name}'(INT) does not exist"
                    ))),
                }
            },
        )
    }

    /// The definitions queued since the last call.
    pub(crate) fn take(&self) -> Vec<Request> {
        self.pending
            .lock()
            .map(|mut q| std::mem::take(&mut *q))
            .unwrap_or_default()
    }

    /// Forgets every function's memo table (`PerfettoSql::reset`).
    pub(crate) fn forget_memos(&self) {
        if let Ok(mut m) = self.memos.lock() {
            m.clear();
        }
    }

    /// A new memo table for function `name` (replacing its earlier one);
    /// `memoizable` when it takes one LONG argument.
    pub(crate) fn memo_for(&self, name: &str, memoizable: bool) -> Arc<Memo> {
        let memo = Arc::new(Memo::default());
        if let Ok(mut m) = self.memos.lock() {
            m.insert(name.to_ascii_lowercase(), (memo.clone(), memoizable));
        }
        memo
    }
}
