//! Short slots: the stream writer's speculative 1-byte length prefixes (see
//! the module docs of [`super`]): opening, widening to the 4-byte form, the
//! fast-path limit they impose, and the root record's prefix.

use core::ptr;

use super::StreamWriter;
use super::put_varint::put_varint;
use crate::delegate::{SizeSlot, SlotLocation};
use crate::error::WriteError;
use crate::varint::redundant_varint4;
use crate::wire::{MAX_ONE_BYTE_MESSAGE_LENGTH, SIZE_SLOT_LEN};

impl StreamWriter {
    /// Re-derives the exact fast-path limit, and the exact limits saved in
    /// the open short slots, from scratch (slow paths): the slice end less 3
    /// bytes of headroom per open short slot (the root's included), or 127
    /// bytes past the outermost short slot if that comes first.
    pub(super) fn recompute_limits(&mut self) {
        const HEADROOM: usize = SIZE_SLOT_LEN - 1;
        let slice_end = self.slice_end as usize;
        let cur = self.cur as usize;
        // Short slots are only opened with their headroom free, so neither
        // subtraction can pass the cursor; the clamp keeps `cur <= end`
        // (which `remaining` relies on) even if that were ever broken.
        let exact = |limit: usize, open: usize| {
            limit
                .min(slice_end.saturating_sub(HEADROOM * open))
                .min(slice_end)
                .max(cur)
        };
        let mut open = 0;
        let mut limit = usize::MAX;
        if !self.root_short.is_null() {
            open = 1;
            limit = (self.root_short as usize) + 1 + self.root_max;
        }
        let first = self.slots.first_short();
        for slot in self.slots.iter_mut().skip(first) {
            // The limit that held just before this slot was opened.
            slot.aux = exact(limit, open);
            open += 1;
            limit = limit.min((slot.ptr as usize) + 1 + MAX_ONE_BYTE_MESSAGE_LENGTH);
        }
        self.set_end(exact(limit, open));
    }

    /// Turns the outermost open short slot into a 4-byte slot: its payload
    /// moves 3 bytes forward into the headroom kept for it.
    #[cold]
    #[inline(never)]
    pub(super) fn upgrade_outermost_short(&mut self) {
        if !self.root_short.is_null() {
            self.upgrade_root_short();
            return;
        }
        if !self.headroom_left() {
            return;
        }
        let i = self.slots.first_short();
        let Some(slot) = self.slots.get(i) else {
            return;
        };
        let p = slot.ptr;
        let payload = (self.cur as usize) - (p as usize) - 1;
        // SAFETY: the short slot and its payload `p..cur` lie in the current
        // slice, and 3 bytes after `cur` are in it too (checked above).
        unsafe {
            ptr::copy(p.add(1), p.add(SIZE_SLOT_LEN), payload);
            ptr::write_unaligned(p.cast::<[u8; SIZE_SLOT_LEN]>(), redundant_varint4(0));
            self.cur = self.cur.add(SIZE_SLOT_LEN - 1);
        }
        // Slot `i` keeps its address but its payload, and everything
        // inside it, moved 3 bytes forward.
        self.slots.shift_from(i + 1, SIZE_SLOT_LEN - 1);
        let payload_start = self.written() - payload;
        if let Some(s) = self.slots.get_mut(i) {
            *s = SizeSlot::new(SlotLocation::Memory(p), payload_start);
        }
        self.recompute_limits();
    }

    /// Whether 3 bytes after the cursor are free for widening a short slot.
    /// Always true: a short slot is only opened with 3 bytes of headroom
    /// under the fast-path limit, and `cur <= end` holds. Should that ever
    /// break, the writer enters its error state instead of writing past the
    /// slice.
    #[inline]
    pub(super) fn headroom_left(&mut self) -> bool {
        if (self.slice_end as usize) - (self.cur as usize) >= SIZE_SLOT_LEN - 1 {
            return true;
        }
        debug_assert!(false, "short-slot headroom used up");
        self.set_error(WriteError::OutOfSpace {
            requested: SIZE_SLOT_LEN - 1,
        });
        false
    }

    /// Whether any short slot (the root's included) is open.
    #[inline(always)]
    pub(super) fn any_short(&self) -> bool {
        !self.root_short.is_null() || self.slots.top_is_short()
    }

    /// Upgrades every open short slot (before the slice is left).
    #[inline]
    pub(super) fn upgrade_all_shorts(&mut self) {
        while self.any_short() {
            self.upgrade_outermost_short();
        }
    }

    /// Upgrades short slots until `need` bytes fit under the (exact)
    /// fast-path limit or none is left.
    #[inline]
    pub(super) fn upgrade_for(&mut self, need: usize) {
        if !self.any_short() {
            return;
        }
        self.recompute_limits();
        while self.remaining() < need && self.any_short() {
            self.upgrade_outermost_short();
        }
    }

    /// Turns the root's 1-byte prefix into 4 zero bytes, moving the record
    /// (and every open slot inside it) 3 bytes forward into its headroom.
    #[cold]
    pub(super) fn upgrade_root_short(&mut self) {
        if !self.headroom_left() {
            return;
        }
        let p = core::mem::replace(&mut self.root_short, core::ptr::null_mut());
        let payload = (self.cur as usize) - (p as usize) - 1;
        // SAFETY: the root prefix and its record `p..cur` lie in the current
        // slice, and 3 bytes after `cur` are in it too (checked above).
        unsafe {
            ptr::copy(p.add(1), p.add(SIZE_SLOT_LEN), payload);
            ptr::write_bytes(p, 0, SIZE_SLOT_LEN);
            self.cur = self.cur.add(SIZE_SLOT_LEN - 1);
        }
        // Every open slot lies inside the record, which has not left the slice.
        self.slots.shift_from(0, SIZE_SLOT_LEN - 1);
        self.recompute_limits();
    }

    /// Starts a root record (such as a trace packet fragment) with a
    /// speculative 1-byte length prefix, for records of at most `max` bytes
    /// (at most 127). Returns the prefix's address, or `None` (nothing
    /// written) when compaction is off, a prefix is already open, nested
    /// messages are open, or fewer than 8 bytes fit.
    ///
    /// While [`StreamWriter::root_short`] still returns the address, the
    /// record is whole in this slice and at most `max` bytes; finish it with
    /// [`StreamWriter::end_root_short`]. If it grows past `max` or the slice
    /// is left, the prefix is first widened to 4 zero bytes at the same
    /// address, the record then starting 4 bytes after it.
    ///
    /// # Safety
    /// The current slice must still be valid for writes under the
    /// [`Delegate`](crate::Delegate) contract of the delegate this stream writes for.
    #[inline]
    pub unsafe fn begin_root_short(&mut self, max: usize) -> Option<*mut u8> {
        if self.compact_below == 0
            || !self.speculate
            || !self.root_short.is_null()
            || !self.slots.is_empty()
            || self.remaining() < 2 * SIZE_SLOT_LEN
        {
            return None;
        }
        let p = self.cur;
        // SAFETY: at least 8 bytes fit under the limit, inside the slice.
        unsafe {
            *p = 0;
            self.cur = p.add(1);
        }
        self.root_short = p;
        self.root_max = max.min(MAX_ONE_BYTE_MESSAGE_LENGTH);
        // No slot is open, so this is the exact limit.
        let headroom_end = (self.slice_end as usize) - (SIZE_SLOT_LEN - 1);
        self.set_end(headroom_end.min((p as usize) + 1 + self.root_max));
        Some(p)
    }

    /// The open 1-byte root prefix, if it has not been widened.
    #[inline]
    pub fn root_short(&self) -> Option<*mut u8> {
        (!self.root_short.is_null()).then_some(self.root_short)
    }

    /// Writes the record size into the open 1-byte root prefix and closes it;
    /// `None` if no prefix is open (it was widened: the caller writes a 4-byte
    /// size at its address).
    ///
    /// # Safety
    /// As for [`StreamWriter::begin_root_short`]: the prefix lies in the
    /// current slice, which must still be valid for writes.
    #[inline]
    pub unsafe fn end_root_short(&mut self) -> Option<usize> {
        let p = self.root_short;
        if p.is_null() {
            return None;
        }
        let size = (self.cur as usize) - (p as usize) - 1;
        // SAFETY: an open root prefix lies in the current slice, and the
        // limit kept the record at most 127 bytes.
        unsafe { *p = size.min(MAX_ONE_BYTE_MESSAGE_LENGTH) as u8 };
        self.root_short = core::ptr::null_mut();
        if self.slots.top_is_short() {
            // Only if a nested child inside the record was leaked.
            self.recompute_limits();
        } else {
            self.end = self.slice_end;
        }
        Some(size)
    }

    /// Writes `tag` and a 1-byte short slot (see the module docs); the caller
    /// checked that 9 bytes fit under the fast-path limit.
    #[inline(always)]
    pub(super) fn push_short(&mut self, tag: u32) -> usize {
        // SAFETY: at least 9 bytes fit under `end` (≤ the slice end): the tag
        // takes at most 5, the slot 1, and 3 stay free as headroom.
        let p = unsafe {
            let p = put_varint(self.cur, u64::from(tag));
            *p = 0;
            self.cur = p.add(1);
            p
        };
        let saved = self.end;
        self.slots.push_short(p, saved as usize);
        // Keep 3 more bytes of headroom, and at most 127 payload bytes. (An
        // outer short slot's limit is lower than this one's, so with one open
        // this may be up to 3 bytes stricter than needed; see the module docs.)
        let headroom_end = saved.wrapping_sub(SIZE_SLOT_LEN - 1);
        let cap = p.wrapping_add(1 + MAX_ONE_BYTE_MESSAGE_LENGTH);
        self.end = if cap < headroom_end {
            cap
        } else {
            headroom_end
        };
        self.slots.len()
    }
}
