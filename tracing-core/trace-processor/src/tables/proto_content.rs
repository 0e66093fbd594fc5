//! `experimental_proto_path` and `experimental_proto_content`: where the
//! bytes of a trace went, field path by field path, as upstream's proto
//! content analysis (`--analyze-trace-proto-content`) tabulates them
//! (`load/proto_content.rs` fills them when a load asks for it).

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `experimental_proto_path`: one step of a field path (the
    /// root `TracePacket`, then each field into it), with the args of the
    /// group of packets it counts on its root (a TrackEvent's category and
    /// name, or why its packet was skipped).
    pub struct ProtoPathRow in "experimental_proto_path" {
        /// The step before it; none for a root.
        parent_id: Option<u32>,
        /// The message type it enters (`TrackEvent`) or the leaf's type
        /// (`uint64`, `string`), empty for bytes of unknown fields.
        field_type: StrId,
        /// `#` and the field's name (`#track_event`); none for a root.
        field_name: StrId,
        /// The group's args, on a root.
        arg_set_id: Option<u32>,
    }
}

table! {
    /// A row of `experimental_proto_content`: the bytes and occurrences of
    /// one field path in one group of packets.
    pub struct ProtoContentRow in "experimental_proto_content" {
        /// The path as text (`TracePacket.#track_event.TrackEvent`).
        path: StrId,
        /// Its last step in `experimental_proto_path`.
        path_id: u32,
        /// Bytes counted under the path.
        total_size: i64,
        /// The same bytes (upstream keeps both columns).
        size: i64,
        /// How many times it was met.
        count: i64,
    }
}

/// This group's declarations.
pub const TABLES: &[super::TableDecl] = &[ProtoContentRow::TABLE, ProtoPathRow::TABLE];
