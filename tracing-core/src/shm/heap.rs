//! [`HeapShm`]: a page-aligned, zeroed heap allocation used as a shared memory
//! buffer when producer and service live in one process (and in tests).

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::abi::MIN_PAGE_SIZE;
use crate::shm::error::ShmError;
use crate::shm::region::SharedMemoryRegion;

/// Heap memory aligned to 4 KiB, zero-filled at creation.
#[derive(Debug)]
pub struct HeapShm {
    ptr: NonNull<u8>,
    layout: Layout,
    /// Whether an arbiter has claimed the memory.
    claimed: AtomicBool,
}

// SAFETY: the allocation is plain memory; concurrent access goes through the
// ABI's atomics and chunk ownership, never through references to this value.
unsafe impl Send for HeapShm {}
// SAFETY: see `Send`; `&HeapShm` only exposes the raw pointer, the size, the
// claim flag (an atomic) and `snapshot` (an `unsafe fn` whose contract rules
// out racing writes).
unsafe impl Sync for HeapShm {}

impl HeapShm {
    /// Allocates `size` zeroed bytes (a non-zero multiple of 4 KiB).
    pub fn new(size: usize) -> Result<HeapShm, ShmError> {
        if size == 0 || size % MIN_PAGE_SIZE != 0 {
            return Err(ShmError::InvalidSize { size });
        }
        let layout = Layout::from_size_align(size, MIN_PAGE_SIZE)
            .map_err(|_| ShmError::InvalidSize { size })?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or(ShmError::AllocationFailed { size })?;
        Ok(HeapShm {
            ptr,
            layout,
            claimed: AtomicBool::new(false),
        })
    }
}

// SAFETY: the allocation is `layout.size()` bytes, 4096-aligned, and freed
// only in `drop`; it is private to this value, so `claimed` covers all of it.
unsafe impl SharedMemoryRegion for HeapShm {
    fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    fn size(&self) -> usize {
        self.layout.size()
    }

    fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::AcqRel)
    }
}

impl Drop for HeapShm {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with exactly this layout, freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let h = HeapShm::new(3 * 4096).unwrap();
        assert_eq!(h.as_ptr() as usize % 4096, 0);
        assert_eq!(h.size(), 12288);
        // SAFETY: nothing else accesses the fresh region.
        assert!(unsafe { h.snapshot() }.iter().all(|&b| b == 0));
        assert!(h.claim());
        assert!(!h.claim());
        assert!(HeapShm::new(0).is_err());
        assert!(HeapShm::new(5000).is_err());
    }
}
