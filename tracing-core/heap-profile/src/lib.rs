//! Heap profiling as Perfetto's heapprofd does it (data source
//! `android.heapprofd`): the same config, the same packets, so the
//! Perfetto UI shows the profile, sampled so that it can stay on.
//!
//! A profiler in the profiled process, over the producer of
//! `zerotrace-core` (no service) and the common ground of the profilers,
//! `zerotrace-profiling` (interned callstacks, frames described for the
//! trace, the packet sink, the memory guardrail).
//!
//! - [`Sampler`] (`sampler.rs`): which allocations are recorded and for how
//!   many bytes (each byte sampled with probability 1/interval, so totals
//!   are unbiased; large allocations always, exactly);
//! - [`HeapTable`] (`heap_table.rs`): one heap's per-call-stack totals
//!   (allocated, freed, counts, and at the peak) and the live sampled
//!   blocks by address, so each free is charged to the stack that
//!   allocated it;
//! - [`HeapConfig`] (`config.rs`): `HeapprofdConfig` read as heapprofd
//!   reads it, every field decided in [`HEAPPROFD_CONFIG_FIELDS`];
//! - [`DumpWriter`] (`dump.rs`): the `ProfilePacket` dumps, sans-IO.
//!
//! On Linux: [`HeapProfiler`]
//! (`allocator.rs`), the `GlobalAlloc` whose hook samples and queues
//! (`record_queue.rs`, behind `spin_lock.rs`) each sampled allocation with
//! its thread's registers and stack copy (`capture.rs`); the profiler's
//! thread (`worker.rs`) unwinds, keeps the books and dumps; [`register`]
//! (`data_source.rs`) ties it to the program's producer.
//!
//! For a preloaded `malloc` interposer, [`preload`]: heapprofd's split. The
//! program starts no thread: the hook (`client.rs`) writes sampled
//! allocations and frees into a ring shared (`shared_ring/`) with a
//! helper process forked at load (`helper.rs`), which is the producer and
//! runs the same profiler thread against the ring; the process it was
//! forked from stays as its guardian (`guardian.rs`), which answers for a
//! helper that died.

mod config;
mod dump;
mod heap_table;
mod live_blocks;
mod sampler;

#[cfg(target_os = "linux")]
mod allocator;
#[cfg(target_os = "linux")]
mod capture;
// Process-wide statics the loom build cannot make (no model uses them).
#[cfg(all(target_os = "linux", not(zerotrace_loom)))]
mod client;
#[cfg(target_os = "linux")]
mod data_source;
#[cfg(target_os = "linux")]
mod filter_bucket;
#[cfg(all(target_os = "linux", not(zerotrace_loom)))]
mod forked;
// Process-wide statics the loom build cannot make (no model uses them).
#[cfg(all(target_os = "linux", not(zerotrace_loom)))]
mod guardian;
// Process-wide statics the loom build cannot make (no model uses them).
#[cfg(all(target_os = "linux", not(zerotrace_loom)))]
mod helper;
#[cfg(target_os = "linux")]
mod record_queue;
// Process-wide statics the loom build cannot make (no model uses them).
#[cfg(target_os = "linux")]
mod session_link;
#[cfg(target_os = "linux")]
mod shared_ring;
#[cfg(target_os = "linux")]
mod spin_lock;
#[cfg(target_os = "linux")]
mod thread_hook;
#[cfg(target_os = "linux")]
mod worker;

#[cfg(target_os = "linux")]
pub use allocator::{
    HeapProfiler, RUST_HEAP, STACK_COPY_BYTES, record_alloc, record_free, sampling,
};
pub use config::{
    DEFAULT_SHMEM_SIZE, HEAPPROFD_CONFIG_FIELD, HEAPPROFD_CONFIG_FIELDS, HEAPPROFD_DATA_SOURCE,
    Handling, HeapConfig, HeapConfigError, HeapSelection, LIBC_MALLOC_HEAP, MAX_SHMEM_SIZE,
    config_refusals, heapprofd_config_of, normalize_cmdline, queue_size,
};
#[cfg(target_os = "linux")]
pub use data_source::{finish_at_exit, profiling, register, register_heap, set_starting_up};
pub use dump::{
    ClientError, DumpSample, DumpStats, DumpWriter, PACKET_SIZE_THRESHOLD, ProcessHeader,
};
pub use heap_table::{HeapStats, HeapTable, StackTotals};
pub use live_blocks::StackId;
pub use sampler::Sampler;

/// Heap profiling of a process by a preloaded `malloc` interposer, as
/// heapprofd splits it: [`start`](preload::start) forks the helper process
/// (the producer, the unwinder, the books) from the library's initialiser;
/// the interposed functions ask [`sampling`](preload::sampling) (two
/// relaxed loads) and, when it says yes, call
/// [`record_alloc`](preload::record_alloc) after an allocation and
/// [`record_free`](preload::record_free) before a free; the library's
/// `atexit` handler calls [`at_exit`](preload::at_exit) for the last dump.
#[cfg(all(target_os = "linux", not(zerotrace_loom)))]
pub mod preload {
    pub use super::client::{at_exit, record_alloc, record_free, sampling, wait_for_session};
    pub use super::helper::{StartError, start};
}

/// The hook's concurrent pieces, for the loom models in
/// `tracing-core/loom/tests/loom_heap.rs` (and, under `--cfg
/// zerotrace_loom`, the shared ring's for `loom_ring.rs`) only: not part of
/// the API, may change in any release.
#[cfg(target_os = "linux")]
#[doc(hidden)]
pub mod __private {
    pub use super::allocator::SamplingParams;
    #[cfg(zerotrace_loom)]
    pub use super::capture::Regs;
    pub use super::record_queue::{
        AllocRecord, Overrun, Pushed, Queue, QueueGuard, QueueLimits, Record, Recorder, filter_slot,
    };
    /// The ring a preloaded client shares with its helper, over a loom
    /// model's memory.
    #[cfg(zerotrace_loom)]
    pub mod shared_ring {
        pub use super::super::shared_ring::{
            ALLOC_FIXED, Control, Corrupt, FREE_FRAME, LoomRing, NoRoom, ReadSeen, RingReader,
            RingWriter, Slot, close, close_session, open, word_closed, word_pos, writers_done,
        };
    }
    pub use super::spin_lock::{SpinGuard, SpinLock};
}
