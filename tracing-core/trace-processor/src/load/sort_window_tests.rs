//! That the sort window lets packets go as upstream's rule allows: a trace
//! whose service flushed and read its buffers as it went is parsed while
//! it is read, holding a bounded number of packets at once, and gives the
//! tables a full sort of the same packets gives, also when a sequence's
//! data arrives late within the window.

use protozero::HeapWriter;
use zerotrace_protos::protos::{TracePacket, track_event};

use super::Loader;
use super::sorter::WindowStats;
use crate::storage::Storage;

/// The service's sequence.
const SERVICE: u32 = 1;

fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(&mut p);
    }
    w.finish().expect("heap writer")
}

/// Packets framed as a `Trace` (field 1 each).
fn trace(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in packets {
        out.push(0x0a);
        let mut n = p.len() as u64;
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
        out.extend_from_slice(p);
    }
    out
}

fn thread(seq: u32, tid: i64) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(seq);
        p.set_timestamp(0);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(u64::from(seq));
        let mut th = td.begin_thread();
        th.set_pid(1);
        th.set_tid(tid);
        th.set_thread_name(&format!("thread {seq}"));
    })
}

fn slice(seq: u32, ts: u64, ty: track_event::Type, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(seq);
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.set_track_uuid(u64::from(seq));
        e.set_type(ty);
        if ty == track_event::Type::SliceBegin {
            e.set_name(name);
        }
    })
}

/// A service event: the data sources flushed, or (when `read`) the
/// buffers were read, which lets the window go only when true.
fn service(ts: u64, flushed: bool, read: Option<bool>) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(SERVICE);
        p.set_timestamp(ts);
        let mut ev = p.begin_service_event();
        if flushed {
            ev.set_all_data_sources_flushed(true);
        }
        if let Some(read) = read {
            ev.set_read_tracing_buffers_completed(read);
        }
    })
}

/// A trace of `rounds` rounds, each a slice on each of two threads and
/// the service's two flushes and read of the buffers (`read`: what the
/// read event says). Thread 2's slices of a round arrive a round late
/// (`late`), after thread 1's of the next round, as a ring buffer's
/// chunks may be read.
fn rounds(rounds: u64, late: bool, read: bool) -> Vec<u8> {
    let mut packets = vec![thread(2, 20), thread(3, 30)];
    let round = |r: u64, seq: u32| {
        let t = 1000 * (r + 1) + u64::from(seq) * 10;
        let name = format!("s{seq}.{r}");
        vec![
            slice(seq, t, track_event::Type::SliceBegin, &name),
            slice(seq, t + 100, track_event::Type::SliceEnd, ""),
        ]
    };
    for r in 0..rounds {
        packets.extend(round(r, 2));
        if late {
            if r > 0 {
                packets.extend(round(r - 1, 3));
            }
        } else {
            packets.extend(round(r, 3));
        }
        let t = 1000 * (r + 1) + 500;
        packets.push(service(t, true, None));
        packets.push(service(t + 1, true, None));
        packets.push(service(t + 2, false, Some(read)));
    }
    if late {
        packets.extend(round(rounds - 1, 3));
    }
    trace(&packets)
}

/// Loads `trace`: its window's counts and its tables.
fn load(trace: &[u8]) -> (WindowStats, Storage) {
    let mut l = Loader::new();
    // Pushed in small chunks, as a stream arrives.
    for chunk in trace.chunks(97) {
        l.push(chunk).expect("loads");
    }
    let stats = l.window_stats();
    (stats, l.finish().expect("finishes"))
}

/// The slices as the tables show them (names resolved) and the stats
/// that would tell a packet was lost.
fn tables(s: &Storage) -> Vec<String> {
    let mut out: Vec<String> = s
        .slices
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {:?} {} {:?}",
                r.ts,
                r.dur,
                r.track_id,
                s.strings.get(r.name),
                r.depth,
                r.parent_id
            )
        })
        .collect();
    for name in [
        "sorter_push_event_out_of_order",
        "clock_sync_failure_undeferrable_packet_loss",
    ] {
        out.push(format!("{name} {}", s.stats.get(name)));
    }
    out
}

const ROUNDS: u64 = 400;

#[test]
fn a_trace_read_as_it_went_holds_a_bounded_window() {
    let (window, storage) = load(&rounds(ROUNDS, false, true));
    // Each round is 4 slice packets and 3 service packets; the window
    // holds what arrived since the point before the last: about two
    // rounds, never the trace.
    let packets = ROUNDS * 7 + 2;
    assert!(
        window.high_water <= 3 * 7 + 2,
        "{} packets waited at once of {packets}",
        window.high_water
    );
    assert!(window.left_early > packets - 3 * 7, "{window:?}");
    assert_eq!(storage.slices.len() as u64, 2 * ROUNDS);
    assert_eq!(storage.stats.get("sorter_push_event_out_of_order"), 0);
}

#[test]
fn late_data_within_the_window_gives_the_full_sorts_tables() {
    let (window, windowed) = load(&rounds(ROUNDS, true, true));
    let (full_window, full) = load(&rounds(ROUNDS, true, false));
    // Without a read of the buffers nothing leaves before the end.
    assert_eq!(full_window.left_early, 0);
    assert_eq!(full_window.high_water, ROUNDS * 7 + 2);
    assert!(window.left_early > 0);
    assert!(window.high_water <= 4 * 7 + 2, "{window:?}");
    assert_eq!(windowed.slices.len() as u64, 2 * ROUNDS);
    assert_eq!(tables(&windowed), tables(&full));
}

#[test]
fn the_arena_gives_back_what_was_parsed() {
    // Slices with 1 KiB names, so that the trace spans many arena blocks.
    let name = "n".repeat(1024);
    let mut packets = vec![thread(2, 20)];
    for r in 0..60_000u64 {
        let t = 1000 * (r + 1);
        packets.push(slice(2, t, track_event::Type::SliceBegin, &name));
        packets.push(slice(2, t + 100, track_event::Type::SliceEnd, ""));
        if r % 100 == 99 {
            packets.push(service(t + 500, true, None));
            packets.push(service(t + 501, true, None));
            packets.push(service(t + 502, false, Some(true)));
        }
    }
    let t = trace(&packets);
    let (window, storage) = load(&t);
    assert_eq!(storage.slices.len(), 60_000);
    // 60 MB of trace, 60 of the arena's blocks; it held at most the block
    // being filled, the one before it and the spare (a window between two
    // points is about 200 KiB here).
    assert!(t.len() > 60_000_000);
    assert!(
        window.arena_high_water_bytes <= 3 * crate::arena::BLOCK as u64,
        "{window:?}"
    );
}
