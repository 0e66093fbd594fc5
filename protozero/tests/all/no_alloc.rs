//! Writing a packet with the fixed-slice delegate allocates nothing: the
//! binary's counting global allocator (`main.rs`; counting per thread, so
//! parallel tests do not interfere) proves zero heap allocations for the
//! ~100-byte TRACE_EVENT slice-begin TracePacket, writer construction
//! included, 1000 times over (20 under Miri).
//! Decoding allocates nothing either, fields beyond the typed decoder's
//! dense table included.
//!
//! Nesting deeper than the 16 open-slot levels kept inline spills the slot
//! stack to the heap; that case may allocate and is only bounded here.

/// Repetitions per test (fewer under Miri, which interprets every access).
const ROUNDS: usize = if cfg!(miri) { 20 } else { 1000 };

use protozero::{Decoder, Message, SliceWriter, TypedDecoder};

use zerotrace_test_alloc::allocations_during;

/// TracePacket{timestamp 8, sequence_flags 13, track_event 11 {type 9,
/// track_uuid 11, name_iid 10, category_iids 3, debug_annotations 4 ×2}}.
fn slice_begin_packet(m: &mut Message<'_>, ts: u64) {
    m.append_uint64(8, ts);
    m.append_uint32(13, 2); // SEQ_NEEDS_INCREMENTAL_STATE
    let mut te = m.begin_nested(11);
    te.append_enum(9, 1); // TYPE_SLICE_BEGIN
    te.append_uint64(11, 0x1234_5678_9ABC_DEF0);
    te.append_uint64(10, 42);
    te.append_uint64(3, 7);
    {
        let mut da = te.begin_nested(4);
        da.append_uint64(1, 1);
        da.append_int64(4, -123_456);
    }
    let mut da = te.begin_nested(4);
    da.append_uint64(1, 2);
    da.append_string(6, "GET /api/v1/items?page=2 handled by worker-3 (pool A)");
}

/// Writes one packet into `buf` with a fresh writer; returns its length.
fn write_packet(buf: &mut [u8], ts: u64) -> usize {
    let mut w = SliceWriter::new(buf);
    slice_begin_packet(&mut w.root(), ts);
    w.finish().map(|b| b.len()).unwrap_or(0)
}

fn nested(m: &mut Message<'_>, levels: usize) {
    if levels > 0 {
        let mut child = m.begin_nested(1);
        child.append_uint32(2, levels as u32);
        nested(&mut child, levels - 1);
    }
}

/// The counter does see allocations (so a zero below means something).
#[test]
fn counter_sees_allocations() {
    let (n, v) = allocations_during(|| Vec::<u8>::with_capacity(100));
    assert!(n >= 1);
    drop(v);
    let (n, _) = allocations_during(|| {
        let mut w = protozero::HeapWriter::new();
        slice_begin_packet(&mut w.root(), 1);
        w.finish()
    });
    assert!(n >= 1, "the heap delegate allocates its slices");
}

#[test]
fn slice_writer_packet_allocates_nothing() {
    let mut buf = [0u8; 256];
    let (n, total) = allocations_during(|| {
        let mut total = 0;
        for ts in 0..ROUNDS as u64 {
            total += write_packet(&mut buf, 1_000_000 + ts);
        }
        total
    });
    assert_eq!(n, 0, "heap allocations while writing {ROUNDS} packets");

    // The bytes are real: the last packet decodes as expected.
    let len = total / ROUNDS;
    assert!((90..=130).contains(&len), "packet is {len} bytes");
    let p = TypedDecoder::<'_, 16>::new(&buf[..len]);
    assert_eq!(p.error(), None);
    let last = 1_000_000 + ROUNDS as u64 - 1;
    assert_eq!(p.get(8).and_then(|f| f.as_u64().ok()), Some(last));
    let te = p
        .get(11)
        .and_then(|f| f.as_message().ok())
        .expect("track_event");
    let annotations: Vec<_> = te.filter_map(Result::ok).filter(|f| f.id == 4).collect();
    assert_eq!(annotations.len(), 2);
}

/// Decoding the packet (iterator and typed table) allocates nothing either.
#[test]
fn decoding_packet_allocates_nothing() {
    let mut buf = [0u8; 256];
    let len = write_packet(&mut buf, 5);
    let bytes = &buf[..len];
    let (n, sum) = allocations_during(|| {
        let mut sum = 0u64;
        for _ in 0..ROUNDS {
            for f in Decoder::new(bytes).flatten() {
                sum += u64::from(f.id);
            }
            let d = TypedDecoder::<'_, 16>::new(bytes);
            let te = TypedDecoder::<'_, 16>::new(
                d.get(11).and_then(|f| f.as_bytes().ok()).unwrap_or(&[]),
            );
            sum += te.repeated(4).count() as u64;
        }
        sum
    });
    assert_eq!(n, 0);
    assert_eq!(sum, ROUNDS as u64 * (8 + 13 + 11 + 2));
}

/// Field ids beyond the dense table (extensions, unknown fields) are found
/// by scanning, not kept in a side list: decoding them allocates nothing.
#[test]
fn decoding_high_field_ids_allocates_nothing() {
    let mut buf = [0u8; 256];
    let len = {
        let mut w = SliceWriter::new(&mut buf);
        let mut m = w.root();
        m.append_uint32(1, 1);
        m.append_uint32(200, 10);
        m.append_string(1000, "ext");
        m.append_uint32(2, 2);
        m.append_uint32(200, 11);
        m.append_uint32(536_870_911, 99);
        m.append_uint32(200, 12);
        drop(m);
        w.finish().map(|b| b.len()).unwrap_or(0)
    };
    let bytes = &buf[..len];
    let (n, sum) = allocations_during(|| {
        let mut sum = 0u64;
        for _ in 0..ROUNDS {
            for d in [
                TypedDecoder::<'_, 16>::new(bytes),
                TypedDecoder::<'_, 16>::with_groups(bytes),
            ] {
                sum += d.get(200).and_then(|f| f.as_u64().ok()).unwrap_or(0);
                sum += d.repeated(200).filter_map(|f| f.as_u64().ok()).sum::<u64>();
                sum += d
                    .get(536_870_911)
                    .and_then(|f| f.as_u64().ok())
                    .unwrap_or(0);
                sum += d
                    .get(1000)
                    .and_then(|f| f.as_str().ok())
                    .map_or(0, |s| s.len() as u64);
                sum += u64::from(d.has(1000)) + u64::from(!d.has(300));
                sum += d.spilled().count() as u64;
                sum += d.get(2).and_then(|f| f.as_u64().ok()).unwrap_or(0);
            }
        }
        sum
    });
    assert_eq!(n, 0, "heap allocations while decoding high field ids");
    assert_eq!(sum, 2 * ROUNDS as u64 * (12 + 33 + 99 + 3 + 2 + 5 + 2));
}

/// Up to the 16 inline levels nesting is allocation-free too.
#[test]
fn sixteen_levels_allocate_nothing() {
    let mut buf = [0u8; 512];
    let (n, r) = allocations_during(|| {
        let mut w = SliceWriter::new(&mut buf);
        nested(&mut w.root(), 16);
        w.finish().map(|b| b.len())
    });
    assert!(r.is_ok());
    assert_eq!(n, 0);
}

/// Deeper nesting spills the open-slot stack to the heap. That is allowed;
/// only the spill itself may allocate (a few geometric growths).
#[test]
fn forty_levels_only_allocate_the_spill() {
    let mut buf = [0u8; 1024];
    let (n, r) = allocations_during(|| {
        let mut w = SliceWriter::new(&mut buf);
        nested(&mut w.root(), 40);
        w.finish().map(|b| b.len())
    });
    assert!(r.is_ok());
    assert!(n <= 8, "{n} allocations for 24 spilled slots");
}
