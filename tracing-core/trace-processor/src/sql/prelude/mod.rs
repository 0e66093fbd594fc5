//! The parts of Perfetto's prelude (what its trace processor offers
//! without an `INCLUDE`) that no other file of `sql/` provides, one file
//! each: `__intrinsic_arg_set_to_json` (`arg_set_to_json.rs`), the window
//! functions `LAST_NON_NULL` (`last_non_null.rs`) and `INTERNAL_LAYOUT`
//! (`internal_layout.rs`), and the table `__intrinsic_trace_diagnostics`
//! (`trace_diagnostics.rs`).

mod arg_set_to_json;
mod internal_layout;
mod last_non_null;
mod trace_diagnostics;

use std::sync::Arc;

use rusqlite::Connection;

use super::table::Table;

/// Registers the prelude's functions and tables; `args` is
/// `__intrinsic_args` when the trace has that table.
pub fn register(conn: &Connection, args: Option<Arc<Table>>) -> rusqlite::Result<()> {
    if let Some(args) = args {
        arg_set_to_json::register(conn, args)?;
    }
    last_non_null::register(conn)?;
    internal_layout::register(conn)?;
    trace_diagnostics::register(conn)?;
    Ok(())
}
