//! The shared ring's and the free filter's tests: several writers and a
//! reader, sessions set up while writers run, garbled words and frames.

use std::sync::atomic::AtomicU16;

use super::super::record_queue::Record;
use super::free_filter::RELEASE_LAG;
use super::*;

mod positions;

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

/// Commits a free of `addr` into `slot` (a frame reserved for it), as
/// `push_free` does after its reservation.
fn commit_free(w: &RingWriter<'_>, slot: Slot, addr: u64) {
    // SAFETY: the slot's FREE_FRAME bytes were reserved by `w`.
    unsafe {
        w.header(slot.off, slot.pos, FREE_FRAME as u32, KIND_FREE, 0);
        w.data.write_u64(slot.off + HEADER, addr);
        w.publish(slot.off, slot.pos);
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
    commit_free(&w2, slot, 0x40);
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

#[test]
fn a_writer_keeps_to_the_hot_window_while_the_reader_keeps_up() {
    let mut m = mem(4096);
    let data = m.data.as_mut_ptr().cast::<u8>();
    // SAFETY: `data` is the 4096-byte buffer owned by `m`.
    let w = unsafe { RingWriter::new(&m.ctl, data, 4096, 4096, 1) }
        .unwrap()
        .with_hot_window(1024);
    // SAFETY: as above.
    let mut r = unsafe { RingReader::new(&m.ctl, data, 4096, 1) };
    let mut buf = Vec::new();
    let mut seen = Vec::new();
    // Frees (32 bytes), each read at once: the reader is never behind.
    for addr in 0..200u64 {
        let mut read_seen = None;
        let slot = w.reserve(FREE_FRAME, u64::MAX, &mut read_seen).unwrap();
        assert!(
            slot.off < 1024,
            "frame {addr} at {} outside the window",
            slot.off
        );
        commit_free(&w, slot, addr);
        while let Some((_, rec)) = r.next(&mut buf).unwrap() {
            let Record::Free { addr } = rec else {
                panic!("a free")
            };
            seen.push(addr);
        }
        r.release();
    }
    assert_eq!(seen, (0..200).collect::<Vec<_>>(), "every frame, in order");
    // 200 frames of 32 bytes are six laps of the window: the positions
    // moved on by a whole ring for each.
    let end = word_pos(m.ctl.reserved.load(Ordering::Relaxed));
    assert!(end >= 6 * 4096, "positions at {end}");
}

#[test]
fn a_writer_left_behind_uses_the_whole_ring_and_comes_back_once_the_reader_is_close() {
    let mut m = mem(4096);
    let data = m.data.as_mut_ptr().cast::<u8>();
    // SAFETY: `data` is the 4096-byte buffer owned by `m`.
    let w = unsafe { RingWriter::new(&m.ctl, data, 4096, 4096, 1) }
        .unwrap()
        .with_hot_window(1024);
    let mut read_seen = None;
    // Nothing is read: past the window's end, the writer goes on.
    let mut offs = Vec::new();
    for _ in 0..40 {
        let slot = w.reserve(FREE_FRAME, u64::MAX, &mut read_seen).unwrap();
        offs.push(slot.off);
        commit_free(&w, slot, 0);
    }
    assert_eq!(offs, (0..40).map(|i| i * 32).collect::<Vec<_>>());
    // The reader catches up: at the next sixteenth of the window the
    // writer goes back to the ring's start.
    // SAFETY: as above.
    let mut r = unsafe { RingReader::new(&m.ctl, data, 4096, 1) };
    let mut buf = Vec::new();
    let mut n = 0;
    while r.next(&mut buf).unwrap().is_some() {
        n += 1;
    }
    r.release();
    assert_eq!(n, 40);
    let offs: Vec<usize> = (0..4)
        .map(|_| {
            let slot = w.reserve(FREE_FRAME, u64::MAX, &mut read_seen).unwrap();
            commit_free(&w, slot, 0);
            slot.off
        })
        .collect();
    // The frame at 1312 would end at 1344, a sixteenth (64 bytes) of the
    // window past the last: the writer goes back to 0 instead.
    assert_eq!(offs, [1280, 0, 32, 64]);
    // The pad from 1312 to the ring's end is read past, and the frames
    // after it are read.
    let mut offs_read = 0;
    while r.next(&mut buf).unwrap().is_some() {
        offs_read += 1;
    }
    assert_eq!(offs_read, 4);
}

#[test]
fn the_hot_window_is_the_first_mib_of_a_large_ring_and_none_under_adaptive_sampling() {
    let ring = 2 * HOT_BYTES as usize;
    let mut m = mem(ring);
    let data = m.data.as_mut_ptr().cast::<u8>();
    // SAFETY: `data` is the buffer owned by `m`, `ring` bytes.
    let w = unsafe { RingWriter::new(&m.ctl, data, ring, ring as u64, 1) }.unwrap();
    assert_eq!(w.hot, HOT_BYTES);
    m.ctl.adaptive_threshold.store(4096, Ordering::Relaxed);
    // SAFETY: as above.
    let w = unsafe { RingWriter::new(&m.ctl, data, ring, ring as u64, 1) }.unwrap();
    assert_eq!(w.hot, 0);
    // A ring smaller than two windows has none.
    m.ctl.adaptive_threshold.store(0, Ordering::Relaxed);
    // SAFETY: as above, on the buffer's first half.
    let w = unsafe { RingWriter::new(&m.ctl, data, ring, ring as u64 / 2, 1) }.unwrap();
    assert_eq!(w.hot, 0);
}
