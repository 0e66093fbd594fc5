//! Everything one trace loads into: the string pool, the arg sets, the
//! stats, and each table's rows.

pub mod args;
pub mod profile_facts;
pub mod profiling_rows;
pub mod rows;
pub mod sched_rows;
mod stat_vocabulary;
pub mod stats;
pub mod strings;
pub mod work;

use args::ArgTable;
use rows::{
    ClockSnapshotRow, CounterRow, CpuFreqRow, CpuRow, FlowRow, MachineRow, MetadataRow, ProcessRow,
    SliceRow, StateRow, ThreadRow, TrackRow,
};
use stats::Stats;
use strings::StringPool;

/// The loaded trace, row by row.
#[derive(Debug, Default)]
pub struct Storage {
    /// Every string.
    pub strings: StringPool,
    /// Every arg.
    pub args: ArgTable,
    /// The counters of `stats`.
    pub stats: Stats,
    /// `slice`.
    pub slices: Vec<SliceRow>,
    /// `track`.
    pub tracks: Vec<TrackRow>,
    /// `thread`.
    pub threads: Vec<ThreadRow>,
    /// `process`.
    pub processes: Vec<ProcessRow>,
    /// `counter`.
    pub counters: Vec<CounterRow>,
    /// `state`.
    pub states: Vec<StateRow>,
    /// `flow`.
    pub flows: Vec<FlowRow>,
    /// `__intrinsic_track_event_callstacks`.
    pub track_event_callstacks: Vec<rows::TrackEventCallstackRow>,
    /// `metadata`.
    pub metadata: Vec<MetadataRow>,
    /// `clock_snapshot`.
    pub clock_snapshots: Vec<ClockSnapshotRow>,
    /// `cpu`.
    pub cpus: Vec<CpuRow>,
    /// `cpu_available_frequencies`.
    pub cpu_freqs: Vec<CpuFreqRow>,
    /// `machine`.
    pub machines: Vec<MachineRow>,
    /// `sched_slice`, `thread_state`, `ftrace_event`.
    pub sched: sched_rows::SchedRows,
    /// The profiling tables.
    pub profiling: profiling_rows::ProfilingRows,
    /// What the profile views print beyond the profiling tables.
    pub profile_facts: profile_facts::ProfileFacts,
    /// The work the load did (bounded per byte against hostile traces).
    pub work: work::LoadWork,
    /// What the load dropped, told to the user (`load_warning.rs`).
    pub warnings: Vec<crate::LoadWarning>,
}

impl Storage {
    /// Adds a `single` metadata entry with an integer.
    pub fn set_metadata_int(&mut self, name: &str, value: i64) {
        let name = self.strings.intern(name);
        let key_type = self.strings.intern("single");
        self.metadata.retain(|m| m.name != name);
        self.metadata.push(MetadataRow {
            name,
            key_type,
            int_value: Some(value),
            str_value: strings::StrId::NULL,
        });
    }

    /// The integer of a metadata entry, if set.
    pub fn metadata_int(&self, name: &str) -> Option<i64> {
        let id = self.strings.find(name)?;
        self.metadata
            .iter()
            .find(|m| m.name == id)
            .and_then(|m| m.int_value)
    }

    /// Adds a `single` metadata entry with a string.
    pub fn set_metadata_str(&mut self, name: &str, value: &str) {
        let name = self.strings.intern(name);
        let key_type = self.strings.intern("single");
        let str_value = self.strings.intern(value);
        self.metadata.retain(|m| m.name != name);
        self.metadata.push(MetadataRow {
            name,
            key_type,
            int_value: None,
            str_value,
        });
    }

    /// Appends a `multi` metadata entry.
    pub fn append_metadata(&mut self, name: &str, int_value: Option<i64>, str_value: Option<&str>) {
        let name = self.strings.intern(name);
        let key_type = self.strings.intern("multi");
        let str_value = self.strings.intern_opt(str_value);
        self.metadata.push(MetadataRow {
            name,
            key_type,
            int_value,
            str_value,
        });
    }
}
