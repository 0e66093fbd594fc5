//! [`NullBuffer`]: a delegate that discards everything (disabled sinks,
//! measuring the cost of serialization alone).

use crate::delegate::{Delegate, OpenSlots, PatchId, Slice};
use crate::error::WriteError;
use crate::owned_slice::OwnedSlice;

/// Recycles one scratch buffer forever.
#[derive(Debug)]
pub struct NullBuffer {
    scratch: OwnedSlice,
}

impl Default for NullBuffer {
    fn default() -> Self {
        NullBuffer {
            scratch: OwnedSlice::new(256, 0),
        }
    }
}

impl NullBuffer {
    /// A discarding delegate.
    pub fn new() -> NullBuffer {
        Self::default()
    }
}

// SAFETY: before the scratch memory is reused or reallocated, every open slot
// pointing into it is redirected to a (discarded) patch, so no slot refers to
// memory handed out again or freed.
unsafe impl Delegate for NullBuffer {
    fn next_slice(
        &mut self,
        _used_end: *mut u8,
        open: &mut OpenSlots,
        min_len: usize,
    ) -> Result<Slice, WriteError> {
        for slot in open.iter_mut() {
            slot.redirect_to_patch(PatchId(0));
        }
        if self.scratch.len() < min_len {
            // Every open slot was just redirected, so nothing points into the
            // old buffer any more.
            self.scratch = OwnedSlice::new(min_len, 0);
        }
        Ok(self.scratch.slice())
    }
}
