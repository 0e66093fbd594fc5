//! CPU samples as Perfetto's `linux.perf` data source records them
//! (`TracePacket.perf_sample`) and heap dumps as heapprofd writes them
//! (`android.heapprofd`'s `TracePacket.profile_packet`), read back with
//! named frames for the viewers: `zerotrace flamegraph`, `convert --format
//! pprof`, and the profiles' sections of `stats` and `dump`.
//!
//! The trace processor is the one reader: its loader decodes the packets
//! into `stack_profile_*`, `__intrinsic_profiler_sample` (`perf_sample`),
//! `heap_profile_allocation` and `stats`, and into
//! `storage/profile_facts.rs` what the views print that those tables
//! do not hold. [`Profile::from_storage`] builds the views' model from
//! that storage; it needs no SQL (the crate's `sql` feature). A sample's
//! `stack` lists frame indices **root first** (outermost caller first,
//! leaf last). [`folded()`], [`heap_folded`], [`encode_pprof`] and
//! [`encode_heap_pprof`] turn a profile into what the flamegraph and pprof
//! tools read.

mod folded;
mod from_storage;
mod heap;
mod pprof;
mod pprof_heap;
mod profile;
mod sample;
mod tables;

pub use crate::storage::profile_facts::Unresolved;
pub use folded::{Filter, Folded, folded, heap_folded};
pub use heap::{
    HeapCounts, HeapDump, HeapDumpFlags, HeapDumpStats, HeapSample, HeapValue, client_error_name,
};
pub use pprof::{PprofError, encode_pprof};
pub use pprof_heap::encode_heap_pprof;
pub use profile::Profile;
pub use sample::{Counts, Sample, Timebase, cpu_mode_name, skip_reason_name, unwind_error_name};
pub use tables::{Frame, Mapping, SymbolLine};
