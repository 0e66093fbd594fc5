//! [`HeapBuffer`]: a delegate that hands out heap slices of growing size and
//! keeps them all writable, so lengths never need patches. Finished output is
//! stitched into one `Vec`.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use crate::delegate::{Delegate, OpenSlots, Slice};
use crate::error::WriteError;

/// Default size of the first slice.
pub const DEFAULT_INITIAL_SLICE: usize = 256;
/// Default cap on slice size; slices double up to it.
pub const DEFAULT_MAX_SLICE: usize = 128 * 1024;

/// Growable scattered heap storage.
#[derive(Debug)]
pub struct HeapBuffer {
    /// Every slice handed out, with how many bytes of it were used (the last
    /// one's use is only known from the writer's cursor).
    slices: Vec<(Box<[u8]>, usize)>,
    /// Slices kept from before a [`HeapBuffer::clear`], reused before allocating.
    spare: Vec<Box<[u8]>>,
    next_size: usize,
    initial: usize,
    max: usize,
}

impl Default for HeapBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl HeapBuffer {
    /// Slices start at 256 bytes and double up to 128 KiB.
    pub fn new() -> HeapBuffer {
        Self::with_slice_sizes(DEFAULT_INITIAL_SLICE, DEFAULT_MAX_SLICE)
    }

    /// Slices start at `initial` bytes and double up to `max` (a larger slice is
    /// still handed out when a contiguous reservation needs it).
    pub fn with_slice_sizes(initial: usize, max: usize) -> HeapBuffer {
        let initial = initial.max(1);
        HeapBuffer {
            slices: Vec::new(),
            spare: Vec::new(),
            next_size: initial,
            initial,
            max: max.max(initial),
        }
    }

    /// Drops the content but keeps the allocations for the next message.
    pub fn clear(&mut self) {
        self.spare
            .extend(self.slices.drain(..).map(|(slice, _)| slice));
        self.next_size = self.initial;
    }

    /// Like [`HeapBuffer::clear`], but hands the first slice straight back
    /// out (as if `next_slice` had just returned it), so a writer restarted
    /// on it skips the slow path on its first append. `None` if no slice was
    /// ever handed out.
    pub fn clear_reusing_first(&mut self) -> Option<Slice> {
        self.next_size = self.initial.saturating_mul(2).min(self.max);
        if let [(buf, used)] = self.slices.as_mut_slice() {
            // The common case (everything fit in one slice): nothing moves.
            *used = 0;
            return Some(Slice::from_mut(buf));
        }
        let mut drained = self.slices.drain(..);
        let first = drained.next();
        self.spare.extend(drained.map(|(slice, _)| slice));
        let Some((buf, _)) = first else {
            self.next_size = self.initial;
            return None;
        };
        Some(self.hand_out(buf))
    }

    /// Makes `buf` the current (last) slice and returns it; the slice is
    /// taken after the box is stored, so no later move of the box can
    /// invalidate it.
    fn hand_out(&mut self, buf: Box<[u8]>) -> Slice {
        self.slices.push((buf, 0));
        match self.slices.last_mut() {
            Some((buf, _)) => Slice::from_mut(buf),
            None => Slice::empty(),
        }
    }

    /// Number of slices handed out so far.
    pub fn slice_count(&self) -> usize {
        self.slices.len()
    }

    /// Copies the used part of every slice into `out`; `cursor` is the writer's
    /// cursor, which tells how much of the last slice is used.
    pub fn stitch_into(&self, cursor: *mut u8, out: &mut Vec<u8>) {
        let last = self.slices.len().saturating_sub(1);
        for (i, (slice, used)) in self.slices.iter().enumerate() {
            let used = if i == last {
                Self::used_of(slice, cursor)
            } else {
                *used
            };
            out.extend_from_slice(&slice[..used]);
        }
    }

    fn used_of(slice: &[u8], cursor: *mut u8) -> usize {
        let range = slice.as_ptr_range();
        let c = cursor as usize;
        if c >= range.start as usize && c <= range.end as usize {
            c - range.start as usize
        } else {
            // The writer left this slice (error state): it used all of it.
            slice.len()
        }
    }
}

// SAFETY: every slice is a separate boxed allocation that is never freed, moved
// or handed out twice while the writer may still use it: boxes stay in
// `slices` until `clear`, which needs `&mut self` and so cannot run while a
// writer is borrowing this delegate.
unsafe impl Delegate for HeapBuffer {
    fn next_slice(
        &mut self,
        used_end: *mut u8,
        _open: &mut OpenSlots,
        min_len: usize,
    ) -> Result<Slice, WriteError> {
        if let Some((last, used)) = self.slices.last_mut() {
            *used = Self::used_of(last, used_end);
        }
        let size = self.next_size.max(min_len);
        self.next_size = (self.next_size.saturating_mul(2)).min(self.max);
        let buf = match self.spare.iter().position(|b| b.len() >= size) {
            Some(i) => self.spare.swap_remove(i),
            None => vec![0u8; size].into_boxed_slice(),
        };
        Ok(self.hand_out(buf))
    }
}
