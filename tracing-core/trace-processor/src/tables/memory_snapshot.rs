//! The memory snapshot tables (upstream's `memory_tables.py`) that Chrome's
//! memory-infra dumps fill (`parser/memory_tracker_snapshot.rs`): one row
//! per global dump, one per process in it, its allocator nodes as a tree
//! with their computed sizes, and the ownership edges between nodes. Each
//! row's id is its index, as upstream's.

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `memory_snapshot`: one global memory dump.
    pub struct MemorySnapshotRow in "__intrinsic_memory_snapshot",
        views ["memory_snapshot"] {
        /// When the dump was taken.
        timestamp: i64,
        /// The track it is shown on (the global instants' track).
        track_id: u32,
        /// `background`, `light` or `detailed`.
        detail_level: StrId,
    }
}

table! {
    /// A row of `process_memory_snapshot`: one process's part of a dump
    /// (the shared `global/` nodes under the process of pid 0).
    pub struct ProcessMemorySnapshotRow in "__intrinsic_process_memory_snapshot",
        views ["process_memory_snapshot"] {
        /// The dump (`memory_snapshot.id`).
        snapshot_id: u32,
        /// The process.
        upid: u32,
    }
}

table! {
    /// A row of `memory_snapshot_node`: one allocator node of a process's
    /// dump, with its computed sizes and its other entries as args.
    pub struct MemorySnapshotNodeRow in "__intrinsic_memory_snapshot_node",
        views ["memory_snapshot_node"] {
        /// The process's dump (`process_memory_snapshot.id`).
        process_snapshot_id: u32,
        /// The parent node (NULL for a node at the top of its tree).
        parent_node_id: Option<u32>,
        /// The node's path (`malloc/partitions`).
        path: StrId,
        /// Its size in bytes (0 when none could be inferred).
        size: i64,
        /// Its size once memory owned by or shared with other nodes is
        /// attributed to them.
        effective_size: i64,
        /// Its other entries: `<name>.value` and `<name>.unit`.
        arg_set_id: Option<u32>,
    }
}

table! {
    /// A row of `memory_snapshot_edge`: one node owning another's memory.
    pub struct MemorySnapshotEdgeRow in "__intrinsic_memory_snapshot_edge",
        views ["memory_snapshot_edge"] {
        /// The owner (`memory_snapshot_node.id`).
        source_node_id: u32,
        /// The owned node.
        target_node_id: u32,
        /// The edge's importance (the owner with the highest is charged).
        importance: u32,
    }
}

/// The memory snapshot tables' rows as the importer fills them.
#[derive(Debug, Clone, Default)]
pub struct MemorySnapshotRows {
    /// `__intrinsic_memory_snapshot`.
    pub snapshots: Vec<MemorySnapshotRow>,
    /// `__intrinsic_process_memory_snapshot`.
    pub processes: Vec<ProcessMemorySnapshotRow>,
    /// `__intrinsic_memory_snapshot_node`.
    pub nodes: Vec<MemorySnapshotNodeRow>,
    /// `__intrinsic_memory_snapshot_edge`.
    pub edges: Vec<MemorySnapshotEdgeRow>,
}

#[cfg(feature = "sql")]
impl MemorySnapshotRows {
    /// Every memory snapshot table, frozen.
    pub fn freeze(
        &self,
        strings: &std::sync::Arc<crate::column_store::strings::StringPool>,
    ) -> Vec<crate::column_store::table::Table> {
        vec![
            MemorySnapshotRow::freeze(&self.snapshots, strings),
            ProcessMemorySnapshotRow::freeze(&self.processes, strings),
            MemorySnapshotNodeRow::freeze(&self.nodes, strings),
            MemorySnapshotEdgeRow::freeze(&self.edges, strings),
        ]
    }
}

/// The memory snapshot tables' declarations.
pub const TABLES: &[super::TableDecl] = &[
    MemorySnapshotRow::TABLE,
    ProcessMemorySnapshotRow::TABLE,
    MemorySnapshotNodeRow::TABLE,
    MemorySnapshotEdgeRow::TABLE,
];
