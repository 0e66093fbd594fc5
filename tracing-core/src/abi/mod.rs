//! The producer ↔ service shared memory ABI, byte-compatible with Perfetto.
//!
//! A buffer is cut into pages (4–64 KiB); each page has an 8-byte header whose
//! first word holds the page layout and a 2-bit state per chunk; each chunk has
//! an 8-byte header followed by fragments of trace packets. The layouts follow
//! upstream Perfetto's `include/perfetto/ext/tracing/core/shared_memory_abi.h`;
//! `tracing-core/ABI.md` in this repository states, in our words, every fact
//! the code here relies on.

pub(crate) mod atomic_view;
mod chunk;
mod chunk_header;
// The TraceWriter reads the packet header size from here.
pub(crate) mod chunk_reader;
mod chunk_state;
mod error;
mod page_header;
mod page_layout;
mod shared_copy;
mod shared_memory_abi;
mod state_machine;

pub use chunk::Chunk;
pub use chunk_header::{CHUNK_HEADER_SIZE, ChunkFlags, ChunkHeader, MAX_PACKET_COUNT, Packets};
pub use chunk_reader::{
    Fragment, FragmentError, FragmentIter, PACKET_SIZE_DROP_PACKET, fragment_at,
};
pub use chunk_state::ChunkState;
pub use error::AbiError;
pub use page_header::PageHeaderWord;
pub use page_layout::{
    MAX_CHUNKS_PER_PAGE, MAX_PAGE_SIZE, MIN_PAGE_SIZE, PAGE_HEADER_SIZE, PageLayout,
};
pub use shared_copy::copy_from_shared;
pub use shared_memory_abi::SharedMemoryAbi;

/// The chunk state machine's CAS steps, generic over the atomic word, for the
/// loom models in `tracing-core/loom/tests/loom_chunks.rs` only: not part of the API,
/// may change in any release. Users go through [`SharedMemoryAbi`].
#[doc(hidden)]
pub mod __private {
    pub use super::state_machine::{
        release_chunk_as_complete, release_chunk_as_free, try_acquire_chunk_for_reading,
        try_acquire_chunk_for_writing, try_partition_page,
    };
    pub use crate::sync::AtomicWord;
}
