//! The native part of `counters.intervals`: counter samples turned into
//! intervals of constant value (`counter_leading_intervals!`) in one pass
//! over the sorted samples, instead of SQL's two window passes over every
//! sample. An aggregate gathers the rows of the query's table, view or
//! subquery (`samples.rs`), a table-valued function answers the intervals
//! (`vtab.rs` over `leading.rs`); the module's macro
//! (`perfetto_sql/modules/counters_intervals.sql`) puts them together.
//! Typed errors in `error.rs`.

mod error;
mod leading;
mod samples;
mod vtab;

#[cfg(test)]
mod tests;

use rusqlite::Connection;

/// Registers the aggregate and the operator on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    samples::register(conn)?;
    vtab::register(conn)
}
