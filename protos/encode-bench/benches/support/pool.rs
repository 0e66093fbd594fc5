//! A delegate that hands out fixed-size slices carved from one preallocated
//! pool of caller memory, reused every iteration: the writer's
//! slice-switching path without any allocation in the timed loop.

use core::marker::PhantomData;
use core::ops::Range;

use protozero::{Delegate, OpenSlots, Slice, WriteError};

/// Most slices one pool hands out.
const MAX_SLICES: usize = 32;

/// Consecutive `slice_len`-byte slices of a borrowed buffer, handed out in order.
pub struct SlicePool<'a> {
    /// Start of the buffer, taken once so handed-out slices never alias a fresh `&mut`.
    base: *mut u8,
    slice_len: usize,
    count: usize,
    /// Bytes used in each slice the writer has left.
    used: [usize; MAX_SLICES],
    handed_out: usize,
    _mem: PhantomData<&'a mut [u8]>,
}

impl<'a> SlicePool<'a> {
    /// Carves `mem` into slices of `slice_len` bytes (at most 32 of them).
    #[inline(always)]
    pub fn new(mem: &'a mut [u8], slice_len: usize) -> SlicePool<'a> {
        SlicePool {
            base: mem.as_mut_ptr(),
            slice_len,
            count: (mem.len() / slice_len).min(MAX_SLICES),
            used: [0; MAX_SLICES],
            handed_out: 0,
            _mem: PhantomData,
        }
    }

    /// Number of slices handed out.
    pub fn slices_used(&self) -> usize {
        self.handed_out
    }

    /// Byte ranges of the pool memory holding the output, in order; `cursor`
    /// is the writer's cursor (how far the last slice is filled).
    pub fn used_ranges(&self, cursor: *mut u8) -> Vec<Range<usize>> {
        (0..self.handed_out)
            .map(|i| {
                let start = i * self.slice_len;
                let used = if i + 1 == self.handed_out {
                    cursor as usize - (self.base as usize + start)
                } else {
                    self.used[i]
                };
                start..start + used
            })
            .collect()
    }
}

// SAFETY: slice `i` is `mem[i*len..(i+1)*len]`, derived from `base`, which was
// taken from the exclusive borrow `mem` held for `'a`; each slice is handed
// out once, and `'a` outlives the writer owning this delegate, so length slots
// in earlier slices stay writable.
unsafe impl Delegate for SlicePool<'_> {
    fn next_slice(
        &mut self,
        used_end: *mut u8,
        _open: &mut OpenSlots,
        min_len: usize,
    ) -> Result<Slice, WriteError> {
        let i = self.handed_out;
        if i == self.count || min_len > self.slice_len {
            return Err(WriteError::OutOfSpace { requested: min_len });
        }
        if i > 0 {
            self.used[i - 1] = used_end as usize - (self.base as usize + (i - 1) * self.slice_len);
        }
        self.handed_out += 1;
        // SAFETY: `i < count`, so the range lies inside `mem`.
        Ok(unsafe { Slice::from_raw_parts(self.base.add(i * self.slice_len), self.slice_len) })
    }
}
