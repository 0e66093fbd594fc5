//! Everything one trace loads into: the arg sets, the stats, and each
//! table's rows (their strings live in `column_store::strings`).

mod arg_set_index;
pub mod args;
pub mod import_logs;
pub mod profile_facts;
pub mod profiling_rows;
pub mod rows;
pub mod sched_rows;
pub mod stats;
pub mod work;

use crate::column_store::strings::{self, StringPool};
use args::ArgTable;
use rows::{
    ClockSnapshotRow, CounterRow, CpuFreqRow, CpuRow, FlowRow, MachineRow, MetadataRow, ProcessRow,
    SliceRow, StateRow, ThreadRow, TrackRow,
};
use stats::Stats;

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
    /// The thread times of the slices that have some, by slice id (apart
    /// from the rows: most slices have none).
    pub slice_threads: rows::SliceThreadTimes,
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
    /// `__intrinsic_trace_file`: the files read (`load/archive/`).
    pub trace_files: Vec<crate::tables::trace_file::TraceFileRow>,
    /// `__intrinsic_trace_diagnostics`.
    pub trace_diagnostics: Vec<crate::tables::core::TraceDiagnosticRow>,
    /// `__intrinsic_trace_import_logs` (`import_logs.rs`).
    pub import_logs: Vec<crate::tables::core::ImportLogRow>,
    /// `experimental_proto_path`: the proto content analysis's field
    /// paths (`load/proto_content.rs`), when a load asked for it.
    pub proto_paths: Vec<crate::tables::proto_content::ProtoPathRow>,
    /// `experimental_proto_content`: the bytes under each of them.
    pub proto_contents: Vec<crate::tables::proto_content::ProtoContentRow>,
    /// `sched_slice`, `thread_state`, `ftrace_event`.
    pub sched: sched_rows::SchedRows,
    /// The profiling tables.
    pub profiling: profiling_rows::ProfilingRows,
    /// What the profile views print beyond the profiling tables.
    pub profile_facts: profile_facts::ProfileFacts,
    /// The work the load did (bounded per byte against hostile traces).
    pub work: work::LoadWork,
    /// Android's own tables (`tables/android.rs`).
    pub android: crate::tables::android::AndroidRows,
    /// `experimental_missing_chrome_processes` (`tables/chrome.rs`).
    pub missing_chrome_processes: Vec<crate::tables::chrome::MissingChromeProcessRow>,
    /// `__intrinsic_chrome_raw` (`tables/chrome.rs`).
    pub chrome_raw: Vec<crate::tables::chrome::ChromeRawRow>,
    /// `__intrinsic_logs` (`tables/logs.rs`).
    pub logs: Vec<crate::tables::logs::LogRow>,
    /// `__intrinsic_android_network_packets` (`tables/android_network.rs`).
    pub network_packets: Vec<crate::tables::android_network::AndroidNetworkPacketRow>,
    /// The memory snapshot tables (`tables/memory_snapshot.rs`).
    pub memory_snapshots: crate::tables::memory_snapshot::MemorySnapshotRows,
    /// The GPU tables (`tables/gpu.rs`).
    pub gpu: crate::tables::gpu::GpuRows,
    /// V8's tables (`tables/v8.rs`).
    pub v8: crate::tables::v8::V8Rows,
    /// The JIT tables (`tables/jit.rs`).
    pub jit: crate::tables::jit::JitRows,
    /// The Winscope tables (`tables/winscope.rs`).
    pub winscope: crate::tables::winscope::WinscopeRows,
    /// What the load dropped, told to the user (`load_warning.rs`).
    pub warnings: Vec<crate::load_warning::LoadWarning>,
    /// The row of each `single` metadata entry in `metadata` by its key
    /// and machine, so that a value set again is written in place (as
    /// upstream's tracker does) without a walk over every entry.
    metadata_single: crate::hash::HashMap<(strings::StrId, u32), usize>,
}

impl Storage {
    /// Sets the machine (`machine` id, 0: the host) whose stats and
    /// metadata are counted and set from now on: upstream keeps most
    /// stats and some metadata keys per machine (`stat_scopes.rs`).
    pub fn set_machine(&mut self, machine: u32) {
        self.stats.machine = machine;
    }

    /// The machine whose stats and metadata are counted and set now.
    pub fn machine(&self) -> u32 {
        self.stats.machine
    }

    /// The machine a metadata key `name` is kept for now: the current
    /// one for a key upstream keeps per machine, else 0.
    fn metadata_machine(&self, name: &str) -> u32 {
        if self.stats.machine != 0 && crate::stat_scopes::metadata_ids(name).0.is_some() {
            self.stats.machine
        } else {
            0
        }
    }

    /// Adds a `single` metadata entry with an integer.
    pub fn set_metadata_int(&mut self, name: &str, value: i64) {
        self.set_single(name, Some(value), strings::StrId::NULL);
    }

    /// The integer of a metadata entry, if set.
    pub fn metadata_int(&self, name: &str) -> Option<i64> {
        let id = self.strings.find(name)?;
        let machine = self.metadata_machine(name);
        let row = *self.metadata_single.get(&(id, machine))?;
        self.metadata.get(row).and_then(|m| m.int_value)
    }

    /// Adds a `single` metadata entry with a string.
    pub fn set_metadata_str(&mut self, name: &str, value: &str) {
        let str_value = self.strings.intern(value);
        self.set_single(name, None, str_value);
    }

    /// Sets a `single` entry: in its row when it has one, else a new row.
    fn set_single(&mut self, name: &str, int_value: Option<i64>, str_value: strings::StrId) {
        let machine = self.metadata_machine(name);
        let name = self.strings.intern(name);
        if let Some(row) = self
            .metadata_single
            .get(&(name, machine))
            .and_then(|&i| self.metadata.get_mut(i))
        {
            row.int_value = int_value;
            row.str_value = str_value;
            return;
        }
        let key_type = self.strings.intern("single");
        self.metadata_single
            .insert((name, machine), self.metadata.len());
        self.metadata.push(MetadataRow {
            name,
            key_type,
            int_value,
            str_value,
            machine,
        });
    }

    /// Appends a `multi` metadata entry.
    pub fn append_metadata(&mut self, name: &str, int_value: Option<i64>, str_value: Option<&str>) {
        let machine = self.metadata_machine(name);
        let name = self.strings.intern(name);
        let key_type = self.strings.intern("multi");
        let str_value = self.strings.intern_opt(str_value);
        self.metadata.push(MetadataRow {
            name,
            key_type,
            int_value,
            str_value,
            machine,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_entry_set_again_is_written_in_its_row() {
        let mut s = Storage::default();
        s.set_metadata_str("trace_uuid", "a");
        s.set_metadata_int("trace_size_bytes", 1);
        s.append_metadata("trace_uuid", None, Some("multi"));
        s.set_metadata_str("trace_uuid", "b");
        s.set_metadata_int("trace_size_bytes", 2);
        assert_eq!(s.metadata.len(), 3);
        assert_eq!(s.strings.get(s.metadata[0].str_value), Some("b"));
        assert_eq!(s.metadata[1].int_value, Some(2));
        assert_eq!(s.metadata_int("trace_size_bytes"), Some(2));
        assert_eq!(s.metadata_int("absent"), None);
    }

    /// A key upstream keeps per machine is set and read per machine; a key
    /// of the whole trace is one row whatever the machine.
    #[test]
    fn machine_keys_are_kept_per_machine() {
        let mut s = Storage::default();
        s.set_metadata_str("system_name", "Linux");
        s.set_metadata_int("ftrace_latest_data_start_ns", 1000);
        s.set_machine(1);
        assert_eq!(s.metadata_int("ftrace_latest_data_start_ns"), None);
        s.set_metadata_str("system_name", "Darwin");
        s.set_metadata_int("ftrace_latest_data_start_ns", 2000);
        s.set_metadata_int("trace_size_bytes", 5);
        assert_eq!(s.metadata_int("ftrace_latest_data_start_ns"), Some(2000));
        s.set_machine(0);
        s.set_metadata_int("trace_size_bytes", 6);
        assert_eq!(s.metadata_int("ftrace_latest_data_start_ns"), Some(1000));
        let rows: Vec<(&str, u32)> = s
            .metadata
            .iter()
            .map(|m| (s.strings.get(m.name).unwrap(), m.machine))
            .collect();
        assert_eq!(
            rows,
            [
                ("system_name", 0),
                ("ftrace_latest_data_start_ns", 0),
                ("system_name", 1),
                ("ftrace_latest_data_start_ns", 1),
                ("trace_size_bytes", 0),
            ]
        );
        assert_eq!(s.metadata_int("trace_size_bytes"), Some(6));
    }
}
