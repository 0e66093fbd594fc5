//! The helper's side of the ring shared with a preloaded client
//! (`shared_ring/mod.rs` says the protocol): frames taken in order once their
//! commit tag says so, every length checked against the reserved end and
//! the ring, a frame's header and fixed part copied out with atomic loads
//! and its stack left where it lies for the unwinder to read in place.

use std::marker::PhantomData;
use std::sync::atomic::Ordering;

#[cfg(not(zerotrace_loom))]
use zerotrace_unwind::StackCopy;

#[cfg(any(test, zerotrace_loom))]
use super::super::{
    capture::Captured,
    record_queue::{AllocRecord, Record},
};
use super::*;

/// The records could not be read: a length or kind the ring cannot hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the client's ring holds an impossible frame at position {0}")]
pub struct Corrupt(pub u64);

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
    at: RingMem<'r>,
    len: usize,
    _reader: PhantomData<&'r mut ()>,
}

impl RingStack<'_> {
    /// The copy, read where it lies.
    #[cfg(not(zerotrace_loom))]
    pub(crate) fn copy(&self) -> StackCopy<'_> {
        // SAFETY: `at..at + len` is inside the ring (the frame's length was
        // checked against the ring, the stack's against the frame), which
        // is mapped read-write for the helper's life; in the helper only
        // this reader touches the ring's bytes, and only with atomic loads
        // or the `asm!` copy; the client process may write them in any
        // way (the unwinder survives any word it reads).
        unsafe { StackCopy::shared(self.sp, self.at.ptr(0), self.len) }
    }
}

/// How far past a frame the reader asks for the ring's lines early.
const PREFETCH_AHEAD: usize = 1024;

/// The helper's side: takes frames in order, each once its commit tag
/// says it is committed at its position.
pub struct RingReader<'a> {
    ctl: &'a Control,
    data: RingMem<'a>,
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
    #[cfg(not(zerotrace_loom))]
    pub(crate) unsafe fn new(ctl: &'a Control, data: *const u8, ring: u64, session: u32) -> Self {
        // SAFETY: caller contract; the reader keeps every offset inside
        // `ring` bytes.
        let data = unsafe { RingMem::from_ptr(data.cast_mut()) };
        Self::with_mem(ctl, data, ring, session)
    }

    /// A reader of `session`'s ring of `ring` bytes (at most its size) in
    /// a loom model, from the current read position.
    #[cfg(zerotrace_loom)]
    pub fn over(ctl: &'a Control, data: &'a LoomRing, ring: u64, session: u32) -> Self {
        assert!(usize::try_from(ring).is_ok_and(|r| r <= data.len()));
        Self::with_mem(ctl, data.mem(), ring, session)
    }

    /// A reader over `data`, which holds `ring` bytes.
    pub(super) fn with_mem(ctl: &'a Control, data: RingMem<'a>, ring: u64, session: u32) -> Self {
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

    /// Copies `out.len()` ring bytes at `off` out (`RingMem::read`: long
    /// runs by the `asm!` copy the client uses, the rest with atomic loads).
    fn copy(&self, off: usize, out: &mut [u8]) {
        // SAFETY: callers keep `off + out.len() <= ring` (checked against
        // the frame's length, itself checked against the ring).
        unsafe { self.data.read(off, out) }
    }

    /// The `i`th `u32` of the header at `off` (`off + HEADER <= ring`,
    /// 16-aligned), loaded with `order`.
    fn header_word(&self, off: usize, i: usize, order: Ordering) -> u32 {
        debug_assert!(off + HEADER <= self.ring as usize && i < 4);
        // SAFETY: inside the ring (callers check `off + HEADER <= ring`),
        // aligned (`data` and `off` are 16-aligned); an atomic load, whatever
        // the client does to the word.
        unsafe { self.data.load_u32(off + 4 * i, order) }
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
        // A frame reserved and not yet committed holds what an earlier lap
        // left, a stack word say, which may equal the tag by chance (one in
        // 2^32): a frame committed here also has its identity in its header
        // (the session and the position's high bits, written before the
        // tag), so a match without it is read as not committed yet, and a
        // chance match now takes 64 bits.
        if self.header_word(off, 2, Ordering::Relaxed) != header_ident(pos, self.session) {
            return Ok(None);
        }
        let len = self.header_word(off, 1, Ordering::Relaxed) as usize;
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
            let Some(Header { len, kind, flags }) = self.frame_at(self.pos, end)? else {
                return Ok(None);
            };
            let off = (self.pos % self.ring) as usize;
            let at = self.pos;
            self.pos = (self.pos + len as u64) & POS_MASK;
            if kind == KIND_PAD {
                // Its bytes are not read (the pad past the hot window is
                // most of the ring).
                self.spend(off, at);
                continue;
            }
            // The frame's lines and the next frames' come from the
            // client's core: ask for them now, so the transfers overlap
            // rather than follow one another as the unwind reads them.
            let ahead = ((end.wrapping_sub(at) & POS_MASK) as usize).min(len + PREFETCH_AHEAD);
            self.data.prefetch(off, ahead.min(self.ring as usize - off));
            let rec = match kind {
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
                        at: self.data.offset(off + ALLOC_FIXED),
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
            self.spend(off, at);
            return Ok(Some((self.session, rec)));
        }
    }

    /// As [`RingReader::next_in_place`], the record copied out (a stack
    /// copy into `stack`, a recycled buffer).
    #[cfg(any(test, zerotrace_loom))]
    pub fn next(&mut self, stack: &mut Vec<u8>) -> Result<Option<(u32, Record)>, Corrupt> {
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
                        unsafe { s.at.read(0, &mut bytes) };
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

    /// Spends the tag of the frame taken at `off`, position `pos`: the
    /// header never reads as committed again, not even when the positions
    /// come back to `pos` (2^[`POS_BITS`] bytes later, which the hot
    /// window's pads make a few GiB of records). Done before the bytes are
    /// released, so the writers' later stores to them come after it.
    #[inline]
    fn spend(&self, off: usize, pos: u64) {
        // SAFETY: `off + HEADER <= ring` (checked by `frame_at`), 16-aligned;
        // the bytes are the reader's until it releases them.
        unsafe {
            self.data
                .store_u32(off, spent_tag(pos, self.session), Ordering::Relaxed)
        };
    }

    /// Hands the bytes read so far back to the client. A position in
    /// another quarter of the positions' span than the one stored before
    /// (a step is at most a ring, at most [`MAX_RING`]: the next quarter)
    /// has the lap count bumped first, with Release, so a client thread
    /// that loads the count and then this position has a count at most one
    /// behind the position's, and one whose count is unchanged kept no
    /// position a whole span old ([`RingWriter::reserve`]).
    pub fn release(&self) {
        // Only the reader stores the position while a session runs: its
        // own last store (or the session's 0).
        let before = self.ctl.read_pos.load(Ordering::Relaxed);
        if lap_quarter(before) != lap_quarter(self.pos) {
            let lap = self.ctl.read_lap.load(Ordering::Relaxed);
            self.ctl
                .read_lap
                .store(lap.wrapping_add(1), Ordering::Release);
        }
        self.ctl.read_pos.store(self.pos, Ordering::Release);
    }

    /// Whether every frame reserved up to `end` is committed: the headers
    /// walked from the read position (nothing is taken). With the word
    /// closed at `end`, `true` means no client thread writes this ring any
    /// more.
    pub fn committed_up_to(&self, end: u64) -> Result<bool, Corrupt> {
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
