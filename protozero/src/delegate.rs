//! The contract between a [`StreamWriter`](crate::StreamWriter) and whatever owns
//! the memory it writes into.
//!
//! A writer only ever sees one contiguous [`Slice`] at a time. When it is full the
//! writer asks its [`Delegate`] for the next one. Some delegates (a heap buffer)
//! keep earlier slices writable; others (a shared-memory chunk that gets
//! committed to the service) give them away. Length slots of still-open nested
//! messages that sit in a slice being given away must then be redirected to a
//! patch: the delegate sees every open [`SizeSlot`] on each slice switch and may
//! call [`SizeSlot::redirect_to_patch`]; the final length later arrives through
//! [`Delegate::fill_patch`].

use core::ptr::NonNull;

use crate::error::WriteError;

/// One contiguous writable range `[begin, end)` handed out by a delegate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub(crate) begin: *mut u8,
    pub(crate) end: *mut u8,
}

impl Slice {
    /// A zero-length slice (non-null, never written through).
    pub fn empty() -> Slice {
        let p = NonNull::<u8>::dangling().as_ptr();
        Slice { begin: p, end: p }
    }

    /// Wraps a mutable byte slice. The delegate promises it stays valid (see [`Delegate`]).
    pub fn from_mut(bytes: &mut [u8]) -> Slice {
        let range = bytes.as_mut_ptr_range();
        Slice {
            begin: range.start,
            end: range.end,
        }
    }

    /// Wraps `len` bytes at `begin`.
    ///
    /// # Safety
    /// `begin..begin+len` must be one allocation, valid for writes for as long as
    /// the [`Delegate`] contract requires.
    pub unsafe fn from_raw_parts(begin: *mut u8, len: usize) -> Slice {
        Slice {
            begin,
            // SAFETY: the caller guarantees the range lies in one allocation.
            end: unsafe { begin.add(len) },
        }
    }

    /// First byte of the slice.
    pub fn begin(&self) -> *mut u8 {
        self.begin
    }

    /// One past the last byte of the slice.
    pub fn end(&self) -> *mut u8 {
        self.end
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.end as usize - self.begin as usize
    }

    /// Whether the slice has no bytes.
    pub fn is_empty(&self) -> bool {
        self.begin == self.end
    }

    /// Whether `ptr` points inside the slice.
    pub fn contains(&self, ptr: *const u8) -> bool {
        (self.begin as *const u8) <= ptr && ptr < self.end as *const u8
    }
}

/// Identifies a patch record kept by a delegate; opaque to the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PatchId(pub u32);

/// Where the 4-byte length of an open nested message will be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotLocation {
    /// Still in slice memory the writer may write to.
    Memory(*mut u8),
    /// Redirected by the delegate: the length goes to [`Delegate::fill_patch`].
    Patch(PatchId),
    /// The writer is in its error state; the length is dropped.
    Discarded,
}

/// The reserved length slot of one open nested message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeSlot {
    pub(crate) location: SlotLocation,
    /// Total bytes written by the stream writer when the payload began.
    pub(crate) payload_start: usize,
}

impl SizeSlot {
    const EMPTY: SizeSlot = SizeSlot {
        location: SlotLocation::Discarded,
        payload_start: 0,
    };

    /// Where the length will be written.
    pub fn location(&self) -> SlotLocation {
        self.location
    }

    /// The slot's address while it is still in slice memory.
    pub fn memory_ptr(&self) -> Option<*mut u8> {
        match self.location {
            SlotLocation::Memory(p) => Some(p),
            _ => None,
        }
    }

    /// Sends this slot's final length to a patch record instead of memory.
    pub fn redirect_to_patch(&mut self, id: PatchId) {
        self.location = SlotLocation::Patch(id);
    }
}

/// Number of open nested messages tracked without allocating.
const INLINE_SLOTS: usize = 16;

/// The stack of length slots of currently open nested messages, innermost last.
///
/// The first 16 levels live inline so ordinary writes never allocate.
#[derive(Debug)]
pub struct OpenSlots {
    inline: [SizeSlot; INLINE_SLOTS],
    spill: alloc::vec::Vec<SizeSlot>,
    len: usize,
}

impl Default for OpenSlots {
    fn default() -> Self {
        OpenSlots {
            inline: [SizeSlot::EMPTY; INLINE_SLOTS],
            spill: alloc::vec::Vec::new(),
            len: 0,
        }
    }
}

impl OpenSlots {
    /// Number of open nested messages.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no nested message is open.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub(crate) fn push(&mut self, slot: SizeSlot) {
        if self.len < INLINE_SLOTS {
            self.inline[self.len] = slot;
        } else {
            self.spill.push(slot);
        }
        self.len += 1;
    }

    /// Removes slots until `len` remain and returns the last one removed.
    #[inline]
    pub(crate) fn pop_to(&mut self, len: usize) -> Option<SizeSlot> {
        if self.len <= len {
            return None;
        }
        let slot = self.get(len);
        self.len = len;
        self.spill.truncate(len.saturating_sub(INLINE_SLOTS));
        slot
    }

    #[inline]
    fn get(&self, i: usize) -> Option<SizeSlot> {
        if i < INLINE_SLOTS {
            Some(self.inline[i])
        } else {
            self.spill.get(i - INLINE_SLOTS).copied()
        }
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.spill.clear();
    }

    /// Visits every open slot, outermost first.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut SizeSlot> {
        let n = self.len.min(INLINE_SLOTS);
        self.inline[..n].iter_mut().chain(self.spill.iter_mut())
    }

    /// Visits every open slot, outermost first.
    pub fn iter(&self) -> impl Iterator<Item = &SizeSlot> {
        let n = self.len.min(INLINE_SLOTS);
        self.inline[..n].iter().chain(self.spill.iter())
    }
}

/// Hands out the memory a [`StreamWriter`](crate::StreamWriter) writes into.
///
/// # Safety
/// Implementors promise, for every [`Slice`] they return from
/// [`next_slice`](Delegate::next_slice):
/// * the range is valid for writes and not accessed by anyone else until the
///   writer asks for the next slice (or is dropped);
/// * after that, every [`SizeSlot`] still located in that slice's memory (i.e.
///   not redirected in the `open` list passed to `next_slice`) stays valid for a
///   4-byte write until the writer is dropped or reset.
///
/// A delegate that gives memory away on a switch must redirect the slots lying
/// in it before returning.
pub unsafe trait Delegate {
    /// Returns the next slice, of at least `min_len` bytes.
    ///
    /// `used_end` is how far the writer filled the slice it is leaving (the
    /// dangling pointer of [`Slice::empty`] before the first slice); `open` lists
    /// the length slots of the nested messages still open.
    fn next_slice(
        &mut self,
        used_end: *mut u8,
        open: &mut OpenSlots,
        min_len: usize,
    ) -> Result<Slice, WriteError>;

    /// Receives the final length bytes of a slot redirected to patch `id`.
    fn fill_patch(&mut self, id: PatchId, bytes: [u8; 4]) {
        let _ = (id, bytes);
    }
}
