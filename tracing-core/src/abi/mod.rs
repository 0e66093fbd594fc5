//! The producer ↔ service shared memory ABI, byte-compatible with Perfetto.
//!
//! A buffer is cut into pages (4–64 KiB); each page has an 8-byte header whose
//! first word holds the page layout and a 2-bit state per chunk; each chunk has
//! an 8-byte header followed by fragments of trace packets. The layouts follow
//! upstream Perfetto's `include/perfetto/ext/tracing/core/shared_memory_abi.h`;
//! `tracing-core/ABI.md` in this repository states, in our words, every fact
//! the code here relies on.

pub(crate) mod atomic_view;
pub mod chunk;
pub mod chunk_header;
pub mod chunk_reader;
pub mod chunk_state;
pub mod error;
pub mod page_header;
pub mod page_layout;
pub mod shared_copy;
pub mod shared_memory_abi;
pub mod state_machine;

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
