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

use core::mem::MaybeUninit;
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

    /// Wraps a mutable byte slice. The delegate promises it stays valid (see
    /// [`Delegate`]). The slice's pointers derive from this borrow: using the
    /// memory again through its owner (re-borrowing a `Box` or `Vec`, moving
    /// a `Box`, reading it through a reference) invalidates them under Rust's
    /// aliasing rules, so a delegate that hands out memory it keeps
    /// accessing should use [`OwnedSlice`](crate::OwnedSlice) instead.
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

/// What the fields of a [`SizeSlot`] currently mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum SlotKind {
    /// A 4-byte slot in slice memory at `ptr`; `aux` is the payload start.
    Memory,
    /// The writer's own 1-byte speculative slot at `ptr`; `aux` is the
    /// fast-path limit to restore when it closes. Delegates never see one.
    Short,
    /// Redirected by the delegate to patch `patch`.
    Patch,
    /// The length is dropped (the writer is in its error state).
    Discarded,
}

/// The reserved length slot of one open nested message.
///
/// Stored as plain words rather than a [`SlotLocation`] so the writer's hot
/// path reads and writes single fields, never a whole enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeSlot {
    /// The slot's address while it is in slice memory; null otherwise.
    pub(crate) ptr: *mut u8,
    /// A 4-byte slot: total bytes written by the stream writer when the
    /// payload began. A short slot: the writer's saved fast-path limit.
    pub(crate) aux: usize,
    /// The patch the length goes to, when `kind` is [`SlotKind::Patch`].
    pub(crate) patch: u32,
    /// Which of the above apply.
    pub(crate) kind: SlotKind,
}

impl SizeSlot {
    /// A slot at `location` whose payload starts after `payload_start` bytes.
    #[inline(always)]
    pub(crate) fn new(location: SlotLocation, payload_start: usize) -> SizeSlot {
        let (ptr, patch, kind) = match location {
            SlotLocation::Memory(p) => (p, 0, SlotKind::Memory),
            SlotLocation::Patch(id) => (core::ptr::null_mut(), id.0, SlotKind::Patch),
            SlotLocation::Discarded => (core::ptr::null_mut(), 0, SlotKind::Discarded),
        };
        SizeSlot {
            ptr,
            aux: payload_start,
            patch,
            kind,
        }
    }

    /// Where the length will be written.
    pub fn location(&self) -> SlotLocation {
        match self.kind {
            SlotKind::Memory | SlotKind::Short => SlotLocation::Memory(self.ptr),
            SlotKind::Patch => SlotLocation::Patch(PatchId(self.patch)),
            SlotKind::Discarded => SlotLocation::Discarded,
        }
    }

    /// The slot's address while it is still in slice memory.
    pub fn memory_ptr(&self) -> Option<*mut u8> {
        matches!(self.kind, SlotKind::Memory | SlotKind::Short).then_some(self.ptr)
    }

    /// Sends this slot's final length to a patch record instead of memory.
    pub fn redirect_to_patch(&mut self, id: PatchId) {
        self.ptr = core::ptr::null_mut();
        self.patch = id.0;
        self.kind = SlotKind::Patch;
    }

    /// Whether this is one of the writer's 1-byte speculative slots.
    #[inline(always)]
    pub(crate) fn is_short(&self) -> bool {
        self.kind == SlotKind::Short
    }
}

/// Number of open nested messages tracked without allocating.
const INLINE_SLOTS: usize = 16;

/// The stack of length slots of currently open nested messages, innermost last.
///
/// The first 16 levels live inline so ordinary writes never allocate. The
/// inline entries are left uninitialized until pushed, so creating a writer
/// (once per message for a [`SliceWriter`](crate::SliceWriter)) costs nothing.
pub struct OpenSlots {
    /// Entries `0..min(len, INLINE_SLOTS)` are initialized.
    inline: [MaybeUninit<SizeSlot>; INLINE_SLOTS],
    spill: alloc::vec::Vec<SizeSlot>,
    len: usize,
}

impl Default for OpenSlots {
    #[inline(always)]
    fn default() -> Self {
        OpenSlots {
            inline: [const { MaybeUninit::uninit() }; INLINE_SLOTS],
            spill: alloc::vec::Vec::new(),
            len: 0,
        }
    }
}

impl core::fmt::Debug for OpenSlots {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl OpenSlots {
    /// Number of open nested messages.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no nested message is open.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pushes a 4-byte slot that lies in slice memory at `ptr`.
    #[inline(always)]
    pub(crate) fn push_memory(&mut self, ptr: *mut u8, payload_start: usize) {
        debug_assert!(!self.top_is_short(), "4-byte slot pushed over a short one");
        self.push_in_place(ptr, payload_start, SlotKind::Memory);
    }

    /// Pushes a 1-byte speculative slot at `ptr`, remembering the fast-path
    /// limit `saved_end` to restore when it closes.
    #[inline(always)]
    pub(crate) fn push_short(&mut self, ptr: *mut u8, saved_end: usize) {
        self.push_in_place(ptr, saved_end, SlotKind::Short);
    }

    /// The hot push: the fields are stored in place, no temporary is built
    /// and copied.
    #[inline(always)]
    fn push_in_place(&mut self, ptr: *mut u8, aux: usize, kind: SlotKind) {
        let len = self.len;
        if len < INLINE_SLOTS {
            let e = self.inline[len].as_mut_ptr();
            // SAFETY: `e` points to an inline entry we own; writing each field
            // initializes it (`patch` is only read for `SlotKind::Patch`, but
            // it is written too so the whole entry is initialized).
            unsafe {
                (&raw mut (*e).ptr).write(ptr);
                (&raw mut (*e).aux).write(aux);
                (&raw mut (*e).patch).write(0);
                (&raw mut (*e).kind).write(kind);
            }
        } else {
            self.spill.push(SizeSlot {
                ptr,
                aux,
                patch: 0,
                kind,
            });
        }
        self.len = len + 1;
    }

    /// Pushes any slot.
    #[inline]
    pub(crate) fn push(&mut self, slot: SizeSlot) {
        debug_assert!(
            slot.is_short() || !self.top_is_short(),
            "4-byte slot pushed over a short one"
        );
        if self.len < INLINE_SLOTS {
            self.inline[self.len] = MaybeUninit::new(slot);
        } else {
            self.spill.push(slot);
        }
        self.len += 1;
    }

    /// If slot number `depth` (1-based) is open, stored inline with nothing
    /// spilled, and a 4-byte slot still in memory, returns its address.
    #[inline(always)]
    pub(crate) fn inline_memory_ptr(&self, depth: usize) -> Option<*mut u8> {
        let i = depth.wrapping_sub(1);
        if i >= self.len || self.len > INLINE_SLOTS {
            return None;
        }
        // SAFETY: `i < len <= INLINE_SLOTS`, so the entry exists and is
        // initialized.
        let e = unsafe { &*self.inline.get_unchecked(i).as_ptr() };
        (e.kind == SlotKind::Memory).then_some(e.ptr)
    }

    /// If slot number `depth` (1-based) is open and short, with nothing
    /// spilled, returns its address and saved fast-path limit. Slots deeper
    /// than a short one are short too (children leaked with `mem::forget`)
    /// and all inline, so [`OpenSlots::truncate_inline`] may drop them.
    #[inline(always)]
    pub(crate) fn inline_short(&self, depth: usize) -> Option<(*mut u8, usize)> {
        let i = depth.wrapping_sub(1);
        if i >= self.len || self.len > INLINE_SLOTS {
            return None;
        }
        // SAFETY: `i < len <= INLINE_SLOTS`: the entry is initialized.
        let e = unsafe { &*self.inline.get_unchecked(i).as_ptr() };
        (e.kind == SlotKind::Short).then_some((e.ptr, e.aux))
    }

    /// Whether every open short slot lies above every 4-byte one (the
    /// invariant the stream writer keeps; checked by debug assertions).
    pub(crate) fn shorts_innermost(&self) -> bool {
        let mut seen_short = false;
        self.iter().all(|s| {
            seen_short |= s.is_short();
            s.is_short() || !seen_short
        })
    }

    /// Whether the innermost slot is short (short slots are always the
    /// innermost ones, so this says whether any is open).
    #[inline]
    pub(crate) fn top_is_short(&self) -> bool {
        self.last().is_some_and(SizeSlot::is_short)
    }

    /// The innermost slot.
    #[inline]
    fn last(&self) -> Option<&SizeSlot> {
        if self.len > INLINE_SLOTS {
            self.spill.last()
        } else {
            self.inline_ref().last()
        }
    }

    /// Index of the outermost short slot (`len()` when none is open).
    pub(crate) fn first_short(&self) -> usize {
        let shorts = self.iter().rev().take_while(|s| s.is_short()).count();
        self.len - shorts
    }

    /// Keeps the first `len` slots (after [`OpenSlots::inline_memory_ptr`]
    /// or [`OpenSlots::inline_short`] found slot `len + 1`, with nothing
    /// spilled).
    #[inline(always)]
    pub(crate) fn truncate_inline(&mut self, len: usize) {
        self.len = len;
    }

    /// Removes slots until `len` remain and returns the last one removed.
    #[inline]
    pub(crate) fn pop_to(&mut self, len: usize) -> Option<SizeSlot> {
        if self.len <= len {
            return None;
        }
        let slot = if len < INLINE_SLOTS {
            // SAFETY: `len < self.len`, and inline entries below `self.len` are initialized.
            Some(unsafe { self.inline[len].assume_init() })
        } else {
            self.spill.get(len - INLINE_SLOTS).copied()
        };
        self.len = len;
        if !self.spill.is_empty() {
            self.spill.truncate(len.saturating_sub(INLINE_SLOTS));
        }
        slot
    }

    /// Moves slots `from..` forward by `by` bytes (their memory and their
    /// payload start), after the writer inserted bytes in front of them.
    pub(crate) fn shift_from(&mut self, from: usize, by: usize) {
        for slot in self.iter_mut().skip(from) {
            match slot.kind {
                SlotKind::Memory => {
                    slot.ptr = slot.ptr.wrapping_add(by);
                    slot.aux += by;
                }
                // A short slot's saved limit is re-derived by the writer.
                SlotKind::Short => slot.ptr = slot.ptr.wrapping_add(by),
                SlotKind::Patch | SlotKind::Discarded => slot.aux += by,
            }
        }
    }

    /// The slot at index `i` (0 = outermost).
    pub(crate) fn get(&self, i: usize) -> Option<SizeSlot> {
        self.iter().nth(i).copied()
    }

    /// The slot at index `i`, mutably.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut SizeSlot> {
        self.iter_mut().nth(i)
    }

    /// Marks slots `from..` as discarded (the writer entered its error state).
    pub(crate) fn discard_from(&mut self, from: usize) {
        for slot in self.iter_mut().skip(from) {
            slot.ptr = core::ptr::null_mut();
            slot.kind = SlotKind::Discarded;
        }
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.spill.clear();
    }

    /// The initialized inline entries.
    #[inline]
    fn inline_ref(&self) -> &[SizeSlot] {
        let n = self.len.min(INLINE_SLOTS);
        // SAFETY: the first `n` inline entries are initialized, and
        // `MaybeUninit<SizeSlot>` has the layout of `SizeSlot`.
        unsafe { core::slice::from_raw_parts(self.inline.as_ptr().cast::<SizeSlot>(), n) }
    }

    /// Visits every open slot, outermost first.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut SizeSlot> {
        // Borrow `inline` and `spill` separately so both can be chained.
        let n = self.len.min(INLINE_SLOTS);
        let inline = &mut self.inline[..n];
        // SAFETY: the first `n` inline entries are initialized, and
        // `MaybeUninit<SizeSlot>` has the layout of `SizeSlot`.
        let inline =
            unsafe { core::slice::from_raw_parts_mut(inline.as_mut_ptr().cast::<SizeSlot>(), n) };
        inline.iter_mut().chain(self.spill.iter_mut())
    }

    /// Visits every open slot, outermost first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &SizeSlot> {
        self.inline_ref().iter().chain(self.spill.iter())
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
/// Both must hold however the delegate value is moved (a writer may be moved
/// or swapped: memory inside the delegate value itself cannot be handed out),
/// and the pointers must keep their validity while the delegate uses the
/// memory in other ways (see [`Slice::from_mut`] and
/// [`OwnedSlice`](crate::OwnedSlice)).
///
/// A delegate that gives memory away on a switch, or hands the same memory
/// out again, must redirect the slots lying in it before returning.
///
/// Only the bytes before `used_end` are output. The writer may store scratch
/// bytes past its cursor anywhere in its current slice (a long varint is
/// written as a whole 8-byte word), so the unused tail of a slice has no
/// defined content.
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
