//! Android's own tables (upstream's `android_tables.py`) that the Android
//! system importers fill: the CPU time per uid tracks, the installed
//! packages and the device's users. Each row's id is its index, as
//! upstream's.

use super::table;
use crate::column_store::strings::StrId;

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

table! {
    /// A row of `package_list`: one installed package (the first entry of
    /// each package name).
    pub struct PackageListRow in "__intrinsic_package_list", views ["package_list"] {
        /// The package's name.
        package_name: StrId,
        /// Its uid (the app id: the uid without its user part).
        uid: i64,
        /// Whether it is debuggable (0 or 1).
        debuggable: i64,
        /// Whether a shell may profile it (0 or 1).
        profileable_from_shell: i64,
        /// Its version code.
        version_code: i64,
    }
}

table! {
    /// A row of `__intrinsic_android_user_list`: one user of the device.
    pub struct AndroidUserListRow in "__intrinsic_android_user_list" {
        /// The user's type (`android.os.usertype.full.SYSTEM`, ...).
        user_type as "type": StrId,
        /// The user's id.
        android_user_id: i64,
    }
}

table! {
    /// A row of `android_game_intervention_list`: one game's modes and
    /// the interventions each mode applies.
    pub struct AndroidGameInterventionRow in "__intrinsic_android_game_intervention_list",
        views ["android_game_intervention_list"] {
        /// The game's package.
        package_name: StrId,
        /// Its uid.
        uid: i64,
        /// The mode it is in (1 standard, 2 performance, 3 battery).
        current_mode: i64,
        /// Whether it supports the standard mode (0 or 1).
        standard_mode_supported: i64,
        /// The standard mode's resolution downscale.
        standard_mode_downscale: Option<f64>,
        /// Whether the standard mode uses ANGLE.
        standard_mode_use_angle: Option<i64>,
        /// The standard mode's frame rate.
        standard_mode_fps: Option<f64>,
        /// Whether it supports the performance mode (0 or 1).
        perf_mode_supported: i64,
        /// The performance mode's resolution downscale.
        perf_mode_downscale: Option<f64>,
        /// Whether the performance mode uses ANGLE.
        perf_mode_use_angle: Option<i64>,
        /// The performance mode's frame rate.
        perf_mode_fps: Option<f64>,
        /// Whether it supports the battery mode (0 or 1).
        battery_mode_supported: i64,
        /// The battery mode's resolution downscale.
        battery_mode_downscale: Option<f64>,
        /// Whether the battery mode uses ANGLE.
        battery_mode_use_angle: Option<i64>,
        /// The battery mode's frame rate.
        battery_mode_fps: Option<f64>,
    }
}

table! {
    /// A row of `android_dumpstate`: one line of an Android bug report's
    /// dumpstate text, with the section and dumpsys service it is in.
    pub struct AndroidDumpstateRow in "__intrinsic_android_dumpstate",
        views ["android_dumpstate"] {
        /// The dumpstate section (`DUMPSYS`, `SYSTEM LOG`, ...), if any.
        section: StrId,
        /// The dumpsys service, within a `DUMPSYS` section.
        service: StrId,
        /// The line.
        line: StrId,
    }
}

table! {
    /// A row of `__intrinsic_android_aflags`: one aconfig flag as one
    /// snapshot of the `android.aflags` data source saw it.
    pub struct AndroidAflagRow in "__intrinsic_android_aflags" {
        /// When the snapshot was taken.
        ts: i64,
        /// The flag's aconfig package.
        package: StrId,
        /// Its name.
        name: StrId,
        /// Its namespace.
        flag_namespace: StrId,
        /// Its container (`system`, `vendor`, a mainline module).
        container: StrId,
        /// Its current value.
        value: StrId,
        /// The value it takes after the next reboot, if one is staged.
        staged_value: StrId,
        /// `read-only`, `read-write` or `unspecified`.
        permission: StrId,
        /// `default`, `server`, `local` or `unspecified`.
        value_picked_from: StrId,
        /// `none`, `aconfigd`, `device_config` or `unspecified`.
        storage_backend: StrId,
        /// `boolean`, `integer` or `unspecified`.
        flag_type as "type": StrId,
    }
}

table! {
    /// A row of `__intrinsic_android_track_event_process`: one process's
    /// lifecycle as Android's framework TrackEvents told it.
    pub struct AndroidTrackEventProcessRow in "__intrinsic_android_track_event_process" {
        /// The process.
        upid: u32,
        /// The start sequence number the framework gave its start.
        start_seq_id: Option<i64>,
        /// The uid of the package hosting it.
        package_uid: Option<i64>,
        /// The uid of the caller that started it.
        caller_uid: Option<i64>,
        /// The uid of the component's defining package.
        defining_uid: Option<i64>,
        /// When its first start event was emitted.
        fw_start_ts: Option<i64>,
        /// When its binder died.
        fw_end_ts: Option<i64>,
        /// Why it started (`TriggerType`).
        trigger_type: StrId,
        /// What it was started to host (`HostingTypeId`).
        hosting_type: StrId,
        /// The name of what it hosts.
        hosting_name: StrId,
        /// Milliseconds until it bound its application.
        bind_application_delay_ms: Option<i64>,
        /// Milliseconds until it finished starting.
        process_start_delay_ms: Option<i64>,
    }
}

/// The Android tables' rows as the importers fill them.
#[derive(Debug, Clone, Default)]
pub struct AndroidRows {
    /// `__intrinsic_android_cpu_per_uid_track`.
    pub cpu_per_uid_tracks: Vec<AndroidCpuPerUidTrackRow>,
    /// `__intrinsic_package_list`.
    pub packages: Vec<PackageListRow>,
    /// `__intrinsic_android_user_list`.
    pub users: Vec<AndroidUserListRow>,
    /// `__intrinsic_android_dumpstate`.
    pub dumpstate: Vec<AndroidDumpstateRow>,
    /// `__intrinsic_android_game_intervention_list`.
    pub game_interventions: Vec<AndroidGameInterventionRow>,
    /// `__intrinsic_android_aflags`.
    pub aflags: Vec<AndroidAflagRow>,
    /// `__intrinsic_android_track_event_process`.
    pub track_event_processes: Vec<AndroidTrackEventProcessRow>,
}

#[cfg(feature = "sql")]
impl AndroidRows {
    /// Every Android table, frozen.
    pub fn freeze(
        &self,
        strings: &std::sync::Arc<crate::column_store::strings::StringPool>,
    ) -> Vec<crate::column_store::table::Table> {
        vec![
            AndroidCpuPerUidTrackRow::freeze(&self.cpu_per_uid_tracks, strings),
            PackageListRow::freeze(&self.packages, strings),
            AndroidUserListRow::freeze(&self.users, strings),
            AndroidDumpstateRow::freeze(&self.dumpstate, strings),
            AndroidGameInterventionRow::freeze(&self.game_interventions, strings),
            AndroidAflagRow::freeze(&self.aflags, strings),
            AndroidTrackEventProcessRow::freeze(&self.track_event_processes, strings),
        ]
    }
}

/// The Android tables' declarations.
pub const TABLES: &[super::TableDecl] = &[
    AndroidCpuPerUidTrackRow::TABLE,
    PackageListRow::TABLE,
    AndroidUserListRow::TABLE,
    AndroidDumpstateRow::TABLE,
    AndroidGameInterventionRow::TABLE,
    AndroidAflagRow::TABLE,
    AndroidTrackEventProcessRow::TABLE,
];
