//! [`GarbageChunk`]: the private scratch memory a [`TraceWriter`] writes into
//! while it drops packets (no chunk of the shared memory buffer was free).
//!
//! The stream writer keeps raw pointers into whatever slice it was handed,
//! possibly across many hand-outs of this same memory (a dropped packet wraps
//! around in it). Re-borrowing a `Box<[u8]>` mutably for every hand-out would
//! invalidate the pointers of the previous one under Rust's aliasing rules,
//! so the allocation is turned into a raw pointer once, every slice is
//! derived from that pointer, and the box is rebuilt only to free it.
//!
//! [`TraceWriter`]: crate::producer::TraceWriter

use core::ptr::NonNull;

use protozero::Slice;

/// A heap buffer handed out as a writer slice any number of times.
pub(crate) struct GarbageChunk {
    ptr: NonNull<[u8]>,
}

// SAFETY: the buffer is owned by this value alone (it came from a `Box`), and
// moving it to another thread moves that ownership; it is not `Sync`.
unsafe impl Send for GarbageChunk {}

impl GarbageChunk {
    /// A zeroed buffer of `size` bytes.
    pub(crate) fn new(size: usize) -> GarbageChunk {
        let boxed: Box<[u8]> = vec![0u8; size].into_boxed_slice();
        GarbageChunk {
            ptr: NonNull::from(Box::leak(boxed)),
        }
    }

    /// First byte of the buffer.
    pub(crate) fn begin(&self) -> *mut u8 {
        self.ptr.as_ptr().cast::<u8>()
    }

    /// The whole buffer as a writer slice. Slices from earlier calls stay
    /// valid: all of them derive from the one pointer taken at creation.
    pub(crate) fn slice(&self) -> Slice {
        // SAFETY: `ptr` is the live allocation owned by `self` (freed only in
        // `drop`), `len` bytes long; the writer that owns `self` is the only
        // one writing into it.
        unsafe { Slice::from_raw_parts(self.begin(), self.ptr.len()) }
    }
}

impl Drop for GarbageChunk {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `Box::leak` in `new` and is freed only here.
        drop(unsafe { Box::from_raw(self.ptr.as_ptr()) });
    }
}

impl core::fmt::Debug for GarbageChunk {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GarbageChunk")
            .field("len", &self.ptr.len())
            .finish()
    }
}
