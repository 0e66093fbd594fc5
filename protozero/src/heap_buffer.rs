//! [`HeapBuffer`]: a delegate that hands out heap slices of growing size and
//! keeps them all writable, so lengths never need patches. Finished output is
//! stitched into one `Vec`.

use alloc::vec::Vec;

use crate::delegate::{Delegate, OpenSlots, Slice};
use crate::error::WriteError;
use crate::owned_slice::OwnedSlice;

/// Default size of the first slice.
pub const DEFAULT_INITIAL_SLICE: usize = 256;
/// Default cap on slice size; slices double up to it.
pub const DEFAULT_MAX_SLICE: usize = 128 * 1024;

/// Growable scattered heap storage.
#[derive(Debug)]
pub struct HeapBuffer {
    /// Every slice handed out, with how many bytes of it were used (the last
    /// one's use is only known from the writer's cursor).
    slices: Vec<(OwnedSlice, usize)>,
    /// Slices kept from before a [`HeapBuffer::clear`], reused before allocating.
    spare: Vec<OwnedSlice>,
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
            return Some(buf.slice());
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

    /// Makes `buf` the current (last) slice and returns it.
    fn hand_out(&mut self, buf: OwnedSlice) -> Slice {
        let slice = buf.slice();
        self.slices.push((buf, 0));
        slice
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
            slice.extend_into(used, out);
        }
    }

    fn used_of(slice: &OwnedSlice, cursor: *mut u8) -> usize {
        // Outside the slice: the writer left it (error state) and used all of it.
        slice.offset_of(cursor).unwrap_or(slice.len())
    }
}

// SAFETY: every slice is a separate `OwnedSlice`, handed out from its one raw
// pointer and read back through it, so neither moving the bookkeeping nor
// reading a slice invalidates the writer's pointers. A slice stays allocated
// in `slices` until `clear`/`clear_reusing_first`, which a `Writer` (the only
// safe way to pair this delegate with a stream) calls only together with
// resetting its stream: it never lends its delegate mutably.
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
            None => OwnedSlice::new(size, 0),
        };
        Ok(self.hand_out(buf))
    }
}
