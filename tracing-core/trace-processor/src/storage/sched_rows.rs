//! The rows ftrace's scheduler events and raw events load into while a
//! trace is read, under the paths the parsers name them by (each table is
//! declared once, in `tables/sched.rs`), and the storage of the three.

pub use crate::tables::sched::{
    FtraceEventRow, InterruptMappingRow, SchedSliceRow, ThreadStateRow,
};

/// The scheduling and raw ftrace tables.
#[derive(Debug, Clone, Default)]
pub struct SchedRows {
    /// `sched_slice`.
    pub slices: Vec<SchedSliceRow>,
    /// `thread_state`.
    pub thread_states: Vec<ThreadStateRow>,
    /// `ftrace_event`.
    pub ftrace_events: Vec<FtraceEventRow>,
    /// `_linux_interrupt_mapping`.
    pub interrupt_mappings: Vec<InterruptMappingRow>,
}
