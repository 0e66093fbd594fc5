//! [`SliceBuffer`]: a delegate over one caller-provided buffer. Running out of
//! room is reported as [`WriteError::OutOfSpace`], never a panic.

use crate::delegate::{Delegate, OpenSlots, Slice};
use crate::error::WriteError;

/// One fixed slice of caller memory.
#[derive(Debug)]
pub struct SliceBuffer<'a> {
    buf: &'a mut [u8],
    handed_out: bool,
}

impl<'a> SliceBuffer<'a> {
    /// Writes will go into `buf`.
    pub fn new(buf: &'a mut [u8]) -> SliceBuffer<'a> {
        SliceBuffer {
            buf,
            handed_out: false,
        }
    }

    /// Hands out the whole buffer now (as `next_slice` would), for writers
    /// that start with it in place.
    #[inline(always)]
    pub(crate) fn take_slice(&mut self) -> Slice {
        self.handed_out = true;
        Slice::from_mut(self.buf)
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> &'a mut [u8] {
        self.buf
    }
}

// SAFETY: the only slice handed out is `buf`, exclusively borrowed for `'a`,
// which outlives any writer using this delegate; it is handed out once.
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
        Ok(Slice::from_mut(self.buf))
    }
}
