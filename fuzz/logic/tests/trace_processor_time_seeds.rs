//! The `trace_processor_time` target's seeds, made here with the protozero
//! writers: small cases of the traces that made the loader quadratic (600
//! nested complete slices then 600 ends with nothing open, past upstream's
//! depth cap of 512; 300 atrace async slices open at once on their own
//! cookies, then ended). Each must pass the target's bound; the committed
//! files (`fuzz/seeds/trace_processor_time/`) must equal what is built here
//! (`ZEROTRACE_FUZZ_BLESS=1 cargo test -p zerotrace-fuzz-logic --test
//! trace_processor_time_seeds` rewrites them).

use std::path::Path;

use zerotrace_protos::protos::{TracePacket, track_event};

fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(&mut p);
    }
    w.finish().expect("heap writer")
}

fn trace(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut t = w.root();
        for p in packets {
            t.append_bytes(1, p);
        }
    }
    w.finish().expect("heap writer")
}

fn nested_slices(n: u64) -> Vec<u8> {
    let mut packets = vec![packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_sequence_flags(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(10);
        let mut th = td.begin_thread();
        th.set_pid(5);
        th.set_tid(6);
    })];
    for i in 0..n {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1000 + i);
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            let mut l = e.begin_legacy_event();
            l.set_phase(i32::from(b'X'));
            // Each ends before the one before it (one outlasting it would
            // be dropped as overlapping, not nested).
            l.set_duration_us(1_000_000_000 - i as i64);
        }));
    }
    for i in 0..n {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1000 + n + i);
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_type(track_event::Type::SliceEnd);
        }));
    }
    trace(&packets)
}

fn open_async_cookies(n: u64) -> Vec<u8> {
    let mut events: Vec<(u64, String)> = (0..n)
        .map(|i| (1000 + i, format!("S|7|job|{i}\n")))
        .collect();
    events.extend((0..n).map(|i| (1000 + n + i, format!("F|7|job|{i}\n"))));
    trace(&[packet(move |p| {
        let m = p.message();
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        for (ts, buf) in &events {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, *ts);
            e.append_uint32(2, 7);
            e.begin_nested(3).append_string(2, buf);
        }
    })])
}

#[test]
fn the_seeds_are_current_and_within_the_bound() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/trace_processor_time");
    let bless = std::env::var_os("ZEROTRACE_FUZZ_BLESS").is_some();
    let made = [
        ("nested-complete-slices-then-ends", nested_slices(600)),
        ("open-async-cookies", open_async_cookies(300)),
    ];
    if bless {
        std::fs::create_dir_all(&dir).expect("seed dir");
    }
    for (name, bytes) in &made {
        let path = dir.join(name);
        if bless {
            std::fs::write(&path, bytes).expect("write seed");
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            committed == *bytes,
            "{} is stale (ZEROTRACE_FUZZ_BLESS=1 rewrites it)",
            path.display()
        );
        zerotrace_fuzz_logic::trace_processor_time(bytes);
    }
    let on_disk = std::fs::read_dir(&dir).expect("seed dir").count();
    assert_eq!(on_disk, made.len(), "{} holds other files", dir.display());
}
