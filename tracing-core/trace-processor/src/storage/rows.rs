//! The rows of the core tables while a trace loads, under the paths the
//! parsers name them by; each table is declared once, in `tables/core.rs`.

pub use crate::tables::core::{
    ClockSnapshotRow, CounterRow, CpuFreqRow, CpuRow, FlowRow, MachineRow, MetadataRow, ProcessRow,
    SliceRow, SliceThreadTimes, StateRow, ThreadRow, ThreadTimes, TrackEventCallstackRow, TrackRow,
};
