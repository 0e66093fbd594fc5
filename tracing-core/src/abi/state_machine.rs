//! The chunk state transitions, as compare-and-swap loops on a page header word.
//!
//! | operation | chunk state | who |
//! |---|---|---|
//! | [`try_partition_page`] | page word 0 → layout, all free | producer |
//! | [`try_acquire_chunk_for_writing`] | Free → BeingWritten | producer |
//! | [`release_chunk_as_complete`] | BeingWritten → Complete | producer |
//! | [`try_acquire_chunk_for_reading`] | Complete → BeingRead | service |
//! | [`release_chunk_as_free`] | BeingRead → Free (word → 0 when all free) | service |
//!
//! Every CAS is acquire-release, so whoever takes a chunk over sees all writes
//! made by its previous owner. Each loop only retries when the word changed
//! (another chunk of the page moved), and gives up after a bounded number of
//! attempts: a hostile peer flipping bits cannot hang the service.
//! The functions are generic over [`AtomicWord`] so `loom` checks this exact code.

use core::sync::atomic::Ordering;

use crate::abi::chunk_state::ChunkState;
use crate::abi::error::AbiError;
use crate::abi::page_header::PageHeaderWord;
use crate::abi::page_layout::PageLayout;
use crate::sync::{AtomicWord, spin_hint};

/// Compare-and-swap attempts before a transition reports [`AbiError::Contention`].
pub const MAX_CAS_ATTEMPTS: usize = 1024;

/// Partitions a free page (word 0) with `layout`. Fails with
/// [`AbiError::PageNotFree`] if the word is not 0.
pub fn try_partition_page<W: AtomicWord>(
    word: &W,
    page: usize,
    layout: PageLayout,
) -> Result<(), AbiError> {
    let new = PageHeaderWord::partitioned(layout).raw();
    word.compare_exchange(0, new, Ordering::AcqRel, Ordering::Acquire)
        .map(|_| ())
        .map_err(|_| AbiError::PageNotFree { page })
}

/// Moves chunk `chunk` of the page from `from` to `to` and returns the page
/// layout read from the word that the CAS replaced.
fn transition<W: AtomicWord>(
    word: &W,
    page: usize,
    chunk: usize,
    from: ChunkState,
    to: ChunkState,
) -> Result<(PageLayout, PageHeaderWord), AbiError> {
    let mut current = word.load(Ordering::Acquire);
    for _ in 0..MAX_CAS_ATTEMPTS {
        let old = PageHeaderWord(current);
        let layout = old.layout()?;
        let num_chunks = layout.num_chunks();
        if num_chunks == 0 {
            return Err(AbiError::PageNotPartitioned { page });
        }
        if chunk >= num_chunks {
            return Err(AbiError::ChunkOutOfRange { chunk, num_chunks });
        }
        let found = old.chunk_state(chunk);
        if found != from {
            return Err(AbiError::UnexpectedChunkState {
                page,
                chunk,
                expected: from,
                found,
            });
        }
        let mut new = old.with_chunk_state(chunk, to);
        if to == ChunkState::Free && new.all_chunks_in(num_chunks, ChunkState::Free) {
            // The last chunk of the page went free: de-partition the page.
            new = PageHeaderWord(0);
        }
        match word.compare_exchange(current, new.raw(), Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Ok((layout, new)),
            Err(actual) => {
                current = actual;
                spin_hint();
            }
        }
    }
    Err(AbiError::Contention { page })
}

/// Free → BeingWritten. Returns the page layout.
pub fn try_acquire_chunk_for_writing<W: AtomicWord>(
    word: &W,
    page: usize,
    chunk: usize,
) -> Result<PageLayout, AbiError> {
    transition(
        word,
        page,
        chunk,
        ChunkState::Free,
        ChunkState::BeingWritten,
    )
    .map(|(l, _)| l)
}

/// BeingWritten → Complete. Returns the new word.
pub fn release_chunk_as_complete<W: AtomicWord>(
    word: &W,
    page: usize,
    chunk: usize,
) -> Result<PageHeaderWord, AbiError> {
    transition(
        word,
        page,
        chunk,
        ChunkState::BeingWritten,
        ChunkState::Complete,
    )
    .map(|(_, w)| w)
}

/// Complete → BeingRead. Returns the page layout.
pub fn try_acquire_chunk_for_reading<W: AtomicWord>(
    word: &W,
    page: usize,
    chunk: usize,
) -> Result<PageLayout, AbiError> {
    transition(
        word,
        page,
        chunk,
        ChunkState::Complete,
        ChunkState::BeingRead,
    )
    .map(|(l, _)| l)
}

/// BeingRead → Free; the page is de-partitioned (word 0) when this was its
/// last non-free chunk. Returns the new word.
pub fn release_chunk_as_free<W: AtomicWord>(
    word: &W,
    page: usize,
    chunk: usize,
) -> Result<PageHeaderWord, AbiError> {
    transition(word, page, chunk, ChunkState::BeingRead, ChunkState::Free).map(|(_, w)| w)
}

#[cfg(all(test, not(zerotrace_loom)))]
mod tests {
    use core::sync::atomic::AtomicU32;

    use super::*;

    #[test]
    fn full_cycle_div2() {
        let w = AtomicU32::new(0);
        try_partition_page(&w, 0, PageLayout::Div2).unwrap();
        assert_eq!(w.load(Ordering::Relaxed), 0x2000_0000);
        assert_eq!(
            try_partition_page(&w, 0, PageLayout::Div1),
            Err(AbiError::PageNotFree { page: 0 })
        );
        assert_eq!(
            try_acquire_chunk_for_writing(&w, 0, 1),
            Ok(PageLayout::Div2)
        );
        assert_eq!(w.load(Ordering::Relaxed), 0x2000_0004);
        assert!(matches!(
            try_acquire_chunk_for_writing(&w, 0, 1),
            Err(AbiError::UnexpectedChunkState {
                found: ChunkState::BeingWritten,
                ..
            })
        ));
        assert_eq!(
            try_acquire_chunk_for_writing(&w, 0, 2),
            Err(AbiError::ChunkOutOfRange {
                chunk: 2,
                num_chunks: 2
            })
        );
        try_acquire_chunk_for_writing(&w, 0, 0).unwrap();
        release_chunk_as_complete(&w, 0, 1).unwrap();
        assert_eq!(w.load(Ordering::Relaxed), 0x2000_000D);
        try_acquire_chunk_for_reading(&w, 0, 1).unwrap();
        assert_eq!(w.load(Ordering::Relaxed), 0x2000_0009);
        // Chunk 0 still being written: page stays partitioned.
        assert_eq!(release_chunk_as_free(&w, 0, 1).unwrap().raw(), 0x2000_0001);
        release_chunk_as_complete(&w, 0, 0).unwrap();
        try_acquire_chunk_for_reading(&w, 0, 0).unwrap();
        // Last chunk freed: page de-partitioned.
        assert_eq!(release_chunk_as_free(&w, 0, 0).unwrap().raw(), 0);
        assert_eq!(w.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn wrong_states_are_errors() {
        let w = AtomicU32::new(0);
        assert_eq!(
            try_acquire_chunk_for_writing(&w, 3, 0),
            Err(AbiError::PageNotPartitioned { page: 3 })
        );
        try_partition_page(&w, 0, PageLayout::Div1).unwrap();
        assert!(release_chunk_as_complete(&w, 0, 0).is_err());
        assert!(try_acquire_chunk_for_reading(&w, 0, 0).is_err());
        assert!(release_chunk_as_free(&w, 0, 0).is_err());
        // Reserved layout values written by a hostile producer.
        let w = AtomicU32::new(0x7000_0003);
        assert_eq!(
            try_acquire_chunk_for_reading(&w, 0, 0),
            Err(AbiError::InvalidLayout { bits: 7 })
        );
        let w = AtomicU32::new(0x6FFF_FFFF);
        assert!(try_acquire_chunk_for_reading(&w, 0, 0).is_err());
    }
}
