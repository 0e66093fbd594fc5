//! [`SharedMemoryAbi`]: the page/chunk view over a mapped shared memory buffer.
//!
//! Both sides use it: the producer partitions pages and acquires chunks for
//! writing, the service acquires complete chunks for reading and frees them.
//! Every index and every value read from the buffer is validated, so a hostile
//! peer can make operations fail (typed [`AbiError`]) but never make this code
//! panic or touch memory outside the mapping: chunk geometry is computed from
//! the layout of the very word a successful CAS replaced, and always lies
//! inside its page.

use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::abi::atomic_view::{atomic_u16, atomic_u32};
use crate::abi::chunk::Chunk;
use crate::abi::chunk_header::{CHUNK_HEADER_SIZE, ChunkHeader, Packets};
use crate::abi::chunk_state::ChunkState;
use crate::abi::error::AbiError;
use crate::abi::page_header::PageHeaderWord;
use crate::abi::page_layout::{MIN_PAGE_SIZE, PageLayout, validate_page_size};
use crate::abi::shared_copy::copy_from_shared;
use crate::abi::state_machine;

/// A validated view of a shared memory buffer cut into pages.
#[derive(Debug)]
pub struct SharedMemoryAbi {
    base: NonNull<u8>,
    size: usize,
    page_size: usize,
    num_pages: usize,
}

// SAFETY: all shared state is reached through atomics (page and chunk header
// words) or through `Chunk`s, which the ABI state machine hands to one owner
// at a time. The raw base pointer itself is never written through directly.
unsafe impl Send for SharedMemoryAbi {}
// SAFETY: see `Send`; every method takes `&self` and only performs atomic
// operations on shared words.
unsafe impl Sync for SharedMemoryAbi {}

impl SharedMemoryAbi {
    /// Views `size` bytes at `base` as pages of `page_size`.
    ///
    /// # Safety
    /// `base..base+size` must stay mapped, readable and writable for as long as
    /// this value lives (every [`Chunk`] borrows it), and the page and chunk
    /// headers in it must only be accessed atomically by everyone.
    pub unsafe fn new(
        base: *mut u8,
        size: usize,
        page_size: usize,
    ) -> Result<SharedMemoryAbi, AbiError> {
        validate_page_size(page_size)?;
        if size == 0 || size % page_size != 0 {
            return Err(AbiError::InvalidBufferSize { size, page_size });
        }
        let base = NonNull::new(base).ok_or(AbiError::MisalignedBase)?;
        if base.as_ptr() as usize % MIN_PAGE_SIZE != 0 {
            return Err(AbiError::MisalignedBase);
        }
        Ok(SharedMemoryAbi {
            base,
            size,
            page_size,
            num_pages: size / page_size,
        })
    }

    /// Start of the buffer.
    pub fn base(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    /// Buffer size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Number of pages.
    pub fn num_pages(&self) -> usize {
        self.num_pages
    }

    fn page_start(&self, page: usize) -> Result<*mut u8, AbiError> {
        if page >= self.num_pages {
            return Err(AbiError::PageOutOfRange {
                page,
                num_pages: self.num_pages,
            });
        }
        // SAFETY: page < num_pages, so the offset stays inside the mapping.
        Ok(unsafe { self.base.as_ptr().add(page * self.page_size) })
    }

    fn page_word(&self, page: usize) -> Result<&AtomicU32, AbiError> {
        let p = self.page_start(page)?;
        // SAFETY: a page start is 4 KiB aligned (base is, page size is a
        // multiple of 4 KiB), lies in the mapping that outlives `self`, and
        // the header word is only accessed atomically (contract of `new`).
        Ok(unsafe { atomic_u32(p) })
    }

    /// A snapshot of the page header word (acquire).
    pub fn page_header(&self, page: usize) -> Result<PageHeaderWord, AbiError> {
        Ok(PageHeaderWord(
            self.page_word(page)?.load(Ordering::Acquire),
        ))
    }

    /// Whether the page is entirely free (word 0). Out-of-range pages are not.
    pub fn is_page_free(&self, page: usize) -> bool {
        self.page_header(page).is_ok_and(PageHeaderWord::is_free)
    }

    /// State of one chunk (validating the page's layout and the index).
    pub fn chunk_state(&self, page: usize, chunk: usize) -> Result<ChunkState, AbiError> {
        let w = self.page_header(page)?;
        let num_chunks = w.layout()?.num_chunks();
        if chunk >= num_chunks {
            return Err(AbiError::ChunkOutOfRange { chunk, num_chunks });
        }
        Ok(w.chunk_state(chunk))
    }

    /// Bit `i` set ⇔ chunk `i` of the page is free (0 if unpartitioned or invalid).
    pub fn free_chunks(&self, page: usize) -> u32 {
        self.page_header(page)
            .map_or(0, PageHeaderWord::free_chunks_mask)
    }

    /// Partitions a free page with `layout` (page word 0 → layout).
    pub fn try_partition_page(&self, page: usize, layout: PageLayout) -> Result<(), AbiError> {
        if layout == PageLayout::NotPartitioned {
            return Err(AbiError::InvalidLayout { bits: 0 });
        }
        state_machine::try_partition_page(self.page_word(page)?, page, layout)
    }

    fn make_chunk(
        &self,
        page: usize,
        layout: PageLayout,
        index: usize,
    ) -> Result<Chunk<'_>, AbiError> {
        let start = self.page_start(page)?;
        let size = layout.chunk_size(self.page_size);
        let offset = layout.chunk_offset(self.page_size, index);
        let num_chunks = layout.num_chunks();
        if index >= num_chunks || offset + size > self.page_size || size < 8 {
            return Err(AbiError::ChunkOutOfRange {
                chunk: index,
                num_chunks,
            });
        }
        // SAFETY: offset + size ≤ page_size keeps the chunk inside this page.
        let begin = unsafe { NonNull::new_unchecked(start.add(offset)) };
        // SAFETY: the chunk is 4-byte aligned (page aligned + 8 + 4·k), at least
        // 8 bytes, inside the mapping; the caller just acquired it.
        Ok(unsafe { Chunk::new(begin, size, page, index) })
    }

    /// Copies the header and payload of chunk `index` of `page` without
    /// taking it, whatever its state (scraping). Its writer may still be
    /// writing it, so everything is read once with atomic loads and may be
    /// torn: the caller treats the copy like any untrusted chunk. `None` for
    /// a page, layout or index that is not valid now.
    ///
    /// It is `unsafe` because it reads a chunk it does not own: a
    /// [`TraceWriter`](crate::producer::TraceWriter) of this process writes
    /// its chunk with plain stores, and an atomic load racing with a plain
    /// store to the same location is a data race.
    ///
    /// ```compile_fail
    /// # fn f(abi: &zerotrace_core::abi::SharedMemoryAbi) {
    /// let mut payload = Vec::new();
    /// abi.peek_chunk(0, 0, &mut payload); // error: call to unsafe function
    /// # }
    /// ```
    ///
    /// # Safety
    /// No thread of this process may write the chunk's memory through this
    /// view's mapping (the `base` given to [`SharedMemoryAbi::new`]) during
    /// the call, other than with atomic stores. Writes by another process,
    /// or through another mapping of the same memory object (the embedded
    /// service maps a producer's memfd at an address of its own, even when
    /// that producer is in this process), are what the atomic loads
    /// tolerate: they only make the copy torn.
    pub unsafe fn peek_chunk(
        &self,
        page: usize,
        index: usize,
        payload: &mut Vec<u8>,
    ) -> Option<ChunkHeader> {
        let layout = self.page_header(page).ok()?.layout().ok()?;
        let start = self.page_start(page).ok()?;
        let size = layout.chunk_size(self.page_size);
        let offset = layout.chunk_offset(self.page_size, index);
        if index >= layout.num_chunks() || offset + size > self.page_size || size < 8 {
            return None;
        }
        // SAFETY: `offset + size <= page_size` keeps the chunk inside this
        // page of the mapping (alive while `self` is, contract of `new`).
        let begin = unsafe { start.add(offset) };
        // SAFETY: the three header fields are 4- and 2-byte aligned (a chunk
        // starts 4-aligned) inside the chunk, and are only ever accessed
        // atomically (contract of `new`).
        let (chunk_id, writer_id, packets) = unsafe {
            (
                atomic_u32(begin).load(Ordering::Relaxed),
                atomic_u16(begin.add(4)).load(Ordering::Relaxed),
                atomic_u16(begin.add(6)).load(Ordering::Acquire),
            )
        };
        payload.clear();
        payload.resize(size - CHUNK_HEADER_SIZE, 0);
        // SAFETY: the payload lies in the mapping; no thread of this process
        // writes it through this mapping during the call (caller contract),
        // and other writers' stores only make the copy torn.
        unsafe { copy_from_shared(begin.add(CHUNK_HEADER_SIZE), payload) };
        Some(ChunkHeader {
            chunk_id,
            writer_id,
            packets: Packets::from_raw(packets),
        })
    }

    /// Free → BeingWritten, then writes `header` into the chunk (ids relaxed,
    /// `packets` release).
    pub fn try_acquire_chunk_for_writing(
        &self,
        page: usize,
        chunk: usize,
        header: &ChunkHeader,
    ) -> Result<Chunk<'_>, AbiError> {
        let layout =
            state_machine::try_acquire_chunk_for_writing(self.page_word(page)?, page, chunk)?;
        let mut c = self.make_chunk(page, layout, chunk)?;
        c.set_header(header);
        Ok(c)
    }

    /// Checks that `chunk` lies in this buffer, in the page it names: a
    /// chunk of another buffer must not change this buffer's states.
    fn check_owned(&self, chunk: &Chunk<'_>) -> Result<usize, AbiError> {
        let page = chunk.page_index();
        let offset = (chunk.begin() as usize).wrapping_sub(self.base.as_ptr() as usize);
        if offset >= self.size || offset / self.page_size != page {
            return Err(AbiError::ForeignChunk { page });
        }
        Ok(page)
    }

    /// BeingWritten → Complete: hands the chunk to the service. Returns its page.
    pub fn release_chunk_as_complete(&self, chunk: Chunk<'_>) -> Result<usize, AbiError> {
        let page = self.check_owned(&chunk)?;
        state_machine::release_chunk_as_complete(self.page_word(page)?, page, chunk.chunk_index())?;
        Ok(page)
    }

    /// Complete → BeingRead (service side).
    pub fn try_acquire_chunk_for_reading(
        &self,
        page: usize,
        chunk: usize,
    ) -> Result<Chunk<'_>, AbiError> {
        let layout =
            state_machine::try_acquire_chunk_for_reading(self.page_word(page)?, page, chunk)?;
        self.make_chunk(page, layout, chunk)
    }

    /// BeingRead → Free (service side): clears the chunk header first; the page
    /// is de-partitioned when all its chunks are free.
    pub fn release_chunk_as_free(&self, mut chunk: Chunk<'_>) -> Result<(), AbiError> {
        let page = self.check_owned(&chunk)?;
        chunk.clear_header();
        state_machine::release_chunk_as_free(self.page_word(page)?, page, chunk.chunk_index())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::chunk_header::{ChunkFlags, Packets};
    use crate::shm::HeapShm;
    use crate::shm::SharedMemoryRegion;

    fn abi(shm: &HeapShm, page: usize) -> SharedMemoryAbi {
        // SAFETY: the heap region outlives the view within each test.
        unsafe { SharedMemoryAbi::new(shm.as_ptr(), shm.size(), page) }.unwrap()
    }

    #[test]
    fn validates_geometry() {
        let shm = HeapShm::new(64 * 1024).unwrap();
        // SAFETY: the region outlives the views (never used to access memory on error).
        unsafe {
            assert!(SharedMemoryAbi::new(shm.as_ptr(), 64 * 1024, 3000).is_err());
            assert!(SharedMemoryAbi::new(shm.as_ptr(), 6000, 4096).is_err());
            assert!(SharedMemoryAbi::new(shm.as_ptr(), 0, 4096).is_err());
            assert_eq!(
                SharedMemoryAbi::new(shm.as_ptr().add(8), 4096, 4096).err(),
                Some(AbiError::MisalignedBase)
            );
        }
        let a = abi(&shm, 16 * 1024);
        assert_eq!(a.num_pages(), 4);
        assert!(matches!(
            a.page_header(4),
            Err(AbiError::PageOutOfRange { .. })
        ));
    }

    #[test]
    fn writes_header_bytes_in_place() {
        let shm = HeapShm::new(8192).unwrap();
        let a = abi(&shm, 4096);
        a.try_partition_page(1, PageLayout::Div4).unwrap();
        let hdr = ChunkHeader {
            chunk_id: 0x0102_0304,
            writer_id: 5,
            packets: Packets {
                count: 1,
                flags: ChunkFlags::FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK,
            },
        };
        let c = a.try_acquire_chunk_for_writing(1, 2, &hdr).unwrap();
        assert_eq!(c.size(), 1020);
        assert_eq!(
            c.begin() as usize - shm.as_ptr() as usize,
            4096 + 8 + 2 * 1020
        );
        // SAFETY: single-threaded test; nothing writes during the copy.
        let bytes = unsafe { shm.snapshot() };
        assert_eq!(&bytes[4096..4100], &0x3000_0010u32.to_le_bytes());
        let off = 4096 + 8 + 2040;
        assert_eq!(&bytes[off..off + 8], &[4, 3, 2, 1, 5, 0, 1, 4]);
        assert_eq!(a.release_chunk_as_complete(c), Ok(1));
        assert_eq!(a.chunk_state(1, 2), Ok(ChunkState::Complete));
        let r = a.try_acquire_chunk_for_reading(1, 2).unwrap();
        assert_eq!(r.header(), hdr);
        a.release_chunk_as_free(r).unwrap();
        assert!(a.is_page_free(1));
        // SAFETY: single-threaded test; nothing writes during the copy.
        let bytes = unsafe { shm.snapshot() };
        assert_eq!(&bytes[off..off + 8], &[0; 8]);
    }

    #[test]
    fn hostile_words_are_errors() {
        let shm = HeapShm::new(8192).unwrap();
        let a = abi(&shm, 4096);
        for raw in [0xFFFF_FFFFu32, 0x7000_0003, 0x1000_0002, 0x5000_0000] {
            // SAFETY: page 0 header word, 4-aligned, only accessed atomically here.
            unsafe { atomic_u32(shm.as_ptr()) }.store(raw, Ordering::Relaxed);
            for chunk in 0..16 {
                let _ = a.chunk_state(0, chunk);
                if let Ok(c) = a.try_acquire_chunk_for_reading(0, chunk) {
                    assert!(c.begin() as usize + c.size() <= shm.as_ptr() as usize + 4096);
                    let _ = a.release_chunk_as_free(c);
                }
            }
        }
        assert!(a.try_acquire_chunk_for_reading(9, 0).is_err());
    }
}
