//! Android's own tables (upstream's `android_tables.py`) that the Android
//! system importers fill: the CPU time per uid tracks. Each row's id is
//! its index, as upstream's.

use super::table;

table! {
    /// A row of `__intrinsic_android_cpu_per_uid_track`: one uid's CPU time
    /// on one cluster, and the counter track that holds it.
    pub struct AndroidCpuPerUidTrackRow in "__intrinsic_android_cpu_per_uid_track"
        sorted by track_id {
        /// The counter track (`CPU for UID <uid> CL<cluster>`).
        track_id: u32,
        /// The uid (isolated and shared-range uids grouped to their range's
        /// first).
        uid: i64,
        /// The CPU cluster.
        cluster: i64,
        /// The uid's CPU time on the cluster over the whole trace, in ms.
        total_cpu_millis: i64,
    }
}

/// The Android tables' rows as the importers fill them.
#[derive(Debug, Clone, Default)]
pub struct AndroidRows {
    /// `__intrinsic_android_cpu_per_uid_track`.
    pub cpu_per_uid_tracks: Vec<AndroidCpuPerUidTrackRow>,
}

#[cfg(feature = "sql")]
impl AndroidRows {
    /// Every Android table, frozen.
    pub fn freeze(
        &self,
        strings: &std::sync::Arc<crate::storage::strings::StringPool>,
    ) -> Vec<crate::sql::table::Table> {
        vec![AndroidCpuPerUidTrackRow::freeze(
            &self.cpu_per_uid_tracks,
            strings,
        )]
    }
}

/// The Android tables' declarations.
pub const TABLES: &[super::TableDecl] = &[AndroidCpuPerUidTrackRow::TABLE];
