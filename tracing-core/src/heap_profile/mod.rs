//! Heap profiling as Perfetto's heapprofd does it (data source
//! `android.heapprofd`), built in steps; this is the sans-IO core so far:
//!
//! - [`Sampler`] (`sampler.rs`): which allocations are recorded and for how
//!   many bytes (each byte sampled with probability 1/interval, so totals
//!   are unbiased; large allocations always, exactly);
//! - [`HeapTable`] (`heap_table.rs`): one heap's per-call-stack totals
//!   (allocated, freed, counts) and the live sampled blocks by address, so
//!   each free is charged to the stack that allocated it.
//!
//! Still to come (issue #40): the `GlobalAlloc` wrapper and the preload
//! library that feed these from the allocation site, in-process unwinding,
//! `HeapprofdConfig`, and the `ProfilePacket` dumps.

mod config;
mod dump;
mod heap_table;
mod sampler;

pub use config::{
    DEFAULT_SHMEM_SIZE, HEAPPROFD_CONFIG_FIELDS, HEAPPROFD_DATA_SOURCE, Handling, HeapConfig,
    HeapConfigError, HeapSelection, LIBC_MALLOC_HEAP, MAX_SHMEM_SIZE, normalize_cmdline,
};
pub use dump::{
    ClientError, DumpSample, DumpStats, DumpWriter, PACKET_SIZE_THRESHOLD, PacketSink,
    ProcessHeader, VecSink,
};
pub use heap_table::{HeapStats, HeapTable, StackId, StackTotals};
pub use sampler::Sampler;
