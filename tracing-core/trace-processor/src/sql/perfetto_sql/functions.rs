//! `CREATE PERFETTO FUNCTION … RETURNS <type>`: a scalar SQL function
//! registered with SQLite, whose call type-checks its arguments against
//! their declared types, binds them to the body's `$name` parameters, runs
//! the body on the calling connection and answers with the one value of
//! its one column (NULL when it returns no row; more than one row or
//! column is an error). `DELEGATES TO f` calls `f` with the same
//! arguments instead, any number of them when the last is `ANY...`.
//! Calls nest (a function may call itself) as deep as [`nest_guard`] lets them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::Value;

use super::nested::NestedDb;
use super::types::ArgType;

/// How deep calls of created functions may nest (each level is a statement
/// run inside another's step, on the thread's stack). The count is not
/// what keeps the stack whole: a level's frames grow with the build and
/// the statement path (256 levels once overflowed a test's 2 MiB thread,
/// an abort where an error is due), so [`nest_guard`] also refuses a call
/// while less than [`STACK_RESERVE`] of the thread's stack is left.
pub(crate) const MAX_CALL_DEPTH: usize = 256;

/// The stack a created function's call must find left on its thread
/// before it runs: several times a level's frames (about 8 KiB in a test
/// build), and room for SQLite to fail the statements above it.
pub(crate) const STACK_RESERVE: usize = 256 * 1024;

/// Whether a call at nesting `level` may run: not past [`MAX_CALL_DEPTH`],
/// and not with less than [`STACK_RESERVE`] of the stack left (whatever
/// the thread's size: a small one refuses sooner, with an error, never by
/// overflowing it).
pub(crate) fn nest_guard(level: usize) -> Result<(), String> {
    if level >= MAX_CALL_DEPTH {
        return Err(format!(
            "calls nested more than {MAX_CALL_DEPTH} deep (infinite recursion?)"
        ));
    }
    match stacker::remaining_stack() {
        Some(left) if left < STACK_RESERVE => Err(format!(
            "calls nested {level} deep left {} KiB of this thread's stack, less than the \
             {} KiB a call needs (infinite recursion?)",
            left / 1024,
            STACK_RESERVE / 1024
        )),
        _ => Ok(()),
    }
}

/// What a created scalar function computes.
#[derive(Debug, Clone)]
pub(crate) enum Compute {
    /// Runs this SELECT.
    Body(String),
    /// Calls this function.
    Delegate(String),
}

/// A created scalar function.
#[derive(Debug, Clone)]
pub(crate) struct ScalarFunction {
    /// Its name.
    pub name: String,
    /// Its arguments' names and types.
    pub args: Vec<(String, ArgType)>,
    /// Whether the last argument takes any number of values.
    pub variadic: bool,
    /// How it computes its value.
    pub compute: Compute,
    /// Its values by argument, once memoized (`EXPERIMENTAL_MEMOIZE`).
    pub memo: Arc<Memo>,
}

/// The values a function of one LONG argument computed, kept once
/// `EXPERIMENTAL_MEMOIZE` asked for it.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    enabled: AtomicBool,
    values: Mutex<HashMap<i64, Value>>,
}

impl Memo {
    /// Keeps values from now on.
    pub(crate) fn enable(&self) {
        self.enabled.store(true, Ordering::Relaxed);
    }

    /// The value kept for `arg`.
    fn get(&self, arg: i64) -> Option<Value> {
        if !self.enabled.load(Ordering::Relaxed) {
            return None;
        }
        self.values.lock().ok()?.get(&arg).cloned()
    }

    /// Keeps `v` for `arg`, when enabled.
    fn put(&self, arg: i64, v: &Value) {
        if self.enabled.load(Ordering::Relaxed) {
            if let Ok(mut m) = self.values.lock() {
                m.insert(arg, v.clone());
            }
        }
    }
}

/// The error a function call fails with.
fn fail(message: String) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(message.into())
}

/// Registers `f` on `conn`, replacing a function of the same name and
/// number of arguments; `depth` counts the created functions' calls in
/// progress on the connection.
pub(crate) fn register(
    conn: &Connection,
    f: ScalarFunction,
    depth: Arc<AtomicUsize>,
) -> rusqlite::Result<()> {
    // SAFETY: the handle is used only by the function registered on this
    // connection below, which SQLite drops before closing it.
    let db = unsafe { NestedDb::of(conn) };
    let n_arg = if f.variadic {
        -1
    } else {
        i32::try_from(f.args.len()).map_err(|_| fail("too many arguments".into()))?
    };
    let f = Arc::new(f);
    conn.create_scalar_function(
        f.name.clone().as_str(),
        n_arg,
        FunctionFlags::SQLITE_UTF8,
        move |ctx: &Context<'_>| -> rusqlite::Result<Value> {
            let level = depth.fetch_add(1, Ordering::Relaxed);
            let result = match nest_guard(level) {
                Err(e) => Err(fail(format!("{}: {e}", f.name))),
                Ok(()) => call(&f, db, ctx),
            };
            depth.fetch_sub(1, Ordering::Relaxed);
            result
        },
    )
}

/// One call of `f`.
fn call(f: &ScalarFunction, db: NestedDb, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    let n = ctx.len();
    if !f.variadic && n != f.args.len() {
        return Err(fail(format!(
            "{}: invalid number of args; expected {}, received {n}",
            f.name,
            f.args.len()
        )));
    }
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        let v = ctx.get_raw(i);
        let ty = f
            .args
            .get(i)
            .or(f.args.last())
            .map_or(ArgType::Any, |a| a.1);
        if let Err(why) = ty.check(v) {
            return Err(fail(format!("{}: argument {i} {why}", f.name)));
        }
        values.push(Value::from(v));
    }
    // A memoized function has one LONG argument.
    let memo_key = match values.as_slice() {
        [Value::Integer(k)] => Some(*k),
        _ => None,
    };
    if let Some(v) = memo_key.and_then(|k| f.memo.get(k)) {
        return Ok(v);
    }
    let rows = match &f.compute {
        Compute::Body(sql) => {
            let names: Vec<String> = f.args.iter().map(|(a, _)| format!("${a}")).collect();
            let binds: Vec<(Option<&str>, Value)> =
                names.iter().map(|s| Some(s.as_str())).zip(values).collect();
            db.query(sql, &binds, 1)
        }
        Compute::Delegate(target) => {
            let params: Vec<String> = (1..=n).map(|i| format!("?{i}")).collect();
            let sql = format!("SELECT {target}({})", params.join(", "));
            let binds: Vec<(Option<&str>, Value)> = values.into_iter().map(|v| (None, v)).collect();
            db.query(&sql, &binds, 1)
        }
    };
    let rows = rows.map_err(|e| {
        if e.starts_with("more than") {
            fail(format!(
                "{}: multiple values were returned when executing function body",
                f.name
            ))
        } else {
            fail(format!("{}: {e}", f.name))
        }
    })?;
    if rows.columns.len() != 1 {
        return Err(fail(format!(
            "{}: SQL definition should only return one column: returned {} columns",
            f.name,
            rows.columns.len()
        )));
    }
    let v = rows
        .rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or(Value::Null);
    if let Some(k) = memo_key {
        f.memo.put(k, &v);
    }
    Ok(v)
}
