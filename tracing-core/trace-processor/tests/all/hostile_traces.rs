//! Hostile traces load in linear work and bounded memory: a crafted trace
//! of N nested complete slices and then N ends with nothing open (12 s at
//! 2.9 MB and 166 s at 5.7 MB when each end walked the whole slice stack)
//! takes work in proportion to its size, counted by the loader
//! (`Storage::work`) rather than timed; the stack stops at upstream's
//! depth and counts what it drops; many async cookies open at once cost
//! each begin and end the same; a small file that inflates to gigabytes
//! (`compressed_packets` or gzip) is refused with an error naming the
//! limit and the option that raises it.

use std::io::Write;

use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::{
    Error, LoadBudget, LoadWork, Loader, TraceError, TraceProcessor, Value,
};

use crate::common;
use common::{packet, rows, trace};

/// A thread track (uuid 10), `n` nested complete slices (legacy `X`
/// events, each inside the one before), then `n` slice ends with nothing
/// open on the track.
fn nested_complete_slices_then_ends(n: i64) -> Vec<u8> {
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
            p.set_timestamp(1000 + i as u64);
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_name("nested");
            let mut l = e.begin_legacy_event();
            l.set_phase(i32::from(b'X'));
            // Each ends before the one before it (one outlasting it would
            // be dropped as overlapping).
            l.set_duration_us(1_000_000_000 - i);
        }));
    }
    for i in 0..n {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp((1000 + n + i) as u64);
            let mut e = p.begin_track_event();
            e.set_track_uuid(10);
            e.set_type(track_event::Type::SliceEnd);
        }));
    }
    trace(&packets)
}

/// Loads `bytes` pushed at once: the work counted and the tables.
fn load(bytes: &[u8]) -> (LoadWork, TraceProcessor) {
    let mut l = Loader::new();
    l.push(bytes).expect("push");
    let storage = l.finish().expect("finish");
    let work = storage.work;
    (work, TraceProcessor::from_storage(storage).expect("tables"))
}

fn stat(tp: &TraceProcessor, name: &str) -> Value {
    rows(
        tp,
        &format!("SELECT value FROM stats WHERE name = '{name}' AND idx IS NULL"),
    )[0][0]
        .clone()
}

/// Twice the slices, twice the work (not four times), and a few steps per
/// byte whatever the nesting.
#[test]
fn nested_complete_slices_then_unmatched_ends_take_linear_work() {
    let small = nested_complete_slices_then_ends(3000);
    let large = nested_complete_slices_then_ends(6000);
    let (w1, _) = load(&small);
    let (w2, tp) = load(&large);
    assert_eq!(w1.bytes, small.len() as u64);
    assert_eq!(w2.bytes, large.len() as u64);
    let ratio = w2.steps as f64 / w1.steps as f64;
    assert!(
        ratio <= 2.2,
        "work {} then {}: {ratio:.2} times for twice the input",
        w1.steps,
        w2.steps
    );
    assert!(
        w2.steps <= w2.bytes,
        "{} steps for {} bytes",
        w2.steps,
        w2.bytes
    );
    // Upstream's cap: 512 slices nest, the rest are dropped and counted;
    // every end finds nothing open, which upstream's slice tracker ignores
    // without a stat (misplaced_end_event counts only open slices cut short
    // below a complete one, and every slice here is complete).
    assert_eq!(
        rows(&tp, "SELECT count(*), max(depth) FROM slice"),
        vec![vec![Value::Int(512), Value::Int(511)]]
    );
    assert_eq!(
        stat(&tp, "slice_max_depth_exceeded"),
        Value::Int(6000 - 512)
    );
    assert_eq!(stat(&tp, "misplaced_end_event"), Value::Int(0));
}

/// A zlib stream of `n` zero bytes.
fn zlib_zeros(n: usize) -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    let chunk = vec![0u8; 1 << 20];
    let mut left = n;
    while left > 0 {
        let k = left.min(chunk.len());
        enc.write_all(&chunk[..k]).unwrap();
        left -= k;
    }
    enc.finish().unwrap()
}

/// The 1.5 MB file of ten 60 MiB `compressed_packets` (2.6 GB and half a
/// minute to load): refused once what they inflate to passes the ratio's
/// floor, with an error that says how to load it anyway.
#[test]
fn compressed_packets_that_inflate_a_thousandfold_are_refused() {
    let z = zlib_zeros(60 << 20);
    let one = packet(|p| {
        p.set_compressed_packets(&z);
    });
    let bomb = trace(&vec![one; 10]);
    assert!(bomb.len() < 3 << 20, "{}", bomb.len());
    let mut l = Loader::new();
    let e = l.push(&bomb).unwrap_err();
    match &e {
        TraceError::InflationRatio {
            inflated,
            max_ratio,
            ..
        } => {
            assert_eq!(*max_ratio, LoadBudget::DEFAULT_MAX_INFLATION_RATIO);
            assert!(*inflated <= 2 * (60 << 20) + (1 << 20), "{inflated}");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("--max-memory"), "{e}");
    // Later pushes and the finish say the same.
    assert_eq!(l.push(&[]).unwrap_err(), e);
    assert_eq!(l.finish().unwrap_err(), e);
    // With an explicit budget the ratio is not checked, the limit is.
    let mut l = Loader::with_budget(LoadBudget::with_max_memory(100 << 20));
    let e = l.push(&bomb).unwrap_err();
    assert_eq!(e, TraceError::OverBudget { limit: 100 << 20 });
    assert!(e.to_string().contains("100 MiB"), "{e}");
}

/// A gzip file of empty packets, 200 MiB in under 1 MiB (each packet
/// costs the loader a record twenty times its size): refused by the ratio
/// of what it grows into to the compressed bytes read, through the
/// driver.
#[test]
fn a_gzip_stream_of_empty_packets_is_refused() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let chunk: Vec<u8> = [0x0a, 0x00].repeat(1 << 19);
    for _ in 0..200 {
        gz.write_all(&chunk).unwrap();
    }
    let gz = gz.finish().unwrap();
    assert!(gz.len() < 1 << 20, "{}", gz.len());
    match TraceProcessor::from_reader(&gz[..]) {
        Err(Error::Trace(TraceError::InflationRatio { compressed, .. })) => {
            assert!(compressed < gz.len() as u64);
        }
        other => panic!("{other:?}"),
    }
}

/// One packet of ftrace `print` events on CPU 0: (timestamp, line).
fn prints(events: &[(u64, String)]) -> Vec<u8> {
    packet(move |p| {
        let m = p.message();
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        for (ts, buf) in events {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, *ts);
            e.append_uint32(2, 7);
            e.begin_nested(3).append_string(2, buf);
        }
    })
}

/// `n` atrace async slices open at once, each on its own cookie, then
/// ended: each begin and end costs the same few steps however many are
/// open (each searched the pool of open cookies).
fn open_async_cookies(n: u64) -> Vec<u8> {
    let mut events: Vec<(u64, String)> = (0..n)
        .map(|i| (1000 + i, format!("S|7|job|{i}\n")))
        .collect();
    events.extend((0..n).map(|i| (1000 + n + i, format!("F|7|job|{i}\n"))));
    trace(&[prints(&events)])
}

#[test]
fn many_open_async_cookies_take_linear_work() {
    let (w1, _) = load(&open_async_cookies(3000));
    let (w2, tp) = load(&open_async_cookies(6000));
    let ratio = w2.steps as f64 / w1.steps as f64;
    assert!(ratio <= 2.2, "work {} then {}", w1.steps, w2.steps);
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*), count(DISTINCT track_id) FROM slice WHERE dur >= 0"
        ),
        vec![vec![Value::Int(6000), Value::Int(6000)]]
    );
}
