//! `__intrinsic_trace_file` (its view `trace_file`): one row per file the
//! load read, the trace itself and, for an archive, each member (a gzip
//! member and the trace inside it), with its parent, name, size, detected
//! type and the order the files were read in, as upstream's table has
//! them (`load/archive/feed.rs` fills it).

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `__intrinsic_trace_file`.
    pub struct TraceFileRow in "__intrinsic_trace_file", views ["trace_file"] {
        /// The file holding it (an archive), none for the trace itself.
        parent_id: Option<u32>,
        /// Its path in the archive, none for the trace itself.
        name: StrId,
        /// Its size in bytes (a member's as read out of the archive).
        size: i64,
        /// Its detected type (`proto`, `json`, `zip`, `perfetto_manifest`, ...).
        trace_type: StrId,
        /// Its place in the order files were read, from 0.
        processing_order: Option<i64>,
        /// 1 for an archive or a compressed file holding others.
        is_container: u32,
    }
}

/// This group's declarations.
pub const TABLES: &[super::TableDecl] = &[TraceFileRow::TABLE];
