//! `loom` models of the ring a preloaded client shares with its helper
//! process (`heap-profile/src/shared_ring/`), run on the very writer and
//! reader code the client and the helper run: under `--cfg zerotrace_loom`
//! the control block's atomics are loom's and the ring's bytes are words
//! loom tracks (`shared_ring/mem.rs`), each store of the writer and each
//! copy of the reader a checked access, so a reader that copies bytes not
//! ordered after their writer's stores, or a writer that stores into bytes
//! the reader has not released, is a causality violation loom reports.
//!
//! - two client threads each reserve and commit a frame (an allocation
//!   with its registers and stack bytes, a free) while the helper drains:
//!   it takes each frame exactly once, in reservation order, with its
//!   exact contents, never a torn or uncommitted one, and never finds the
//!   ring corrupt;
//! - a frame that does not fit before the ring's end pads it: the reader
//!   skips the pad and reads the frame whole at the next lap's start; a
//!   second such frame is refused (`NoRoom::Full`) until the reader has
//!   released the bytes it would take, never written over them;
//! - the helper closes the reservation word while clients reserve: no
//!   reservation succeeds after the close, and once `writers_done` says so
//!   every frame reserved before it is committed and reads whole; a client
//!   closing another session's word (or none's) leaves it open;
//! - with a hot window, a writer that reaches its end while the reader is
//!   close behind pads the rest of the ring and writes at its start: the
//!   reader skips the pad and takes every frame once, and a writer that
//!   finds no room past the pad is refused, never writes over unread
//!   bytes;
//! - positions wrap (modulo 2^40): frames written and read across the
//!   wrap, then the positions set back to the same values (what 2^40 bytes
//!   later looks like) while a client writes a lap and more of frames: the
//!   reader never takes a frame it took a wrap ago (whose header has the
//!   same tag and identity), and the tags it spends are ordered before the
//!   client's later stores to those bytes;
//! - a client thread keeps the read position it loaded a whole span of
//!   positions ago (2^40 bytes, less a little: the same value modulo 2^40
//!   reads as 32 bytes behind the reserved end, though 96 are unread) and
//!   writes while the reader takes those bytes and crosses a multiple of
//!   2^38: its frame never goes over unread bytes (the reader's lap count
//!   differs from the one it kept, so it loads the position anew), and
//!   every frame reads whole, in order. Without the lap check the model
//!   fails: the frame is reserved over the first unread free.
//!
//! The ring is 128 bytes (the loom build's smallest ring is 64), so the
//! models are a few dozen words.
//!
//! The helper polls, as the real one does: it drains, then yields to the
//! clients, until it has what it waits for. A helper that drained once
//! would be vacuous: loom keeps only the last access to each atomic for
//! its reordering, so a drain whose loads all come before the clients'
//! first (loads of the same word) is never moved after their reservations,
//! and such a model saw an empty ring in every interleaving. Checked by
//! hand while writing them: the models fail (a causality violation, a torn
//! frame or a corrupt ring) when the commit tag is stored Relaxed, the read
//! position released Relaxed, the room check ignores unread bytes, or the
//! reader takes a frame whose tag is not yet stored; the wrap's model
//! fails (the reader copies the frees it took a wrap ago while the client
//! writes those bytes) when the reader leaves a taken frame's tag in place.
//!
//! Run: `RUSTFLAGS="--cfg zerotrace_loom" cargo test -p zerotrace-loom --release --test loom_ring`
//! (`LOOM_MAX_PREEMPTIONS=N` changes the bound on preemptions explored; default 3).
#![cfg(all(zerotrace_loom, target_os = "linux"))]

use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering;

use zerotrace_heap_profile::__private::Record;
use zerotrace_heap_profile::__private::Regs;
use zerotrace_heap_profile::__private::shared_ring::{
    ALLOC_FIXED, Control, FREE_FRAME, LoomRing, NoRoom, ReadSeen, RingReader, RingWriter, close,
    close_session, open, word_closed, word_pos, writers_done,
};

/// Explores interleavings with at most `LOOM_MAX_PREEMPTIONS` (default 3)
/// preemptions, which keeps each model to seconds, and says how many it
/// explored (`--nocapture` shows it).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = runs.clone();
    b.check(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        f();
    });
    eprintln!("{} interleavings explored", runs.load(Ordering::Relaxed));
}

const SESSION: u32 = 1;
/// The ring's size: an allocation frame with [`STACK`] (80 bytes) and a
/// free (32) fit at once, two allocations do not.
const RING: u64 = 128;

/// The shared mapping: the control block and the ring.
struct Shared {
    ctl: Control,
    ring: LoomRing,
}

/// A mapping whose word is open for [`SESSION`], its ring empty.
fn shared() -> Arc<Shared> {
    let s = Shared {
        ctl: Control::default(),
        ring: LoomRing::new(RING as usize),
    };
    open(&s.ctl, SESSION);
    Arc::new(s)
}

impl Shared {
    /// A client thread's writer for [`SESSION`].
    fn writer(&self) -> RingWriter<'_> {
        RingWriter::over(&self.ctl, &self.ring, RING, SESSION).expect("a usable ring")
    }

    /// The helper's reader for [`SESSION`], from the read position.
    fn reader(&self) -> RingReader<'_> {
        RingReader::over(&self.ctl, &self.ring, RING, SESSION)
    }

    /// The reservation word.
    fn word(&self) -> u64 {
        self.ctl.reserved.load(Ordering::SeqCst)
    }
}

/// An allocation's stack bytes, every one distinct from a zeroed ring's.
const STACK: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
/// Its registers.
const REGS: Regs = Regs {
    ip: 0x1111,
    sp: 0x2222,
    bp: 0x3333,
};

/// A sampled allocation of `addr` with [`STACK`], as the client writes it
/// (reserve, the stack copy, commit): the frame's position.
fn alloc(w: &RingWriter<'_>, addr: u64) -> Result<u64, NoRoom> {
    alloc_keeping(w, addr, &mut None)
}

/// [`alloc`] by a thread that keeps the read position it loaded.
fn alloc_keeping(
    w: &RingWriter<'_>,
    addr: u64,
    kept: &mut Option<ReadSeen>,
) -> Result<u64, NoRoom> {
    let slot = w.reserve(ALLOC_FIXED + STACK.len(), u64::MAX, kept)?;
    w.write_stack(slot, &STACK);
    w.commit_alloc(slot, addr, 64, Some((REGS, STACK.len(), false)));
    Ok(slot.pos())
}

/// A record as the reader took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Alloc(u64),
    Free(u64),
}

/// Takes every record committed in order from the reader's position,
/// each checked whole against what the writers wrote (an allocation's
/// size, registers and stack bytes), releasing each once taken (as the
/// helper does): a corrupt ring fails the model.
fn drain(r: &mut RingReader<'_>, seen: &mut Vec<Seen>) {
    let mut buf = Vec::new();
    while let Some((session, rec)) = r.next(&mut buf).expect("the ring is never corrupt") {
        assert_eq!(session, SESSION);
        seen.push(match rec {
            Record::Alloc(a) => {
                assert_eq!(a.sample_size, 64, "torn allocation {:#x}", a.addr);
                assert_eq!(
                    a.stack_parts(),
                    Some((REGS.ip, REGS.sp, REGS.bp, &STACK[..], false)),
                    "torn allocation {:#x}",
                    a.addr
                );
                Seen::Alloc(a.addr)
            }
            Record::Free { addr } => Seen::Free(addr),
        });
        r.release();
    }
}

/// Drains until `want` records are taken, letting the other threads run
/// between drains (loom explores a spin loop by switching threads at each
/// `yield_now`; the loads of a drain that finds nothing new are no event
/// it would reorder on its own).
fn poll(r: &mut RingReader<'_>, seen: &mut Vec<Seen>, want: usize) {
    loop {
        drain(r, seen);
        if seen.len() >= want {
            return;
        }
        thread::yield_now();
    }
}

#[test]
fn two_writers_and_a_draining_reader_agree_on_every_frame() {
    model(|| {
        let s = shared();
        let allocating = {
            let s = s.clone();
            thread::spawn(move || alloc(&s.writer(), 0xA0).expect("room"))
        };
        let freeing = {
            let s = s.clone();
            thread::spawn(move || {
                s.writer()
                    .push_free(0xB0, u64::MAX, &mut None)
                    .expect("room")
            })
        };
        // The helper drains while the clients write, until it has both.
        let mut r = s.reader();
        let mut seen = Vec::new();
        poll(&mut r, &mut seen, 2);
        let at = allocating.join().unwrap();
        freeing.join().unwrap();
        drain(&mut r, &mut seen);
        // Reservation order: the allocation first (at 0), or the free.
        let expected = if at == 0 {
            [Seen::Alloc(0xA0), Seen::Free(0xB0)]
        } else {
            assert_eq!(at, FREE_FRAME as u64);
            [Seen::Free(0xB0), Seen::Alloc(0xA0)]
        };
        assert_eq!(seen, expected);
        assert!(r.next(&mut Vec::new()).unwrap().is_none());
    });
}

#[test]
fn a_frame_past_the_ring_end_is_padded_and_never_overwrites_unread_bytes() {
    model(|| {
        let s = shared();
        // Three frees written and read: the ring is empty at position 96,
        // 32 bytes before its end, too few for an allocation's 80.
        {
            let w = s.writer();
            for addr in 1..=3 {
                w.push_free(addr, u64::MAX, &mut None).unwrap();
            }
            let mut seen = Vec::new();
            drain(&mut s.reader(), &mut seen);
            assert_eq!(seen, [1, 2, 3].map(Seen::Free));
        }
        let writers = [0xA0, 0xB0].map(|addr| {
            let s = s.clone();
            thread::spawn(move || alloc(&s.writer(), addr))
        });
        // The helper drains while the clients write: until it has the
        // first frame, then once more (the second may be refused).
        let mut r = s.reader();
        let mut seen = Vec::new();
        poll(&mut r, &mut seen, 1);
        thread::yield_now();
        drain(&mut r, &mut seen);
        let [a, b] = writers.map(|w| w.join().unwrap());
        drain(&mut r, &mut seen);
        // The first to reserve pads 96..128 and writes 128..208 (offset
        // 0). The second, at 208, pads 208..256 and needs the whole ring:
        // it fits only if the reader had released up to 208, and then it
        // writes 256..336 (offset 0 again); else it is refused.
        let (first, second, (first_at, second_at)) = match (a, b) {
            (Ok(128), other) => (0xA0, 0xB0, (128, other)),
            (other, Ok(128)) => (0xB0, 0xA0, (128, other)),
            other => panic!("neither frame first past the pad: {other:?}"),
        };
        assert_eq!(first_at, 128);
        match second_at {
            Ok(256) => assert_eq!(seen, [Seen::Alloc(first), Seen::Alloc(second)]),
            Err(NoRoom::Full) => {
                assert_eq!(seen, [Seen::Alloc(first)]);
                // The reader has released everything now: the refused
                // frame fits, past its own pad.
                assert_eq!(alloc(&s.writer(), second), Ok(256));
                drain(&mut r, &mut seen);
                assert_eq!(seen, [Seen::Alloc(first), Seen::Alloc(second)]);
            }
            other => panic!("the second frame: {other:?}"),
        }
    });
}

#[test]
fn after_the_close_no_reservation_succeeds_and_writers_done_means_committed() {
    model(|| {
        let s = shared();
        let writers = [0xA0, 0xB0].map(|addr| {
            let s = s.clone();
            thread::spawn(move || s.writer().push_free(addr, u64::MAX, &mut None))
        });
        // The helper closes the word while the clients reserve.
        let closed = close(&s.ctl);
        assert!(word_closed(closed));
        assert_eq!(
            s.writer().push_free(0xC0, u64::MAX, &mut None),
            Err(NoRoom::Closed),
            "a reservation after the close"
        );
        let reserved = word_pos(closed) / FREE_FRAME as u64;
        // The helper waits until `writers_done` says so (the clients may
        // still run): then every frame reserved before the close is
        // committed and whole.
        while !writers_done(&s.ctl, &s.ring, RING).expect("never corrupt") {
            thread::yield_now();
        }
        let mut seen = Vec::new();
        drain(&mut s.reader(), &mut seen);
        assert_eq!(seen.len() as u64, reserved, "a frame reserved, not read");
        let results = writers.map(|w| w.join().unwrap());
        // Each client's frame was read if its reservation succeeded, and
        // it failed only as closed; none moved the closed word.
        for (addr, result) in [0xA0, 0xB0].into_iter().zip(results) {
            match result {
                Ok(()) => assert!(seen.contains(&Seen::Free(addr))),
                Err(NoRoom::Closed) => assert!(!seen.contains(&Seen::Free(addr))),
                Err(e) => panic!("{addr:#x}: {e:?}"),
            }
        }
        assert_eq!(s.word(), closed, "the closed word moved");
    });
}

#[test]
fn a_client_closing_another_session_leaves_the_word_open() {
    model(|| {
        let s = shared();
        let writing = {
            let s = s.clone();
            thread::spawn(move || {
                let w = s.writer();
                [0xA0, 0xB0].map(|addr| w.push_free(addr, u64::MAX, &mut None))
            })
        };
        // A client of another session (or of none) stops its profile.
        close_session(&s.ctl, SESSION + 1);
        thread::yield_now();
        close_session(&s.ctl, 0);
        assert_eq!(writing.join().unwrap(), [Ok(()), Ok(())]);
        assert!(!word_closed(s.word()));
        let mut seen = Vec::new();
        drain(&mut s.reader(), &mut seen);
        assert_eq!(seen, [Seen::Free(0xA0), Seen::Free(0xB0)]);
        // Its own session's close closes it.
        close_session(&s.ctl, SESSION);
        assert!(word_closed(s.word()));
        assert_eq!(
            s.writer().push_free(0xC0, u64::MAX, &mut None),
            Err(NoRoom::Closed)
        );
    });
}

#[test]
fn the_hot_window_sends_writers_back_to_the_start_and_the_reader_follows() {
    model(|| {
        const HOT: u64 = 32;
        let s = shared();
        // One free written and read: the ring is empty at 32, the end of
        // a 32-byte hot window.
        {
            s.writer()
                .with_hot_window(HOT)
                .push_free(1, u64::MAX, &mut None)
                .unwrap();
            let mut seen = Vec::new();
            drain(&mut s.reader(), &mut seen);
            assert_eq!(seen, [Seen::Free(1)]);
        }
        let writers = [0xA0, 0xB0].map(|addr| {
            let s = s.clone();
            thread::spawn(move || {
                s.writer()
                    .with_hot_window(HOT)
                    .push_free(addr, u64::MAX, &mut None)
            })
        });
        let mut r = s.reader();
        let mut seen = Vec::new();
        poll(&mut r, &mut seen, 1);
        let results = writers.map(|w| w.join().unwrap());
        // A free refused for room (the reader had not passed the pad) is
        // written once the reader has.
        drain(&mut r, &mut seen);
        for (addr, res) in [0xA0, 0xB0].into_iter().zip(results) {
            match res {
                Ok(()) => {}
                Err(NoRoom::Full) => s
                    .writer()
                    .with_hot_window(HOT)
                    .push_free(addr, u64::MAX, &mut None)
                    .expect("room once the reader caught up"),
                Err(e) => panic!("free {addr:#x}: {e:?}"),
            }
        }
        drain(&mut r, &mut seen);
        seen.sort_by_key(|s| match s {
            Seen::Free(a) | Seen::Alloc(a) => *a,
        });
        assert_eq!(seen, [Seen::Free(0xA0), Seen::Free(0xB0)], "each once");
        // The first to reserve found the reader at 32 and went back to the
        // start: past the pad (32..128), at 128.
        assert!(word_pos(s.word()) >= 160, "at {}", word_pos(s.word()));
        assert!(r.next(&mut Vec::new()).unwrap().is_none());
    });
}

/// Sets the ring's reserved end and read position to `pos` (the word's
/// session and open bit kept).
fn set_positions(s: &Shared, pos: u64) {
    let w = s.word();
    s.ctl
        .reserved
        .store(w - word_pos(w) + pos, Ordering::SeqCst);
    s.ctl.read_pos.store(pos, Ordering::SeqCst);
}

#[test]
fn a_frame_taken_a_wrap_ago_is_never_taken_again() {
    model(|| {
        /// 32 bytes before the positions wrap (offset 96).
        const START: u64 = (1 << 40) - 32;
        let s = shared();
        // Two frees written and read across the wrap: at START (offset 96)
        // and at 0.
        set_positions(&s, START);
        {
            let w = s.writer();
            for addr in 1..=2 {
                w.push_free(addr, u64::MAX, &mut None).unwrap();
            }
            assert_eq!(word_pos(s.word()), 32, "the positions wrapped");
            let mut seen = Vec::new();
            drain(&mut s.reader(), &mut seen);
            assert_eq!(seen, [Seen::Free(1), Seen::Free(2)]);
        }
        // A wrap later: the same positions again. A client writes five
        // frees (a lap of the ring and one more: the fifth reuses the
        // first's bytes, once the reader has released them) while the
        // helper drains.
        set_positions(&s, START);
        const ADDRS: [u64; 5] = [0xA0, 0xA1, 0xA2, 0xA3, 0xA4];
        let writing = {
            let s = s.clone();
            thread::spawn(move || {
                let w = s.writer();
                for addr in ADDRS {
                    loop {
                        match w.push_free(addr, u64::MAX, &mut None) {
                            Ok(()) => break,
                            Err(NoRoom::Full) => thread::yield_now(),
                            Err(e) => panic!("free {addr:#x}: {e:?}"),
                        }
                    }
                }
            })
        };
        let mut r = s.reader();
        let mut seen = Vec::new();
        poll(&mut r, &mut seen, ADDRS.len());
        writing.join().unwrap();
        drain(&mut r, &mut seen);
        assert_eq!(seen, ADDRS.map(Seen::Free), "a frame of a wrap ago taken");
    });
}

/// The bytes an allocation frame with [`STACK`] takes.
const ALLOC_FRAME: u64 = (ALLOC_FIXED + STACK.len()).next_multiple_of(16) as u64;

#[test]
fn a_read_position_kept_a_span_ago_never_lets_a_frame_over_unread_bytes() {
    model(|| {
        /// A multiple of 2^38, a quarter of the positions' span: the
        /// reader crosses it while the client writes.
        const BOUNDARY: u64 = 1 << 38;
        const POS_MASK: u64 = (1 << 40) - 1;
        let s = shared();
        // Long ago, the ring empty 32 bytes below the boundary (lap 0): the
        // client thread writes a free and keeps the read position it
        // loaded; the reader takes it, crossing the boundary (lap 1).
        set_positions(&s, BOUNDARY - 32);
        let mut kept = None;
        s.writer().push_free(1, u64::MAX, &mut kept).unwrap();
        assert_eq!(kept.map(|k| (k.pos(), k.lap())), Some((BOUNDARY - 32, 0)));
        let mut seen = Vec::new();
        drain(&mut s.reader(), &mut seen);
        assert_eq!(seen, [Seen::Free(1)]);
        // The thread idle, the reader goes on 2^40 - 64 bytes (to 2^40 +
        // BOUNDARY - 96 unwrapped: four quarters since lap 0), and other
        // threads write three frees, up to the boundary again: 96 bytes
        // unread, room for a free, not for an allocation; by the kept
        // position, 32 bytes would be, with room for the allocation.
        set_positions(&s, BOUNDARY - 96);
        s.ctl.read_lap.store(4, Ordering::SeqCst);
        for addr in 2..=4 {
            s.writer().push_free(addr, u64::MAX, &mut None).unwrap();
        }
        assert_eq!(word_pos(s.word()), BOUNDARY);
        // The thread wakes and writes an allocation while the helper takes
        // the frees (its releases cross the boundary: lap 5).
        let writing = {
            let s = s.clone();
            thread::spawn(move || {
                let w = s.writer();
                let mut kept = kept;
                loop {
                    match alloc_keeping(&w, 0xA0, &mut kept) {
                        Ok(at) => {
                            // The reader had released all but a ring
                            // before the frame's end: the read position it
                            // stores later than the one the reservation
                            // went by is never further behind.
                            let read = s.ctl.read_pos.load(Ordering::SeqCst);
                            let span = (at + ALLOC_FRAME).wrapping_sub(read) & POS_MASK;
                            assert!(
                                span <= RING,
                                "frame at {at:#x} over unread bytes from {read:#x}"
                            );
                            return at;
                        }
                        Err(NoRoom::Full) => thread::yield_now(),
                        Err(e) => panic!("allocation: {e:?}"),
                    }
                }
            })
        };
        let mut r = s.reader();
        let mut seen = Vec::new();
        poll(&mut r, &mut seen, 4);
        let at = writing.join().unwrap();
        drain(&mut r, &mut seen);
        assert_eq!(at, BOUNDARY);
        assert_eq!(
            seen,
            [
                Seen::Free(2),
                Seen::Free(3),
                Seen::Free(4),
                Seen::Alloc(0xA0)
            ]
        );
    });
}
