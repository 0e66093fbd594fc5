//! [`OwnedSlice`]: heap memory for a [`Delegate`](crate::Delegate) to hand out.
//!
//! A writer keeps raw pointers into every slice it was given (its cursor and
//! the length slots of open messages). Under Rust's aliasing rules those
//! pointers stay usable only while nobody asserts fresh access to the memory
//! through a reference: re-borrowing a `Box<[u8]>` or `Vec<u8>` mutably to
//! hand it out again, moving a `Box`, or reading it back through a reference
//! taken from the box would each invalidate them. `OwnedSlice` turns the
//! allocation into one raw pointer at creation and derives everything from
//! it: slices handed out, reads, fills and the final free.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::ptr::NonNull;

use crate::delegate::Slice;

/// A heap buffer owned through a raw pointer; see the module docs.
pub struct OwnedSlice {
    ptr: NonNull<[u8]>,
}

// SAFETY: the allocation is owned by this value alone (it came from a `Box`);
// moving the value to another thread moves that ownership.
unsafe impl Send for OwnedSlice {}

impl OwnedSlice {
    /// A buffer of `len` bytes, each set to `fill`.
    pub fn new(len: usize, fill: u8) -> OwnedSlice {
        let boxed: Box<[u8]> = vec![fill; len].into_boxed_slice();
        OwnedSlice {
            ptr: NonNull::from(Box::leak(boxed)),
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.ptr.len()
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.ptr.len() == 0
    }

    /// First byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr().cast::<u8>()
    }

    /// The whole buffer as a writer slice. Slices from earlier calls stay
    /// valid: all of them derive from the one pointer taken at creation.
    pub fn slice(&self) -> Slice {
        // SAFETY: `ptr` is the live allocation owned by `self`, freed only in
        // `drop`.
        unsafe { Slice::from_raw_parts(self.as_ptr(), self.len()) }
    }

    /// Offset of `p` from the start, if it lies in the buffer or one past it.
    pub fn offset_of(&self, p: *const u8) -> Option<usize> {
        let begin = self.as_ptr() as usize;
        let p = p as usize;
        (p >= begin && p <= begin + self.len()).then(|| p - begin)
    }

    /// Appends the first `len` bytes (at most the whole buffer) to `out`.
    pub fn extend_into(&self, len: usize, out: &mut Vec<u8>) {
        let len = len.min(self.len());
        // SAFETY: `len` bytes of the live allocation; the shared view lives
        // only for this copy, during which `&self` is held.
        out.extend_from_slice(unsafe { core::slice::from_raw_parts(self.as_ptr(), len) });
    }

    /// Sets every byte to `value`.
    pub fn fill(&mut self, value: u8) {
        // SAFETY: the whole live allocation, owned by `self`.
        unsafe { core::ptr::write_bytes(self.as_ptr(), value, self.len()) };
    }
}

impl Drop for OwnedSlice {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `Box::leak` in `new` and is freed only here.
        drop(unsafe { Box::from_raw(self.ptr.as_ptr()) });
    }
}

impl core::fmt::Debug for OwnedSlice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OwnedSlice")
            .field("len", &self.len())
            .finish()
    }
}
