//! Typed errors of the shared memory ABI.
//!
//! The service maps memory that a producer can scribble on at any time, so
//! every value read from it (layout bits, chunk states, indexes) is checked and
//! a bad one becomes one of these errors instead of a panic or an
//! out-of-bounds access.

use crate::abi::chunk_state::ChunkState;

/// Why an operation on the shared memory buffer was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AbiError {
    /// A chunk was given back to a view of another buffer (or of another page).
    #[error("chunk at page {page} was not acquired from this buffer")]
    ForeignChunk {
        /// The page the chunk claims to be in.
        page: usize,
    },
    /// The page size is not a multiple of 4 KiB in 4 KiB ..= 64 KiB.
    #[error("invalid page size {page_size}: must be a multiple of 4096 in 4096..=65536")]
    InvalidPageSize {
        /// The rejected page size in bytes.
        page_size: usize,
    },
    /// The buffer is empty or not a whole number of pages.
    #[error("invalid buffer size {size} for page size {page_size}")]
    InvalidBufferSize {
        /// The buffer size in bytes.
        size: usize,
        /// The page size in bytes.
        page_size: usize,
    },
    /// The buffer does not start on a 4 KiB boundary.
    #[error("shared memory base address is not 4096-byte aligned")]
    MisalignedBase,
    /// A page index beyond the end of the buffer.
    #[error("page {page} out of range (buffer has {num_pages} pages)")]
    PageOutOfRange {
        /// The requested page.
        page: usize,
        /// Pages in the buffer.
        num_pages: usize,
    },
    /// A chunk index beyond the number of chunks of the page's layout.
    #[error("chunk {chunk} out of range (page layout has {num_chunks} chunks)")]
    ChunkOutOfRange {
        /// The requested chunk index.
        chunk: usize,
        /// Chunks in the page's layout.
        num_chunks: usize,
    },
    /// The layout bits of a page header hold a reserved value (6 or 7).
    #[error("page header carries reserved layout value {bits}")]
    InvalidLayout {
        /// The 3 layout bits.
        bits: u32,
    },
    /// The page has no layout yet (whole-page header word is not partitioned).
    #[error("page {page} is not partitioned")]
    PageNotPartitioned {
        /// The page.
        page: usize,
    },
    /// Partitioning was attempted on a page that is not entirely free.
    #[error("page {page} is not free")]
    PageNotFree {
        /// The page.
        page: usize,
    },
    /// A transition found the chunk in another state than it requires.
    #[error("chunk {chunk} of page {page} is {found:?}, expected {expected:?}")]
    UnexpectedChunkState {
        /// The page.
        page: usize,
        /// The chunk index within the page.
        chunk: usize,
        /// The state the transition starts from.
        expected: ChunkState,
        /// The state found in the header word.
        found: ChunkState,
    },
    /// The header word kept changing under a compare-and-swap for too long
    /// (only a misbehaving peer can cause this).
    #[error("page {page} header word kept changing during a state transition")]
    Contention {
        /// The page.
        page: usize,
    },
}
