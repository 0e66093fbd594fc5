//! The rows of each table while a trace loads, one struct per table with
//! Perfetto's column names; `finish` turns them into columns.

use super::strings::StrId;

/// A row of `slice`.
#[derive(Debug, Clone, Default)]
pub struct SliceRow {
    /// Start, trace clock ns.
    pub ts: i64,
    /// Duration; -1 while unfinished.
    pub dur: i64,
    /// The track.
    pub track_id: u32,
    /// Category.
    pub category: StrId,
    /// Name.
    pub name: StrId,
    /// Nesting depth on the track.
    pub depth: u32,
    /// The enclosing slice.
    pub parent_id: Option<u32>,
    /// Args.
    pub arg_set_id: Option<u32>,
    /// Thread time at the start.
    pub thread_ts: Option<i64>,
    /// Thread time spent.
    pub thread_dur: Option<i64>,
    /// Instruction count at the start.
    pub thread_instruction_count: Option<i64>,
    /// Instructions spent.
    pub thread_instruction_delta: Option<i64>,
}

/// A row of `__intrinsic_track` (the `track` table and its kinds).
#[derive(Debug, Clone, Default)]
pub struct TrackRow {
    /// Name.
    pub name: StrId,
    /// Classification (`type`).
    pub classification: StrId,
    /// Dimension args (utid, upid, cpu, ...).
    pub dimension_arg_set_id: Option<u32>,
    /// Parent track.
    pub parent_id: Option<u32>,
    /// Source args (description, ...).
    pub source_arg_set_id: Option<u32>,
    /// Machine.
    pub machine_id: Option<u32>,
    /// `slice`, `counter` or `state`.
    pub event_type: StrId,
    /// A counter's unit.
    pub counter_unit: StrId,
    /// Thread dimension (also in the dimension args).
    pub utid: Option<u32>,
    /// Process dimension (also in the dimension args).
    pub upid: Option<u32>,
    /// Track group.
    pub track_group_id: Option<u32>,
}

/// A row of `thread`.
#[derive(Debug, Clone, Default)]
pub struct ThreadRow {
    /// Thread id.
    pub tid: i64,
    /// Name.
    pub name: StrId,
    /// Start.
    pub start_ts: Option<i64>,
    /// End.
    pub end_ts: Option<i64>,
    /// Process.
    pub upid: Option<u32>,
    /// Whether tid == pid.
    pub is_main_thread: Option<bool>,
    /// The swapper.
    pub is_idle: bool,
    /// Machine.
    pub machine_id: Option<u32>,
    /// Args.
    pub arg_set_id: Option<u32>,
}

/// A row of `process`.
#[derive(Debug, Clone, Default)]
pub struct ProcessRow {
    /// Process id.
    pub pid: i64,
    /// Name.
    pub name: StrId,
    /// Start.
    pub start_ts: Option<i64>,
    /// End.
    pub end_ts: Option<i64>,
    /// Parent.
    pub parent_upid: Option<u32>,
    /// User id.
    pub uid: Option<i64>,
    /// Android app id.
    pub android_appid: Option<i64>,
    /// Android user id.
    pub android_user_id: Option<i64>,
    /// Command line.
    pub cmdline: StrId,
    /// Args.
    pub arg_set_id: Option<u32>,
    /// Machine.
    pub machine_id: Option<u32>,
}

/// A row of `counter`.
#[derive(Debug, Clone, Default)]
pub struct CounterRow {
    /// Time.
    pub ts: i64,
    /// Track.
    pub track_id: u32,
    /// Value.
    pub value: f64,
    /// Args.
    pub arg_set_id: Option<u32>,
}

/// A row of `state`.
#[derive(Debug, Clone, Default)]
pub struct StateRow {
    /// Start.
    pub ts: i64,
    /// Duration (-1 while open).
    pub dur: i64,
    /// Track.
    pub track_id: u32,
    /// Category.
    pub category: StrId,
    /// The state's value.
    pub value: StrId,
    /// Args.
    pub arg_set_id: Option<u32>,
}

/// A row of `__intrinsic_track_event_callstacks`: the callstack a
/// TrackEvent carried, on the slice it began, ended or was.
#[derive(Debug, Clone, Default)]
pub struct TrackEventCallstackRow {
    /// The slice.
    pub slice_id: u32,
    /// Its track.
    pub track_id: u32,
    /// The callsite of a begin (or instant, or complete) event.
    pub callsite_id: Option<u32>,
    /// The callsite of an end event.
    pub end_callsite_id: Option<u32>,
    /// `callstack_weight`.
    pub weight: Option<f64>,
}

/// A row of `flow`.
#[derive(Debug, Clone, Default)]
pub struct FlowRow {
    /// Outgoing slice.
    pub slice_out: u32,
    /// Incoming slice.
    pub slice_in: u32,
    /// Flow id.
    pub trace_id: Option<i64>,
    /// Args.
    pub arg_set_id: Option<u32>,
}

/// A row of `metadata`.
#[derive(Debug, Clone, Default)]
pub struct MetadataRow {
    /// Key.
    pub name: StrId,
    /// `single` or `multi`.
    pub key_type: StrId,
    /// Integer value.
    pub int_value: Option<i64>,
    /// String value.
    pub str_value: StrId,
}

/// A row of `cpu` (its id, `ucpu`, is the row index).
#[derive(Debug, Clone, Default)]
pub struct CpuRow {
    /// The CPU's number.
    pub cpu: Option<i64>,
    /// Cluster (CPUs of equal capacity, or equal top frequency).
    pub cluster_id: i64,
    /// The processor's name.
    pub processor: StrId,
    /// Capacity.
    pub capacity: Option<i64>,
    /// Args (ARM identifier, features).
    pub arg_set_id: Option<u32>,
}

/// A row of `cpu_available_frequencies`.
#[derive(Debug, Clone, Default)]
pub struct CpuFreqRow {
    /// The CPU (ucpu).
    pub ucpu: u32,
    /// A frequency it runs at (kHz).
    pub freq: i64,
}

/// A row of `clock_snapshot`.
#[derive(Debug, Clone, Default)]
pub struct ClockSnapshotRow {
    /// The snapshot's time on the trace clock.
    pub ts: i64,
    /// Clock id.
    pub clock_id: i64,
    /// Builtin clock's name.
    pub clock_name: StrId,
    /// The clock's value.
    pub clock_value: i64,
    /// Which snapshot.
    pub snapshot_id: u32,
}

/// A row of `machine`: the host (raw id 0) and each machine packets named.
#[derive(Debug, Clone, Default)]
pub struct MachineRow {
    /// The id packets carry (`TracePacket.machine_id`).
    pub raw_id: i64,
    /// Its name (`SystemInfo.machine_name`).
    pub name: StrId,
    /// `uname` sysname.
    pub sysname: StrId,
    /// `uname` release.
    pub release: StrId,
    /// `uname` version.
    pub version: StrId,
    /// `uname` machine.
    pub arch: StrId,
    /// CPUs.
    pub num_cpus: Option<i64>,
    /// Android's build fingerprint.
    pub android_build_fingerprint: StrId,
    /// Android's device manufacturer.
    pub android_device_manufacturer: StrId,
    /// Android's SDK version.
    pub android_sdk_version: Option<i64>,
    /// RAM in bytes.
    pub system_ram_bytes: Option<i64>,
}
