//! The cursor that all writers share: a write pointer into the current
//! [`Slice`], a fast path that is a bounds check plus a copy, and a slow path
//! that asks the [`Delegate`] for the next slice.
//!
//! It also owns the stack of open nested-message length slots, because those
//! are what a delegate must see (and possibly turn into patches) when it takes
//! a slice back. Errors are sticky: after the first one, bytes are counted but
//! dropped, so callers never branch on every append.
//!
//! ## Short slots: compaction without moving bytes
//! Perfetto reserves 4 bytes for every nested length and, when the message
//! ends up at most 127 bytes long and never left its slice, moves the payload
//! back by 3 bytes to use a 1-byte length. That move re-reads bytes written a
//! few cycles earlier, which is slow. With compaction on, this writer instead
//! *speculates*: it reserves a 1-byte "short" slot and lowers the fast path's
//! limit (`end`) so that no write can take the message past 127 bytes or eat
//! into 3 bytes of headroom kept per open short slot at the end of the slice.
//! Crossing that limit takes the slow path, which "upgrades" the outermost
//! short slot to the 4-byte form by moving its (at most 127-byte) payload 3
//! bytes forward into the headroom. Before the delegate is asked for another
//! slice every short slot is upgraded, so delegates only ever see 4-byte
//! slots. The output is byte-identical to move-based compaction, except that a
//! message starting in the last few bytes of a slice may keep its 4-byte form.
//! Open short slots always form the innermost part of the slot stack.
//!
//! The hot path keeps that limit cheap: opening a short slot saves the current
//! limit in the slot's stack entry and lowers it by 3 bytes (and to 127 bytes
//! past the slot); closing one restores the saved value. The lowered limit can
//! be up to 3 bytes per level stricter than needed, so every slow path first
//! re-derives the exact limit and only upgrades a slot when that one is reached.

use core::ptr;

use crate::bytecopy::{copy_bytes, move_down_small};
use crate::delegate::{Delegate, OpenSlots, SizeSlot, Slice, SlotLocation};
use crate::error::WriteError;
use crate::varint::{MAX_VARINT_LEN, encode_varint, redundant_varint4, redundant_varint4_le};
use crate::wire::{MAX_MESSAGE_LENGTH, MAX_ONE_BYTE_MESSAGE_LENGTH, MAX_TAG_LEN, SIZE_SLOT_LEN};

mod put_varint;
mod short_slots;

use put_varint::put_varint;

/// Marks the depth of a proto2 group child: the low bits hold its field id (no
/// length slot is open for a group). Such a depth never matches an open slot,
/// so [`StreamWriter::end_nested`] sends it to its slow path, which writes the
/// end-group tag.
pub(crate) const GROUP_DEPTH_MARK: usize = 1 << (usize::BITS - 1);

/// A scattered, append-only byte stream over slices handed out by a delegate.
///
/// It does not own the delegate: every call that may need a new slice takes it
/// as a parameter, which lets one delegate type serve many writers and keeps
/// [`Message`](crate::Message) free of generics.
///
/// Its cursor points into the delegate's memory without borrowing it, so
/// everything that writes through the cursor is either reached through a
/// [`Message`](crate::Message) (made safely only by a [`Writer`](crate::Writer),
/// which owns both halves) or is an `unsafe fn` whose contract names the
/// delegate. A [`Writer`](crate::Writer) lends its stream only as `&`, so it
/// cannot be moved away from the memory it points into:
///
/// ```compile_fail
/// let mut w = protozero::HeapWriter::new();
/// w.root().append_uint32(1, 1);
/// let s: &mut protozero::StreamWriter = w.stream(); // error: only `&` is lent
/// ```
///
/// and writing through a stream directly needs `unsafe`:
///
/// ```compile_fail
/// let mut s = protozero::StreamWriter::new();
/// let mut buf = [0u8; 8];
/// s.try_compact(buf.as_mut_ptr(), 1, 127); // error: call to unsafe function
/// ```
#[derive(Debug)]
pub struct StreamWriter {
    cur: *mut u8,
    /// Fast-path limit: `slice_end`, lowered while short slots are open.
    end: *mut u8,
    /// The real end of the current slice.
    slice_end: *mut u8,
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
    /// Whether compaction uses short slots (speculation) rather than moving
    /// payloads after the fact.
    speculate: bool,
    /// `compact_below != 0 && speculate`, precomputed for `begin_nested`.
    use_shorts: bool,
    /// A speculative 1-byte length prefix of the root record (a TraceWriter's
    /// fragment header), outside the slot stack; null when none is open.
    root_short: *mut u8,
    /// The most bytes the record behind `root_short` may hold in that form.
    root_max: usize,
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

impl StreamWriter {
    /// A writer with no slice yet: the first write asks the delegate for one.
    #[inline(always)]
    pub fn new() -> StreamWriter {
        Self::with_slice(Slice::empty())
    }

    /// A writer whose first slice is `s`; the caller's delegate handed it out
    /// (or it is empty), so the delegate contract covers it.
    #[inline(always)]
    pub(crate) fn with_slice(s: Slice) -> StreamWriter {
        StreamWriter {
            cur: s.begin,
            end: s.end,
            slice_end: s.end,
            slice_begin: s.begin,
            origin: s.begin as usize,
            slots: OpenSlots::default(),
            error: None,
            compact_below: MAX_ONE_BYTE_MESSAGE_LENGTH + 1,
            speculate: true,
            use_shorts: true,
            root_short: core::ptr::null_mut(),
            root_max: 0,
        }
    }

    /// Forgets all state (slice, open slots, error, byte count).
    pub fn reset(&mut self) {
        self.slots.clear();
        self.root_short = core::ptr::null_mut();
        self.install_slice(Slice::empty());
        self.origin = self.slice_begin as usize;
        self.error = None;
    }

    /// Turns 1-byte length compaction of small nested messages on or off (on by
    /// default, as in Perfetto). Off gives the fixed 4-byte form everywhere,
    /// which makes output independent of where slice boundaries fall. Takes
    /// effect for messages opened afterwards.
    pub fn set_compaction(&mut self, on: bool) {
        self.compact_below = if on {
            MAX_ONE_BYTE_MESSAGE_LENGTH + 1
        } else {
            0
        };
        self.use_shorts = on && self.speculate;
    }

    /// Chooses how compaction is done: with short slots (the default, see the
    /// module docs) or, as Perfetto does, by reserving 4 bytes and moving the
    /// payload back when the message ends. Both give the same bytes within a
    /// slice; this switch exists to compare them in tests and benchmarks.
    pub fn set_speculative_compaction(&mut self, on: bool) {
        self.speculate = on;
        self.use_shorts = on && self.compact_below != 0;
    }

    /// Total bytes written so far, across slices.
    #[inline(always)]
    pub fn written(&self) -> usize {
        (self.cur as usize).wrapping_sub(self.origin)
    }

    /// Bytes the fast path may still write: the bytes left in the current
    /// slice when no short slot is open, possibly fewer while one is.
    #[inline(always)]
    pub fn remaining(&self) -> usize {
        self.end as usize - self.cur as usize
    }

    /// The first error, if any; later writes were dropped.
    #[inline]
    pub fn error(&self) -> Option<WriteError> {
        self.error
    }

    /// Records `e` unless an error is already recorded, and drops the current slice.
    #[cold]
    pub fn set_error(&mut self, e: WriteError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        // Open short slots cannot be sized any more: drop their lengths.
        let first_short = self.slots.first_short();
        self.slots.discard_from(first_short);
        self.root_short = core::ptr::null_mut();
        let written = self.written();
        let empty = Slice::empty();
        self.cur = empty.begin;
        self.end = empty.end;
        self.slice_end = empty.end;
        self.slice_begin = empty.begin;
        self.origin = (empty.begin as usize).wrapping_sub(written);
    }

    /// Where the next byte goes.
    #[inline]
    pub fn cursor(&self) -> *mut u8 {
        self.cur
    }

    /// Counts `n` bytes the caller wrote itself at [`StreamWriter::cursor`]
    /// as written, moving the cursor past them: for a delegate's owner that
    /// writes a whole small record straight into the slice (a TraceWriter's
    /// constant packet bytes). Returns `false`, moving nothing, when `n`
    /// bytes do not fit under the fast-path limit or a length slot (or a
    /// root prefix) is open.
    ///
    /// # Safety
    /// The current slice must still be valid for writes under the
    /// [`Delegate`] contract of the delegate this stream writes for, and
    /// the `n` bytes after the cursor must have been written (initialised)
    /// by the caller.
    #[inline]
    pub unsafe fn advance(&mut self, n: usize) -> bool {
        if n > self.remaining() || !self.slots.is_empty() || !self.root_short.is_null() {
            return false;
        }
        // SAFETY: `n` bytes fit under the limit, inside the current slice.
        self.cur = unsafe { self.cur.add(n) };
        true
    }

    /// Whether a root record opened now would get a speculative 1-byte
    /// length prefix ([`StreamWriter::begin_root_short`]): compaction is on
    /// and done with short slots.
    #[inline]
    pub fn compacts_with_short_slots(&self) -> bool {
        self.use_shorts
    }

    /// The current slice, from its start to its end (not just the written part).
    pub fn current_slice(&self) -> Slice {
        Slice {
            begin: self.slice_begin,
            end: self.slice_end,
        }
    }

    /// How many nested messages are open (length slots not yet backfilled).
    #[inline]
    pub fn open_slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The length slots of the nested messages currently open, each in its
    /// 4-byte form (open 1-byte slots are widened first, moving their bytes).
    ///
    /// # Safety
    /// The current slice must still be valid for writes under the
    /// [`Delegate`] contract of the delegate this stream writes for (the
    /// widening writes into it).
    pub unsafe fn open_slots(&mut self) -> &mut OpenSlots {
        // Short slots never leave the writer: callers only see 4-byte ones.
        self.upgrade_all_shorts();
        &mut self.slots
    }

    /// Forgets every open length slot: children leaked with `mem::forget`
    /// leave their slots open, and a record that ends with slots open is
    /// malformed. A slot redirected to a patch gets a zero length through
    /// `delegate.fill_patch`, so a delegate that releases patches in order is
    /// never held back by a length that will not come. Returns how many slots
    /// were open. Writes nothing into slice memory.
    #[cold]
    pub fn discard_open_slots(&mut self, delegate: &mut dyn Delegate) -> usize {
        let n = self.slots.len();
        fill_abandoned_patches(self.slots.iter(), delegate);
        self.slots.clear();
        if self.root_short.is_null() {
            self.end = self.slice_end;
        } else {
            self.recompute_limits();
        }
        n
    }

    /// Replaces the current slice without asking a delegate (a TraceWriter
    /// returning its chunk on flush) and returns how far the old one was filled.
    ///
    /// # Safety
    /// `slice` must satisfy the [`Delegate`] contract for the delegate this
    /// stream is used with: valid for writes and exclusive to this writer until
    /// that delegate's next `next_slice` call (or until the next `set_slice`).
    /// Length slots still open in the old slice stay in the stack, so that
    /// memory must stay valid for their 4-byte writes, or the slots must have
    /// been redirected (as a delegate does in `next_slice`).
    pub unsafe fn set_slice(&mut self, slice: Slice) -> *mut u8 {
        self.upgrade_all_shorts();
        self.install_slice(slice)
    }

    /// Makes `slice` current (no short slot may be open) and returns how far
    /// the old one was filled.
    fn install_slice(&mut self, slice: Slice) -> *mut u8 {
        debug_assert!(!self.any_short() && self.slots.shorts_innermost());
        let used_end = self.cur;
        self.origin = (slice.begin as usize).wrapping_sub(self.written());
        self.slice_begin = slice.begin;
        self.cur = slice.begin;
        self.end = slice.end;
        self.slice_end = slice.end;
        used_end
    }

    /// Sets the fast-path limit to address `limit` (at most the slice end),
    /// deriving the pointer from the slice so it keeps its provenance.
    #[inline(always)]
    fn set_end(&mut self, limit: usize) {
        self.end = self.slice_end.with_addr(limit);
    }

    /// Asks the delegate for a slice of at least `min_len` bytes; on failure the
    /// writer enters its error state. Returns whether a slice was obtained.
    #[cold]
    #[inline(never)]
    fn next_slice(&mut self, delegate: &mut dyn Delegate, min_len: usize) -> bool {
        if self.error.is_some() {
            return false;
        }
        // Delegates only ever see 4-byte slots.
        self.upgrade_all_shorts();
        match delegate.next_slice(self.cur, &mut self.slots, min_len) {
            Ok(slice) if slice.len() >= min_len => {
                self.install_slice(slice);
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
            self.cur = self.write_bytes_slow(delegate, data);
        }
    }

    /// [`StreamWriter::write_bytes`] past the fast-path limit. Returns the
    /// cursor (also stored in `self`): the inlined caller stores it again so
    /// LLVM keeps the cursor in a register on both paths instead of
    /// reloading it from memory after every append.
    #[cold]
    #[inline(never)]
    fn write_bytes_slow(&mut self, delegate: &mut dyn Delegate, data: &[u8]) -> *mut u8 {
        self.write_bytes_spanning(delegate, data);
        self.cur
    }

    /// Appends `data`, widening short slots and moving to new slices as needed.
    fn write_bytes_spanning(&mut self, delegate: &mut dyn Delegate, mut data: &[u8]) {
        loop {
            self.upgrade_for(data.len());
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
            self.cur = self.write_varints_slow(delegate, a, Some(b));
        }
    }

    /// [`StreamWriter::write_two_varints`] (or, with no `b`,
    /// [`StreamWriter::write_varint`]) past the fast-path limit; returns the
    /// cursor (see [`StreamWriter::write_bytes_slow`]).
    #[cold]
    #[inline(never)]
    fn write_varints_slow(
        &mut self,
        delegate: &mut dyn Delegate,
        a: u64,
        b: Option<u64>,
    ) -> *mut u8 {
        let mut buf = [0u8; 2 * MAX_VARINT_LEN];
        let n = encode_varint(a, &mut buf);
        let m = b.map_or(0, |b| encode_varint(b, &mut buf[n..]));
        self.write_bytes_spanning(delegate, &buf[..n + m]);
        self.cur
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
            self.cur = self.write_varints_slow(delegate, v, None);
        }
    }

    /// Appends a varint tag and `N` raw bytes (a fixed32/fixed64 field).
    #[inline(always)]
    pub(crate) fn write_tag_fixed<const N: usize>(
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
            self.cur = self.write_tag_fixed_slow(delegate, tag, &bytes);
        }
    }

    /// [`StreamWriter::write_tag_fixed`] past the fast-path limit; returns
    /// the cursor (see [`StreamWriter::write_bytes_slow`]).
    #[cold]
    #[inline(never)]
    fn write_tag_fixed_slow(
        &mut self,
        delegate: &mut dyn Delegate,
        tag: u32,
        bytes: &[u8],
    ) -> *mut u8 {
        let mut buf = [0u8; MAX_VARINT_LEN];
        let n = encode_varint(u64::from(tag), &mut buf);
        self.write_bytes_spanning(delegate, &buf[..n]);
        self.write_bytes_spanning(delegate, bytes);
        self.cur
    }

    /// Reserves 4 contiguous bytes for a length (moving to a new slice if fewer
    /// remain), pre-filled with a redundant zero, and returns where they are.
    ///
    /// # Safety
    /// `delegate` must be the delegate whose slices this stream has been
    /// writing into (the current slice must still be valid under its contract).
    #[inline]
    pub unsafe fn reserve_slot(&mut self, delegate: &mut dyn Delegate) -> SlotLocation {
        self.upgrade_for(SIZE_SLOT_LEN);
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
        // Room for a tag (at most 5 bytes for a u32) and a 4-byte slot, or a
        // 1-byte short slot plus its 3 bytes of headroom.
        if self.remaining() >= MAX_TAG_LEN + SIZE_SLOT_LEN {
            if self.use_shorts {
                return self.push_short(tag);
            }
            // A short slot can still be open with compaction now off (a
            // child leaked before the switch). A 4-byte slot must not go on
            // top of it (open short slots are the innermost ones): the slow
            // path widens it first.
            if self.any_short() {
                return self.begin_nested_slow(delegate, tag);
            }
            // SAFETY: room for the tag and the slot (checked above).
            let p = unsafe {
                let p = put_varint(self.cur, u64::from(tag));
                ptr::write_unaligned(p.cast::<[u8; SIZE_SLOT_LEN]>(), redundant_varint4(0));
                self.cur = p.add(SIZE_SLOT_LEN);
                p
            };
            self.slots.push_memory(p, self.written());
            self.slots.len()
        } else {
            self.begin_nested_slow(delegate, tag)
        }
    }

    /// [`StreamWriter::begin_nested`] near the fast-path limit: open short
    /// slots are upgraded first; then the tag and the slot may each need a
    /// new slice.
    #[cold]
    #[inline(never)]
    fn begin_nested_slow(&mut self, delegate: &mut dyn Delegate, tag: u32) -> usize {
        if self.any_short() {
            // The fast path's limit may be stricter than the exact one.
            self.recompute_limits();
            if self.use_shorts && self.remaining() >= MAX_TAG_LEN + SIZE_SLOT_LEN {
                return self.push_short(tag);
            }
        }
        self.upgrade_all_shorts();
        if self.use_shorts && self.remaining() >= MAX_TAG_LEN + SIZE_SLOT_LEN {
            return self.push_short(tag);
        }
        self.write_varint(delegate, u64::from(tag));
        // SAFETY: crate callers pass the delegate this stream is bound to
        // (`Message` guarantees it, see `Message::new_root`).
        let location = unsafe { self.reserve_slot(delegate) };
        self.slots.push(SizeSlot::new(location, self.written()));
        self.slots.len()
    }

    /// Closes the nested message opened at `depth` (and any deeper ones left
    /// open), backfilling its length. Returns the payload size.
    #[inline(always)]
    pub(crate) fn end_nested(&mut self, delegate: &mut dyn Delegate, depth: usize) -> usize {
        // Fastest path, inlined: a short slot; the limit kept its payload at
        // most 127 bytes, so its length is one byte. (Any deeper slot left
        // open by a leaked child is short too, and keeps its zero length.)
        if let Some((p, saved_end)) = self.slots.inline_short(depth) {
            let cur = self.cur;
            let size = (cur as usize) - (p as usize) - 1;
            // SAFETY: an open short slot lies in the current slice.
            unsafe { *p = size as u8 };
            self.slots.truncate_inline(depth - 1);
            // The limit that held before the slot was opened (or re-derived
            // since); the cursor is below it, as it was below this slot's.
            self.set_end(saved_end);
            return size;
        }
        self.end_nested_long(delegate, depth)
    }

    /// [`StreamWriter::end_nested`] for a 4-byte slot (or anything unusual).
    #[inline(never)]
    fn end_nested_long(&mut self, delegate: &mut dyn Delegate, depth: usize) -> usize {
        if self.slots.top_is_short() {
            return self.end_nested_slow(delegate, depth);
        }
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
        if depth & GROUP_DEPTH_MARK != 0 {
            let id = (depth & !GROUP_DEPTH_MARK) as u32;
            let tag = crate::wire::make_tag(id, crate::WireType::EndGroup);
            self.write_varint(delegate, u64::from(tag));
            return 0;
        }
        // Deeper slots only remain if a child was leaked with `mem::forget`;
        // they keep their pre-filled zero length (a patch gets a zero too, so
        // the delegate's patch list is not held back).
        fill_abandoned_patches(self.slots.iter().skip(depth), delegate);
        let Some(slot) = self.slots.pop_to(depth - 1) else {
            return 0;
        };
        if slot.is_short() {
            self.recompute_limits();
            let p = slot.ptr;
            // An open short slot lies in the current slice and its payload
            // runs from just after it to the cursor (at most 127 bytes).
            let size = (self.cur as usize) - (p as usize) - 1;
            // SAFETY: `p` is in the current slice (see above).
            unsafe { *p = size.min(MAX_ONE_BYTE_MESSAGE_LENGTH) as u8 };
            return size;
        }
        let size = self.written().saturating_sub(slot.aux);
        if size > MAX_MESSAGE_LENGTH {
            // The record is lost (error state); a patch still gets a value so
            // later patches of the same delegate are not held back.
            fill_abandoned_patches(core::iter::once(&slot), delegate);
            self.set_error(WriteError::MessageTooLong { len: size });
            return size;
        }
        match slot.location() {
            SlotLocation::Memory(p) => {
                // SAFETY: crate callers pass the delegate this stream is
                // bound to, so the current slice is still valid for writes.
                if unsafe { self.try_compact(p, size, MAX_ONE_BYTE_MESSAGE_LENGTH) } {
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
    /// Any `slot` value is accepted: it is only written through after the
    /// checks prove `slot..cur` lies in the current slice.
    ///
    /// # Safety
    /// The current slice must still be valid for writes under the
    /// [`Delegate`] contract of the delegate this stream writes for.
    #[inline]
    pub unsafe fn try_compact(&mut self, slot: *mut u8, size: usize, max: usize) -> bool {
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

/// Gives every slot of `slots` that was redirected to a patch a zero length:
/// its record is abandoned, but the delegate must still see the patch filled.
#[cold]
fn fill_abandoned_patches<'s>(
    slots: impl Iterator<Item = &'s SizeSlot>,
    delegate: &mut dyn Delegate,
) {
    for slot in slots {
        if let SlotLocation::Patch(id) = slot.location() {
            delegate.fill_patch(id, redundant_varint4(0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_counts_bytes_written_at_the_cursor_within_the_limit() {
        let mut buf = [0u8; 16];
        // SAFETY: `buf` outlives the writer and nothing else touches it.
        let slice = unsafe { Slice::from_raw_parts(buf.as_mut_ptr(), buf.len()) };
        let mut s = StreamWriter::with_slice(slice);
        assert!(s.compacts_with_short_slots());
        // SAFETY: the slice has 16 bytes; two are written before they count.
        unsafe {
            s.cursor().write(7);
            s.cursor().add(1).write(9);
            assert!(s.advance(2));
        }
        assert_eq!(s.written(), 2);
        // SAFETY: nothing is written; the call refuses.
        assert!(!unsafe { s.advance(15) });
        assert_eq!(s.written(), 2);
        // Not while a root prefix is open.
        // SAFETY: the slice is still `buf`.
        let p = unsafe { s.begin_root_short(126) };
        assert!(p.is_some());
        // SAFETY: refused, nothing moves.
        assert!(!unsafe { s.advance(1) });
        s.set_compaction(false);
        assert!(!s.compacts_with_short_slots());
        assert_eq!(buf[..2], [7, 9]);
    }
}
