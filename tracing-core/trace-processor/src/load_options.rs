//! What a load keeps, as `trace_processor_shell`'s load flags choose:
//! `--no-ftrace-raw` leaves `ftrace_event` (upstream's raw table) empty,
//! as upstream's `ingest_ftrace_in_raw_table = false` does. It is applied
//! to the finished load, so the arg sets of the dropped rows stay in
//! `args` (upstream never makes them). `--allow-sql-file-access` rides
//! along, for the tables built from the load, and so does how many
//! threads the load may use (a choice of speed, never of what it keeps).

use crate::load::budget::LoadBudget;
use crate::storage::Storage;

/// Choices about what a loaded trace keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// Keep every ftrace event in `ftrace_event` (upstream's default).
    pub ftrace_raw: bool,
    /// How much memory the load may take, and how many times compressed
    /// bytes may grow into it (`zerotrace sql --max-memory` sets the first
    /// and lifts the second).
    pub budget: LoadBudget,
    /// Let the trace's SQL read and write files (`ATTACH` of a file,
    /// `VACUUM INTO`), as `trace_processor_shell --allow-sql-file-access`
    /// does; off by default. Not about the load: it is carried here so
    /// that traces loaded later (over the RPC's `/parse`) get it too.
    pub sql_file_access: bool,
    /// Count every packet's bytes by field path into
    /// `experimental_proto_path` and `experimental_proto_content`, as
    /// `trace_processor_shell --analyze-trace-proto-content` does (and
    /// upstream's diff tests); off by default.
    pub analyze_proto_content: bool,
    /// Drop the TrackEvents before the trace's range of interest, as
    /// `trace_processor_shell --crop-track-events` does (and upstream's
    /// diff tests); off by default.
    pub crop_track_events: bool,
    /// Threads a trace file's load may use (`zerotrace sql --load-threads`):
    /// reading, inflating and splitting run ahead of the ordered parsing
    /// (`load/parallel/`), with the same tables as one thread makes. 1 is
    /// the one-thread load; the default is the machine's cores.
    pub threads: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            ftrace_raw: true,
            budget: LoadBudget::default(),
            sql_file_access: false,
            analyze_proto_content: false,
            crop_track_events: false,
            threads: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

impl LoadOptions {
    /// Drops from a finished load what these options leave out.
    pub fn apply(&self, storage: &mut Storage) {
        if !self.ftrace_raw {
            storage.sched.ftrace_events = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::sched_rows::FtraceEventRow;

    #[test]
    fn no_ftrace_raw_leaves_ftrace_event_empty() {
        let one_event = || {
            let mut s = crate::Loader::new().finish().unwrap();
            s.sched.ftrace_events.push(FtraceEventRow::default());
            s
        };
        let mut kept = one_event();
        LoadOptions::default().apply(&mut kept);
        assert_eq!(kept.sched.ftrace_events.len(), 1);
        let mut storage = one_event();
        LoadOptions {
            ftrace_raw: false,
            ..LoadOptions::default()
        }
        .apply(&mut storage);
        assert!(storage.sched.ftrace_events.is_empty());
    }
}
