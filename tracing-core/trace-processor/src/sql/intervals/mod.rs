//! The native part of the `intervals.*` modules: intersecting tables of
//! intervals by partition and pairing starts with ends, over the rows of
//! the very query that calls them (a CTE's, a subquery's). An aggregate
//! gathers each table's rows into an encoded set (`aggregate.rs`,
//! `set.rs`), a table-valued function computes the rows
//! (`vtab.rs` over `intersect.rs`, with `overlaps.rs`, and `create.rs`), and the modules'
//! macros (`perfetto_sql/modules/intervals_*.sql`) put them together
//! under upstream's names. Typed errors in `error.rs`.

mod aggregate;
mod create;
mod error;
mod intersect;
mod overlaps;
mod set;
mod vtab;

#[cfg(test)]
mod tests;

use rusqlite::Connection;

/// Registers the aggregates and the operators on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    aggregate::register(conn)?;
    vtab::register(conn)
}
