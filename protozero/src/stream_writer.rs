//! The cursor that all writers share: a write pointer into the current
//! [`Slice`], a fast path that is a bounds check plus a copy, and a slow path
//! that asks the [`Delegate`] for the next slice.
//!
//! It also owns the stack of open nested-message length slots, because those
//! are what a delegate must see (and possibly turn into patches) when it takes
//! a slice back. Errors are sticky: after the first one, bytes are counted but
//! dropped, so callers never branch on every append.

use core::ptr;

use crate::bytecopy::{copy_bytes, move_down_small};
use crate::delegate::{Delegate, OpenSlots, SizeSlot, Slice, SlotLocation};
use crate::error::WriteError;
use crate::varint::{MAX_VARINT_LEN, encode_varint, redundant_varint4, redundant_varint4_le};
use crate::wire::{MAX_MESSAGE_LENGTH, MAX_ONE_BYTE_MESSAGE_LENGTH, MAX_TAG_LEN, SIZE_SLOT_LEN};

/// A scattered, append-only byte stream over slices handed out by a delegate.
///
/// It does not own the delegate: every call that may need a new slice takes it
/// as a parameter, which lets one delegate type serve many writers and keeps
/// [`Message`](crate::Message) free of generics.
#[derive(Debug)]
pub struct StreamWriter {
    cur: *mut u8,
    end: *mut u8,
    slice_begin: *mut u8,
    /// Where byte 0 of the stream would be if all slices were contiguous:
    /// `slice_begin - bytes written into earlier slices` (wrapping), so
    /// [`StreamWriter::written`] is one subtraction.
    origin: usize,
    slots: OpenSlots,
    error: Option<WriteError>,
    /// Nested messages shorter than this get a 1-byte length (see
    /// [`StreamWriter::try_compact`]): 128 with compaction on, 0 with it off.
    compact_below: usize,
}

// SAFETY: the raw pointers refer to memory owned by the delegate that the
// writer is paired with; moving the writer to another thread together with
// (or while exclusively borrowing) that delegate is sound. `StreamWriter` is
// not `Sync`: all writes go through `&mut self`.
unsafe impl Send for StreamWriter {}

impl Default for StreamWriter {
    fn default() -> Self {
        Self::new()
    }
}

/// Encodes `value` as a varint at `p` and returns the pointer past it.
///
/// # Safety
/// `p` must be valid for writes of `varint_len(value)` bytes.
#[inline(always)]
unsafe fn put_varint(mut p: *mut u8, mut value: u64) -> *mut u8 {
    // SAFETY: the caller guarantees room for the whole varint.
    unsafe {
        while value >= 0x80 {
            *p = (value as u8) | 0x80;
            p = p.add(1);
            value >>= 7;
        }
        *p = value as u8;
        p.add(1)
    }
}

impl StreamWriter {
    /// A writer with no slice yet: the first write asks the delegate for one.
    pub fn new() -> StreamWriter {
        let s = Slice::empty();
        StreamWriter {
            cur: s.begin,
            end: s.end,
            slice_begin: s.begin,
            origin: s.begin as usize,
            slots: OpenSlots::default(),
            error: None,
            compact_below: MAX_ONE_BYTE_MESSAGE_LENGTH + 1,
        }
    }

    /// Forgets all state (slice, open slots, error, byte count).
    pub fn reset(&mut self) {
        // SAFETY: the empty slice is never written through.
        unsafe { self.set_slice(Slice::empty()) };
        self.origin = self.slice_begin as usize;
        self.slots.clear();
        self.error = None;
    }

    /// Turns 1-byte length compaction of small nested messages on or off (on by
    /// default, as in Perfetto). Off gives the fixed 4-byte form everywhere,
    /// which makes output independent of where slice boundaries fall.
    pub fn set_compaction(&mut self, on: bool) {
        self.compact_below = if on {
            MAX_ONE_BYTE_MESSAGE_LENGTH + 1
        } else {
            0
        };
    }

    /// Total bytes written so far, across slices.
    #[inline(always)]
    pub fn written(&self) -> usize {
        (self.cur as usize).wrapping_sub(self.origin)
    }

    /// Bytes left in the current slice.
    #[inline(always)]
    pub fn remaining(&self) -> usize {
        self.end as usize - self.cur as usize
    }

    /// The first error, if any; later writes were dropped.
    pub fn error(&self) -> Option<WriteError> {
        self.error
    }

    /// Records `e` unless an error is already recorded, and drops the current slice.
    #[cold]
    pub fn set_error(&mut self, e: WriteError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        let written = self.written();
        let empty = Slice::empty();
        self.cur = empty.begin;
        self.end = empty.end;
        self.slice_begin = empty.begin;
        self.origin = (empty.begin as usize).wrapping_sub(written);
    }

    /// Where the next byte goes.
    pub fn cursor(&self) -> *mut u8 {
        self.cur
    }

    /// The current slice, from its start to its end (not just the written part).
    pub fn current_slice(&self) -> Slice {
        Slice {
            begin: self.slice_begin,
            end: self.end,
        }
    }

    /// The length slots of the nested messages currently open.
    pub fn open_slots(&mut self) -> &mut OpenSlots {
        &mut self.slots
    }

    /// Replaces the current slice without asking a delegate (a TraceWriter
    /// returning its chunk on flush) and returns how far the old one was filled.
    ///
    /// # Safety
    /// `slice` must satisfy the [`Delegate`] contract for the delegate this
    /// stream is used with: valid for writes and exclusive to this writer until
    /// that delegate's next `next_slice` call (or until the next `set_slice`).
    pub unsafe fn set_slice(&mut self, slice: Slice) -> *mut u8 {
        let used_end = self.cur;
        self.origin = (slice.begin as usize).wrapping_sub(self.written());
        self.slice_begin = slice.begin;
        self.cur = slice.begin;
        self.end = slice.end;
        used_end
    }

    /// Asks the delegate for a slice of at least `min_len` bytes; on failure the
    /// writer enters its error state. Returns whether a slice was obtained.
    #[cold]
    #[inline(never)]
    fn next_slice(&mut self, delegate: &mut dyn Delegate, min_len: usize) -> bool {
        if self.error.is_some() {
            return false;
        }
        match delegate.next_slice(self.cur, &mut self.slots, min_len) {
            Ok(slice) if slice.len() >= min_len => {
                // SAFETY: the delegate contract covers slices it hands out.
                unsafe { self.set_slice(slice) };
                true
            }
            Ok(_) => {
                self.set_error(WriteError::OutOfSpace { requested: min_len });
                false
            }
            Err(e) => {
                self.set_error(e);
                false
            }
        }
    }

    /// Appends `data`, spanning slices as needed.
    #[inline(always)]
    pub(crate) fn write_bytes(&mut self, delegate: &mut dyn Delegate, data: &[u8]) {
        if data.len() <= self.remaining() {
            // SAFETY: `cur..cur+len` lies inside the current slice, which the
            // delegate contract keeps valid and exclusive to this writer.
            unsafe {
                copy_bytes(self.cur, data);
                self.cur = self.cur.add(data.len());
            }
        } else {
            self.write_bytes_slow(delegate, data);
        }
    }

    #[cold]
    #[inline(never)]
    fn write_bytes_slow(&mut self, delegate: &mut dyn Delegate, mut data: &[u8]) {
        loop {
            let n = data.len().min(self.remaining());
            // SAFETY: `n` bytes fit in the current slice (see `write_bytes`).
            unsafe {
                copy_bytes(self.cur, &data[..n]);
                self.cur = self.cur.add(n);
            }
            data = &data[n..];
            if data.is_empty() {
                return;
            }
            if !self.next_slice(delegate, 1) {
                // Error state: account for the dropped bytes so sizes stay monotonic.
                self.origin = self.origin.wrapping_sub(data.len());
                return;
            }
        }
    }

    /// Appends a tag followed by a varint value (both pre-shifted by the caller).
    #[inline(always)]
    pub(crate) fn write_two_varints(&mut self, delegate: &mut dyn Delegate, a: u64, b: u64) {
        if self.remaining() >= 2 * MAX_VARINT_LEN {
            // SAFETY: at least 20 bytes remain, enough for two varints.
            unsafe {
                let p = put_varint(self.cur, a);
                self.cur = put_varint(p, b);
            }
        } else {
            let mut buf = [0u8; 2 * MAX_VARINT_LEN];
            let n = encode_varint(a, &mut buf);
            let m = encode_varint(b, &mut buf[n..]);
            self.write_bytes_slow(delegate, &buf[..n + m]);
        }
    }

    /// Appends one varint.
    #[inline(always)]
    pub(crate) fn write_varint(&mut self, delegate: &mut dyn Delegate, v: u64) {
        if self.remaining() >= MAX_VARINT_LEN {
            // SAFETY: at least 10 bytes remain, enough for a varint.
            unsafe {
                self.cur = put_varint(self.cur, v);
            }
        } else {
            let mut buf = [0u8; MAX_VARINT_LEN];
            let n = encode_varint(v, &mut buf);
            self.write_bytes_slow(delegate, &buf[..n]);
        }
    }

    /// Appends a varint tag and `N` raw bytes (a fixed32/fixed64 field).
    #[inline(always)]
    pub fn write_tag_fixed<const N: usize>(
        &mut self,
        delegate: &mut dyn Delegate,
        tag: u32,
        bytes: [u8; N],
    ) {
        if self.remaining() >= MAX_VARINT_LEN + N {
            // SAFETY: room for a 5-byte tag and N bytes is available.
            unsafe {
                let p = put_varint(self.cur, u64::from(tag));
                ptr::copy_nonoverlapping(bytes.as_ptr(), p, N);
                self.cur = p.add(N);
            }
        } else {
            let mut buf = [0u8; MAX_VARINT_LEN];
            let n = encode_varint(u64::from(tag), &mut buf);
            self.write_bytes_slow(delegate, &buf[..n]);
            self.write_bytes(delegate, &bytes);
        }
    }

    /// Reserves 4 contiguous bytes for a length (moving to a new slice if fewer
    /// remain), pre-filled with a redundant zero, and returns where they are.
    ///
    /// # Safety
    /// `delegate` must be the delegate whose slices this stream has been
    /// writing into (the current slice must still be valid under its contract).
    #[inline]
    pub unsafe fn reserve_slot(&mut self, delegate: &mut dyn Delegate) -> SlotLocation {
        if self.remaining() < SIZE_SLOT_LEN && !self.next_slice(delegate, SIZE_SLOT_LEN) {
            self.origin = self.origin.wrapping_sub(SIZE_SLOT_LEN);
            return SlotLocation::Discarded;
        }
        let p = self.cur;
        // SAFETY: 4 bytes remain in the current slice.
        unsafe {
            ptr::copy_nonoverlapping(redundant_varint4(0).as_ptr(), p, SIZE_SLOT_LEN);
            self.cur = p.add(SIZE_SLOT_LEN);
        }
        SlotLocation::Memory(p)
    }

    /// Writes the tag of a length-delimited field, reserves its length slot and
    /// pushes it on the open-slot stack. Returns the new stack depth.
    #[inline(always)]
    pub(crate) fn begin_nested(&mut self, delegate: &mut dyn Delegate, tag: u32) -> usize {
        if self.remaining() >= MAX_TAG_LEN + SIZE_SLOT_LEN {
            // SAFETY: room for a tag (at most 5 bytes for a u32) and the slot.
            let p = unsafe {
                let p = put_varint(self.cur, u64::from(tag));
                ptr::write_unaligned(p.cast::<[u8; SIZE_SLOT_LEN]>(), redundant_varint4(0));
                self.cur = p.add(SIZE_SLOT_LEN);
                p
            };
            self.slots.push_memory(p, self.written());
        } else {
            let location = self.begin_nested_slow(delegate, tag);
            self.slots.push(SizeSlot::new(location, self.written()));
        }
        self.slots.len()
    }

    /// [`StreamWriter::begin_nested`] near the end of a slice: the tag and the
    /// slot may each need a new one.
    #[cold]
    #[inline(never)]
    fn begin_nested_slow(&mut self, delegate: &mut dyn Delegate, tag: u32) -> SlotLocation {
        self.write_varint(delegate, u64::from(tag));
        // SAFETY: crate callers pass the delegate this stream is bound to
        // (`Message` guarantees it, see `Message::new_root`).
        unsafe { self.reserve_slot(delegate) }
    }

    /// Closes the nested message opened at `depth` (and any deeper ones left
    /// open), backfilling its length. Returns the payload size.
    #[inline(never)]
    pub(crate) fn end_nested(&mut self, delegate: &mut dyn Delegate, depth: usize) -> usize {
        // Fast path: the slot lies in the current slice, so the payload is
        // everything between it and the cursor.
        if let Some(p) = self.slots.inline_memory_ptr(depth) {
            let in_slice = self.cur as usize - self.slice_begin as usize;
            let offset = (p as usize).wrapping_sub(self.slice_begin as usize);
            if offset < in_slice {
                let size = in_slice - offset - SIZE_SLOT_LEN;
                if size < self.compact_below {
                    self.slots.truncate_inline(depth - 1);
                    // SAFETY: `p..cur` lies inside the current slice (checked
                    // above), which this writer owns.
                    unsafe { self.compact_slot(p, size) };
                    return size;
                }
                if size <= MAX_MESSAGE_LENGTH {
                    self.slots.truncate_inline(depth - 1);
                    // SAFETY: the slot is in the current slice (checked above).
                    unsafe { p.cast::<u32>().write_unaligned(redundant_varint4_le(size)) };
                    return size;
                }
            }
        }
        self.end_nested_slow(delegate, depth)
    }

    /// [`StreamWriter::end_nested`] for a slot in an earlier slice, redirected
    /// to a patch, discarded, or a message that grew too long.
    #[cold]
    #[inline(never)]
    fn end_nested_slow(&mut self, delegate: &mut dyn Delegate, depth: usize) -> usize {
        // Deeper slots only remain if a child was leaked with `mem::forget`;
        // they keep their pre-filled zero length.
        let Some(slot) = self.slots.pop_to(depth - 1) else {
            return 0;
        };
        let size = self.written().saturating_sub(slot.payload_start);
        if size > MAX_MESSAGE_LENGTH {
            self.set_error(WriteError::MessageTooLong { len: size });
            return size;
        }
        match slot.location() {
            SlotLocation::Memory(p) => {
                if self.try_compact(p, size, MAX_ONE_BYTE_MESSAGE_LENGTH) {
                    return size;
                }
                // SAFETY: a slot left in memory (not redirected by the delegate)
                // stays valid for this 4-byte write (delegate contract).
                unsafe {
                    ptr::copy_nonoverlapping(redundant_varint4(size as u32).as_ptr(), p, 4);
                }
            }
            SlotLocation::Patch(id) => delegate.fill_patch(id, redundant_varint4(size as u32)),
            SlotLocation::Discarded => {}
        }
        size
    }

    /// Moves the `size`-byte payload after the 4-byte slot at `slot` back by 3
    /// bytes and writes a 1-byte length.
    ///
    /// # Safety
    /// `slot..slot + 4 + size` must end at the cursor and lie in the current slice.
    #[inline(always)]
    unsafe fn compact_slot(&mut self, slot: *mut u8, size: usize) {
        // SAFETY: the range is in the current slice (caller contract).
        unsafe {
            move_down_small(slot.add(1), slot.add(SIZE_SLOT_LEN), size);
            *slot = size as u8;
            self.cur = self.cur.sub(SIZE_SLOT_LEN - 1);
        }
    }

    /// If the 4-byte slot at `slot` is in the current slice, directly followed by
    /// a payload of `size ≤ max` bytes that ends at the cursor, moves the payload
    /// back by 3 bytes and writes a 1-byte length. Returns whether it did.
    ///
    /// Safe for any `slot` value: it is only written through after the checks
    /// prove `slot..cur` lies in the current slice.
    #[inline]
    #[allow(clippy::not_unsafe_ptr_arg_deref)] // `slot` is validated against the slice first.
    pub fn try_compact(&mut self, slot: *mut u8, size: usize, max: usize) -> bool {
        let s = slot as usize;
        let payload_end = s
            .checked_add(SIZE_SLOT_LEN)
            .and_then(|p| p.checked_add(size));
        if self.compact_below == 0
            || size > max
            || s < self.slice_begin as usize
            || payload_end != Some(self.cur as usize)
        {
            return false;
        }
        // SAFETY: `slot..cur` lies inside the current slice (checked above), so
        // the move and the 1-byte write stay in memory this writer owns.
        unsafe { self.compact_slot(slot, size) };
        true
    }
}
