//! Speculative compaction (1-byte "short" slots upgraded to 4 bytes only when
//! a message passes 127 bytes or leaves its slice) against Perfetto's
//! move-based compaction: inside one slice the bytes must be identical, across
//! slices the values must be; plus the boundary cases of the upgrade path.

mod common;

use common::model::tree;
use common::*;
use proptest::prelude::*;
use protozero::{HeapBuffer, HeapWriter, Message, SliceWriter, Writer};

/// Writes `n` into one large slice with the chosen compaction method.
fn one_slice(n: &Node, speculative: bool) -> Vec<u8> {
    let mut buf = vec![0u8; 8 << 20];
    let mut w = SliceWriter::new(&mut buf);
    w.stream_mut().set_speculative_compaction(speculative);
    write_node(&mut w.root(), n);
    w.finish().expect("8 MiB is enough").to_vec()
}

/// Writes with `f` into one large slice with the chosen compaction method.
fn one_slice_with(speculative: bool, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    let mut buf = vec![0u8; 1 << 16];
    let mut w = SliceWriter::new(&mut buf);
    w.stream_mut().set_speculative_compaction(speculative);
    f(&mut w.root());
    w.finish().expect("64 KiB is enough").to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Within one slice, speculation and moving give the same bytes.
    #[test]
    fn speculation_matches_move_compaction_in_one_slice(n in tree()) {
        let spec = one_slice(&n, true);
        let moved = one_slice(&n, false);
        assert_bytes_eq(&spec, &moved);
        assert_same(&n, &prost_decode(&spec));
    }

    /// Across random heap slices, both decode to the written values.
    #[test]
    fn speculation_across_slices_keeps_values(
        n in tree(),
        initial in 1usize..200,
        extra in 0usize..2000,
    ) {
        for speculative in [true, false] {
            let mut w = HeapWriter::with_delegate(
                HeapBuffer::with_slice_sizes(initial, initial + extra));
            w.stream_mut().set_speculative_compaction(speculative);
            write_node(&mut w.root(), &n);
            let bytes = w.finish().expect("heap");
            assert_same(&n, &prost_decode(&bytes));
        }
    }
}

/// A message grown past 127 bytes by many small appends, with children open
/// at every depth while it crosses: the upgrade moves the payload and every
/// open child's slot.
#[test]
fn growth_past_127_with_open_children() {
    let build = |m: &mut Message<'_>| {
        let mut a = m.begin_nested(1);
        for i in 0..20u64 {
            a.append_uint64(2, i);
        }
        let mut b = a.begin_nested(3);
        let mut c = b.begin_nested(4);
        for i in 0..40u64 {
            c.append_uint64(5, 1000 + i); // crosses 127 for a, then b, then c
        }
        c.finalize();
        b.append_uint32(6, 7);
        b.finalize();
        a.append_string(7, "tail");
    };
    let spec = one_slice_with(true, build);
    let moved = one_slice_with(false, build);
    assert_eq!(spec, moved);
    // The outer lengths are 4-byte redundant varints, the leaf ones too.
    assert_eq!(spec[0], 0x0A);
    assert_eq!(spec[4] & 0x80, 0, "4th byte of a redundant length ends it");
    assert_eq!(spec[1] & 0x80, 0x80);
}

/// Exactly 127 bytes stays short; 128 does not, whether reached by one write
/// or byte by byte.
#[test]
fn boundary_127_and_128() {
    for total in [126usize, 127, 128, 129] {
        for piecewise in [false, true] {
            let build = |m: &mut Message<'_>| {
                let mut n = m.begin_nested(1);
                if piecewise {
                    // 2-byte bool fields, and one 3-byte field for odd totals.
                    let mut left = total;
                    if left % 2 == 1 {
                        n.append_uint32(3, 128);
                        left -= 3;
                    }
                    for _ in 0..left / 2 {
                        n.append_bool(2, true);
                    }
                } else {
                    n.append_bytes(2, &vec![b'x'; total - 2]);
                }
            };
            let spec = one_slice_with(true, build);
            let moved = one_slice_with(false, build);
            assert_eq!(spec, moved, "total {total} piecewise {piecewise}");
            if total <= 127 {
                assert_eq!(spec[1] as usize, total);
                assert_eq!(spec.len(), 2 + total);
            } else {
                assert_eq!(spec.len(), 5 + total);
            }
        }
    }
}

/// Nested messages at the very end of a fixed slice: the headroom kept for
/// short slots is used by the upgrade, and the output still decodes.
#[test]
fn short_slots_near_the_end_of_a_fixed_slice() {
    for len in 20..80usize {
        let mut buf = vec![0u8; len];
        let mut w = SliceWriter::new(&mut buf);
        {
            let mut root = w.root();
            let mut a = root.begin_nested(1);
            let mut b = a.begin_nested(2);
            b.append_bytes(3, &[7u8; 10]);
            let mut c = b.begin_nested(4);
            c.append_uint64(5, 300);
        }
        match w.finish() {
            Ok(bytes) => {
                // a{ b{ 3: bytes, 4: { 5: 300 } } }
                let mut d = protozero::Decoder::new(bytes);
                let a = d.next().unwrap().unwrap().as_message().unwrap();
                let b = a.clone().next().unwrap().unwrap().as_message().unwrap();
                let fields: Vec<_> = b.map(|f| f.unwrap().id).collect();
                assert_eq!(fields, [3, 4], "len {len}");
            }
            Err(e) => assert!(
                matches!(e, protozero::WriteError::OutOfSpace { .. }),
                "len {len}: {e}"
            ),
        }
    }
}

/// An error while short slots are open (invalid field id) leaves nothing
/// half-written that could panic later.
#[test]
fn error_with_open_short_slots() {
    let mut buf = [0u8; 256];
    let mut w = Writer::with_delegate(protozero::SliceBuffer::new(&mut buf));
    {
        let mut root = w.root();
        let mut a = root.begin_nested(1);
        let mut b = a.begin_nested(2);
        b.append_uint32(0, 1); // invalid id: sticky error
        b.append_uint32(3, 1);
    }
    assert!(w.error().is_some());
}
