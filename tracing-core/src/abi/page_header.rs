//! The 32-bit page header word: layout in bits 28–30 and fourteen 2-bit chunk
//! states in bits 0–27 (chunk *i* in bits `2i+1..=2i`); bit 31 is reserved.
//!
//! This file only does bit arithmetic on a snapshot of the word; the atomic
//! transitions that change it live in `state_machine.rs`. A whole word of 0
//! means "page free and not partitioned".

use crate::abi::chunk_state::ChunkState;
use crate::abi::error::AbiError;
use crate::abi::page_layout::{MAX_CHUNKS_PER_PAGE, PageLayout};

/// Shift of the layout field.
pub const LAYOUT_SHIFT: u32 = 28;
/// Mask of the layout field.
pub const LAYOUT_MASK: u32 = 0x7000_0000;
#[cfg(test)]
/// Mask of all fourteen chunk-state fields.
pub const ALL_CHUNKS_MASK: u32 = 0x0FFF_FFFF;

/// A snapshot of a page header word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PageHeaderWord(pub u32);

impl PageHeaderWord {
    /// The word of a page just partitioned with `layout`: all chunks free.
    #[inline]
    pub const fn partitioned(layout: PageLayout) -> PageHeaderWord {
        PageHeaderWord(layout.bits() << LAYOUT_SHIFT)
    }

    /// The raw value.
    #[inline]
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// The page layout; reserved layout values are an error.
    #[inline]
    pub const fn layout(self) -> Result<PageLayout, AbiError> {
        PageLayout::from_bits((self.0 & LAYOUT_MASK) >> LAYOUT_SHIFT)
    }

    /// Whether the page is free: not partitioned and no chunk state set.
    #[inline]
    pub const fn is_free(self) -> bool {
        self.0 == 0
    }

    /// State of chunk `index` (`index` < 14; higher indexes read as Free).
    #[inline]
    pub const fn chunk_state(self, index: usize) -> ChunkState {
        if index >= MAX_CHUNKS_PER_PAGE {
            return ChunkState::Free;
        }
        ChunkState::from_bits(self.0 >> (2 * index))
    }

    /// The word with chunk `index` (< 14) set to `state`.
    #[inline]
    pub const fn with_chunk_state(self, index: usize, state: ChunkState) -> PageHeaderWord {
        if index >= MAX_CHUNKS_PER_PAGE {
            return self;
        }
        let shift = 2 * index as u32;
        PageHeaderWord((self.0 & !(0b11 << shift)) | (state.bits() << shift))
    }

    /// Whether every chunk of a `num_chunks`-chunk layout is in `state`.
    #[inline]
    pub const fn all_chunks_in(self, num_chunks: usize, state: ChunkState) -> bool {
        let mut i = 0;
        while i < num_chunks {
            if self.chunk_state(i).bits() != state.bits() {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Bit `i` set ⇔ chunk `i` (of the page's layout) is free. 0 for an
    /// unpartitioned page or a reserved layout.
    #[inline]
    pub const fn free_chunks_mask(self) -> u32 {
        let n = match self.layout() {
            Ok(l) => l.num_chunks(),
            Err(_) => 0,
        };
        let mut mask = 0;
        let mut i = 0;
        while i < n {
            if matches!(self.chunk_state(i), ChunkState::Free) {
                mask |= 1 << i;
            }
            i += 1;
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known-answer words, built by hand from the documented bit layout.
    #[test]
    fn known_words() {
        assert_eq!(
            PageHeaderWord::partitioned(PageLayout::Div1).raw(),
            0x1000_0000
        );
        assert_eq!(
            PageHeaderWord::partitioned(PageLayout::Div2).raw(),
            0x2000_0000
        );
        assert_eq!(
            PageHeaderWord::partitioned(PageLayout::Div4).raw(),
            0x3000_0000
        );
        assert_eq!(
            PageHeaderWord::partitioned(PageLayout::Div7).raw(),
            0x4000_0000
        );
        assert_eq!(
            PageHeaderWord::partitioned(PageLayout::Div14).raw(),
            0x5000_0000
        );

        let w = PageHeaderWord::partitioned(PageLayout::Div1)
            .with_chunk_state(0, ChunkState::BeingWritten);
        assert_eq!(w.raw(), 0x1000_0001);
        assert_eq!(
            w.with_chunk_state(0, ChunkState::Complete).raw(),
            0x1000_0003
        );
        assert_eq!(
            w.with_chunk_state(0, ChunkState::BeingRead).raw(),
            0x1000_0002
        );

        // Div4: chunk 0 complete, chunk 1 being written, chunk 3 being read.
        let w = PageHeaderWord::partitioned(PageLayout::Div4)
            .with_chunk_state(0, ChunkState::Complete)
            .with_chunk_state(1, ChunkState::BeingWritten)
            .with_chunk_state(3, ChunkState::BeingRead);
        assert_eq!(w.raw(), 0x3000_0087);
        assert_eq!(w.free_chunks_mask(), 0b0100);

        // Div14, all complete: layout 5 and 28 bits of ones.
        let mut w = PageHeaderWord::partitioned(PageLayout::Div14);
        for i in 0..14 {
            w = w.with_chunk_state(i, ChunkState::Complete);
        }
        assert_eq!(w.raw(), 0x5FFF_FFFF);
        assert_eq!(w.raw() & ALL_CHUNKS_MASK, ALL_CHUNKS_MASK);
        assert!(w.all_chunks_in(14, ChunkState::Complete));
        assert_eq!(w.chunk_state(13), ChunkState::Complete);
    }

    #[test]
    fn hostile_words_do_not_panic() {
        for raw in [u32::MAX, 0x7000_0000, 0x6000_0001, 0x8000_0000] {
            let w = PageHeaderWord(raw);
            let _ = w.layout();
            for i in 0..20 {
                let _ = w.chunk_state(i);
                let _ = w.with_chunk_state(i, ChunkState::Free);
            }
            let _ = w.free_chunks_mask();
        }
        assert!(PageHeaderWord(0x7000_0000).layout().is_err());
        assert_eq!(PageHeaderWord(0x6FFF_FFFF).free_chunks_mask(), 0);
        assert!(PageHeaderWord(0).is_free());
        assert_eq!(PageHeaderWord(0).free_chunks_mask(), 0);
        assert_eq!(
            PageHeaderWord::partitioned(PageLayout::Div7).free_chunks_mask(),
            0x7F
        );
    }
}
