//! How fast is the protozero writer next to the practical lower bound?
//!
//! Each scenario is one criterion group whose variants run side by side:
//! (a) our writer through hand-written `Message` calls, (b) a minimal reference
//! encoder kept in this file (varints straight into a preallocated slice,
//! 4-byte lengths backfilled), (c) `prost` encoding a prebuilt struct, (d)
//! `prost` including building the struct, and (e) a memcpy of the pre-encoded
//! bytes (the floor). Before timing, the setup asserts that every encoder's
//! output decodes (with `prost`) to the same values, so the comparison is honest.
//!
//! Times are this thread's CPU time on 64-bit Linux (robust on a shared
//! machine), wall time elsewhere or with `BENCH_CLOCK=wall`.
//!
//! Run: `cargo bench -p zerotrace-encode-bench --bench encode -- --warm-up-time 1 --measurement-time 3`.

mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prost::Message as _;
use protozero::{HeapWriter, Message, SliceWriter, Writer};
use support::clock::BenchClock;

use support::placed::Placed;
use support::pool::SlicePool;
use support::prost_types::{DebugAnnotation, TraceEvent, TracePacket};
use support::reference::RefEncoder;

/// `TrackEvent.Type.TYPE_SLICE_BEGIN`.
const SLICE_BEGIN: i32 = 1;
/// `TracePacket.sequence_flags`: SEQ_NEEDS_INCREMENTAL_STATE.
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// The values of one TRACE_EVENT slice-begin packet.
struct SliceBegin {
    timestamp: u64,
    track_uuid: u64,
    name_iid: u64,
    category_iid: u64,
    int_arg_iid: u64,
    int_arg: i64,
    str_arg_iid: u64,
    str_arg: &'static str,
}

const SLICE: SliceBegin = SliceBegin {
    timestamp: 1_718_000_123_456_789,
    track_uuid: 0x9a3f_1c2b_7d4e_5f60,
    name_iid: 42,
    category_iid: 3,
    int_arg_iid: 7,
    int_arg: 1_234_567,
    str_arg_iid: 8,
    str_arg: "https://example.org/",
};

/// Writes the slice-begin packet through our writer's `Message` API.
#[inline(always)]
fn pz_slice_begin(p: &mut Message<'_>, s: &SliceBegin) {
    p.append_uint64(8, s.timestamp);
    p.append_uint32(13, SEQ_NEEDS_INCREMENTAL_STATE);
    let mut te = p.begin_nested(11);
    te.append_enum(9, SLICE_BEGIN);
    te.append_uint64(11, s.track_uuid);
    te.append_uint64(10, s.name_iid);
    te.append_uint64(3, s.category_iid);
    {
        let mut da = te.begin_nested(4);
        da.append_uint64(1, s.int_arg_iid);
        da.append_int64(4, s.int_arg);
    }
    let mut da = te.begin_nested(4);
    da.append_uint64(1, s.str_arg_iid);
    da.append_string(6, s.str_arg);
}

/// The same packet through the writers generated from our Perfetto schemas
/// (`zerotrace-protos`), which must cost the same as the hand-written calls.
#[inline(always)]
fn gen_slice_begin(p: Message<'_>, s: &SliceBegin) {
    use zerotrace_protos::protos::{TracePacket as GenPacket, track_event};
    let mut packet = GenPacket::from_message(p);
    packet
        .set_timestamp(s.timestamp)
        .set_sequence_flags(SEQ_NEEDS_INCREMENTAL_STATE);
    let mut te = packet.begin_track_event();
    te.set_type(track_event::Type::SliceBegin)
        .set_track_uuid(s.track_uuid)
        .set_name_iid(s.name_iid)
        .add_category_iids(s.category_iid);
    te.add_debug_annotations()
        .set_name_iid(s.int_arg_iid)
        .set_int_value(s.int_arg);
    te.add_debug_annotations()
        .set_name_iid(s.str_arg_iid)
        .set_string_value(s.str_arg);
}

/// The same packet through the reference encoder.
#[inline(always)]
fn ref_slice_begin(e: &mut RefEncoder<'_>, s: &SliceBegin) {
    e.uint(8, s.timestamp);
    e.uint(13, u64::from(SEQ_NEEDS_INCREMENTAL_STATE));
    let te = e.begin_nested(11);
    e.uint(9, SLICE_BEGIN as u64);
    e.uint(11, s.track_uuid);
    e.uint(10, s.name_iid);
    e.uint(3, s.category_iid);
    let da = e.begin_nested(4);
    e.uint(1, s.int_arg_iid);
    e.uint(4, s.int_arg as u64);
    e.end_nested(da);
    let da = e.begin_nested(4);
    e.uint(1, s.str_arg_iid);
    e.bytes(6, s.str_arg.as_bytes());
    e.end_nested(da);
    e.end_nested(te);
}

/// The same packet as a `prost` struct (allocates the strings and vectors).
fn prost_slice_begin(s: &SliceBegin) -> TracePacket {
    TracePacket {
        timestamp: Some(s.timestamp),
        sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
        track_event: Some(TraceEvent {
            r#type: Some(SLICE_BEGIN),
            track_uuid: Some(s.track_uuid),
            name_iid: Some(s.name_iid),
            category_iids: vec![s.category_iid],
            debug_annotations: vec![
                DebugAnnotation {
                    name_iid: Some(s.int_arg_iid),
                    int_value: Some(s.int_arg),
                    string_value: None,
                },
                DebugAnnotation {
                    name_iid: Some(s.str_arg_iid),
                    int_value: None,
                    string_value: Some(s.str_arg.to_owned()),
                },
            ],
        }),
        compressed_packets: None,
    }
}

/// Decodes `bytes` with `prost` and checks they carry `expected`.
fn assert_decodes_to(what: &str, bytes: &[u8], expected: &TracePacket) {
    let got = TracePacket::decode(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(&got, expected, "{what} decodes to different values");
}

/// Encodes with our writer into `buf` and returns the bytes (setup only).
fn pz_into(buf: &mut [u8], f: impl FnOnce(&mut Message<'_>)) -> &[u8] {
    let mut w = SliceWriter::new(buf);
    f(&mut w.root());
    w.finish().expect("buffer large enough")
}

/// Encodes with the reference encoder into `buf` and returns the bytes (setup only).
fn ref_into(buf: &mut [u8], f: impl FnOnce(&mut RefEncoder<'_>)) -> &[u8] {
    let mut e = RefEncoder::new(buf);
    f(&mut e);
    let n = e.len();
    &buf[..n]
}

fn slice_begin(c: &mut Criterion<BenchClock>) {
    let expected = prost_slice_begin(&SLICE);
    let encoded = expected.encode_to_vec();
    let mut buf = vec![0u8; 4096];
    let mut heap = HeapWriter::new();

    assert_decodes_to(
        "(a) slice",
        pz_into(&mut buf, |p| pz_slice_begin(p, &SLICE)),
        &expected,
    );
    pz_slice_begin(&mut heap.root(), &SLICE);
    assert_decodes_to("(a) heap", &heap.to_vec(), &expected);
    let hand = pz_into(&mut buf, |p| pz_slice_begin(p, &SLICE)).to_vec();
    let generated = {
        let mut w = SliceWriter::new(&mut buf);
        gen_slice_begin(w.root(), &SLICE);
        w.finish().expect("buffer large enough").to_vec()
    };
    assert_eq!(
        hand, generated,
        "generated writer bytes differ from hand-written"
    );
    assert_decodes_to(
        "(b)",
        ref_into(&mut buf, |e| ref_slice_begin(e, &SLICE)),
        &expected,
    );

    // (a) and (b) run back to back: on a shared machine the load drifts, and
    // the closer in time the two are measured the steadier their ratio.
    let mut g = c.benchmark_group("slice_begin");
    g.throughput(Throughput::Bytes(encoded.len() as u64));
    g.bench_function("a_protozero_slice", |b| {
        b.iter(|| {
            let mut w = SliceWriter::new(black_box(&mut buf[..]));
            pz_slice_begin(&mut w.root(), black_box(&SLICE));
            black_box(w.finish().map(|out| out.len()))
        })
    });
    g.bench_function("b_reference", |b| {
        b.iter(|| {
            let mut e = RefEncoder::new(black_box(&mut buf[..]));
            ref_slice_begin(&mut e, black_box(&SLICE));
            black_box(e.len())
        })
    });
    g.bench_function("a_generated_slice", |b| {
        b.iter(|| {
            let mut w = SliceWriter::new(black_box(&mut buf[..]));
            gen_slice_begin(w.root(), black_box(&SLICE));
            black_box(w.finish().map(|out| out.len()))
        })
    });
    g.bench_function("a_protozero_slice_movecompact", |b| {
        b.iter(|| {
            let mut w = SliceWriter::new(black_box(&mut buf[..]));
            w.set_speculative_compaction(false);
            pz_slice_begin(&mut w.root(), black_box(&SLICE));
            black_box(w.finish().map(|out| out.len()))
        })
    });
    g.bench_function("a_protozero_slice_nocompact", |b| {
        b.iter(|| {
            let mut w = SliceWriter::new(black_box(&mut buf[..]));
            w.set_compaction(false);
            pz_slice_begin(&mut w.root(), black_box(&SLICE));
            black_box(w.finish().map(|out| out.len()))
        })
    });
    g.bench_function("a_protozero_heap", |b| {
        b.iter(|| {
            heap.clear();
            pz_slice_begin(&mut heap.root(), black_box(&SLICE));
            black_box(&heap);
        })
    });
    let mut vec = Vec::with_capacity(4096);
    g.bench_function("c_prost_prebuilt", |b| {
        b.iter(|| {
            vec.clear();
            black_box(&expected).encode(&mut vec).expect("vec grows");
            black_box(&vec);
        })
    });
    g.bench_function("d_prost_build", |b| {
        b.iter(|| {
            vec.clear();
            prost_slice_begin(black_box(&SLICE))
                .encode(&mut vec)
                .expect("vec grows");
            black_box(&vec);
        })
    });
    g.bench_function("e_memcpy", |b| {
        b.iter(|| {
            let src = black_box(&encoded[..]);
            buf[..src.len()].copy_from_slice(src);
            black_box(&buf);
        })
    });
    g.finish();
}

/// Number of small nested messages in the `nested_1000` packet.
const NESTED: usize = 1000;

/// `(name_iid, int_value)` of each small nested message.
fn nested_items() -> Vec<(u64, i64)> {
    (0..NESTED as u64)
        .map(|i| (i % 100 + 1, (i * 7919) as i64))
        .collect()
}

fn pz_nested(p: &mut Message<'_>, items: &[(u64, i64)]) {
    let mut te = p.begin_nested(11);
    for &(name_iid, value) in items {
        let mut da = te.begin_nested(4);
        da.append_uint64(1, name_iid);
        da.append_int64(4, value);
    }
}

fn ref_nested(e: &mut RefEncoder<'_>, items: &[(u64, i64)]) {
    let te = e.begin_nested(11);
    for &(name_iid, value) in items {
        let da = e.begin_nested(4);
        e.uint(1, name_iid);
        e.uint(4, value as u64);
        e.end_nested(da);
    }
    e.end_nested(te);
}

fn prost_nested(items: &[(u64, i64)]) -> TracePacket {
    let debug_annotations = items
        .iter()
        .map(|&(name_iid, value)| DebugAnnotation {
            name_iid: Some(name_iid),
            int_value: Some(value),
            string_value: None,
        })
        .collect();
    TracePacket {
        track_event: Some(TraceEvent {
            debug_annotations,
            ..TraceEvent::default()
        }),
        ..TracePacket::default()
    }
}

fn nested_1000(c: &mut Criterion<BenchClock>) {
    let items = nested_items();
    let expected = prost_nested(&items);
    let encoded = expected.encode_to_vec();
    let mut buf = vec![0u8; 64 * 1024];

    assert_decodes_to(
        "(a)",
        pz_into(&mut buf, |p| pz_nested(p, &items)),
        &expected,
    );
    assert_decodes_to(
        "(b)",
        ref_into(&mut buf, |e| ref_nested(e, &items)),
        &expected,
    );

    // (a) and (b) back to back, as in `slice_begin`.
    let mut g = c.benchmark_group("nested_1000");
    g.throughput(Throughput::Bytes(encoded.len() as u64));
    g.bench_function("a_protozero_slice", |b| {
        b.iter(|| {
            let mut w = SliceWriter::new(black_box(&mut buf[..]));
            pz_nested(&mut w.root(), black_box(&items));
            black_box(w.finish().map(|out| out.len()))
        })
    });
    g.bench_function("b_reference", |b| {
        b.iter(|| {
            let mut e = RefEncoder::new(black_box(&mut buf[..]));
            ref_nested(&mut e, black_box(&items));
            black_box(e.len())
        })
    });
    g.bench_function("a_protozero_slice_movecompact", |b| {
        b.iter(|| {
            let mut w = SliceWriter::new(black_box(&mut buf[..]));
            w.set_speculative_compaction(false);
            pz_nested(&mut w.root(), black_box(&items));
            black_box(w.finish().map(|out| out.len()))
        })
    });
    g.bench_function("a_protozero_slice_nocompact", |b| {
        b.iter(|| {
            let mut w = SliceWriter::new(black_box(&mut buf[..]));
            w.set_compaction(false);
            pz_nested(&mut w.root(), black_box(&items));
            black_box(w.finish().map(|out| out.len()))
        })
    });
    let mut vec = Vec::with_capacity(64 * 1024);
    g.bench_function("c_prost_prebuilt", |b| {
        b.iter(|| {
            vec.clear();
            black_box(&expected).encode(&mut vec).expect("vec grows");
            black_box(&vec);
        })
    });
    g.bench_function("e_memcpy", |b| {
        b.iter(|| {
            let src = black_box(&encoded[..]);
            buf[..src.len()].copy_from_slice(src);
            black_box(&buf);
        })
    });
    g.finish();
}

/// Size of the bytes field of the `bytes_64k` packet.
const BIG: usize = 64 * 1024;
/// Size of each slice handed out by the pool delegate.
const POOL_SLICE: usize = 4 * 1024;

fn pz_big(p: &mut Message<'_>, ts: u64, payload: &[u8]) {
    p.append_uint64(8, ts);
    p.append_bytes(50, payload);
}

fn bytes_64k(c: &mut Criterion<BenchClock>) {
    let payload: Vec<u8> = (0..BIG).map(|i| (i * 31 % 251) as u8).collect();
    let ts = SLICE.timestamp;
    let expected = TracePacket {
        timestamp: Some(ts),
        compressed_packets: Some(payload.clone()),
        ..TracePacket::default()
    };
    // Every copy runs with its destination half a page past its source (see
    // `support::placed`): the memcpy floor copies `encoded` (phase 0) into
    // `buf` (phase 2048); our writers copy `payload`, which starts `header`
    // bytes into the packet, to `header` bytes past the start of `buf` or of
    // the first pool slice.
    let encoded = Placed::copy_of(&expected.encode_to_vec(), 0);
    let header = encoded.bytes().len() - BIG;
    let payload = Placed::copy_of(&payload, header);
    let payload = payload.bytes();
    let encoded = encoded.bytes();
    let mut buf = Placed::zeroed(BIG + 4096, 2048);
    let buf = buf.bytes_mut();
    // Enough 4 KiB slices for the packet plus one spare.
    let mut pool_mem = Placed::zeroed((BIG / POOL_SLICE + 2) * POOL_SLICE, 2048);
    let pool_mem = pool_mem.bytes_mut();

    assert_decodes_to("(a)", pz_into(buf, |p| pz_big(p, ts, payload)), &expected);
    let ranges = {
        let mut w = Writer::with_delegate(SlicePool::new(pool_mem, POOL_SLICE));
        pz_big(&mut w.root(), ts, payload);
        assert!(w.error().is_none());
        assert!(w.delegate().slices_used() > BIG / POOL_SLICE);
        let cursor = w.stream().cursor();
        w.delegate().used_ranges(cursor)
    };
    let stitched: Vec<u8> = ranges
        .into_iter()
        .flat_map(|r| pool_mem[r].to_vec())
        .collect();
    assert_decodes_to("(a')", &stitched, &expected);

    // Both writer variants next to the memcpy floor they are compared with.
    let mut g = c.benchmark_group("bytes_64k");
    g.throughput(Throughput::Bytes(encoded.len() as u64));
    g.bench_function("a_protozero_contiguous", |b| {
        b.iter(|| {
            let mut w = SliceWriter::new(black_box(&mut buf[..]));
            pz_big(&mut w.root(), ts, black_box(payload));
            black_box(w.finish().map(|out| out.len()))
        })
    });
    g.bench_function("e_memcpy", |b| {
        b.iter(|| {
            let src = black_box(encoded);
            buf[..src.len()].copy_from_slice(src);
            black_box(&buf);
        })
    });
    g.bench_function("a_protozero_4k_slices", |b| {
        b.iter(|| {
            let pool = SlicePool::new(black_box(&mut pool_mem[..]), POOL_SLICE);
            let mut w = Writer::with_delegate(pool);
            pz_big(&mut w.root(), ts, black_box(payload));
            black_box(w.written())
        })
    });
    let mut vec = Vec::with_capacity(BIG + 4096);
    g.bench_function("c_prost_prebuilt", |b| {
        b.iter(|| {
            vec.clear();
            black_box(&expected).encode(&mut vec).expect("vec grows");
            black_box(&vec);
        })
    });
    g.finish();
}

fn config() -> Criterion<BenchClock> {
    let clock = BenchClock::from_env();
    eprintln!(
        "measuring {} (BENCH_CLOCK=wall for wall time)",
        clock.name()
    );
    // Short defaults keep `cargo bench -p protozero` to a couple of minutes;
    // command-line flags still override them.
    Criterion::default()
        .with_measurement(clock)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = slice_begin, nested_1000, bytes_64k
}
criterion_main!(benches);
