//! CPU samples as Perfetto's `linux.perf` data source records them
//! (`TracePacket.perf_sample`, callstacks interned per sequence), and heap
//! dumps as heapprofd writes them (`android.heapprofd`'s
//! `TracePacket.profile_packet`, `heap.rs`), read back with named frames
//! for the viewers: `zerotrace flamegraph`, `convert --format pprof`, and
//! the profiles' sections of `stats` and `dump`.
//!
//! [`SampleReader`] is sans-IO: packets in, [`Sample`]s, [`HeapDump`]s and
//! a [`Profile`] out. A sample's `stack` lists frame indices **root
//! first** (outermost caller first, leaf last), the order of
//! `Callstack.frame_ids` on the wire. [`folded()`], [`heap_folded`],
//! [`encode_pprof`] and [`encode_heap_pprof`] turn a profile into what the
//! flamegraph and pprof tools read.

mod folded;
mod heap;
mod interning;
mod pprof;
mod pprof_heap;
mod reader;
mod sample;
mod symbolizer;
mod symbols;
mod tables;

pub use folded::{Filter, Folded, folded, heap_folded};
pub use heap::{
    HeapCounts, HeapDump, HeapDumpFlags, HeapDumpStats, HeapSample, HeapValue, client_error_name,
};
pub use interning::Unresolved;
pub use pprof::{PprofError, encode_pprof};
pub use pprof_heap::encode_heap_pprof;
pub use reader::{Profile, SampleReader};
pub use sample::{Counts, Sample, Timebase, cpu_mode_name, skip_reason_name, unwind_error_name};
pub use symbolizer::{ModuleSymbolizer, SymbolizeError, build_id_of};
pub use symbols::SymbolLine;
pub use tables::{Frame, Mapping};
