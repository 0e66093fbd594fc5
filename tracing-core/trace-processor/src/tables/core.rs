//! The core tables (upstream groups them in `slice_tables.py`,
//! `track_tables.py`, `metadata_tables.py`, `counter_tables.py`, ...):
//! slices, tracks and their kinds, threads, processes, counters, states,
//! flows, TrackEvent callstacks, stats, metadata, CPUs and machines,
//! clock snapshots.

use super::opt_u32::OptU32;
use super::table;
pub use super::thread_times::{SliceThreadTimes, ThreadTimes};
use crate::column_store::strings::StrId;

table! {
    /// A row of `slice`.
    pub struct SliceRow in "__intrinsic_slice" sorted by ts,
        views ["slice", "slices", "instant"] {
        /// Start, trace clock ns.
        ts: i64,
        /// Duration; -1 while unfinished.
        dur: i64,
        /// The track.
        track_id: u32,
        /// Category.
        category: StrId,
        /// Name.
        name: StrId,
        /// Nesting depth on the track.
        depth: u32,
        /// The enclosing slice.
        parent_id: OptU32,
        /// Args.
        arg_set_id: OptU32,
        /// Thread time at the start. The four thread columns are kept
        /// apart from the rows by slice id (`Storage::slice_threads`, most
        /// slices have none) and filled by [`freeze_slices`]; the rows
        /// alone freeze them NULL.
        thread_ts: Option<i64> = |_| None,
        /// Thread time spent.
        thread_dur: Option<i64> = |_| None,
        /// Instruction count at the start.
        thread_instruction_count: Option<i64> = |_| None,
        /// Instructions spent.
        thread_instruction_delta: Option<i64> = |_| None,
    }
}

/// The slice table frozen from its rows and the thread times kept apart
/// from them.
#[cfg(feature = "sql")]
pub fn freeze_slices(
    rows: &[SliceRow],
    threads: &SliceThreadTimes,
    strings: &std::sync::Arc<crate::column_store::strings::StringPool>,
) -> crate::column_store::table::Table {
    use super::ColumnValue;
    use super::thread_times::ThreadTimesColumn as C;
    let mut table = SliceRow::freeze(rows, strings);
    if threads.is_empty() {
        return table;
    }
    for (name, which) in [
        ("thread_ts", C::Ts),
        ("thread_dur", C::Dur),
        ("thread_instruction_count", C::InstructionCount),
        ("thread_instruction_delta", C::InstructionDelta),
    ] {
        if let Some(c) = table.columns.iter_mut().find(|c| c.name == name) {
            *c = <Option<i64>>::column(name, threads.column(which, rows.len()));
        }
    }
    table
}

table! {
    /// A row of `__intrinsic_track` (the `track` table and its kinds).
    pub struct TrackRow in "__intrinsic_track",
        views [
            "track", "thread_track", "process_track", "counter_track",
            "process_counter_track", "thread_counter_track", "state_track",
            "process_state_track", "thread_state_track", "cpu_track",
            "cpu_counter_track", "gpu_counter_track", "gpu_track",
        ] {
        /// Name.
        name: StrId,
        /// Classification (`type`).
        classification as "type": StrId,
        /// Dimension args (utid, upid, cpu, ...).
        dimension_arg_set_id: Option<u32>,
        /// Parent track.
        parent_id: Option<u32>,
        /// Source args (description, ...).
        source_arg_set_id: Option<u32>,
        /// Machine.
        machine_id: Option<u32>,
        /// Track group.
        track_group_id: Option<u32>,
        /// `slice`, `counter` or `state`.
        event_type: StrId,
        /// A counter's unit.
        counter_unit: StrId,
        /// Thread dimension (also in the dimension args).
        utid: Option<u32>,
        /// Process dimension (also in the dimension args).
        upid: Option<u32>,
    }
}

table! {
    /// A row of `thread`.
    pub struct ThreadRow in "__intrinsic_thread", views ["thread"] {
        /// Thread id.
        tid: i64,
        /// Name.
        name: StrId,
        /// Start.
        start_ts: Option<i64>,
        /// End.
        end_ts: Option<i64>,
        /// Process.
        upid: Option<u32>,
        /// Whether tid == pid.
        is_main_thread: Option<bool>,
        /// The swapper.
        is_idle: bool,
        /// Machine.
        machine_id: Option<u32>,
        /// Args.
        arg_set_id: Option<u32>,
    }
}

table! {
    /// A row of `process`.
    pub struct ProcessRow in "__intrinsic_process", views ["process"] {
        /// Process id.
        pid: i64,
        /// Name.
        name: StrId,
        /// Start.
        start_ts: Option<i64>,
        /// End.
        end_ts: Option<i64>,
        /// Parent.
        parent_upid: Option<u32>,
        /// User id.
        uid: Option<i64>,
        /// Android app id.
        android_appid: Option<i64>,
        /// Android user id.
        android_user_id: Option<i64>,
        /// Command line.
        cmdline: StrId,
        /// Args.
        arg_set_id: Option<u32>,
        /// Machine.
        machine_id: Option<u32>,
    }
}

table! {
    /// A row of `counter`.
    pub struct CounterRow in "__intrinsic_counter" sorted by ts, views ["counter", "counters"] {
        /// Time.
        ts: i64,
        /// Track.
        track_id: u32,
        /// Value.
        value: f64,
        /// Args.
        arg_set_id: OptU32,
    }
}

table! {
    /// A row of `state`.
    pub struct StateRow in "__intrinsic_state", views ["state"] {
        /// Start.
        ts: i64,
        /// Duration (-1 while open).
        dur: i64,
        /// Track.
        track_id: u32,
        /// Category.
        category: StrId,
        /// The state's value.
        value: StrId,
        /// Args.
        arg_set_id: Option<u32>,
    }
}

table! {
    /// A row of `flow`.
    pub struct FlowRow in "__intrinsic_flow", views ["flow"] {
        /// Outgoing slice.
        slice_out: u32,
        /// Incoming slice.
        slice_in: u32,
        /// Flow id.
        trace_id: Option<i64>,
        /// Args.
        arg_set_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_track_event_callstacks`: the callstack a
    /// TrackEvent carried, on the slice it began, ended or was.
    pub struct TrackEventCallstackRow in "__intrinsic_track_event_callstacks" {
        /// The slice.
        slice_id: u32,
        /// Its track.
        track_id: u32,
        /// The callsite of a begin (or instant, or complete) event.
        callsite_id: Option<u32>,
        /// The callsite of an end event.
        end_callsite_id: Option<u32>,
        /// `callstack_weight`.
        weight: Option<f64>,
    }
}

table! {
    /// A row of `metadata`.
    pub struct MetadataRow in "__intrinsic_metadata", views ["metadata"] {
        /// Key.
        name: StrId,
        /// `single` or `multi`.
        key_type: StrId,
        /// Integer value.
        int_value: Option<i64>,
        /// String value.
        str_value: StrId,
        /// The machine it was set for (`machine` id; 0 for a key of no
        /// machine).
        field machine: u32,
        /// Machine (none for a key upstream keeps for the whole session or
        /// per trace: `stat_scopes.rs`).
        machine_id: Option<u32> = |r, strings| crate::stat_scopes::metadata_ids(
            strings.get(r.name).unwrap_or_default()).0.map(|_| r.machine),
        /// Trace (none for a key upstream keeps for the whole session or
        /// per machine).
        trace_id: Option<u32> = |r, strings| crate::stat_scopes::metadata_ids(
            strings.get(r.name).unwrap_or_default()).1,
    }
}

table! {
    /// A row of `stats`: one counter of the vocabulary
    /// (`stat_vocabulary.rs`), or one index of an indexed one.
    #[derive(Copy, PartialEq)]
    pub struct StatRow in "__intrinsic_stats", views ["stats"] {
        /// The stat: its index in the vocabulary.
        field stat: usize,
        /// The machine it was counted for (`machine` id; 0 for a stat of
        /// the whole session).
        field machine: u32,
        /// Its name.
        name: StrId = |r, strings| stat_text(strings, r.stat, |d| d.0),
        /// The index, for an indexed stat.
        idx: Option<i64>,
        /// `info`, `notice`, `data_loss` or `error`.
        severity: StrId = |r, strings| stat_text(strings, r.stat, |d| d.2.as_str()),
        /// `trace` or `analysis`.
        source: StrId = |r, strings| stat_text(strings, r.stat, |d| d.3.as_str()),
        /// The count.
        value: i64,
        /// What it counts (left out, as the vocabulary leaves it).
        description: StrId = |_| StrId::NULL,
        /// Machine (none for a stat of the whole session:
        /// `stat_scopes.rs`).
        machine_id: Option<u32> = |r| stat_ids(r.stat).0.map(|_| r.machine),
        /// Trace (none for a stat of the whole session).
        trace_id: Option<u32> = |r| stat_ids(r.stat).1,
    }
}

/// `(machine_id, trace_id)` of stat `i`'s row.
#[cfg(feature = "sql")]
fn stat_ids(i: usize) -> (Option<u32>, Option<u32>) {
    crate::stat_vocabulary::STATS
        .get(i)
        .map_or((None, None), |d| crate::stat_scopes::stat_ids(d.0))
}

/// A text of stat `i`'s definition, as the pool holds it (NULL unless it
/// was interned before the tables froze: [`StatRow::texts`]).
#[cfg(feature = "sql")]
fn stat_text(
    strings: &crate::column_store::strings::StringPool,
    i: usize,
    f: fn(&crate::stat_vocabulary::StatDef) -> &'static str,
) -> StrId {
    crate::stat_vocabulary::STATS
        .get(i)
        .and_then(|d| strings.find(f(d)))
        .unwrap_or(StrId::NULL)
}

impl StatRow {
    /// The texts the derived columns read: every stat's name, severity
    /// and source.
    pub fn texts() -> impl Iterator<Item = &'static str> {
        crate::stat_vocabulary::STATS
            .iter()
            .flat_map(|d| [d.0, d.2.as_str(), d.3.as_str()])
    }
}

table! {
    /// A row of `cpu` (its id, `ucpu`, is the row index).
    pub struct CpuRow in "__intrinsic_cpu", views ["cpu"] {
        /// The CPU's number.
        cpu: Option<i64>,
        /// Cluster (CPUs of equal capacity, or equal top frequency).
        cluster_id: i64,
        /// The processor's name.
        processor: StrId,
        /// The machine the CPU belongs to (`machine` id: 0 for the host),
        /// which upstream names for every CPU.
        field machine: u32,
        /// Machine.
        machine_id: Option<u32> = |r| Some(r.machine),
        /// Capacity.
        capacity: Option<i64>,
        /// Args (ARM identifier, features).
        arg_set_id: Option<u32>,
    }
}

table! {
    /// A row of `cpu_available_frequencies`.
    pub struct CpuFreqRow in "__intrinsic_cpu_freq", views ["cpu_available_frequencies"] {
        /// The CPU (ucpu).
        ucpu: u32,
        /// A frequency it runs at (kHz).
        freq: i64,
    }
}

table! {
    /// A row of `machine`: the host (raw id 0) and each machine packets named.
    pub struct MachineRow in "__intrinsic_machine", views ["machine"] {
        /// The id packets carry (`TracePacket.machine_id`).
        raw_id: i64,
        /// Its name (`SystemInfo.machine_name`).
        name: StrId,
        /// `uname` sysname.
        sysname: StrId,
        /// `uname` release.
        release: StrId,
        /// `uname` version.
        version: StrId,
        /// `uname` machine.
        arch: StrId,
        /// CPUs.
        num_cpus: Option<i64>,
        /// Android's build fingerprint.
        android_build_fingerprint: StrId,
        /// Android's device manufacturer.
        android_device_manufacturer: StrId,
        /// Android's SDK version.
        android_sdk_version: Option<i64>,
        /// RAM in bytes.
        system_ram_bytes: Option<i64>,
        /// RAM in gigabytes, rounded.
        system_ram_gb: Option<i64> =
            |r| r.system_ram_bytes.map(|b| (b as f64 / 1e9).round() as i64),
    }
}

table! {
    /// A row of `clock_snapshot`.
    pub struct ClockSnapshotRow in "clock_snapshot" {
        /// The snapshot's time on the trace clock.
        ts: i64,
        /// Clock id.
        clock_id: i64,
        /// Builtin clock's name.
        clock_name: StrId,
        /// The clock's value.
        clock_value: i64,
        /// Which snapshot.
        snapshot_id: u32,
        /// Machine (none yet).
        machine_id: Option<u32> = |_| None,
    }
}

table! {
    /// A row of `__intrinsic_trace_diagnostics`: a problem found in how
    /// the trace was recorded (`parser/trace_diagnostics.rs`).
    pub struct TraceDiagnosticRow in "__intrinsic_trace_diagnostics" {
        /// The rule's key (upstream's).
        key: StrId,
        /// A short title.
        title: StrId,
        /// What was found.
        description: StrId,
        /// What to change.
        remediation: StrId,
        /// How sure the rule is, in [0, 1].
        confidence: f64,
        /// The trace it concerns.
        trace_id: Option<u32>,
    }
}

table! {
    /// A row of `__intrinsic_trace_import_logs`: one thing the import
    /// skipped, mended or was told went wrong, with its stat and where it
    /// happened (`storage/import_logs.rs`; the prelude's
    /// `_trace_import_logs` names its stat and severity).
    pub struct ImportLogRow in "__intrinsic_trace_import_logs", views ["_trace_import_logs"] {
        /// The trace it concerns.
        trace_id: u32,
        /// When it happened, if known.
        ts: Option<i64>,
        /// Where in the trace's bytes, if known.
        byte_offset: Option<i64>,
        /// The stat it counted: its index in the vocabulary.
        stat_key: i64,
        /// What else is known of it.
        arg_set_id: Option<u32>,
        /// The stat's name (what upstream's view joins from `stats`).
        name: StrId = |r, strings| stat_text(strings, stat_of(r.stat_key), |d| d.0),
        /// The stat's severity.
        severity: StrId = |r, strings| stat_text(strings, stat_of(r.stat_key), |d| d.2.as_str()),
    }
}

/// The vocabulary index of an import log's `stat_key`.
#[cfg(feature = "sql")]
fn stat_of(key: i64) -> usize {
    usize::try_from(key).unwrap_or(usize::MAX)
}

/// The core tables' declarations.
pub const TABLES: &[super::TableDecl] = &[
    SliceRow::TABLE,
    TrackRow::TABLE,
    ThreadRow::TABLE,
    ProcessRow::TABLE,
    CounterRow::TABLE,
    StateRow::TABLE,
    FlowRow::TABLE,
    TrackEventCallstackRow::TABLE,
    StatRow::TABLE,
    MetadataRow::TABLE,
    CpuRow::TABLE,
    CpuFreqRow::TABLE,
    MachineRow::TABLE,
    ClockSnapshotRow::TABLE,
    TraceDiagnosticRow::TABLE,
    ImportLogRow::TABLE,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A slice row is 40 bytes (a counter's 24): its ids 4 each, its
    /// thread times apart.
    /// The four thread columns freeze from the side table by slice id,
    /// NULL for the slices without.
    #[test]
    fn thread_times_live_apart_from_the_row() {
        assert_eq!(std::mem::size_of::<SliceRow>(), 40);
        assert_eq!(std::mem::size_of::<CounterRow>(), 24);
        #[cfg(feature = "sql")]
        {
            use crate::column_store::table::Cell;
            let strings = std::sync::Arc::new(crate::column_store::strings::StringPool::default());
            let rows = vec![
                SliceRow::default(),
                SliceRow {
                    parent_id: OptU32::some(0),
                    ..SliceRow::default()
                },
            ];
            let mut threads = SliceThreadTimes::default();
            threads.update(1, |t| {
                t.ts = Some(3);
                t.instruction_delta = Some(-2);
            });
            let t = freeze_slices(&rows, &threads, &strings);
            let col = |name: &str| t.columns.iter().position(|c| c.name == name).unwrap();
            assert_eq!(t.cell(0, col("thread_ts")), Cell::Null);
            assert_eq!(t.cell(1, col("thread_ts")), Cell::Int(3));
            assert_eq!(t.cell(1, col("thread_dur")), Cell::Null);
            assert_eq!(t.cell(1, col("thread_instruction_delta")), Cell::Int(-2));
            assert_eq!(t.cell(0, col("parent_id")), Cell::Null);
            assert_eq!(t.cell(1, col("parent_id")), Cell::Int(0));
            assert_eq!(t.cell(1, col("arg_set_id")), Cell::Null);
        }
    }
}
