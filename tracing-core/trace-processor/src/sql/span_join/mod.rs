//! `SPAN_JOIN`, `SPAN_LEFT_JOIN` and `SPAN_OUTER_JOIN`, PerfettoSQL's
//! operators that intersect the time spans (`ts`, `dur`) of two tables or
//! views, optionally per partition: `CREATE VIRTUAL TABLE t USING
//! SPAN_JOIN(a [PARTITIONED p], b [PARTITIONED p])`. Written for zerotrace
//! as a native virtual table that streams both sides in (partition, ts)
//! order and sweeps them, without materialising either.
//!
//! Files: `args.rs` (the arguments, the sides' columns, the joined
//! table's layout), `side.rs` (one side's walk over its rows and
//! shadows), `sweep.rs` (the two walks joined), `plan.rs` (constraints
//! given to the sides' queries), `stmt.rs` (those queries streamed from
//! SQLite), `vtab.rs` (the SQLite glue), `error.rs`.

mod args;
mod error;
mod plan;
mod side;
mod stmt;
mod sweep;
#[cfg(test)]
mod tests;
mod vtab;

use rusqlite::Connection;
use rusqlite::vtab::read_only_module;

use args::JoinKind;
use vtab::SpanJoinTab;

/// Registers the three modules on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    for (name, kind) in [
        ("span_join", JoinKind::Inner),
        ("span_left_join", JoinKind::Left),
        ("span_outer_join", JoinKind::Outer),
    ] {
        conn.create_module(name, read_only_module::<SpanJoinTab>(), Some(kind))?;
    }
    Ok(())
}
