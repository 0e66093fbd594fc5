//! [`SliceBuffer`]: a delegate over one caller-provided buffer. Running out of
//! room is reported as [`WriteError::OutOfSpace`], never a panic.
//!
//! The buffer is kept as a raw pointer with the borrow's lifetime, not as a
//! `&mut [u8]`: the writer holds raw pointers into it, and moving a `&mut`
//! (as building a [`Writer`](crate::Writer) around this delegate does) would
//! assert exclusive access again and invalidate them under Rust's aliasing
//! rules.

use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::delegate::{Delegate, OpenSlots, Slice};
use crate::error::WriteError;

/// One fixed slice of caller memory.
#[derive(Debug)]
pub struct SliceBuffer<'a> {
    buf: NonNull<[u8]>,
    handed_out: bool,
    borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: the value stands for the `&'a mut [u8]` it was made from, which is
// `Send`; it is not `Sync` (no shared access is offered).
unsafe impl Send for SliceBuffer<'_> {}

impl<'a> SliceBuffer<'a> {
    /// Writes will go into `buf`.
    pub fn new(buf: &'a mut [u8]) -> SliceBuffer<'a> {
        SliceBuffer {
            buf: NonNull::from(buf),
            handed_out: false,
            borrow: PhantomData,
        }
    }

    /// Hands out the whole buffer now (as `next_slice` would), for writers
    /// that start with it in place.
    #[inline(always)]
    pub(crate) fn take_slice(&mut self) -> Slice {
        self.handed_out = true;
        self.slice()
    }

    fn slice(&self) -> Slice {
        // SAFETY: `buf` is the caller's exclusive borrow for `'a`, alive
        // while `self` is; the pointer keeps the borrow's provenance.
        unsafe { Slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), self.buf.len()) }
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> &'a mut [u8] {
        // SAFETY: `buf` came from a `&'a mut [u8]` that this value owned
        // exclusively; consuming `self` ends every use of the raw pointer
        // except through the returned reference.
        unsafe { &mut *self.buf.as_ptr() }
    }
}

// SAFETY: the one slice is the caller's buffer, borrowed exclusively for `'a`,
// which outlives this delegate; it is handed out once and never reused.
unsafe impl Delegate for SliceBuffer<'_> {
    fn next_slice(
        &mut self,
        _used_end: *mut u8,
        _open: &mut OpenSlots,
        min_len: usize,
    ) -> Result<Slice, WriteError> {
        if self.handed_out || self.buf.len() < min_len {
            return Err(WriteError::OutOfSpace { requested: min_len });
        }
        self.handed_out = true;
        Ok(self.slice())
    }
}
