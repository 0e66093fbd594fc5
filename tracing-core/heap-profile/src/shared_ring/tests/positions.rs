//! The ring's positions over time: a writer's kept read position and the
//! reader's lap count, and commit tags that a header left a lap, a wrap or
//! 2^36 positions earlier never matches.

use super::*;

#[test]
fn a_writer_loads_the_read_position_only_when_the_one_it_saw_leaves_no_room() {
    let mut m = mem(1024);
    let data = m.data.as_mut_ptr().cast::<u8>();
    // SAFETY: as above.
    let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
    let mut seen = None;
    w.push_free(1, u64::MAX, &mut seen).unwrap();
    assert_eq!(kept(seen), Some(0), "loaded once");
    // The reader moves on; the writer still goes by what it saw, until
    // that leaves no room: then it loads the reader's position, finds
    // the frame it freed, and keeps the new position.
    m.ctl.read_pos.store(FREE_FRAME as u64, Ordering::Release);
    let mut n = 1;
    while kept(seen) == Some(0) {
        w.push_free(n, u64::MAX, &mut seen).unwrap();
        n += 1;
    }
    assert_eq!(n, 1024 / FREE_FRAME as u64 + 1);
    assert_eq!(kept(seen), Some(FREE_FRAME as u64));
    // Full by the position it loads, too: refused, the position kept.
    assert_eq!(w.push_free(n, u64::MAX, &mut seen), Err(NoRoom::Full));
    assert_eq!(kept(seen), Some(FREE_FRAME as u64));
    m.ctl
        .read_pos
        .store(2 * FREE_FRAME as u64, Ordering::Release);
    w.push_free(n, u64::MAX, &mut seen).unwrap();
    assert_eq!(kept(seen), Some(2 * FREE_FRAME as u64));
}

/// The read position a writer keeps.
fn kept(seen: Option<ReadSeen>) -> Option<u64> {
    seen.map(|s| s.pos)
}

#[test]
fn a_read_position_kept_a_whole_span_ago_is_not_taken_for_a_recent_one() {
    let mut m = mem(1024);
    let data = m.data.as_mut_ptr().cast::<u8>();
    // SAFETY: as above.
    let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
    // Long ago, the ring empty at 512: a thread writes a free and keeps the
    // read position it loaded, with the lap count (0) loaded before it.
    at(&m.ctl, 512, 512);
    let mut seen = None;
    w.push_free(1, u64::MAX, &mut seen).unwrap();
    assert_eq!(seen, Some(ReadSeen { pos: 512, lap: 0 }));
    // The thread stays idle while the reader goes on 2^40 - 992 bytes: to
    // 2^40 - 480, past three quarters of the span (the lap count is 3),
    // and the other threads fill the ring behind it, to 2^40 + 544 (544
    // modulo 2^40: 32 bytes past the kept position, which by itself would
    // leave room for 31 frees more).
    const READ: u64 = (1 << 40) - 480;
    at(&m.ctl, READ, READ);
    m.ctl.read_lap.store(3, Ordering::Relaxed);
    let mut addr = 100;
    while w.push_free(addr, u64::MAX, &mut None).is_ok() {
        addr += 1;
    }
    assert_eq!(addr - 100, 1024 / FREE_FRAME as u64, "a full ring");
    assert_eq!(word_pos(m.ctl.reserved.load(Ordering::Relaxed)), 544);
    // The idle thread's free: its kept lap is not the reader's, so the
    // position is loaded anew, and the full ring refuses it (by the kept
    // position it would go over the first unread free, at offset 544).
    assert_eq!(w.push_free(2, u64::MAX, &mut seen), Err(NoRoom::Full));
    assert_eq!(seen, Some(ReadSeen { pos: 512, lap: 0 }), "kept as it was");
    // Every free reads whole, in order; the reader's releases cross the
    // wrap (quarter 3 to 0): the count moves on once.
    // SAFETY: as above.
    let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
    let mut buf = Vec::new();
    for want in 100..addr {
        let (_, rec) = r.next(&mut buf).unwrap().unwrap();
        assert!(
            matches!(rec, Record::Free { addr } if addr == want),
            "{want}"
        );
        r.release();
    }
    assert!(r.next(&mut buf).unwrap().is_none());
    assert_eq!(m.ctl.read_lap.load(Ordering::Relaxed), 4);
    // Now it fits, by the position loaded anew, which the thread keeps
    // with the new count.
    w.push_free(2, u64::MAX, &mut seen).unwrap();
    assert_eq!(seen, Some(ReadSeen { pos: 544, lap: 4 }));
    let (_, rec) = r.next(&mut buf).unwrap().unwrap();
    assert!(matches!(rec, Record::Free { addr: 2 }));
}

#[test]
fn the_lap_count_moves_once_per_quarter_of_the_span_the_reader_crosses() {
    let mut m = mem(1024);
    let data = m.data.as_mut_ptr().cast::<u8>();
    // SAFETY: as above.
    let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
    let mut buf = Vec::new();
    // Across each quarter's boundary (and the wrap), by releases of a
    // frame, of several, and of none.
    for (n, quarter) in (1..=4u64).enumerate() {
        let start = ((quarter << LAP_SHIFT) - 64) & POS_MASK;
        at(&m.ctl, start, start);
        m.ctl.read_lap.store(7, Ordering::Relaxed);
        for a in 0..4 {
            w.push_free(a, u64::MAX, &mut None).unwrap();
        }
        // SAFETY: as above.
        let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
        r.release();
        assert_eq!(m.ctl.read_lap.load(Ordering::Relaxed), 7, "nothing read");
        r.next(&mut buf).unwrap().unwrap();
        r.release();
        assert_eq!(m.ctl.read_lap.load(Ordering::Relaxed), 7, "still below");
        if n % 2 == 0 {
            r.next(&mut buf).unwrap().unwrap();
            r.release();
        } else {
            r.next(&mut buf).unwrap().unwrap();
            r.next(&mut buf).unwrap().unwrap();
        }
        r.release();
        assert_eq!(m.ctl.read_lap.load(Ordering::Relaxed), 8, "at the boundary");
        while r.next(&mut buf).unwrap().is_some() {}
        r.release();
        assert_eq!(m.ctl.read_lap.load(Ordering::Relaxed), 8, "once");
    }
    // A new session counts from 0 again, with its positions.
    m.ctl.read_lap.store(5, Ordering::Relaxed);
    open(&m.ctl, 2);
    assert_eq!(m.ctl.read_lap.load(Ordering::Relaxed), 0);
}

#[test]
fn an_earlier_laps_word_equal_to_the_tag_is_not_a_commit() {
    let mut m = mem(1024);
    let data = m.data.as_mut_ptr().cast::<u8>();
    // SAFETY: the buffer is ours, 1024 bytes.
    let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
    // A frame of the second lap reserved at offset 64, where the first
    // lap left a stack word that happens to be its commit tag.
    at(&m.ctl, 1024 + 64, 1024 + 64);
    m.data[8] = u64::from(commit_tag(1024 + 64, 1)) | 0xdead_beef << 32;
    let slot = w.reserve(ALLOC_FIXED, u64::MAX, &mut None).unwrap();
    assert_eq!(slot.off, 64);
    // SAFETY: as above.
    let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
    let mut buf = Vec::new();
    assert!(
        r.next(&mut buf).unwrap().is_none(),
        "a tag without the session is not committed yet"
    );
    w.commit_alloc(slot, 0x40, 64, None);
    assert!(matches!(r.next(&mut buf).unwrap(), Some((1, Record::Alloc(a))) if a.addr == 0x40));
}

#[test]
fn a_header_left_two_to_the_36_positions_ago_is_not_this_frames() {
    let mut m = mem(1024);
    let data = m.data.as_mut_ptr().cast::<u8>();
    // SAFETY: `data` is the 1024-byte buffer owned by `m`.
    let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
    // A frame committed at 64, then the positions move on by 2^36 (the
    // commit tag's span): the old header has the new frame's tag.
    at(&m.ctl, 64, 64);
    let slot = w.reserve(FREE_FRAME, u64::MAX, &mut None).unwrap();
    commit_free(&w, slot, 0);
    let later = 64 + (1 << 36);
    assert_eq!(commit_tag(64, 1), commit_tag(later, 1));
    at(&m.ctl, later, later);
    let slot = w.reserve(FREE_FRAME, u64::MAX, &mut None).unwrap();
    assert_eq!(slot.off, 64);
    // SAFETY: as above.
    let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
    let mut buf = Vec::new();
    assert!(
        r.next(&mut buf).unwrap().is_none(),
        "reserved, not committed: the old header's position bits differ"
    );
    commit_free(&w, slot, 0x77);
    assert!(matches!(
        r.next(&mut buf).unwrap(),
        Some((1, Record::Free { addr: 0x77 }))
    ));
}

#[test]
fn a_header_read_one_wrap_earlier_is_not_this_frames() {
    let mut m = mem(1024);
    let data = m.data.as_mut_ptr().cast::<u8>();
    // SAFETY: `data` is the 1024-byte buffer owned by `m`.
    let w = unsafe { RingWriter::new(&m.ctl, data, 1024, 1024, 1) }.unwrap();
    let mut buf = Vec::new();
    // Four frees written and read across the positions' wrap: two before
    // 2^40 (offsets 960 and 992), two after it (offsets 0 and 32).
    let start = POS_MASK + 1 - 64;
    at(&m.ctl, start, start);
    // SAFETY: as above.
    let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
    for addr in 1..=4 {
        w.push_free(addr, u64::MAX, &mut None).unwrap();
    }
    assert_eq!(word_pos(m.ctl.reserved.load(Ordering::Relaxed)), 64);
    for addr in 1..=4 {
        let (_, rec) = r.next(&mut buf).unwrap().unwrap();
        assert!(matches!(rec, Record::Free { addr: a } if a == addr));
    }
    r.release();
    // 2^40 bytes later (some 4096 laps of a hot window in a 256 MiB ring)
    // the positions are the same values again, and so are the tags and
    // identities of the frames there: each frame reserved there and not
    // yet committed must not read as the one its bytes held a wrap ago.
    at(&m.ctl, start, start);
    // SAFETY: as above.
    let mut r = unsafe { RingReader::new(&m.ctl, data, 1024, 1) };
    for (i, pos) in [start, start + 32, 0, 32].into_iter().enumerate() {
        let slot = w.reserve(FREE_FRAME, u64::MAX, &mut None).unwrap();
        assert_eq!(slot.pos, pos);
        assert!(
            r.next(&mut buf).unwrap().is_none(),
            "the header read a wrap earlier at {pos} is taken again"
        );
        let addr = 0x100 + i as u64;
        commit_free(&w, slot, addr);
        let (_, rec) = r.next(&mut buf).unwrap().unwrap();
        assert!(matches!(rec, Record::Free { addr: a } if a == addr));
    }
    r.release();
    assert_eq!(w.pending(), 0);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "tag arithmetic only: 100,000 checks took 35 s of Miri's run"
)]
fn a_spent_tag_is_no_tag_of_a_frame_at_the_same_offset() {
    for ring in [64u64, 1024, 1 << 20, 1 << 28, 1 << 39] {
        for pos in [0, 16, ring - 16, POS_MASK + 1 - ring, (1 << 36) - 16] {
            let spent = spent_tag(pos, 1);
            // Later laps, and the laps around each wrap of the tag's bits
            // (2^36) and of the positions (2^40).
            let laps = (0..4096u64).chain([1u64 << 36, 1 << 40].into_iter().flat_map(|span| {
                let k = span / ring;
                k.saturating_sub(4)..k + 4
            }));
            for k in laps {
                let p = pos.wrapping_add(k.wrapping_mul(ring)) & POS_MASK;
                assert_ne!(spent, commit_tag(p, 1), "ring {ring}, {pos} and {p}");
            }
        }
    }
}
