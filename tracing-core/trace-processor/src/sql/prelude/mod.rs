//! The parts of Perfetto's prelude (what its trace processor offers
//! without an `INCLUDE`) that no other file of `sql/` provides, one file
//! each: `__intrinsic_arg_set_to_json` (`arg_set_to_json.rs`), the window
//! functions `LAST_NON_NULL` (`last_non_null.rs`) and `INTERNAL_LAYOUT`
//! (`internal_layout.rs`), the aggregate `VALUE_AT_MAX_TS`
//! (`value_at_max_ts.rs`), the metadata lookups `extract_metadata` and
//! its scoped forms (`extract_metadata.rs`), and the table-valued operators (on
//! `table_function.rs`): `directly_connected_flow`, `following_flow`,
//! `preceding_flow` (`connected_flow.rs`) and `experimental_slice_layout`
//! (`slice_layout.rs`), `experimental_ancestor_stack_profile_callsite`
//! (`ancestor_callsite.rs`), `experimental_flat_slice` (`flat_slice.rs`),
//! `experimental_flamegraph` of a Java heap dump (`experimental_flamegraph.rs`),
//! `perfetto_table_info`
//! (`table_info.rs`), `__intrinsic_zstd_compress` (`zstd_compress.rs`);
//! `CAT_STACKS` and the `STACK_FROM_STACK_PROFILE_*` builders
//! (`stack_functions.rs`); and, empty with upstream's columns, the public views
//! whose importers we lack (`empty_views.rs`).

mod ancestor_callsite;
mod arg_set_to_json;
mod connected_flow;
mod empty_views;
mod experimental_flamegraph;
mod extract_metadata;
mod flat_slice;
mod internal_layout;
mod last_non_null;
mod slice_layout;
mod stack_functions;
pub(crate) mod table_function;
mod table_info;
mod value_at_max_ts;
mod zstd_compress;

use std::sync::Arc;

use rusqlite::Connection;

use crate::column_store::table::Table;

/// Registers the prelude's functions and tables over the trace's tables
/// `all` (each operator only when the tables it reads are there).
pub fn register(conn: &Connection, all: &[Arc<Table>]) -> rusqlite::Result<()> {
    let table = |name: &str| all.iter().find(|t| t.name == name).cloned();
    if let Some(args) = table("__intrinsic_args") {
        arg_set_to_json::register(conn, args)?;
    }
    if let Some(metadata) = table("__intrinsic_metadata") {
        extract_metadata::register(conn, metadata)?;
    }
    if let Some(slices) = table("__intrinsic_slice") {
        if let Some(flows) = table("__intrinsic_flow") {
            connected_flow::register(conn, slices.clone(), flows)?;
        }
        flat_slice::register(conn, slices.clone())?;
        slice_layout::register(conn, slices)?;
    }
    if let (Some(objects), Some(classes), Some(references), Some(graphs)) = (
        table("__intrinsic_heap_graph_object"),
        table("__intrinsic_heap_graph_class"),
        table("__intrinsic_heap_graph_reference"),
        table("__intrinsic_heap_graph"),
    ) {
        super::heap_graph::register(conn, objects.clone(), classes.clone(), references.clone())?;
        experimental_flamegraph::register(conn, objects, classes, references, graphs)?;
    }
    if let Some(callsites) = table("__intrinsic_stack_profile_callsite") {
        ancestor_callsite::register(conn, callsites)?;
    }
    stack_functions::register(
        conn,
        table("__intrinsic_stack_profile_frame"),
        table("__intrinsic_stack_profile_callsite"),
    )?;
    last_non_null::register(conn)?;
    internal_layout::register(conn)?;
    value_at_max_ts::register(conn)?;
    table_info::register(conn)?;
    zstd_compress::register(conn)?;
    Ok(())
}

/// Creates the empty views of the public names no table or view has;
/// called after every other view is created.
pub fn register_empty_views(conn: &Connection) -> rusqlite::Result<()> {
    empty_views::register(conn)
}
