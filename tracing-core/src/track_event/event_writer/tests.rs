//! The event writer's known points against its general path, byte for byte.

use std::sync::Arc;

use super::*;
use crate::producer::{
    ArbiterConfig, BufferExhaustedPolicy, ChannelCommitSink, SharedMemoryArbiter,
};
use crate::shm::{HeapShm, SharedMemoryRegion};

static CAT: Category = Category::new("cat");
static OTHER: Category = Category::new("other");

/// Runs `f` with an event writer on a fresh 64 KiB SMB of 4 KiB chunks,
/// and returns the SMB's bytes.
fn on_fresh_smb(f: impl FnOnce(&mut EventWriter)) -> Vec<u8> {
    let region = Arc::new(HeapShm::new(64 * 1024).unwrap());
    let (sink, _rx) = ChannelCommitSink::new();
    let arbiter = SharedMemoryArbiter::new(
        region.clone(),
        4096,
        Arc::new(sink),
        ArbiterConfig::default(),
    )
    .unwrap();
    let tw = arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    let thread = ThreadTrack {
        uuid: 5,
        pid: 1,
        tid: 2,
    };
    let mut w = EventWriter::new(tw, thread, Some("t"));
    f(&mut w);
    w.writer().flush(None);
    drop(w);
    // SAFETY: the writer is gone; nothing writes the region now.
    unsafe { region.snapshot() }
}

/// Writes a workload through the general path (`fast == false`) or
/// through known points, and returns the SMB's bytes.
fn record(fast: bool) -> Vec<u8> {
    on_fresh_smb(|w| workload(w, fast))
}

/// [`record`]'s events.
fn workload(w: &mut EventWriter, fast: bool) {
    let here = SourceLocation::new("f.rs", "m", 7);
    let there = SourceLocation::new("g.rs", "n", 9);
    let mut ts = 1000;
    for round in 0..12 {
        if round % 5 == 2 {
            w.clear_incremental_state();
        }
        for i in 0..5i64 {
            // A name the point changes (names are expressions), and an
            // annotation name first seen late.
            let name = if i == 3 { "renamed" } else { "a" };
            // Every scalar kind, a negative int, and a string too long
            // for a small packet every other round.
            let long = "x".repeat(if round % 2 == 0 { 100 } else { 10 });
            let late = [
                ("n", DebugValue::Int(-i)),
                ("late", DebugValue::Bool(true)),
                ("d", DebugValue::Double(1.5)),
                ("u", DebugValue::Uint(1 << 40)),
                ("p", DebugValue::Pointer(0xdead_beef_0000)),
                ("long", DebugValue::Str(&long)),
            ];
            let args: &[(&str, DebugValue<'_>)] = if i == 4 {
                &late
            } else {
                &[("n", DebugValue::Int(i)), ("s", DebugValue::Str("text"))]
            };
            let flows = |e: &mut TrackEvent<'_>| {
                e.add_flow_ids(77);
            };
            ts += 10;
            let big = ts + (1 << 50);
            if fast {
                let key = Some(SiteKey::Dense(0));
                w.site_event_plain(
                    ts,
                    key,
                    EventKind::SliceBegin,
                    &CAT,
                    name,
                    || Some(here),
                    args,
                );
                let key = Some(SiteKey::Metadata(0x1234));
                w.site_event(
                    ts,
                    key,
                    EventKind::Instant,
                    &OTHER,
                    "b",
                    || Some(there),
                    &[],
                    flows,
                );
                w.site_event(
                    ts,
                    None,
                    EventKind::Instant,
                    &OTHER,
                    "c",
                    || None,
                    &[],
                    |_| {},
                );
                // A point without annotations (one small packet once
                // known), at a timestamp of 7 varint bytes.
                w.site_event_plain(
                    big,
                    Some(SiteKey::Dense(1)),
                    EventKind::SliceBegin,
                    &CAT,
                    "plain",
                    || Some(there),
                    &[],
                );
                w.slice_end_fast(big + 1, &CAT, None);
                w.slice_end_fast(ts + 1, &CAT, None);
                w.slice_end_fast(ts + 2, &CAT, Some(99));
                w.slice_end_fast_flow(ts + 3, &CAT, Some(5), 1 << 60 | 3);
                w.slice_end_fast_flow(ts + 4, &CAT, Some(99), 4);
            } else {
                let o = EventOptions::new().location(here);
                w.emit(
                    ts,
                    EventKind::SliceBegin,
                    Some(&CAT),
                    Some(name),
                    &o,
                    args,
                    |_| {},
                );
                let o = EventOptions::new().location(there);
                w.emit(
                    ts,
                    EventKind::Instant,
                    Some(&OTHER),
                    Some("b"),
                    &o,
                    &[],
                    flows,
                );
                let o = EventOptions::new();
                w.emit(
                    ts,
                    EventKind::Instant,
                    Some(&OTHER),
                    Some("c"),
                    &o,
                    &[],
                    |_| {},
                );
                let o = EventOptions::new().location(there);
                w.emit(
                    big,
                    EventKind::SliceBegin,
                    Some(&CAT),
                    Some("plain"),
                    &o,
                    &[],
                    |_| {},
                );
                w.slice_end(big + 1, &CAT);
                w.slice_end(ts + 1, &CAT);
                w.slice_end_on(ts + 2, &CAT, Some(99));
                for (t, track, flow) in [(ts + 3, None, 1 << 60 | 3), (ts + 4, Some(99), 4)] {
                    let o = on_track(EventOptions::new().flow(flow), track);
                    w.emit(t, EventKind::SliceEnd, Some(&CAT), None, &o, &[], |_| {});
                }
            }
        }
    }
}

#[test]
fn known_points_write_what_the_general_path_writes() {
    let general = record(false);
    let fast = record(true);
    assert!(general.iter().any(|&b| b != 0));
    assert_eq!(general, fast);
}

/// A point with an int and a string (the macros' usual event), strings of
/// every small length and one too long, ints of every varint length, over
/// enough events that packets end at many offsets of the chunks (and a
/// clear half-way): through the general path or the point.
fn record_sizes(fast: bool) -> Vec<u8> {
    let text = "y".repeat(80);
    on_fresh_smb(|w| {
        let here = SourceLocation::new("f.rs", "m", 7);
        let mut ts = 1 << 40;
        for i in 0..500usize {
            if i == 250 {
                w.clear_incremental_state();
            }
            ts += 1 << (i % 20);
            let n = (1i64 << (i * 7 % 63)) - 1;
            let s = &text[..i % 81];
            let args = [("count", DebugValue::Int(n)), ("what", DebugValue::Str(s))];
            if fast {
                let key = Some(SiteKey::Dense(0));
                w.site_event_plain(
                    ts,
                    key,
                    EventKind::SliceBegin,
                    &CAT,
                    "a",
                    || Some(here),
                    &args,
                );
                w.slice_end_fast(ts + 1, &CAT, None);
            } else {
                let o = EventOptions::new().location(here);
                w.emit(
                    ts,
                    EventKind::SliceBegin,
                    Some(&CAT),
                    Some("a"),
                    &o,
                    &args,
                    |_| {},
                );
                w.slice_end(ts + 1, &CAT);
            }
        }
    })
}

#[test]
fn known_points_write_what_the_general_path_writes_at_every_offset() {
    let general = record_sizes(false);
    let fast = record_sizes(true);
    // Most of the SMB is used: packets met chunk ends at many offsets.
    let used = general.iter().filter(|&&b| b != 0).count();
    assert!(used > 24 * 1024, "{used} bytes used");
    assert_eq!(general, fast);
}
