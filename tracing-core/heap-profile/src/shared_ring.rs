//! The memory a preloaded client shares with its helper process (the
//! split heapprofd makes between a profiled process and the profiler):
//! a control block of atomics, through which the helper turns sampling on
//! and off and the client says how it fares, and a byte ring of records
//! (sampled allocations with their registers and stack copy, frees of
//! sampled addresses) that the client's threads write, any number at once
//! and with no lock, and the helper reads.
//!
//! Each side reads what the other wrote as untrusted: the helper reads
//! every byte with atomic loads (a frame's header and fixed part copied
//! out before it parses them, a stack's words in place, as the unwinder
//! asks for them) and checks every length against the ring, and the client
//! only trusts what it knows itself (the mapping's size) when it decides
//! where to write.
//!
//! The ring's protocol. One word, the reservation word, holds a closed
//! bit, the session and the reserved end of the ring. A client thread
//! reserves a frame by a compare-and-swap that moves the end on (having
//! checked the room against the read position), only in the open session
//! it read; it then fills the frame (the stack copy included) with no lock
//! held, and publishes it by storing the frame's first header word last,
//! with Release: a commit tag computed from the frame's position and
//! session, which bytes left by earlier laps or sessions never equal. A
//! reservation that does not fit before the ring's end also takes the
//! rest of it, as a pad frame its writer commits at once. The helper takes
//! frames in order: at its position it loads the tag with Acquire and
//! takes the frame only when the tag is this frame's; a frame reserved and
//! not yet committed stops it until a later drain.
//!
//! A session's ring is set up by the helper while no client thread
//! writes it, through the reservation word alone: the helper closes it
//! (no reservation succeeds after, and a thread whose compare-and-swap
//! fails, or that finds the word closed or another session's, gives up
//! the record), waits, bounded, until every frame reserved before the
//! close is committed (it walks the headers from the read position to the
//! closed end), resets the positions and the settings, and opens the word
//! for the new session with Release.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

use std::marker::PhantomData;

use zerotrace_unwind::StackCopy;

use super::capture::{ASM_COPY, copy_bytes_asm};
#[cfg(test)]
use super::{
    capture::Captured,
    record_queue::{AllocRecord, Record},
};

/// The control block's page, at the mapping's start.
pub(crate) const CONTROL_BYTES: usize = 4096;

/// Buckets of the free filter, after the control block (64 under Miri,
/// which tracks each byte of the test's mapping).
#[cfg(not(miri))]
pub(crate) const FILTER_BUCKETS: usize = 1 << 19;
#[cfg(miri)]
pub(crate) const FILTER_BUCKETS: usize = 64;

/// Bytes before the ring: the control block's page and the free filter.
pub(crate) const RING_OFFSET: usize = (CONTROL_BYTES + FILTER_BUCKETS * 2).next_multiple_of(4096);

/// Frames start and end on this boundary, and a ring's size is a multiple
/// of it, so the room left at a ring's end always holds a header.
pub(crate) const FRAME_ALIGN: u64 = 16;

/// A frame's header, four `u32`: the commit tag (written last, see
/// [`commit_tag`]), the length, the session, the kind and the flags
/// (`kind | flags << 8`).
const HEADER: usize = 16;
/// An allocation frame before its stack bytes: the header and six `u64`
/// (address, sample size, ip, sp, bp, stack length).
pub(crate) const ALLOC_FIXED: usize = HEADER + 48;
/// A free frame: the header and the address, rounded to [`FRAME_ALIGN`].
const FREE_FRAME: usize = 32;

const KIND_PAD: u32 = 0;
const KIND_ALLOC: u32 = 1;
const KIND_FREE: u32 = 2;

const FLAG_HAS_STACK: u32 = 1;
const FLAG_MAXED: u32 = 2;

/// Positions (bytes ever reserved, this session) are kept modulo
/// 2^POS_BITS, in the low bits of the reservation word.
pub(crate) const POS_BITS: u32 = 40;
/// The position's bits.
pub(crate) const POS_MASK: u64 = (1 << POS_BITS) - 1;
/// The session's bits, above the position's in the reservation word (the
/// helper numbers sessions within them, 0 being none).
pub(crate) const SESSION_MASK: u32 = (1 << 23) - 1;
/// The reservation word's top bit: closed, no reservation succeeds.
const CLOSED: u64 = 1 << 63;

/// The position in a reservation word.
pub(crate) fn word_pos(w: u64) -> u64 {
    w & POS_MASK
}

/// The session in a reservation word (0: none yet).
pub(crate) fn word_session(w: u64) -> u32 {
    (w >> POS_BITS) as u32 & SESSION_MASK
}

/// Whether a reservation word is closed.
pub(crate) fn word_closed(w: u64) -> bool {
    w & CLOSED != 0
}

/// The word of `session` open, at position 0.
fn open_word(session: u32) -> u64 {
    u64::from(session & SESSION_MASK) << POS_BITS
}

/// The commit tag of a frame at `pos` of `session`: what its first header
/// word says once the frame is committed. It differs from the tags of the
/// frames of earlier laps at the same offset (their positions differ by a
/// multiple of the ring's size, at most 2^36 apart by the tag's bits), and
/// of other sessions' frames (whose positions start at 0 too), so bytes an
/// earlier frame left never read as this one committed.
pub(crate) fn commit_tag(pos: u64, session: u32) -> u32 {
    ((pos >> 4) as u32) ^ session.wrapping_mul(0x9E37_79B1) ^ 0xC0A1_7E55
}

/// `overrun` values (the low half; the high half is the session).
pub(crate) const OVERRUN_FULL: u64 = 1;
/// Waited `block_client_timeout_us` for room in vain.
pub(crate) const OVERRUN_TIMEOUT: u64 = 2;
/// The client found the ring's positions impossible.
pub(crate) const OVERRUN_CORRUPT: u64 = 3;
/// The helper died (its liveness pipe hung up): no one reads the ring.
pub(crate) const OVERRUN_HELPER_GONE: u64 = 4;

/// The control block, at the start of the shared mapping.
#[repr(C)]
#[derive(Debug, Default)]
pub(crate) struct Control {
    // Written by the helper.
    /// The session sampling now (0: none).
    pub active: AtomicU32,
    /// Bumped whenever a thread must draw its sampler anew (a new session,
    /// a new interval).
    pub epoch: AtomicU32,
    /// The sampling interval (adaptive sampling: the client raises it).
    pub interval: AtomicU64,
    /// The ring's size for this session (a power of two, at most the
    /// mapping's).
    pub ring_bytes: AtomicU64,
    /// Wait for room rather than stop (`block_client`).
    pub block: AtomicU32,
    /// How long to wait, in microseconds (0: as long as it takes).
    pub block_timeout_us: AtomicU32,
    /// Above this many pending bytes, double the interval (0: never).
    pub adaptive_threshold: AtomicU64,
    /// Up to this interval (0: no cap).
    pub adaptive_max_interval: AtomicU64,
    /// The helper's answer to `exiting`: the last dump is handed over.
    pub exit_done: AtomicU32,
    /// The ring's read position (bytes ever read, this session, modulo
    /// 2^[`POS_BITS`]).
    pub read_pos: OwnLine<AtomicU64>,

    // Written by both.
    /// The reservation word: closed bit, session, and the ring's reserved
    /// end (bytes ever reserved, this session, modulo 2^[`POS_BITS`]).
    /// Client threads reserve by compare-and-swap; the helper closes it and
    /// opens it for a new session; either side closes it when a session's
    /// profile stops.
    pub reserved: OwnLine<AtomicU64>,

    // Written by the client.
    /// The process is starting up (a blocking init waits).
    pub starting_up: AtomicU32,
    /// Why the client stopped queueing: `session << 32 | OVERRUN_*`.
    pub overrun: AtomicU64,
    /// Nanoseconds allocating threads waited for room.
    pub blocked_ns: AtomicU64,
    /// The process is exiting: write the last dump now.
    pub exiting: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<Control>() <= CONTROL_BYTES);

/// A field on cache lines of its own (two: the adjacent-line prefetcher
/// pulls lines in pairs). The positions are written on every record, one
/// by each side: sharing a line with each other or with the fields read on
/// every sample would move that line between the two cores each time.
#[repr(C, align(128))]
#[derive(Debug, Default)]
pub(crate) struct OwnLine<T>(pub T);

impl<T> std::ops::Deref for OwnLine<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// The free filter the two sides share: per bucket, how many live sampled
/// blocks hash there. The client adds one when it writes a sampled
/// allocation; the helper takes one off when a block leaves its books (a
/// matched free, an address reused); the client writes a free only when
/// the address's bucket is not empty, so most frees cost one load and none
/// of a live sampled block is missed (a bucket empties only after every
/// block in it left the books, and a free is written after its
/// allocation). A full bucket stays full (its frees are all written).
#[derive(Clone, Copy)]
pub(crate) struct FreeFilter<'a> {
    buckets: &'a [AtomicU16],
}

impl<'a> FreeFilter<'a> {
    /// The filter at `at`.
    ///
    /// # Safety
    /// `at` is 2-aligned and valid for `FILTER_BUCKETS` `u16`s for `'a`,
    /// accessed by everyone with atomic operations only.
    pub(crate) unsafe fn new(at: *const u8) -> Self {
        // SAFETY: caller contract; atomics may alias other processes'
        // atomic accesses.
        let buckets = unsafe { std::slice::from_raw_parts(at.cast::<AtomicU16>(), FILTER_BUCKETS) };
        FreeFilter { buckets }
    }

    #[inline]
    fn bucket(&self, addr: u64) -> &'a AtomicU16 {
        let h = (addr >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 45;
        &self.buckets[h as usize % FILTER_BUCKETS]
    }

    /// Whether a live sampled block may be at `addr`.
    #[inline]
    pub(crate) fn may_hold(&self, addr: u64) -> bool {
        self.bucket(addr).load(Ordering::Relaxed) != 0
    }

    /// A sampled block is live at `addr` (the client).
    pub(crate) fn add(&self, addr: u64) {
        let _ = self
            .bucket(addr)
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_add(1));
    }

    /// The block at `addr` left the books (the helper).
    pub(crate) fn release(&self, addr: u64) {
        let _ = self
            .bucket(addr)
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                (v != 0 && v != u16::MAX).then(|| v - 1)
            });
    }

    /// Asks for `addr`'s bucket's line, to be written soon (a hint only).
    #[inline]
    pub(crate) fn prefetch_for_write(&self, addr: u64) {
        prefetch_for_write(std::ptr::from_ref(self.bucket(addr)).cast(), 1);
    }

    /// Empties every bucket (the helper, before a session's first record).
    pub(crate) fn clear(&self) {
        for b in self.buckets {
            if b.load(Ordering::Relaxed) != 0 {
                b.store(0, Ordering::Relaxed);
            }
        }
    }
}

/// How many releases [`LaggedReleases`] holds back.
const RELEASE_LAG: usize = 8;

/// The helper's releases of filter buckets, each made [`RELEASE_LAG`]
/// releases after it is asked for. The client wrote the bucket last (its
/// line is on the client's core); asking for the line when the release is
/// queued and writing it later lets the transfer overlap the records taken
/// meanwhile. A release made late only lets a few more frees through.
#[derive(Debug, Default)]
pub(crate) struct LaggedReleases {
    queue: [u64; RELEASE_LAG],
    queued: usize,
}

impl LaggedReleases {
    /// The block at `addr` left the books.
    pub(crate) fn release(&mut self, filter: FreeFilter<'_>, addr: u64) {
        let slot = self.queued % RELEASE_LAG;
        if self.queued >= RELEASE_LAG {
            filter.release(self.queue[slot]);
        }
        filter.prefetch_for_write(addr);
        self.queue[slot] = addr;
        self.queued += 1;
    }

    /// Makes every release held back.
    pub(crate) fn flush(&mut self, filter: FreeFilter<'_>) {
        for i in self.queued.saturating_sub(RELEASE_LAG)..self.queued {
            filter.release(self.queue[i % RELEASE_LAG]);
        }
        self.queued = 0;
    }
}

/// Why a frame could not be placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoRoom {
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
pub(crate) struct Slot {
    /// The frame's position (bytes ever reserved before it, modulo
    /// 2^[`POS_BITS`]).
    pos: u64,
    /// Its offset in the ring.
    off: usize,
    /// The bytes reserved.
    len: usize,
}

/// The client's side: places frames, from any number of threads at once,
/// each reserving its bytes by a compare-and-swap on the reservation word
/// and publishing them by its frame's commit tag. A writer belongs to the
/// session whose open word it was made from: its reservations succeed only
/// while that word is open.
pub(crate) struct RingWriter<'a> {
    ctl: &'a Control,
    data: *mut u8,
    ring: u64,
    session: u32,
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
    pub(crate) unsafe fn new(
        ctl: &'a Control,
        data: *mut u8,
        data_len: usize,
        ring: u64,
        session: u32,
    ) -> Option<Self> {
        let usable = ring >= 1024
            && ring.is_power_of_two()
            && ring <= 1 << (POS_BITS - 1)
            && usize::try_from(ring).is_ok_and(|r| r <= data_len);
        usable.then_some(RingWriter {
            ctl,
            data,
            ring,
            session: session & SESSION_MASK,
        })
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
    /// session, if it did (the reader only moves it forward, so an old one
    /// understates the room): it is loaded again, checked and kept only
    /// when the frame does not fit by it, so the reader's line stays on the
    /// reader's core while the ring has room.
    pub(crate) fn reserve(
        &self,
        len: usize,
        cap: u64,
        read_seen: &mut Option<u64>,
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
            let pad = if tail < len { tail } else { 0 };
            let need = (pad + len) as u64;
            let fits = |r: u64| {
                let used = pos.wrapping_sub(r) & POS_MASK;
                (used <= self.ring).then(|| used + need <= limit)
            };
            if read_seen.and_then(fits) != Some(true) {
                let r = self.ctl.read_pos.load(Ordering::Acquire);
                if r > POS_MASK {
                    return Err(NoRoom::Corrupt);
                }
                match fits(r) {
                    Some(true) => *read_seen = Some(r),
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
        #[cfg(miri)]
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
                    unsafe { self.data.add(o + HEADER).write_bytes(0, n - HEADER) };
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
                self.header(off, pad as u32, KIND_PAD, 0);
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

    /// Where a slot's stack bytes go (after the allocation's fixed part).
    pub(crate) fn stack_ptr(&self, slot: Slot) -> *mut u8 {
        self.data.wrapping_add(slot.off + ALLOC_FIXED)
    }

    /// Writes a frame's header at `off`, all but its commit tag.
    ///
    /// # Safety
    /// `off + HEADER` is within the ring, in bytes this writer reserved.
    unsafe fn header(&self, off: usize, len: u32, kind: u32, flags: u32) {
        let p = self.data.wrapping_add(off).cast::<u32>();
        // SAFETY: caller contract; `off` is 16-aligned and so is `data`;
        // atomics, as the reader loads the header words.
        unsafe {
            AtomicU32::from_ptr(p.add(1)).store(len, Ordering::Relaxed);
            AtomicU32::from_ptr(p.add(2)).store(self.session, Ordering::Relaxed);
            AtomicU32::from_ptr(p.add(3)).store(kind | flags << 8, Ordering::Relaxed);
        }
    }

    /// Publishes the frame at `off`, position `pos`: its commit tag, last,
    /// with Release (everything written to the frame before is the
    /// reader's once it loads the tag with Acquire).
    ///
    /// # Safety
    /// As for [`RingWriter::header`].
    unsafe fn publish(&self, off: usize, pos: u64) {
        let p = self.data.wrapping_add(off).cast::<u32>();
        // SAFETY: caller contract.
        unsafe { AtomicU32::from_ptr(p) }.store(commit_tag(pos, self.session), Ordering::Release);
    }

    /// Fills `slot` with a sampled allocation (its stack bytes, if any,
    /// already at [`RingWriter::stack_ptr`]) and publishes it.
    pub(crate) fn commit_alloc(
        &self,
        slot: Slot,
        addr: u64,
        sample_size: u64,
        stack: Option<(super::capture::Regs, usize, bool)>,
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
            self.header(slot.off, slot.len as u32, KIND_ALLOC, flags);
            let p = self.data.wrapping_add(slot.off + HEADER).cast::<u64>();
            for (i, w) in words.iter().enumerate() {
                p.add(i).write(*w);
            }
            self.publish(slot.off, slot.pos);
        }
    }

    /// Places and publishes the free of `addr` (`read_seen` as for
    /// [`RingWriter::reserve`]).
    pub(crate) fn push_free(
        &self,
        addr: u64,
        cap: u64,
        read_seen: &mut Option<u64>,
    ) -> Result<(), NoRoom> {
        let slot = self.reserve(FREE_FRAME, cap, read_seen)?;
        // SAFETY: as in `commit_alloc`, for FREE_FRAME bytes.
        unsafe {
            self.header(slot.off, FREE_FRAME as u32, KIND_FREE, 0);
            self.data
                .wrapping_add(slot.off + HEADER)
                .cast::<u64>()
                .write(addr);
            self.publish(slot.off, slot.pos);
        }
        Ok(())
    }
}

/// The records could not be read: a length or kind the ring cannot hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the client's ring holds an impossible frame at position {0}")]
pub(crate) struct Corrupt(pub u64);

/// A record as it lies in the ring, valid while the reader stays where it
/// is.
pub(crate) enum RingRecord<'r> {
    /// A sampled allocation.
    Alloc {
        /// The block's address.
        addr: u64,
        /// The bytes it stands for.
        sample_size: u64,
        /// Its thread's registers and stack copy, if captured.
        stack: Option<RingStack<'r>>,
    },
    /// The free of a sampled block's address.
    Free {
        /// The address.
        addr: u64,
    },
}

/// A sampled allocation's registers and stack copy, in the ring.
pub(crate) struct RingStack<'r> {
    /// The registers at the hook.
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
    /// The copy filled its maximum (the stack was probably cut).
    pub maxed: bool,
    at: *const u8,
    len: usize,
    _reader: PhantomData<&'r mut ()>,
}

impl RingStack<'_> {
    /// The copy, read where it lies.
    pub(crate) fn copy(&self) -> StackCopy<'_> {
        // SAFETY: `at..at + len` is inside the ring (the frame's length was
        // checked against the ring, the stack's against the frame), which
        // is mapped read-write for the helper's life; in the helper only
        // this reader touches the ring's bytes, and only with atomic loads
        // or the `asm!` copy; the client process may write them in any
        // way (the unwinder survives any word it reads).
        unsafe { StackCopy::shared(self.sp, self.at, self.len) }
    }
}

/// Asks for the lines of the `len` bytes at `at`, to be written soon, on
/// this core (a hint only: PREFETCHW, a no-op on processors without it,
/// accesses nothing as Rust sees it and never faults).
#[inline]
fn prefetch_for_write(at: *const u8, len: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    for line in (0..len).step_by(64) {
        // SAFETY: as above.
        unsafe {
            std::arch::asm!(
                "prefetchw [{}]",
                in(reg) at.wrapping_add(line),
                options(nostack, preserves_flags, readonly),
            );
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (at, len);
}

/// How far past a frame the reader asks for the ring's lines early.
const PREFETCH_AHEAD: usize = 1024;

/// Asks the cache for the `len` bytes at `at` (a hint only: no memory is
/// accessed as Rust sees it, and no address faults).
#[inline]
fn prefetch(at: *const u8, len: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    for line in (0..len).step_by(64) {
        // SAFETY: a prefetch reads nothing Rust can see and never faults.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                at.wrapping_add(line).cast::<i8>(),
            )
        };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (at, len);
}

/// The helper's side: takes frames in order, each once its commit tag
/// says it is committed at its position.
pub(crate) struct RingReader<'a> {
    ctl: &'a Control,
    data: *const u8,
    ring: u64,
    session: u32,
    pos: u64,
    /// The reserved end as last loaded: loaded again only once the reader
    /// reaches it, so the writers' line stays on their cores while records
    /// are waiting.
    reserved: u64,
}

/// A frame's header, as the reader found it committed.
#[derive(Debug, Clone, Copy)]
struct Header {
    len: usize,
    session: u32,
    kind: u32,
    flags: u32,
}

impl<'a> RingReader<'a> {
    /// A reader of `session`'s ring of `ring` bytes at `data`, from the
    /// current read position.
    ///
    /// # Safety
    /// `data` is valid for reads of `ring` bytes for `'a` (the helper's own
    /// mapping, of a size it knows), 16-aligned.
    pub(crate) unsafe fn new(ctl: &'a Control, data: *const u8, ring: u64, session: u32) -> Self {
        let pos = ctl.read_pos.load(Ordering::Relaxed);
        RingReader {
            ctl,
            data,
            ring,
            session: session & SESSION_MASK,
            pos,
            reserved: pos,
        }
    }

    /// Copies `out.len()` ring bytes at `off` out: a stack copy's bytes by
    /// the `asm!` copy the client uses (out of Rust's sight, so whatever
    /// the client does to them is no race: ARCHITECTURE.md's soundness
    /// rules), the rest with atomic loads.
    fn copy(&self, off: usize, out: &mut [u8]) {
        let from = self.data.wrapping_add(off);
        if ASM_COPY && out.len() >= 256 {
            // SAFETY: callers keep `off + out.len() <= ring` (checked against
            // the frame's length, itself checked against the ring), so the
            // bytes are in our mapping; `out` is ours to write.
            unsafe { copy_bytes_asm(from as u64, out.as_mut_ptr(), out.len()) };
            return;
        }
        // SAFETY: as above; the bytes are read with atomic loads only,
        // whatever the client does.
        unsafe { zerotrace_core::abi::copy_from_shared(from, out) }
    }

    /// The `i`th `u32` of the header at `off` (`off + HEADER <= ring`,
    /// 16-aligned), loaded with `order`.
    fn header_word(&self, off: usize, i: usize, order: Ordering) -> u32 {
        debug_assert!(off + HEADER <= self.ring as usize && i < 4);
        let p = self.data.wrapping_add(off).cast::<u32>().wrapping_add(i);
        // SAFETY: inside the ring (callers check `off + HEADER <= ring`),
        // aligned (`data` and `off` are 16-aligned); an atomic load, whatever
        // the client does to the word.
        unsafe { AtomicU32::from_ptr(p.cast_mut()) }.load(order)
    }

    /// The frame at `pos`, if committed there (`None`: reserved, not yet
    /// committed), with at most `end` reserved: its header checked against
    /// the reserved bytes and the ring.
    fn frame_at(&self, pos: u64, end: u64) -> Result<Option<Header>, Corrupt> {
        let avail = end.wrapping_sub(pos) & POS_MASK;
        if pos > POS_MASK || pos % FRAME_ALIGN != 0 || avail > self.ring || avail < HEADER as u64 {
            return Err(Corrupt(pos));
        }
        let off = (pos % self.ring) as usize;
        if off + HEADER > self.ring as usize {
            return Err(Corrupt(pos));
        }
        if self.header_word(off, 0, Ordering::Acquire) != commit_tag(pos, self.session) {
            return Ok(None);
        }
        let len = self.header_word(off, 1, Ordering::Relaxed) as usize;
        let session = self.header_word(off, 2, Ordering::Relaxed);
        let kf = self.header_word(off, 3, Ordering::Relaxed);
        if len < HEADER
            || len as u64 % FRAME_ALIGN != 0
            || len as u64 > avail
            || off + len > self.ring as usize
        {
            return Err(Corrupt(pos));
        }
        Ok(Some(Header {
            len,
            session,
            kind: kf & 0xff,
            flags: kf >> 8,
        }))
    }

    /// The next record and the session it belongs to, as it lies in the
    /// ring (a stack copy is not copied out: the unwinder reads the words
    /// it needs in place); `None` when nothing is committed at the read
    /// position (the ring is empty, or the next frame is reserved and not
    /// yet committed: frames are taken in order). The record borrows the
    /// reader, so the client gets its bytes back ([`RingReader::release`])
    /// only once the record is done with.
    pub(crate) fn next_in_place(&mut self) -> Result<Option<(u32, RingRecord<'_>)>, Corrupt> {
        loop {
            if self.reserved == self.pos {
                let w = self.ctl.reserved.load(Ordering::Acquire);
                if word_session(w) != self.session {
                    return Ok(None);
                }
                self.reserved = word_pos(w);
                if self.reserved == self.pos {
                    return Ok(None);
                }
            }
            let end = self.reserved;
            let Some(Header {
                len,
                session,
                kind,
                flags,
            }) = self.frame_at(self.pos, end)?
            else {
                return Ok(None);
            };
            let off = (self.pos % self.ring) as usize;
            let at = self.pos;
            self.pos = (self.pos + len as u64) & POS_MASK;
            // The frame's lines and the next frames' come from the
            // client's core: ask for them now, so the transfers overlap
            // rather than follow one another as the unwind reads them.
            let ahead = ((end.wrapping_sub(at) & POS_MASK) as usize).min(len + PREFETCH_AHEAD);
            prefetch(
                self.data.wrapping_add(off),
                ahead.min(self.ring as usize - off),
            );
            let rec = match kind {
                KIND_PAD => continue,
                KIND_FREE if len >= FREE_FRAME => {
                    let mut b = [0u8; 8];
                    self.copy(off + HEADER, &mut b);
                    RingRecord::Free {
                        addr: u64::from_ne_bytes(b),
                    }
                }
                KIND_ALLOC if len >= ALLOC_FIXED => {
                    let mut b = [0u8; 48];
                    self.copy(off + HEADER, &mut b);
                    let f = |i: usize| {
                        let mut x = [0u8; 8];
                        x.copy_from_slice(&b[i * 8..i * 8 + 8]);
                        u64::from_ne_bytes(x)
                    };
                    let stack_len = f(5);
                    if stack_len > (len - ALLOC_FIXED) as u64 {
                        return Err(Corrupt(at));
                    }
                    let stack = (flags & FLAG_HAS_STACK != 0).then(|| RingStack {
                        ip: f(2),
                        sp: f(3),
                        bp: f(4),
                        maxed: flags & FLAG_MAXED != 0,
                        at: self.data.wrapping_add(off + ALLOC_FIXED),
                        len: stack_len as usize,
                        _reader: PhantomData,
                    });
                    RingRecord::Alloc {
                        addr: f(0),
                        sample_size: f(1),
                        stack,
                    }
                }
                _ => return Err(Corrupt(at)),
            };
            return Ok(Some((session, rec)));
        }
    }

    /// As [`RingReader::next_in_place`], the record copied out (a stack
    /// copy into `stack`, a recycled buffer).
    #[cfg(test)]
    pub(crate) fn next(&mut self, stack: &mut Vec<u8>) -> Result<Option<(u32, Record)>, Corrupt> {
        Ok(self.next_in_place()?.map(|(session, rec)| {
            let rec = match rec {
                RingRecord::Free { addr } => Record::Free { addr },
                RingRecord::Alloc {
                    addr,
                    sample_size,
                    stack: s,
                } => Record::Alloc(AllocRecord {
                    addr,
                    sample_size,
                    stack: s.map(|s| {
                        let mut bytes = std::mem::take(stack);
                        bytes.clear();
                        bytes.resize(s.len, 0);
                        // SAFETY: `RingStack` holds bytes inside the ring
                        // (checked against the frame, itself against it).
                        unsafe { zerotrace_core::abi::copy_from_shared(s.at, &mut bytes) };
                        Captured {
                            ip: s.ip,
                            sp: s.sp,
                            bp: s.bp,
                            stack: bytes,
                            maxed: s.maxed,
                        }
                    }),
                }),
            };
            (session, rec)
        }))
    }

    /// Hands the bytes read so far back to the client.
    pub(crate) fn release(&self) {
        self.ctl.read_pos.store(self.pos, Ordering::Release);
    }

    /// Whether every frame reserved up to `end` is committed: the headers
    /// walked from the read position (nothing is taken). With the word
    /// closed at `end`, `true` means no client thread writes this ring any
    /// more.
    pub(crate) fn committed_up_to(&self, end: u64) -> Result<bool, Corrupt> {
        let mut pos = self.pos;
        // Each frame is at least a header: a walk longer than this is a loop.
        for _ in 0..=self.ring / HEADER as u64 {
            if pos == end {
                return Ok(true);
            }
            match self.frame_at(pos, end)? {
                Some(h) => pos = (pos + h.len as u64) & POS_MASK,
                None => return Ok(false),
            }
        }
        Err(Corrupt(pos))
    }
}

/// Closes the reservation word, whatever its session (the helper, before
/// it sets a new session's ring up): no reservation succeeds after this.
/// The closed word (its position: the end of what was reserved).
pub(crate) fn close(ctl: &Control) -> u64 {
    ctl.reserved.fetch_or(CLOSED, Ordering::AcqRel) | CLOSED
}

/// Closes the reservation word if it is open for `session` (a session's
/// profile stops: the client's own decision, or the helper's).
pub(crate) fn close_session(ctl: &Control, session: u32) {
    let _ = ctl
        .reserved
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            (!word_closed(w) && word_session(w) == session & SESSION_MASK && session != 0)
                .then_some(w | CLOSED)
        });
}

/// Whether every frame reserved before the word closed is committed (the
/// helper, after [`close`], for the ring of `ring` bytes at `data` it set
/// up last). An impossible word or frame is an error: the helper does not
/// wait for it.
///
/// # Safety
/// As for [`RingReader::new`].
pub(crate) unsafe fn writers_done(
    ctl: &Control,
    data: *const u8,
    ring: u64,
) -> Result<bool, Corrupt> {
    let w = ctl.reserved.load(Ordering::Acquire);
    if word_session(w) == 0 {
        // Never opened: nothing was reserved.
        return Ok(true);
    }
    // SAFETY: caller contract.
    let r = unsafe { RingReader::new(ctl, data, ring, word_session(w)) };
    r.committed_up_to(word_pos(w))
}

/// Opens the reservation word for `session` (non-zero, at most
/// [`SESSION_MASK`]), its ring empty: after the session's other settings,
/// which a writer that sees the word open sees too.
pub(crate) fn open(ctl: &Control, session: u32) {
    ctl.read_pos.store(0, Ordering::Relaxed);
    ctl.reserved.store(open_word(session), Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A control block and a ring in one process's heap.
    struct Mem {
        ctl: Box<Control>,
        data: Vec<u64>,
    }

    /// A ring whose word is open for session 1.
    fn mem(ring: usize) -> Mem {
        let m = Mem {
            ctl: Box::default(),
            data: vec![0u64; ring / 8],
        };
        open(&m.ctl, 1);
        m
    }

    /// Sets the ring's positions (session 1, open).
    fn at(ctl: &Control, write: u64, read: u64) {
        ctl.reserved.store(open_word(1) | write, Ordering::Relaxed);
        ctl.read_pos.store(read, Ordering::Relaxed);
    }

    fn regs() -> super::super::capture::Regs {
        super::super::capture::Regs {
            ip: 0x1000,
            sp: 0x7000,
            bp: 0x7100,
        }
    }

    fn alloc_with_stack(w: &RingWriter<'_>, addr: u64, stack: &[u8]) -> Result<(), NoRoom> {
        let slot = w.reserve(ALLOC_FIXED + stack.len(), u64::MAX, &mut None)?;
        // SAFETY: the slot holds the stack bytes after its fixed part.
        unsafe {
            std::ptr::copy_nonoverlapping(stack.as_ptr(), w.stack_ptr(slot), stack.len());
        }
        w.commit_alloc(slot, addr, 64, Some((regs(), stack.len(), false)));
        Ok(())
    }

    #[test]
    fn frames_come_out_in_order_across_the_ring_end() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: `data` is the 1024-byte buffer owned by `m`.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        let mut buf = Vec::new();
        for round in 0..40u64 {
            let expected = round;
            let stack: Vec<u8> = (0..(round as usize * 13) % 300).map(|i| i as u8).collect();
            alloc_with_stack(&w, 0x1000 + round, &stack).unwrap();
            w.push_free(0x1000 + round, u64::MAX, &mut None).unwrap();
            let (s, rec) = r.next(&mut buf).unwrap().unwrap();
            assert_eq!(s, 1);
            match rec {
                Record::Alloc(a) => {
                    assert_eq!(a.addr, 0x1000 + expected);
                    let c = a.stack.unwrap();
                    assert_eq!((c.ip, c.sp, c.bp), (0x1000, 0x7000, 0x7100));
                    assert_eq!(c.stack, stack);
                    buf = c.stack;
                }
                Record::Free { .. } => panic!("alloc first"),
            }
            let (_, rec) = r.next(&mut buf).unwrap().unwrap();
            assert!(matches!(rec, Record::Free { addr } if addr == 0x1000 + expected));
            assert!(r.next(&mut buf).unwrap().is_none());
            r.release();
        }
        assert_eq!(w.pending(), 0);
    }

    #[test]
    fn a_full_ring_refuses_until_read_and_the_cap_bounds_pending_bytes() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: as above.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        let mut n = 0;
        while w.push_free(n, u64::MAX, &mut None).is_ok() {
            n += 1;
        }
        assert_eq!(n, 1024 / FREE_FRAME as u64);
        assert_eq!(w.push_free(0, u64::MAX, &mut None), Err(NoRoom::Full));
        let mut buf = Vec::new();
        r.next(&mut buf).unwrap().unwrap();
        r.release();
        assert!(w.push_free(99, u64::MAX, &mut None).is_ok());
        while r.next(&mut buf).unwrap().is_some() {}
        r.release();
        assert!(w.push_free(1, 64, &mut None).is_ok());
        assert!(w.push_free(2, 64, &mut None).is_ok());
        assert_eq!(
            w.push_free(3, 64, &mut None),
            Err(NoRoom::Full),
            "cap of 64 bytes"
        );
    }

    #[test]
    fn a_frame_of_the_largest_stack_fits_once_the_reader_catches_up_wherever_it_starts() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: the buffer is ours, 1024 bytes, one writer.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
        let max = w.max_stack_bytes();
        assert!(max > 0 && ALLOC_FIXED + max <= 512, "{max}");
        for start in (0..1024u64).step_by(FRAME_ALIGN as usize) {
            // An empty ring (the reader caught up) at every write position.
            at(&m.ctl, start, start);
            assert!(
                w.reserve(ALLOC_FIXED + max, u64::MAX, &mut None).is_ok(),
                "at {start}"
            );
        }
        // Past the cap, some positions never have room: what a writer
        // waiting for room would wait on forever.
        at(&m.ctl, 512 + 16, 512 + 16);
        assert_eq!(
            w.reserve(600, u64::MAX, &mut None).unwrap_err(),
            NoRoom::Full
        );
    }

    #[test]
    fn lagged_releases_are_all_made_by_the_flush() {
        let buckets: Vec<AtomicU16> = (0..FILTER_BUCKETS).map(|_| AtomicU16::new(0)).collect();
        // SAFETY: `buckets` outlives the filter and is touched atomically only.
        let f = unsafe { FreeFilter::new(buckets.as_ptr().cast::<u8>()) };
        let addrs: Vec<u64> = (0..RELEASE_LAG as u64 * 3)
            .map(|i| 0x10_0000 + i * 4096)
            .collect();
        for &a in &addrs {
            f.add(a);
        }
        let mut lag = LaggedReleases::default();
        for &a in &addrs {
            lag.release(f, a);
        }
        let held = addrs.iter().filter(|&&a| f.may_hold(a)).count();
        assert!((1..=RELEASE_LAG).contains(&held), "{held} still set");
        lag.flush(f);
        assert!(addrs.iter().all(|&a| !f.may_hold(a)));
        // A flush with nothing queued, and a queue used again after one.
        lag.flush(f);
        f.add(addrs[0]);
        lag.release(f, addrs[0]);
        lag.flush(f);
        assert!(!f.may_hold(addrs[0]));
    }

    #[test]
    fn a_writer_loads_the_read_position_only_when_the_one_it_saw_leaves_no_room() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: as above.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
        let mut seen = None;
        w.push_free(1, u64::MAX, &mut seen).unwrap();
        assert_eq!(seen, Some(0), "loaded once");
        // The reader moves on; the writer still goes by what it saw, until
        // that leaves no room: then it loads the reader's position, finds
        // the frame it freed, and keeps the new position.
        m.ctl.read_pos.store(FREE_FRAME as u64, Ordering::Release);
        let mut n = 1;
        while seen == Some(0) {
            w.push_free(n, u64::MAX, &mut seen).unwrap();
            n += 1;
        }
        assert_eq!(n, 1024 / FREE_FRAME as u64 + 1);
        assert_eq!(seen, Some(FREE_FRAME as u64));
        // Full by the position it loads, too: refused, the position kept.
        assert_eq!(w.push_free(n, u64::MAX, &mut seen), Err(NoRoom::Full));
        assert_eq!(seen, Some(FREE_FRAME as u64));
        m.ctl
            .read_pos
            .store(2 * FREE_FRAME as u64, Ordering::Release);
        w.push_free(n, u64::MAX, &mut seen).unwrap();
        assert_eq!(seen, Some(2 * FREE_FRAME as u64));
    }

    #[test]
    fn impossible_frames_and_positions_are_errors_not_panics() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: as above.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
        w.push_free(5, u64::MAX, &mut None).unwrap();
        let mut buf = Vec::new();
        for (word, value) in [(1usize, 8u32), (1, 2000), (1, 17), (3, 9), (1, 48)] {
            // SAFETY: rewrites a header word of the buffer we own.
            unsafe { data.cast::<u32>().add(word).write(value) };
            // SAFETY: as above.
            let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
            assert!(r.next(&mut buf).is_err(), "word {word} = {value}");
            // SAFETY: restores the header.
            unsafe {
                data.cast::<u32>().add(1).write(FREE_FRAME as u32);
                data.cast::<u32>().add(3).write(KIND_FREE);
            }
        }
        // A stack longer than its frame.
        at(&m.ctl, 0, 0);
        alloc_with_stack(&w, 9, &[1, 2, 3]).unwrap();
        // SAFETY: the stack-length word of the allocation frame.
        unsafe { data.add(HEADER).cast::<u64>().add(5).write(1 << 20) };
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        assert!(r.next(&mut buf).is_err());
        // Positions the helper could have garbled.
        m.ctl.read_pos.store(5000, Ordering::Relaxed);
        assert_eq!(
            w.reserve(32, u64::MAX, &mut None).unwrap_err(),
            NoRoom::Corrupt
        );
        at(&m.ctl, 1 << 39, 5000);
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        assert!(r.next(&mut buf).is_err());
        // SAFETY: as above.
        assert!(unsafe { RingWriter::new(&m.ctl, data, 1024, 4096, 1) }.is_none());
        // SAFETY: as above.
        assert!(unsafe { RingWriter::new(&m.ctl, data, 1024, 1000, 1) }.is_none());
    }

    #[test]
    fn a_writer_thread_and_a_reader_thread_agree() {
        const ROUNDS: u64 = if cfg!(miri) { 40 } else { 20_000 };
        let mut m = mem(4096);
        /// The buffer's pointer, handed to the writer's thread.
        #[derive(Clone, Copy)]
        struct Data(*mut u8);
        // SAFETY: the buffer outlives the scope; the ring protocol orders
        // the two threads' accesses.
        unsafe impl Send for Data {}
        // SAFETY: as above.
        unsafe impl Sync for Data {}
        let data = Data(m.data.as_mut_ptr().cast::<u8>());
        let ctl: &Control = &m.ctl;
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: the buffer outlives the scope; one writer.
                let w = unsafe { RingWriter::new(ctl, { data }.0, 4096, 4096, 1) }.unwrap();
                for i in 0..ROUNDS {
                    let stack = [i as u8; 40];
                    while alloc_with_stack(&w, i, &stack[..(i % 41) as usize]).is_err() {
                        std::thread::yield_now();
                    }
                }
            });
            // SAFETY: as above; one reader.
            let mut r = unsafe { RingReader::new(ctl, data.0, 4096, 1) };
            let mut buf = Vec::new();
            let mut next = 0u64;
            while next < ROUNDS {
                match r.next(&mut buf).unwrap() {
                    Some((_, Record::Alloc(a))) => {
                        assert_eq!(a.addr, next);
                        let c = a.stack.unwrap();
                        assert_eq!(c.stack.len() as u64, next % 41);
                        assert!(c.stack.iter().all(|b| *b == next as u8));
                        buf = c.stack;
                        next += 1;
                        r.release();
                    }
                    Some(_) => panic!("only allocations written"),
                    None => std::thread::yield_now(),
                }
            }
        });
    }
    /// The buffer's pointer, handed to other threads.
    #[derive(Clone, Copy)]
    struct Shared(*mut u8);
    // SAFETY: the buffer outlives the scope; the ring protocol orders the
    // threads' accesses.
    unsafe impl Send for Shared {}
    // SAFETY: as above.
    unsafe impl Sync for Shared {}

    #[test]
    fn several_writer_threads_and_a_reader_thread_agree_on_every_record() {
        const THREADS: u64 = 4;
        const ROUNDS: u64 = if cfg!(miri) { 12 } else { 5_000 };
        let mut m = mem(4096);
        let data = Shared(m.data.as_mut_ptr().cast::<u8>());
        let ctl: &Control = &m.ctl;
        std::thread::scope(|s| {
            for t in 0..THREADS {
                s.spawn(move || {
                    // SAFETY: the buffer outlives the scope; each writer
                    // writes only what it reserved.
                    let w = unsafe { RingWriter::new(ctl, { data }.0, 4096, 4096, 1) }.unwrap();
                    let mut seen = None;
                    for i in 0..ROUNDS {
                        let tag = (t << 32) | i;
                        let stack = [(tag % 251) as u8; 48];
                        let n = ((i * 7 + t) % 49) as usize;
                        loop {
                            let r = if i % 3 == 2 {
                                w.push_free(tag, u64::MAX, &mut seen)
                            } else {
                                w.reserve(ALLOC_FIXED + n, u64::MAX, &mut seen).map(|slot| {
                                    // SAFETY: the slot holds `n` stack bytes.
                                    unsafe {
                                        std::ptr::copy_nonoverlapping(
                                            stack.as_ptr(),
                                            w.stack_ptr(slot),
                                            n,
                                        );
                                    }
                                    w.commit_alloc(slot, tag, 64, Some((regs(), n, false)));
                                })
                            };
                            match r {
                                Ok(()) => break,
                                Err(NoRoom::Full) => std::thread::yield_now(),
                                Err(e) => panic!("{e:?}"),
                            }
                        }
                    }
                });
            }
            // SAFETY: as above; one reader.
            let mut r = unsafe { RingReader::new(ctl, data.0, 4096, 1) };
            let mut buf = Vec::new();
            let mut next = [0u64; THREADS as usize];
            let mut taken = 0;
            while taken < THREADS * ROUNDS {
                let Some((session, rec)) = r.next(&mut buf).unwrap() else {
                    r.release();
                    std::thread::yield_now();
                    continue;
                };
                assert_eq!(session, 1);
                let tag = match &rec {
                    Record::Alloc(a) => a.addr,
                    Record::Free { addr } => *addr,
                };
                let (t, i) = ((tag >> 32) as usize, tag & 0xffff_ffff);
                // Each thread's records come out in the order it wrote them.
                assert_eq!(i, next[t], "thread {t}");
                next[t] += 1;
                match rec {
                    Record::Alloc(a) => {
                        assert_ne!(i % 3, 2);
                        let c = a.stack.unwrap();
                        assert_eq!(c.stack.len() as u64, (i * 7 + t as u64) % 49);
                        assert!(c.stack.iter().all(|b| u64::from(*b) == tag % 251));
                        buf = c.stack;
                    }
                    Record::Free { .. } => assert_eq!(i % 3, 2),
                }
                taken += 1;
                r.release();
            }
            assert!(r.next(&mut buf).unwrap().is_none());
        });
    }

    #[test]
    fn an_uncommitted_frame_stops_the_reader_until_its_commit() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: the buffer is ours, 1024 bytes.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
        let slot = w.reserve(ALLOC_FIXED, u64::MAX, &mut None).unwrap();
        w.push_free(0x20, u64::MAX, &mut None).unwrap();
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        let mut buf = Vec::new();
        assert!(
            r.next(&mut buf).unwrap().is_none(),
            "the first frame is not committed"
        );
        assert!(r.next(&mut buf).unwrap().is_none(), "nor on a second look");
        w.commit_alloc(slot, 0x10, 64, None);
        let (_, rec) = r.next(&mut buf).unwrap().unwrap();
        assert!(matches!(rec, Record::Alloc(a) if a.addr == 0x10 && a.stack.is_none()));
        let (_, rec) = r.next(&mut buf).unwrap().unwrap();
        assert!(matches!(rec, Record::Free { addr: 0x20 }));
        assert!(r.next(&mut buf).unwrap().is_none());
        // A pad frame is committed with its reservation: only the frame
        // after it waits.
        at(&m.ctl, 1024 - 48, 1024 - 48);
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        let slot = w.reserve(ALLOC_FIXED, u64::MAX, &mut None).unwrap();
        assert_eq!(slot.off, 0, "padded to the ring's end");
        assert!(r.next(&mut buf).unwrap().is_none());
        w.commit_alloc(slot, 0x30, 64, None);
        assert!(matches!(r.next(&mut buf).unwrap(), Some((_, Record::Alloc(a))) if a.addr == 0x30));
    }

    #[test]
    fn a_session_switch_waits_for_outstanding_commits_and_refuses_late_writers() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: the buffer is ours, 1024 bytes.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
        w.push_free(0x10, u64::MAX, &mut None).unwrap();
        let slot = w.reserve(ALLOC_FIXED, u64::MAX, &mut None).unwrap();
        let closed = close(&m.ctl);
        assert_eq!(word_pos(closed), (FREE_FRAME + ALLOC_FIXED) as u64);
        // SAFETY: as above.
        let done = || unsafe { writers_done(&m.ctl, data, 1024) };
        assert_eq!(done(), Ok(false), "one frame reserved and not committed");
        // A late writer is refused, and so is one made for the closed word.
        assert_eq!(w.push_free(0x20, u64::MAX, &mut None), Err(NoRoom::Closed));
        assert_eq!(
            w.reserve(32, u64::MAX, &mut None).unwrap_err(),
            NoRoom::Closed
        );
        assert_eq!(
            word_pos(m.ctl.reserved.load(Ordering::Relaxed)),
            word_pos(closed)
        );
        w.commit_alloc(slot, 0x11, 64, None);
        assert_eq!(done(), Ok(true));
        // The old session's records are still the reader's, up to the close.
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        let mut buf = Vec::new();
        assert!(r.next(&mut buf).unwrap().is_some());
        assert!(r.next(&mut buf).unwrap().is_some());
        assert!(r.next(&mut buf).unwrap().is_none());
        // A new session: the old session's writer is refused, its frames
        // (at the same positions) never read as the new session's.
        open(&m.ctl, 2);
        assert_eq!(w.push_free(0x30, u64::MAX, &mut None), Err(NoRoom::Closed));
        // SAFETY: as above.
        let w2 = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 2) }.unwrap();
        // SAFETY: as above.
        let mut r2 = unsafe { RingReader::new(&m.ctl, data, 1024, 2) };
        let slot = w2.reserve(FREE_FRAME, u64::MAX, &mut None).unwrap();
        assert!(
            r2.next(&mut buf).unwrap().is_none(),
            "old bytes are not committed"
        );
        // SAFETY: a free frame's worth, reserved above.
        unsafe {
            w2.header(slot.off, FREE_FRAME as u32, KIND_FREE, 0);
            w2.data
                .wrapping_add(slot.off + HEADER)
                .cast::<u64>()
                .write(0x40);
            w2.publish(slot.off, slot.pos);
        }
        assert!(matches!(
            r2.next(&mut buf).unwrap(),
            Some((2, Record::Free { addr: 0x40 }))
        ));
        // The client closes its own session's word only.
        close_session(&m.ctl, 1);
        assert!(!word_closed(m.ctl.reserved.load(Ordering::Relaxed)));
        close_session(&m.ctl, 2);
        assert!(word_closed(m.ctl.reserved.load(Ordering::Relaxed)));
        assert_eq!(w2.push_free(0x50, u64::MAX, &mut None), Err(NoRoom::Closed));
    }

    #[test]
    fn garbled_words_headers_and_walks_are_errors_not_panics() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: the buffer is ours, 1024 bytes.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
        // A reserved end off the frame boundary.
        at(&m.ctl, 8, 0);
        assert_eq!(w.push_free(1, u64::MAX, &mut None), Err(NoRoom::Corrupt));
        // A read position past the reserved end, the word unchanged.
        at(&m.ctl, 64, 128);
        assert_eq!(w.push_free(1, u64::MAX, &mut None), Err(NoRoom::Corrupt));
        // A read position beyond the positions' bits.
        at(&m.ctl, 64, u64::MAX);
        assert_eq!(w.push_free(1, u64::MAX, &mut None), Err(NoRoom::Corrupt));
        // More reserved than the ring holds.
        at(&m.ctl, 4096, 0);
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        assert!(r.next(&mut Vec::new()).is_err());
        assert!(r.committed_up_to(4096).is_err());
        // A committed header whose length runs past the reserved end.
        at(&m.ctl, 0, 0);
        w.push_free(1, u64::MAX, &mut None).unwrap();
        // SAFETY: the length word of the frame at 0.
        unsafe { data.cast::<u32>().add(1).write(1 << 30) };
        // SAFETY: as above.
        let r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        assert!(r.committed_up_to(FREE_FRAME as u64).is_err());
        close(&m.ctl);
        // SAFETY: as above.
        assert!(unsafe { writers_done(&m.ctl, data, 1024) }.is_err());
        // Any word at all: the writer and the walk answer, never panic.
        for w0 in [u64::MAX, CLOSED - 1, 0x7f, open_word(1) | POS_MASK & !15] {
            m.ctl.reserved.store(w0, Ordering::Relaxed);
            let _ = w.push_free(1, u64::MAX, &mut None);
            // SAFETY: as above.
            let _ = unsafe { writers_done(&m.ctl, data, 1024) };
            // SAFETY: as above.
            let _ = unsafe { RingReader::new(&m.ctl, data, 1024, 1) }.next(&mut Vec::new());
        }
    }
}
