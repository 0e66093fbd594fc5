//! Flamegraphs in SQL: the `__intrinsic_flamegraph` virtual-table
//! operator (a merged tree of frames from any `id, parent_id, name,
//! value, ...` rows, in the views, filters, groupings and aggregates
//! `__intrinsic_flamegraph_config` asks for, with its layout) that
//! Perfetto's stdlib and UI build their flamegraphs on. Written for
//! zerotrace from the documented behaviour of upstream's operator; one
//! file per step: `config.rs` (the config function), `source.rs` (the
//! rows, as a tree), `build.rs` (the merge), `aggregate.rs`,
//! `layout.rs`, `vtab.rs` (SQLite's side), `error.rs`.

mod aggregate;
pub(crate) mod build;
pub(crate) mod config;
pub(crate) mod error;
mod layout;
pub(crate) mod resolve;
mod routing;
pub(crate) mod source;
mod vtab;

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;

use super::perfetto_sql::nested::NestedDb;

fn config_fn(ctx: &Context<'_>) -> rusqlite::Result<String> {
    let mut texts = Vec::with_capacity(ctx.len());
    for i in 0..ctx.len() {
        texts.push(match ctx.get_raw(i) {
            ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
            _ => None,
        });
    }
    let args: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
    config::parse(&args).map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))?;
    let all: Vec<&str> = args.iter().map(|a| a.unwrap_or_default()).collect();
    Ok(config::encode(&all))
}

/// Registers the operator and its two functions on `conn`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "__intrinsic_flamegraph_config",
        -1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        config_fn,
    )?;
    conn.create_scalar_function(vtab::FIND, 2, FunctionFlags::SQLITE_UTF8, |_| {
        Err::<i64, _>(rusqlite::Error::UserFunctionError(
            format!("{} must constrain a flamegraph", vtab::FIND).into(),
        ))
    })?;
    // SAFETY: the handle is used only by the module registered on `conn`
    // just below, which SQLite drops before it closes the connection.
    let db = unsafe { NestedDb::of(conn) };
    conn.create_module(
        "__intrinsic_flamegraph",
        vtab::module(),
        Some(Arc::new(vtab::Registry::new(db))),
    )
}

/// A top-down flamegraph of rows built in Rust (`names` as a source's
/// columns, the fixed `id, parent_id, name, value` first; `columns[c][row]`),
/// frames told apart by `grouping` and summing `values`: the merge the
/// operator does, for other operators (`experimental_flamegraph`).
pub(crate) fn top_down(
    names: Vec<String>,
    columns: Vec<Vec<source::Cell>>,
    grouping: Vec<String>,
    values: Vec<String>,
) -> Result<(source::Source, build::Built), error::FlamegraphError> {
    let source = source::Source::new(names, columns)?;
    let query = config::Query {
        view: config::View::TopDown,
        view_pattern: None,
        filters: Vec::new(),
        grouping,
        values,
        aggregates: Vec::new(),
    };
    let resolved = resolve::resolve(&source, &query)?;
    let built = build::build(&source, &resolved)?;
    Ok((source, built))
}

#[cfg(test)]
mod stdlib_tests;
#[cfg(test)]
mod tests;
