//! How a page is cut into chunks: the layout code stored in bits 28–30 of the
//! page header word, and the chunk geometry it implies.
//!
//! Chunk size is `(page_size − 8) / N` rounded down to a multiple of 4, so every
//! chunk starts 4-byte aligned (its header holds atomics) and the remainder at
//! the end of the page is left unused.

use crate::abi::error::AbiError;

/// Size of the page header (the state word plus a reserved word).
pub const PAGE_HEADER_SIZE: usize = 8;
/// Smallest page the ABI allows.
pub const MIN_PAGE_SIZE: usize = 4096;
/// Largest page the ABI allows (chunk sizes must fit in a u16).
pub const MAX_PAGE_SIZE: usize = 65536;
/// Most chunks a page can hold (14 two-bit states fill 28 bits).
pub const MAX_CHUNKS_PER_PAGE: usize = 14;

/// Page partitioning, as encoded in the page header word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PageLayout {
    /// The page is free and not cut into chunks.
    NotPartitioned = 0,
    /// One chunk per page (what writers use by default).
    Div1 = 1,
    /// Two chunks per page.
    Div2 = 2,
    /// Four chunks per page.
    Div4 = 3,
    /// Seven chunks per page.
    Div7 = 4,
    /// Fourteen chunks per page.
    Div14 = 5,
}

impl PageLayout {
    /// Every layout that actually holds chunks, smallest chunk count first.
    pub const PARTITIONED: [PageLayout; 5] = [
        PageLayout::Div1,
        PageLayout::Div2,
        PageLayout::Div4,
        PageLayout::Div7,
        PageLayout::Div14,
    ];

    /// Decodes the 3 layout bits (already shifted down); 6 and 7 are reserved.
    #[inline]
    pub const fn from_bits(bits: u32) -> Result<PageLayout, AbiError> {
        match bits {
            0 => Ok(PageLayout::NotPartitioned),
            1 => Ok(PageLayout::Div1),
            2 => Ok(PageLayout::Div2),
            3 => Ok(PageLayout::Div4),
            4 => Ok(PageLayout::Div7),
            5 => Ok(PageLayout::Div14),
            _ => Err(AbiError::InvalidLayout { bits }),
        }
    }

    /// The 3-bit encoding (not yet shifted into place).
    #[inline]
    pub const fn bits(self) -> u32 {
        self as u32
    }

    /// Number of chunks in a page with this layout.
    #[inline]
    pub const fn num_chunks(self) -> usize {
        match self {
            PageLayout::NotPartitioned => 0,
            PageLayout::Div1 => 1,
            PageLayout::Div2 => 2,
            PageLayout::Div4 => 4,
            PageLayout::Div7 => 7,
            PageLayout::Div14 => 14,
        }
    }

    /// Bytes per chunk (chunk header included) for a page of `page_size`
    /// bytes; 0 for an unpartitioned page.
    #[inline]
    pub const fn chunk_size(self, page_size: usize) -> usize {
        let n = self.num_chunks();
        if n == 0 || page_size < PAGE_HEADER_SIZE {
            return 0;
        }
        ((page_size - PAGE_HEADER_SIZE) / n) & !3
    }

    /// Offset of chunk `index` from the start of its page.
    #[inline]
    pub const fn chunk_offset(self, page_size: usize, index: usize) -> usize {
        PAGE_HEADER_SIZE + index * self.chunk_size(page_size)
    }
}

/// Checks the ABI rule for page sizes: a multiple of 4 KiB in 4 KiB ..= 64 KiB.
pub const fn validate_page_size(page_size: usize) -> Result<(), AbiError> {
    if page_size < MIN_PAGE_SIZE || page_size > MAX_PAGE_SIZE || page_size % MIN_PAGE_SIZE != 0 {
        Err(AbiError::InvalidPageSize { page_size })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunk sizes of every layout and page size, row by row (the table
    /// in `tracing-core/ABI.md`).
    #[test]
    fn chunk_size_table() {
        let table: [(usize, [usize; 5]); 5] = [
            (4096, [4088, 2044, 1020, 584, 292]),
            (8192, [8184, 4092, 2044, 1168, 584]),
            (16384, [16376, 8188, 4092, 2336, 1168]),
            (32768, [32760, 16380, 8188, 4680, 2340]),
            (65536, [65528, 32764, 16380, 9360, 4680]),
        ];
        for (page, sizes) in table {
            for (layout, want) in PageLayout::PARTITIONED.iter().zip(sizes) {
                assert_eq!(layout.chunk_size(page), want, "{page} {layout:?}");
                let last = layout.chunk_offset(page, layout.num_chunks() - 1);
                assert!(last + want <= page);
                assert_eq!(last % 4, 0);
            }
        }
        assert_eq!(PageLayout::NotPartitioned.chunk_size(4096), 0);
    }

    #[test]
    fn layout_codes() {
        let codes: Vec<u32> = PageLayout::PARTITIONED.iter().map(|l| l.bits()).collect();
        assert_eq!(codes, [1, 2, 3, 4, 5]);
        for b in 0..6 {
            assert_eq!(PageLayout::from_bits(b).map(|l| l.bits()), Ok(b));
        }
        assert_eq!(
            PageLayout::from_bits(6),
            Err(AbiError::InvalidLayout { bits: 6 })
        );
        assert_eq!(
            PageLayout::from_bits(7),
            Err(AbiError::InvalidLayout { bits: 7 })
        );
    }

    #[test]
    fn page_sizes() {
        for ok in [4096, 8192, 12288, 32768, 65536] {
            assert_eq!(validate_page_size(ok), Ok(()));
        }
        for bad in [0, 4095, 4097, 6000, 69632, 131072] {
            assert!(validate_page_size(bad).is_err(), "{bad}");
        }
    }
}
