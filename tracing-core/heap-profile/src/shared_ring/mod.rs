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
//! not yet committed stops it until a later drain. A frame taken has its
//! tag spent by the reader ([`spent_tag`]) before the bytes are released:
//! positions are kept modulo 2^[`POS_BITS`] and come back to the same
//! values after that many bytes, and a header whose tag were left in place
//! would then read as the new frame's before its writer commits it.
//!
//! A client thread checks the room by the read position it loaded last,
//! this session, while that shows room, so the reader's line stays on the
//! reader's core. It keeps the reader's lap count with it (the times the
//! read position crossed a quarter of the positions' span, which the
//! reader bumps before it stores a position past one) and goes by the
//! kept position only while the count has not moved: a position kept
//! while the reader went 2^[`POS_BITS`] bytes on (an idle thread, a long
//! session) would, modulo that span, read as a recent one and let a frame
//! over unread bytes ([`RingWriter::reserve`] gives the argument).
//!
//! While the helper keeps up, the writers keep to the ring's first
//! [`HOT_BYTES`]: the reservation that reaches that far, finding the
//! reader close behind, also takes the rest of the ring as a pad (as at
//! the ring's end), and the next frame starts at offset 0. The lines the
//! writers fill are then those they filled a lap before, still in their
//! core's cache, rather than lines a whole ring ago, long evicted; a
//! reader that falls behind gets the whole ring, as the writer goes on
//! past the window while unread bytes are more than half of it. (A session
//! with adaptive sampling, which reads the unread bytes as the ring's
//! filling, has no window.)
//!
//! A session's ring is set up by the helper while no client thread
//! writes it, through the reservation word alone: the helper closes it
//! (no reservation succeeds after, and a thread whose compare-and-swap
//! fails, or that finds the word closed or another session's, gives up
//! the record), waits, bounded, until every frame reserved before the
//! close is committed (it walks the headers from the read position to the
//! closed end), resets the positions and the settings, and opens the word
//! for the new session with Release.
//!
//! The ring's bytes are reached through `mem.rs`'s `RingMem`, the mapping's
//! address in the normal build; under `--cfg zerotrace_loom` the control
//! block's atomics and the ring's words are loom's, so the loom models in
//! `tracing-core/loom/tests/loom_ring.rs` race this very writer and reader.
// The loom build leaves out the client and the helper, which use most of
// the constants and some of the methods.
#![cfg_attr(zerotrace_loom, allow(dead_code))]

#[cfg(zerotrace_loom)]
use loom::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::atomic::Ordering;
#[cfg(not(zerotrace_loom))]
use std::sync::atomic::{AtomicU32, AtomicU64};

// Its filter lives in the mapping only (no model uses it).
#[cfg(not(zerotrace_loom))]
mod free_filter;
mod mem;
mod reader;
mod writer;

#[cfg(not(zerotrace_loom))]
pub(crate) use free_filter::{FreeFilter, LaggedReleases};
#[cfg(zerotrace_loom)]
pub use mem::LoomRing;
use mem::RingMem;
#[cfg(not(zerotrace_loom))]
pub(crate) use reader::RingRecord;
pub use reader::{Corrupt, RingReader};
#[cfg(any(test, zerotrace_loom))]
pub use writer::Slot;
#[cfg(test)]
pub(crate) use writer::usable_ring;
pub use writer::{NoRoom, RingWriter};

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

/// The smallest ring a writer takes: 1 KiB, or under loom 64 bytes, so
/// that a model's ring of a few words wraps around.
#[cfg(not(zerotrace_loom))]
const MIN_RING: u64 = 1024;
#[cfg(zerotrace_loom)]
const MIN_RING: u64 = 64;

/// The window of the ring the writers keep to while the reader keeps up
/// (see the module's text): 1 MiB, for rings of at least twice that and
/// sessions without adaptive sampling.
/// Within a window this size the lines written a lap before are still in
/// the writing core's cache (a lossless profile of the allocation-heavy
/// benchmark cost 20% less per sample in a 1 MiB ring than in an 8 MiB
/// one; a 256 KiB ring was too small for the helper to keep up with).
pub(crate) const HOT_BYTES: u64 = 1 << 20;

/// How many bytes after its frame a writer asks for
/// ([`RingWriter::prefetch_after`]): a free and most of a typical
/// allocation's frame.
#[cfg(not(zerotrace_loom))]
const PREFETCH_NEXT: usize = 768;

/// The hot window of a ring of `ring` bytes (0: none, the whole ring).
fn hot_window(ring: u64) -> u64 {
    if ring >= 2 * HOT_BYTES { HOT_BYTES } else { 0 }
}

/// Frames start and end on this boundary, and a ring's size is a multiple
/// of it, so the room left at a ring's end always holds a header.
pub(crate) const FRAME_ALIGN: u64 = 16;

/// A frame's header, four `u32`: the commit tag (written last, see
/// [`commit_tag`]), the length, the frame's identity (its session and
/// the position's bits above the tag's, [`header_ident`]), the kind and
/// the flags (`kind | flags << 8`).
pub(crate) const HEADER: usize = 16;
/// An allocation frame before its stack bytes: the header and six `u64`
/// (address, sample size, ip, sp, bp, stack length).
pub const ALLOC_FIXED: usize = HEADER + 48;
/// A free frame: the header and the address, rounded to [`FRAME_ALIGN`].
pub const FREE_FRAME: usize = 32;

pub(crate) const KIND_PAD: u32 = 0;
pub(crate) const KIND_ALLOC: u32 = 1;
pub(crate) const KIND_FREE: u32 = 2;

pub(crate) const FLAG_HAS_STACK: u32 = 1;
pub(crate) const FLAG_MAXED: u32 = 2;

/// Positions (bytes ever reserved, this session) are kept modulo
/// 2^POS_BITS, in the low bits of the reservation word.
pub(crate) const POS_BITS: u32 = 40;
/// The position's bits.
pub(crate) const POS_MASK: u64 = (1 << POS_BITS) - 1;
/// The read position's laps ([`Control::read_lap`]) count the crossings of
/// a multiple of 2^LAP_SHIFT, a quarter of the positions' span: the
/// position's top two bits change.
pub(crate) const LAP_SHIFT: u32 = POS_BITS - 2;
/// The largest ring: a quarter of the positions' span, so that a step of
/// the reader (at most a ring: the writers reserve no further than a ring
/// past the read position it last stored) crosses at most one multiple of
/// 2^[`LAP_SHIFT`], and the distances [`RingWriter::reserve`] trusts stay
/// below 2^[`POS_BITS`].
pub(crate) const MAX_RING: u64 = 1 << LAP_SHIFT;

/// The quarter of the positions' span `pos` lies in (`pos <=`
/// [`POS_MASK`]): read positions in different quarters are a lap apart.
#[inline]
pub(crate) fn lap_quarter(pos: u64) -> u64 {
    (pos >> LAP_SHIFT) & 3
}

/// The read position as a client thread last loaded it, this session, and
/// the reader's lap count ([`Control::read_lap`]) loaded before it: what
/// [`RingWriter::reserve`] goes by while the count has not moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadSeen {
    /// The read position.
    pub(crate) pos: u64,
    /// `read_lap`, loaded before `pos`.
    pub(crate) lap: u32,
}

#[cfg(zerotrace_loom)]
impl ReadSeen {
    /// The read position (the loom models compare it).
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// The lap count loaded with it.
    pub fn lap(&self) -> u32 {
        self.lap
    }
}
/// The session's bits, above the position's in the reservation word (the
/// helper numbers sessions within them, 0 being none).
pub(crate) const SESSION_MASK: u32 = (1 << 23) - 1;
/// The reservation word's top bit: closed, no reservation succeeds.
pub(crate) const CLOSED: u64 = 1 << 63;

/// The position in a reservation word.
pub fn word_pos(w: u64) -> u64 {
    w & POS_MASK
}

/// The session in a reservation word (0: none yet).
pub(crate) fn word_session(w: u64) -> u32 {
    (w >> POS_BITS) as u32 & SESSION_MASK
}

/// Whether a reservation word is closed.
pub fn word_closed(w: u64) -> bool {
    w & CLOSED != 0
}

/// The word of `session` open, at position 0.
pub(crate) fn open_word(session: u32) -> u64 {
    u64::from(session & SESSION_MASK) << POS_BITS
}

/// The commit tag of a frame at `pos` of `session`: what its first header
/// word says once the frame is committed. It differs from the tags of the
/// frames of earlier laps at the same offset (their positions differ by a
/// multiple of the ring's size, at most 2^36 apart by the tag's bits), and
/// of other sessions' frames (whose positions start at 0 too), so an
/// earlier frame's header never reads as this one committed. Other bytes
/// an earlier lap left (a stack word) may equal it by chance: the reader
/// takes a frame as committed only when its header's session matches too.
pub(crate) fn commit_tag(pos: u64, session: u32) -> u32 {
    ((pos >> 4) as u32) ^ session.wrapping_mul(0x9E37_79B1) ^ 0xC0A1_7E55
}

/// What the reader leaves in a frame's first header word once it has
/// taken the frame (before it releases the bytes): the frame's tag with
/// its lowest bit flipped. That is the tag of a position 16 bytes away
/// (modulo the tag's span of 2^36), never of a frame at the same offset of
/// a ring of at least 64 bytes, of this session or any position to come:
/// so within a session no header ever reads as committed twice, however
/// far the positions go (they wrap modulo 2^[`POS_BITS`], which the hot
/// window's pads, a whole ring per lap of the window, make about 4 GiB of
/// records on a 256 MiB ring). A session's frames are all taken before
/// their bytes are reserved again; another session's header has another
/// session in its identity.
pub(crate) fn spent_tag(pos: u64, session: u32) -> u32 {
    commit_tag(pos, session) ^ 1
}

/// A header's third word for a frame at `pos` of `session`: the session,
/// and in bits 24 to 27 the position's bits 36 to 39, which the commit tag
/// (bits 4 to 35) leaves out. With the tag, it names the frame's whole
/// position modulo 2^[`POS_BITS`], so a stack word an earlier lap left
/// that equals the tag by chance is not read as a commit; a header an
/// earlier lap left had its tag spent when it was read ([`spent_tag`]).
pub(crate) fn header_ident(pos: u64, session: u32) -> u32 {
    (session & SESSION_MASK) | (((pos >> 36) & 0xF) as u32) << 24
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
pub struct Control {
    // Written by the helper.
    /// The session sampling now (0: none).
    pub active: AtomicU32,
    /// Bumped whenever a thread must draw its sampler anew (a new session,
    /// a new interval).
    pub epoch: AtomicU32,
    /// How many times the read position crossed a multiple of
    /// 2^[`LAP_SHIFT`] this session (modulo 2^32): bumped by the reader,
    /// with Release, before it stores a read position past the boundary
    /// ([`RingReader::release`]). A client thread that keeps the read
    /// position it loaded keeps this count with it ([`ReadSeen`]) and goes
    /// by the position only while the count is unchanged, so a position a
    /// whole 2^[`POS_BITS`] old never passes for a recent one (see
    /// [`RingWriter::reserve`]). On the line the samplers read anyway
    /// (with `epoch`), not on `read_pos`'s: it changes once every
    /// 2^[`LAP_SHIFT`] bytes.
    pub read_lap: AtomicU32,
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
    /// 2^[`POS_BITS`]). Client threads keep the one they loaded last, with
    /// `read_lap` ([`ReadSeen`]), so that this line stays on the reader's
    /// core while the ring has room.
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
pub struct OwnLine<T>(pub T);

impl<T> std::ops::Deref for OwnLine<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// Closes the reservation word, whatever its session (the helper, before
/// it sets a new session's ring up): no reservation succeeds after this.
/// The closed word (its position: the end of what was reserved).
pub fn close(ctl: &Control) -> u64 {
    ctl.reserved.fetch_or(CLOSED, Ordering::AcqRel) | CLOSED
}

/// Closes the reservation word if it is open for `session` (a session's
/// profile stops: the client's own decision, or the helper's).
pub fn close_session(ctl: &Control, session: u32) {
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
#[cfg(not(zerotrace_loom))]
pub(crate) unsafe fn writers_done(
    ctl: &Control,
    data: *const u8,
    ring: u64,
) -> Result<bool, Corrupt> {
    // SAFETY: caller contract.
    writers_done_in(ctl, unsafe { RingMem::from_ptr(data.cast_mut()) }, ring)
}

/// [`writers_done`] over a loom model's ring (`ring` at most its size).
#[cfg(zerotrace_loom)]
pub fn writers_done(ctl: &Control, data: &LoomRing, ring: u64) -> Result<bool, Corrupt> {
    assert!(usize::try_from(ring).is_ok_and(|r| r <= data.len()));
    writers_done_in(ctl, data.mem(), ring)
}

/// [`writers_done`] over `data`, which holds `ring` bytes.
fn writers_done_in(ctl: &Control, data: RingMem<'_>, ring: u64) -> Result<bool, Corrupt> {
    let w = ctl.reserved.load(Ordering::Acquire);
    if word_session(w) == 0 {
        // Never opened: nothing was reserved.
        return Ok(true);
    }
    let r = RingReader::with_mem(ctl, data, ring, word_session(w));
    r.committed_up_to(word_pos(w))
}

/// Opens the reservation word for `session` (non-zero, at most
/// [`SESSION_MASK`]), its ring empty: after the session's other settings,
/// which a writer that sees the word open sees too.
pub fn open(ctl: &Control, session: u32) {
    // Laps counted from the position's start: a thread drops the position
    // it kept when the session changes (`ThreadState::follow_ring`).
    ctl.read_lap.store(0, Ordering::Relaxed);
    ctl.read_pos.store(0, Ordering::Relaxed);
    ctl.reserved.store(open_word(session), Ordering::Release);
}

#[cfg(all(test, not(zerotrace_loom)))]
mod tests;
