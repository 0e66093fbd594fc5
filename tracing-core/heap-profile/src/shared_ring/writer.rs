//! A client thread's side of the ring: reserving a frame by a
//! compare-and-swap of the reservation word against the room the read
//! position leaves, filling it with no lock held, and publishing it with
//! its commit tag (the protocol is in `mod.rs`, the reader's side in
//! `reader.rs`).

// The loom build leaves out the client, which uses some of the methods.
#![cfg_attr(zerotrace_loom, allow(dead_code))]

use super::*;
/// Why a frame could not be placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRoom {
    /// Not now: the reader has not caught up.
    Full,
    /// Never: the positions the helper left are impossible.
    Corrupt,
    /// The reservation word is closed, or open for another session: this
    /// record is not written (the session it was for is over).
    Closed,
}

/// Where a frame goes (from [`RingWriter::reserve`]).
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// The frame's position (bytes ever reserved before it, modulo
    /// 2^[`POS_BITS`]).
    pub(super) pos: u64,
    /// Its offset in the ring.
    pub(super) off: usize,
    /// The bytes reserved.
    pub(super) len: usize,
}

#[cfg(zerotrace_loom)]
impl Slot {
    /// The frame's position (the loom models check the reader's order by
    /// it).
    pub fn pos(&self) -> u64 {
        self.pos
    }
}

/// The client's side: places frames, from any number of threads at once,
/// each reserving its bytes by a compare-and-swap on the reservation word
/// and publishing them by its frame's commit tag. A writer belongs to the
/// session whose open word it was made from: its reservations succeed only
/// while that word is open.
pub struct RingWriter<'a> {
    pub(super) ctl: &'a Control,
    pub(super) data: RingMem<'a>,
    pub(super) ring: u64,
    pub(super) session: u32,
    /// The hot window ([`hot_window`]; 0: none).
    pub(super) hot: u64,
}

/// Whether a writer takes a ring of `ring` bytes over `data_len` bytes of
/// mapping: a power of two, at least the smallest ring, at most
/// [`MAX_RING`], and inside the mapping.
#[inline]
pub(crate) fn usable_ring(ring: u64, data_len: usize) -> bool {
    ring >= MIN_RING
        && ring.is_power_of_two()
        && ring <= MAX_RING
        && usize::try_from(ring).is_ok_and(|r| r <= data_len)
}

/// `n` rounded up to [`FRAME_ALIGN`].
pub(crate) fn frame_round(n: usize) -> usize {
    n.div_ceil(FRAME_ALIGN as usize) * FRAME_ALIGN as usize
}

impl<'a> RingWriter<'a> {
    /// A writer for `session` over the ring at `data`, `ring` bytes (the
    /// session's size, checked against `data_len`, the mapping's, by the
    /// caller's own knowledge): `None` when `ring` is not a usable size.
    ///
    /// # Safety
    /// `data` is valid for writes of `data_len` bytes for `'a`, 16-aligned,
    /// and no one in this process accesses them meanwhile but through
    /// writers made this way (each writes only the bytes it reserved).
    #[cfg(not(zerotrace_loom))]
    pub(crate) unsafe fn new(
        ctl: &'a Control,
        data: *mut u8,
        data_len: usize,
        ring: u64,
        session: u32,
    ) -> Option<Self> {
        // SAFETY: caller contract; `with_mem` keeps every offset inside
        // `ring <= data_len` bytes.
        let data = unsafe { RingMem::from_ptr(data) };
        Self::with_mem(ctl, data, data_len, ring, session)
    }

    /// A writer for `session` over a loom model's ring, `ring` bytes of it
    /// (as [`RingWriter::new`]).
    #[cfg(zerotrace_loom)]
    pub fn over(ctl: &'a Control, data: &'a LoomRing, ring: u64, session: u32) -> Option<Self> {
        Self::with_mem(ctl, data.mem(), data.len(), ring, session)
    }

    /// A writer over `data`, which holds `data_len` bytes, if `ring` is a
    /// usable size.
    #[inline]
    pub(super) fn with_mem(
        ctl: &'a Control,
        data: RingMem<'a>,
        data_len: usize,
        ring: u64,
        session: u32,
    ) -> Option<Self> {
        usable_ring(ring, data_len).then_some(RingWriter {
            ctl,
            data,
            ring,
            session: session & SESSION_MASK,
            // Adaptive sampling reads the bytes reserved and unread as the
            // ring's filling, which a hot window's pad would make most of
            // the ring every lap: such a session has the whole ring.
            hot: if ctl.adaptive_threshold.load(Ordering::Relaxed) == 0 {
                hot_window(ring)
            } else {
                0
            },
        })
    }

    /// This writer with a hot window of `hot` bytes (0: none), a multiple
    /// of [`FRAME_ALIGN`] below the ring's size (the tests' and models'
    /// small rings).
    #[cfg(any(test, zerotrace_loom))]
    pub fn with_hot_window(mut self, hot: u64) -> Self {
        assert!(hot < self.ring && hot % FRAME_ALIGN == 0);
        self.hot = hot;
        self
    }

    /// The session this writer writes for.
    pub(crate) fn session(&self) -> u32 {
        self.session
    }

    /// The most stack bytes an allocation frame may carry so that it fits
    /// once the reader has caught up, wherever the write position is: a
    /// frame of at most half the ring always does (a pad to the ring's end
    /// is shorter than the frame), a larger one may never fit, and a
    /// writer that waits for room would wait forever.
    pub(crate) fn max_stack_bytes(&self) -> usize {
        let half = usize::try_from(self.ring / 2).unwrap_or(usize::MAX);
        let align = FRAME_ALIGN as usize;
        (half & !(align - 1)).saturating_sub(ALLOC_FIXED) & !(align - 1)
    }

    /// Bytes reserved and not yet read (as of the read position's last
    /// store).
    pub(crate) fn pending(&self) -> u64 {
        let w = word_pos(self.ctl.reserved.load(Ordering::Relaxed));
        let r = self.ctl.read_pos.load(Ordering::Acquire);
        w.wrapping_sub(r) & POS_MASK
    }

    /// Reserves room for a frame of `len` bytes (rounded to
    /// [`FRAME_ALIGN`]) with at most `cap` bytes pending afterwards; when
    /// the frame does not fit before the ring's end, the reservation also
    /// takes the rest of the ring, which becomes a pad frame this writer
    /// commits at once. The frame itself is published by
    /// [`RingWriter::commit_alloc`] (or is a free, [`RingWriter::push_free`]);
    /// until then the reader stops at it.
    ///
    /// `read_seen` is the read position as this thread last loaded it, this
    /// session, if it did, with the reader's lap count ([`Control::read_lap`])
    /// loaded before it. The reader only moves the position forward, so an
    /// old one understates the room, and the frame goes by it when it fits
    /// by it and the lap count, loaded after the reservation word, is still
    /// the one kept; otherwise the count and then the position are loaded
    /// anew, checked, and kept when the frame fits by them. So while the ring
    /// has room the reader's line stays on the reader's core (the count's
    /// line is one the samplers read anyway, and changes once every
    /// 2^[`LAP_SHIFT`] bytes).
    ///
    /// Why the count makes a kept position safe: positions are compared
    /// modulo 2^[`POS_BITS`], so a position kept while the reader moved
    /// 2^40 bytes on would read as recent, and a frame would go over unread
    /// bytes. Take positions unwrapped, and the quarter `q(x)` of a position
    /// (`x / 2^LAP_SHIFT`): the reader bumps the count to `k` before it
    /// stores a position of quarter `k` (a step of it is at most a ring, at
    /// most [`MAX_RING`]: one quarter at most). The kept position `r` was
    /// loaded after the count `L` kept with it, so after the reader's last
    /// store of quarter `L - 1`: `q(r) >= L - 1`. The word's position `p` is
    /// at most a ring past a read position `r'` that the writer whose
    /// compare-and-swap left it checked (by this same rule, or loaded
    /// anew); `r'`'s store follows its bump, and comes before that writer's
    /// Acquire load of it, its compare-and-swap, this call's Acquire load
    /// of the word and then of the count: a count still `L` means
    /// `q(r') <= L`. So `p - r < 2 * 2^LAP_SHIFT + MAX_RING < 2^POS_BITS`,
    /// and `p >= r` (the reader stored `r` after a load of the word this
    /// call's load follows): the masked difference is the true one, no
    /// alias. The count itself wraps after 2^32 laps, 2^70 bytes.
    pub fn reserve(
        &self,
        len: usize,
        cap: u64,
        read_seen: &mut Option<ReadSeen>,
    ) -> Result<Slot, NoRoom> {
        let len = frame_round(len.max(HEADER));
        let limit = self.ring.min(cap);
        let mut w = self.ctl.reserved.load(Ordering::Acquire);
        let (pos, pad) = loop {
            if word_closed(w) || word_session(w) != self.session {
                return Err(NoRoom::Closed);
            }
            let pos = word_pos(w);
            if pos % FRAME_ALIGN != 0 {
                return Err(NoRoom::Corrupt);
            }
            let off = (pos % self.ring) as usize;
            let tail = self.ring as usize - off;
            let room = |r: u64, need: u64| {
                let used = pos.wrapping_sub(r) & POS_MASK;
                (used <= self.ring).then(|| used + need <= limit)
            };
            // The read position loaded in this round, after `w`: the room
            // it shows is true as it stands.
            let mut loaded = None;
            let pad = if tail < len {
                tail
            } else if self.leaves_hot_window(off, len) {
                // The frame would reach past the hot window (or, beyond it,
                // past another sixteenth of it): back to the ring's start
                // if the reader is close behind, its position loaded anew
                // (once a lap of the window while the reader keeps up).
                let now = self.load_read();
                loaded = Some(now);
                let used = pos.wrapping_sub(now.pos) & POS_MASK;
                if now.pos <= POS_MASK
                    && used <= self.hot / 2
                    && room(now.pos, (tail + len) as u64) == Some(true)
                {
                    tail
                } else {
                    0
                }
            } else {
                0
            };
            let need = (pad + len) as u64;
            let fits = |r: u64| room(r, need);
            let by_kept = loaded.is_none()
                && read_seen.is_some_and(|kept| {
                    fits(kept.pos) == Some(true)
                        && self.ctl.read_lap.load(Ordering::Acquire) == kept.lap
                });
            if !by_kept {
                let now = match loaded {
                    Some(now) => now,
                    None => self.load_read(),
                };
                let r = now.pos;
                if r > POS_MASK {
                    return Err(NoRoom::Corrupt);
                }
                match fits(r) {
                    Some(true) => *read_seen = Some(now),
                    Some(false) => return Err(NoRoom::Full),
                    None => {
                        // The reader is past the position loaded: other
                        // writers reserved (and the reader took) frames
                        // since, or the positions are impossible.
                        let now = self.ctl.reserved.load(Ordering::Acquire);
                        if now == w || r.wrapping_sub(pos) & POS_MASK > self.ring {
                            return Err(NoRoom::Corrupt);
                        }
                        w = now;
                        continue;
                    }
                }
            }
            let next = (w & !POS_MASK) | (pos.wrapping_add(need) & POS_MASK);
            match self.ctl.reserved.compare_exchange_weak(
                w,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break (pos, pad),
                Err(now) => w = now,
            }
        };
        #[cfg(all(miri, not(zerotrace_loom)))]
        {
            // Miri's weak-memory emulation loses track of an atomic store's
            // buffer when a load of another size overlaps it, and then
            // panics at the next atomic store there (an interpreter bug,
            // not a race): under Miri every reserved byte is written plainly
            // first (all but the headers, which the reader may load before
            // the commit: those are only ever written atomically, four
            // `u32` at the same places), so no buffer is left where a
            // header may later be stored.
            let off = (pos % self.ring) as usize;
            let pos2 = (pos + pad as u64) & POS_MASK;
            for (o, n) in [(off, pad), ((pos2 % self.ring) as usize, len)] {
                if n > HEADER {
                    // SAFETY: reserved by this writer, inside the ring.
                    unsafe { self.data.ptr(o + HEADER).write_bytes(0, n - HEADER) };
                }
            }
        }
        if pad > 0 {
            let off = (pos % self.ring) as usize;
            // SAFETY: `off + pad <= ring <= data_len`, `pad >= HEADER` (the
            // room left at the ring's end is a multiple of FRAME_ALIGN); the
            // bytes are ours (reserved above), and the reader does not read
            // them before the tag.
            unsafe {
                self.header(off, pos, pad as u32, KIND_PAD, 0);
                self.publish(off, pos);
            }
        }
        let pos = pos.wrapping_add(pad as u64) & POS_MASK;
        Ok(Slot {
            pos,
            off: (pos % self.ring) as usize,
            len,
        })
    }

    /// The read position loaded now, with the lap count loaded before it
    /// (both Acquire, in that order: see [`RingWriter::reserve`]).
    #[inline]
    pub(super) fn load_read(&self) -> ReadSeen {
        let lap = self.ctl.read_lap.load(Ordering::Acquire);
        let pos = self.ctl.read_pos.load(Ordering::Acquire);
        ReadSeen { pos, lap }
    }

    /// Whether a frame of `len` bytes at `off` might go back to the hot
    /// window's start: it reaches past the window's end, from inside it
    /// (or right at it), or past a sixteenth of the window beyond it (a
    /// writer the reader left behind goes back as soon as the reader is
    /// close again, rather than at the ring's end).
    #[inline]
    pub(super) fn leaves_hot_window(&self, off: usize, len: usize) -> bool {
        let hot = self.hot as usize;
        if hot == 0 {
            return false;
        }
        if off <= hot {
            return off + len > hot;
        }
        let stride = (hot / 16).max(FRAME_ALIGN as usize);
        off / stride != (off + len) / stride
    }

    /// Asks for the lines after `slot` (committed), where the next frame
    /// goes, to be written soon on this core, unless another thread has
    /// reserved it already (it is writing them). They were last read on
    /// the helper's core: their transfer then overlaps what the program
    /// does until its next sample, rather than hold up that sample's copy.
    #[cfg(not(zerotrace_loom))]
    #[inline]
    pub(crate) fn prefetch_after(&self, slot: Slot) {
        let end = (slot.pos + slot.len as u64) & POS_MASK;
        if word_pos(self.ctl.reserved.load(Ordering::Relaxed)) != end {
            return;
        }
        let from = slot.off + slot.len;
        let n = (self.ring as usize - from).min(PREFETCH_NEXT);
        self.data.prefetch_for_write(from, n);
    }

    /// Where a slot's stack bytes go (after the allocation's fixed part).
    #[cfg(not(zerotrace_loom))]
    pub(crate) fn stack_ptr(&self, slot: Slot) -> *mut u8 {
        self.data.ptr(slot.off + ALLOC_FIXED)
    }

    /// Writes a slot's stack bytes (at most its room after the
    /// allocation's fixed part): under loom, what the client's `asm!` copy
    /// to [`RingWriter::stack_ptr`] does in the normal build.
    #[cfg(zerotrace_loom)]
    pub fn write_stack(&self, slot: Slot, bytes: &[u8]) {
        assert!(bytes.len() <= slot.len.saturating_sub(ALLOC_FIXED));
        // SAFETY: inside the slot, which this writer reserved.
        unsafe { self.data.write_bytes(slot.off + ALLOC_FIXED, bytes) }
    }

    /// Writes the header of a frame at `off`, position `pos`, all but its
    /// commit tag.
    ///
    /// # Safety
    /// `off + HEADER` is within the ring, in bytes this writer reserved.
    #[inline]
    pub(super) unsafe fn header(&self, off: usize, pos: u64, len: u32, kind: u32, flags: u32) {
        // SAFETY: caller contract; `off` is 16-aligned and so is `data`;
        // atomics, as the reader loads the header words.
        unsafe {
            self.data.store_u32(off + 4, len, Ordering::Relaxed);
            self.data
                .store_u32(off + 8, header_ident(pos, self.session), Ordering::Relaxed);
            self.data
                .store_u32(off + 12, kind | flags << 8, Ordering::Relaxed);
        }
    }

    /// Publishes the frame at `off`, position `pos`: its commit tag, last,
    /// with Release (everything written to the frame before is the
    /// reader's once it loads the tag with Acquire).
    ///
    /// # Safety
    /// As for [`RingWriter::header`].
    #[inline]
    pub(super) unsafe fn publish(&self, off: usize, pos: u64) {
        // SAFETY: caller contract.
        unsafe {
            self.data
                .store_u32(off, commit_tag(pos, self.session), Ordering::Release)
        }
    }

    /// Fills `slot` with a sampled allocation (its stack bytes, if any,
    /// already at [`RingWriter::stack_ptr`]) and publishes it.
    pub fn commit_alloc(
        &self,
        slot: Slot,
        addr: u64,
        sample_size: u64,
        stack: Option<(super::super::capture::Regs, usize, bool)>,
    ) {
        let (regs, stack_len, maxed) = match stack {
            Some((r, n, m)) => (
                (r.ip, r.sp, r.bp),
                n.min(slot.len.saturating_sub(ALLOC_FIXED)),
                m,
            ),
            None => ((0, 0, 0), 0, false),
        };
        let flags =
            if stack.is_some() { FLAG_HAS_STACK } else { 0 } | if maxed { FLAG_MAXED } else { 0 };
        let words = [addr, sample_size, regs.0, regs.1, regs.2, stack_len as u64];
        // SAFETY: the slot's `len >= ALLOC_FIXED` bytes at `off` are inside
        // the ring and reserved by this writer (reserve).
        unsafe {
            self.header(slot.off, slot.pos, slot.len as u32, KIND_ALLOC, flags);
            for (i, w) in words.iter().enumerate() {
                self.data.write_u64(slot.off + HEADER + 8 * i, *w);
            }
            self.publish(slot.off, slot.pos);
        }
    }

    /// Places and publishes the free of `addr` (`read_seen` as for
    /// [`RingWriter::reserve`]).
    pub fn push_free(
        &self,
        addr: u64,
        cap: u64,
        read_seen: &mut Option<ReadSeen>,
    ) -> Result<(), NoRoom> {
        let slot = self.reserve(FREE_FRAME, cap, read_seen)?;
        // SAFETY: as in `commit_alloc`, for FREE_FRAME bytes.
        unsafe {
            self.header(slot.off, slot.pos, FREE_FRAME as u32, KIND_FREE, 0);
            self.data.write_u64(slot.off + HEADER, addr);
            self.publish(slot.off, slot.pos);
        }
        Ok(())
    }
}
