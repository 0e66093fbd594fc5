//! The memory a preloaded client shares with its helper process (the
//! split heapprofd makes between a profiled process and the profiler):
//! a control block of atomics, through which the helper turns sampling on
//! and off and the client says how it fares, and a byte ring of records
//! (sampled allocations with their registers and stack copy, frees of
//! sampled addresses) that the client's threads write, one at a time, and
//! the helper reads.
//!
//! Each side reads what the other wrote as untrusted: the helper reads
//! every byte with atomic loads (a frame's header and fixed part copied
//! out before it parses them, a stack's words in place, as the unwinder
//! asks for them) and checks every length against the ring, and the client
//! only trusts what it knows itself (the mapping's size) when it decides
//! where to write.
//!
//! A session's ring is set up by the helper while no client thread
//! writes: a writer raises `writer_busy` and then checks that the session
//! it writes for is still the active one; the helper clears `active`
//! first and then waits for `writer_busy` to fall (both sequentially
//! consistent, so one of the two always sees the other).

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

/// A frame's header: length, kind, session, flags (four `u32`).
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
    /// The ring's read position (bytes ever read, this session).
    pub read_pos: OwnLine<AtomicU64>,

    // Written by the client.
    /// The ring's write position (bytes ever written, this session).
    pub write_pos: OwnLine<AtomicU64>,
    /// A client thread is writing a frame.
    pub writer_busy: OwnLine<AtomicU32>,
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
}

/// Where a frame goes (from [`RingWriter::reserve`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    /// The frame's position (bytes ever written before it).
    pos: u64,
    /// Its offset in the ring.
    off: usize,
    /// The bytes reserved.
    len: usize,
}

/// The client's side: places frames. One writer at a time (the client's
/// lock), between a raised `writer_busy` and its fall.
pub(crate) struct RingWriter<'a> {
    ctl: &'a Control,
    data: *mut u8,
    ring: u64,
}

/// `n` rounded up to [`FRAME_ALIGN`].
pub(crate) fn frame_round(n: usize) -> usize {
    n.div_ceil(FRAME_ALIGN as usize) * FRAME_ALIGN as usize
}

impl<'a> RingWriter<'a> {
    /// A writer over the ring at `data`, `ring` bytes (the session's size,
    /// checked against `data_len`, the mapping's, by the caller's own
    /// knowledge): `None` when `ring` is not a usable size.
    ///
    /// # Safety
    /// `data` is valid for writes of `data_len` bytes for `'a`, and no one
    /// in this process accesses them meanwhile but through this writer.
    pub(crate) unsafe fn new(
        ctl: &'a Control,
        data: *mut u8,
        data_len: usize,
        ring: u64,
    ) -> Option<Self> {
        let usable = ring >= 1024
            && ring.is_power_of_two()
            && usize::try_from(ring).is_ok_and(|r| r <= data_len);
        usable.then_some(RingWriter { ctl, data, ring })
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

    /// Bytes written and not yet read (as of the read position's last
    /// load).
    pub(crate) fn pending(&self) -> u64 {
        let w = self.ctl.write_pos.load(Ordering::Relaxed);
        let r = self.ctl.read_pos.load(Ordering::Acquire);
        w.wrapping_sub(r)
    }

    /// Room for a frame of `len` bytes (rounded to [`FRAME_ALIGN`]) with at
    /// most `cap` bytes pending afterwards; a pad frame fills the ring's
    /// end when the frame does not fit there. `read_seen` is the read
    /// position as last loaded this session, if it was (the reader only
    /// moves it forward, so an old one understates the room): it is loaded
    /// again, checked and kept only when the frame does not fit by it, so
    /// the reader's line stays on the reader's core while the ring has
    /// room.
    pub(crate) fn reserve(
        &self,
        len: usize,
        cap: u64,
        read_seen: &mut Option<u64>,
    ) -> Result<Slot, NoRoom> {
        let len = frame_round(len.max(HEADER));
        let w = self.ctl.write_pos.load(Ordering::Relaxed);
        if w % FRAME_ALIGN != 0 {
            return Err(NoRoom::Corrupt);
        }
        let off = (w % self.ring) as usize;
        let tail = self.ring as usize - off;
        let pad = if tail < len { tail } else { 0 };
        let limit = self.ring.min(cap);
        let fits = |r: u64| {
            let used = w.wrapping_sub(r);
            (used <= self.ring).then(|| used.saturating_add((pad + len) as u64) <= limit)
        };
        if read_seen.and_then(fits) != Some(true) {
            let r = self.ctl.read_pos.load(Ordering::Acquire);
            match fits(r) {
                None => return Err(NoRoom::Corrupt),
                Some(false) => return Err(NoRoom::Full),
                Some(true) => *read_seen = Some(r),
            }
        }
        if pad > 0 {
            // SAFETY: `off + HEADER <= ring <= data_len` (tail is a multiple
            // of FRAME_ALIGN, so at least a header); the bytes are past the
            // write position, so the reader does not read them yet.
            unsafe { self.header(off, pad as u32, KIND_PAD, 0, 0) };
        }
        let pos = w + pad as u64;
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

    /// Writes `words` (u32s then u64s) at offset `off`.
    ///
    /// # Safety
    /// `off + HEADER` is within the ring and past the write position.
    unsafe fn header(&self, off: usize, len: u32, kind: u32, session: u32, flags: u32) {
        let p = self.data.wrapping_add(off).cast::<u32>();
        // SAFETY: caller contract; `off` is 16-aligned and so is `data`.
        unsafe {
            p.write(len);
            p.add(1).write(kind);
            p.add(2).write(session);
            p.add(3).write(flags);
        }
    }

    /// Fills `slot` with a sampled allocation (its stack bytes, if any,
    /// already at [`RingWriter::stack_ptr`]) and publishes it.
    pub(crate) fn commit_alloc(
        &self,
        slot: Slot,
        session: u32,
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
        let len = frame_round(ALLOC_FIXED + stack_len).min(slot.len);
        let flags =
            if stack.is_some() { FLAG_HAS_STACK } else { 0 } | if maxed { FLAG_MAXED } else { 0 };
        let words = [addr, sample_size, regs.0, regs.1, regs.2, stack_len as u64];
        // SAFETY: the slot's `len >= ALLOC_FIXED` bytes at `off` are inside
        // the ring and past the write position (reserve).
        unsafe {
            self.header(slot.off, len as u32, KIND_ALLOC, session, flags);
            let p = self.data.wrapping_add(slot.off + HEADER).cast::<u64>();
            for (i, w) in words.iter().enumerate() {
                p.add(i).write(*w);
            }
        }
        self.ctl
            .write_pos
            .store(slot.pos + len as u64, Ordering::Release);
    }

    /// Places and publishes the free of `addr` (`read_seen` as for
    /// [`RingWriter::reserve`]).
    pub(crate) fn push_free(
        &self,
        session: u32,
        addr: u64,
        cap: u64,
        read_seen: &mut Option<u64>,
    ) -> Result<(), NoRoom> {
        let slot = self.reserve(FREE_FRAME, cap, read_seen)?;
        // SAFETY: as in `commit_alloc`, for FREE_FRAME bytes.
        unsafe {
            self.header(slot.off, FREE_FRAME as u32, KIND_FREE, session, 0);
            self.data
                .wrapping_add(slot.off + HEADER)
                .cast::<u64>()
                .write(addr);
        }
        self.ctl
            .write_pos
            .store(slot.pos + FREE_FRAME as u64, Ordering::Release);
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

/// The helper's side: takes frames in order.
pub(crate) struct RingReader<'a> {
    ctl: &'a Control,
    data: *const u8,
    ring: u64,
    pos: u64,
    /// The write position as last loaded: loaded again only once the
    /// reader reaches it, so the writer's line stays on the writer's core
    /// while records are waiting.
    written: u64,
}

impl<'a> RingReader<'a> {
    /// A reader of the session's ring of `ring` bytes at `data`, from the
    /// current read position.
    ///
    /// # Safety
    /// `data` is valid for reads of `ring` bytes for `'a` (the helper's own
    /// mapping, of a size it knows).
    pub(crate) unsafe fn new(ctl: &'a Control, data: *const u8, ring: u64) -> Self {
        RingReader {
            ctl,
            data,
            ring,
            pos: ctl.read_pos.load(Ordering::Relaxed),
            written: ctl.write_pos.load(Ordering::Acquire),
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

    /// The next record and the session it belongs to, as it lies in the
    /// ring (a stack copy is not copied out: the unwinder reads the words
    /// it needs in place); `None` when the ring is empty. The record
    /// borrows the reader, so the client gets its bytes back
    /// ([`RingReader::release`]) only once the record is done with.
    pub(crate) fn next_in_place(&mut self) -> Result<Option<(u32, RingRecord<'_>)>, Corrupt> {
        loop {
            if self.written == self.pos {
                self.written = self.ctl.write_pos.load(Ordering::Acquire);
                if self.written == self.pos {
                    return Ok(None);
                }
            }
            let w = self.written;
            let avail = w.wrapping_sub(self.pos);
            if avail > self.ring || avail < HEADER as u64 {
                return Err(Corrupt(self.pos));
            }
            let off = (self.pos % self.ring) as usize;
            let mut h = [0u8; HEADER];
            if off + HEADER > self.ring as usize {
                return Err(Corrupt(self.pos));
            }
            self.copy(off, &mut h);
            let word = |i: usize| u32::from_ne_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
            let (len, kind, session, flags) = (word(0) as usize, word(4), word(8), word(12));
            if len < HEADER
                || len as u64 % FRAME_ALIGN != 0
                || len as u64 > avail
                || off + len > self.ring as usize
            {
                return Err(Corrupt(self.pos));
            }
            let at = self.pos;
            self.pos += len as u64;
            // The frame's lines and the next frames' come from the
            // client's core: ask for them now, so the transfers overlap
            // rather than follow one another as the unwind reads them.
            let ahead = (w.wrapping_sub(at) as usize).min(len + PREFETCH_AHEAD);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A control block and a ring in one process's heap.
    struct Mem {
        ctl: Box<Control>,
        data: Vec<u64>,
    }

    fn mem(ring: usize) -> Mem {
        Mem {
            ctl: Box::default(),
            data: vec![0u64; ring / 8],
        }
    }

    fn regs() -> super::super::capture::Regs {
        super::super::capture::Regs {
            ip: 0x1000,
            sp: 0x7000,
            bp: 0x7100,
        }
    }

    fn alloc_with_stack(
        w: &RingWriter<'_>,
        session: u32,
        addr: u64,
        stack: &[u8],
    ) -> Result<(), NoRoom> {
        let slot = w.reserve(ALLOC_FIXED + stack.len(), u64::MAX, &mut None)?;
        // SAFETY: the slot holds the stack bytes after its fixed part.
        unsafe {
            std::ptr::copy_nonoverlapping(stack.as_ptr(), w.stack_ptr(slot), stack.len());
        }
        w.commit_alloc(slot, session, addr, 64, Some((regs(), stack.len(), false)));
        Ok(())
    }

    #[test]
    fn frames_come_out_in_order_across_the_ring_end() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: `data` is the 1024-byte buffer owned by `m`.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024) }.unwrap();
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024) };
        let mut buf = Vec::new();
        for round in 0..40u64 {
            let expected = round;
            let stack: Vec<u8> = (0..(round as usize * 13) % 300).map(|i| i as u8).collect();
            alloc_with_stack(&w, 7, 0x1000 + round, &stack).unwrap();
            w.push_free(7, 0x1000 + round, u64::MAX, &mut None).unwrap();
            let (s, rec) = r.next(&mut buf).unwrap().unwrap();
            assert_eq!(s, 7);
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
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024) }.unwrap();
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024) };
        let mut n = 0;
        while w.push_free(1, n, u64::MAX, &mut None).is_ok() {
            n += 1;
        }
        assert_eq!(n, 1024 / FREE_FRAME as u64);
        assert_eq!(w.push_free(1, 0, u64::MAX, &mut None), Err(NoRoom::Full));
        let mut buf = Vec::new();
        r.next(&mut buf).unwrap().unwrap();
        r.release();
        assert!(w.push_free(1, 99, u64::MAX, &mut None).is_ok());
        while r.next(&mut buf).unwrap().is_some() {}
        r.release();
        assert!(w.push_free(1, 1, 64, &mut None).is_ok());
        assert!(w.push_free(1, 2, 64, &mut None).is_ok());
        assert_eq!(
            w.push_free(1, 3, 64, &mut None),
            Err(NoRoom::Full),
            "cap of 64 bytes"
        );
    }

    #[test]
    fn a_frame_of_the_largest_stack_fits_once_the_reader_catches_up_wherever_it_starts() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: the buffer is ours, 1024 bytes, one writer.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024) }.unwrap();
        let max = w.max_stack_bytes();
        assert!(max > 0 && ALLOC_FIXED + max <= 512, "{max}");
        for start in (0..1024u64).step_by(FRAME_ALIGN as usize) {
            // An empty ring (the reader caught up) at every write position.
            m.ctl.write_pos.store(start, Ordering::Relaxed);
            m.ctl.read_pos.store(start, Ordering::Relaxed);
            assert!(
                w.reserve(ALLOC_FIXED + max, u64::MAX, &mut None).is_ok(),
                "at {start}"
            );
        }
        // Past the cap, some positions never have room: what a writer
        // waiting for room would wait on forever.
        m.ctl.write_pos.store(512 + 16, Ordering::Relaxed);
        m.ctl.read_pos.store(512 + 16, Ordering::Relaxed);
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
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024) }.unwrap();
        let mut seen = None;
        w.push_free(1, 1, u64::MAX, &mut seen).unwrap();
        assert_eq!(seen, Some(0), "loaded once");
        // The reader moves on; the writer still goes by what it saw, until
        // that leaves no room: then it loads the reader's position, finds
        // the frame it freed, and keeps the new position.
        m.ctl.read_pos.store(FREE_FRAME as u64, Ordering::Release);
        let mut n = 1;
        while seen == Some(0) {
            w.push_free(1, n, u64::MAX, &mut seen).unwrap();
            n += 1;
        }
        assert_eq!(n, 1024 / FREE_FRAME as u64 + 1);
        assert_eq!(seen, Some(FREE_FRAME as u64));
        // Full by the position it loads, too: refused, the position kept.
        assert_eq!(w.push_free(1, n, u64::MAX, &mut seen), Err(NoRoom::Full));
        assert_eq!(seen, Some(FREE_FRAME as u64));
        m.ctl
            .read_pos
            .store(2 * FREE_FRAME as u64, Ordering::Release);
        w.push_free(1, n, u64::MAX, &mut seen).unwrap();
        assert_eq!(seen, Some(2 * FREE_FRAME as u64));
    }

    #[test]
    fn impossible_frames_and_positions_are_errors_not_panics() {
        let mut m = mem(1024);
        let data = m.data.as_mut_ptr().cast::<u8>();
        // SAFETY: as above.
        let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024) }.unwrap();
        w.push_free(1, 5, u64::MAX, &mut None).unwrap();
        let mut buf = Vec::new();
        for (word, value) in [(0usize, 8u32), (0, 2000), (0, 17), (1, 9), (0, 48)] {
            // SAFETY: rewrites a header word of the buffer we own.
            unsafe { data.cast::<u32>().add(word).write(value) };
            // SAFETY: as above.
            let mut r = unsafe { RingReader::new(&m.ctl, data, 1024) };
            assert!(r.next(&mut buf).is_err(), "word {word} = {value}");
            // SAFETY: restores the header.
            unsafe {
                data.cast::<u32>().write(FREE_FRAME as u32);
                data.cast::<u32>().add(1).write(KIND_FREE);
            }
        }
        // A stack longer than its frame.
        m.ctl.write_pos.store(0, Ordering::Relaxed);
        m.ctl.read_pos.store(0, Ordering::Relaxed);
        alloc_with_stack(&w, 1, 9, &[1, 2, 3]).unwrap();
        // SAFETY: the stack-length word of the allocation frame.
        unsafe { data.add(HEADER).cast::<u64>().add(5).write(1 << 20) };
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024) };
        assert!(r.next(&mut buf).is_err());
        // Positions the helper could have garbled.
        m.ctl.read_pos.store(5000, Ordering::Relaxed);
        assert_eq!(
            w.reserve(32, u64::MAX, &mut None).unwrap_err(),
            NoRoom::Corrupt
        );
        m.ctl.write_pos.store(1 << 40, Ordering::Relaxed);
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024) };
        assert!(r.next(&mut buf).is_err());
        // SAFETY: as above.
        assert!(unsafe { RingWriter::new(&m.ctl, data, 1024, 4096) }.is_none());
        // SAFETY: as above.
        assert!(unsafe { RingWriter::new(&m.ctl, data, 1024, 1000) }.is_none());
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
                let w = unsafe { RingWriter::new(ctl, { data }.0, 4096, 4096) }.unwrap();
                for i in 0..ROUNDS {
                    let stack = [i as u8; 40];
                    while alloc_with_stack(&w, 1, i, &stack[..(i % 41) as usize]).is_err() {
                        std::thread::yield_now();
                    }
                }
            });
            // SAFETY: as above; one reader.
            let mut r = unsafe { RingReader::new(ctl, data.0, 4096) };
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
}
