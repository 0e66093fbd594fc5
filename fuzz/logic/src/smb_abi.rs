//! The SMB page and chunk view over a hostile mapping: the input lays out a
//! buffer of 1–4 pages of 4–32 KiB, then runs a program of rewrites (any
//! bytes anywhere, as the producer can), partitions, writer-side acquire and
//! complete, service-side acquire, copy and free, and scraping peeks.
//!
//! Invariants: no panic; a chunk taken for reading or writing lies inside
//! its own page and the mapping; a copied payload has the chunk's payload
//! size, a peeked one its layout's; every fragment parsed from a copy lies
//! inside it, in order; a chunk the reader took and freed is free unless the
//! program rewrote its page in between.

use std::sync::Arc;

use zerotrace_core::abi::{ChunkHeader, ChunkState, FragmentIter, PageLayout, SharedMemoryAbi};
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};

use crate::support::{Cursor, scribble};

fn check_fragments(payload: &[u8], count: u16) {
    let mut end = 0;
    for f in FragmentIter::new(payload, count).flatten() {
        assert!(f.offset >= end && f.offset + f.data.len() <= payload.len());
        end = f.offset + f.data.len();
    }
}

/// The `smb_abi` target.
pub fn smb_abi(data: &[u8]) {
    let mut c = Cursor(data);
    let (Some(k), Some(p)) = (c.byte(), c.byte()) else {
        return;
    };
    let page_size = 4096usize << (k % 4);
    let pages = usize::from(p % 4) + 1;
    let size = page_size * pages;
    let Ok(region) = HeapShm::new(size).map(Arc::new) else {
        return;
    };
    // SAFETY: `region` outlives the view (both live to the end of this
    // function); all access below goes through the view or `scribble`.
    let Ok(abi) = (unsafe { SharedMemoryAbi::new(region.as_ptr(), size, page_size) }) else {
        return;
    };
    let lo = region.as_ptr() as usize;
    let mut payload = Vec::new();
    while let Some(op) = c.byte() {
        let page = usize::from(c.byte().unwrap_or(0)) % (pages + 1); // one past the end too
        let index = usize::from(c.byte().unwrap_or(0) % 16);
        match op % 6 {
            0 => {
                let offset = u16::from_le_bytes([c.byte().unwrap_or(0), c.byte().unwrap_or(0)]);
                scribble(&region, page * page_size + usize::from(offset), c.piece());
            }
            1 => {
                let Ok(chunk) = abi.try_acquire_chunk_for_reading(page, index) else {
                    continue;
                };
                let (begin, end) = (chunk.begin() as usize, chunk.end() as usize);
                assert!(begin >= lo + page * page_size && end <= lo + (page + 1) * page_size);
                let header = chunk.header();
                chunk.copy_payload(&mut payload);
                assert_eq!(payload.len(), chunk.payload_size());
                check_fragments(&payload, header.packets.count);
                let rewritten = c.byte().is_some_and(|b| b % 4 == 0);
                if rewritten {
                    scribble(&region, page * page_size, c.bytes(4));
                }
                if abi.release_chunk_as_free(chunk).is_ok() && !rewritten {
                    // Free, or its page is no longer partitioned (the last
                    // chunk of a page frees the page).
                    assert!(
                        abi.is_page_free(page)
                            || abi.chunk_state(page, index) == Ok(ChunkState::Free),
                        "a freed chunk is free"
                    );
                }
            }
            2 => {
                let bits = u32::from(c.byte().unwrap_or(0) % 8);
                if let Ok(layout) = PageLayout::from_bits(bits) {
                    let _ = abi.try_partition_page(page, layout);
                }
            }
            3 => {
                let mut h = [0u8; 8];
                h.copy_from_slice(&{
                    let mut b = c.bytes(8).to_vec();
                    b.resize(8, 0);
                    b
                });
                let Ok(mut chunk) =
                    abi.try_acquire_chunk_for_writing(page, index, &ChunkHeader::from_bytes(h))
                else {
                    continue;
                };
                assert!(chunk.end() as usize <= lo + (page + 1) * page_size);
                let bytes = c.piece();
                let fits = bytes.len() <= chunk.payload_size();
                assert_eq!(chunk.write_payload(0, bytes), fits);
                let _ = abi.release_chunk_as_complete(chunk);
            }
            4 => {
                // SAFETY: single-threaded: nothing writes the buffer
                // during the copy.
                if let Some(h) = unsafe { abi.peek_chunk(page, index, &mut payload) } {
                    assert!(payload.len() + 16 <= page_size);
                    check_fragments(&payload, h.packets.count);
                }
            }
            _ => {
                let _ = abi.page_header(page);
                let _ = abi.free_chunks(page);
                let _ = abi.is_page_free(page);
                let _ = abi.chunk_state(page, index);
            }
        }
    }
}
