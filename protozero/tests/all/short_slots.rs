//! Speculative compaction (1-byte "short" slots upgraded to 4 bytes only when
//! a message passes 127 bytes or leaves its slice) against Perfetto's
//! move-based compaction: inside one slice the bytes must be identical, across
//! slices the values must be; plus the boundary cases of the upgrade path.

use crate::common;

use common::model::tree;
use common::*;
use proptest::prelude::*;
use protozero::{HeapBuffer, HeapWriter, Message, SliceWriter, Writer};

/// Writes `n` into one large slice with the chosen compaction method.
fn one_slice(n: &Node, speculative: bool) -> Vec<u8> {
    let mut buf = vec![0u8; 8 << 20];
    let mut w = SliceWriter::new(&mut buf);
    w.set_speculative_compaction(speculative);
    write_node(&mut w.root(), n);
    w.finish().expect("8 MiB is enough").to_vec()
}

/// Writes with `f` into one large slice with the chosen compaction method.
fn one_slice_with(speculative: bool, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    let mut buf = vec![0u8; 1 << 16];
    let mut w = SliceWriter::new(&mut buf);
    w.set_speculative_compaction(speculative);
    f(&mut w.root());
    w.finish().expect("64 KiB is enough").to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 128 }, ..ProptestConfig::default() })]

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
            w.set_speculative_compaction(speculative);
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

/// Writes a chain of nested messages: level `i` gets `pre[i]` one-byte-ish
/// fields, then its child, then `post[i]` more; sizes land around 127 bytes.
fn nested_chain(m: &mut Message<'_>, pre: &[u8], post: &[u8]) {
    let Some((&first_pre, rest_pre)) = pre.split_first() else {
        return;
    };
    let (&first_post, rest_post) = post.split_first().expect("same length as pre");
    let mut child = m.begin_nested(1);
    // Fields of 2 and 3 bytes, so every total from 0 up is reachable.
    for i in 0..first_pre {
        child.append_uint32(2, if i % 3 == 0 { 200 } else { 1 });
    }
    nested_chain(&mut child, rest_pre, rest_post);
    for i in 0..first_post {
        child.append_uint32(3, if i % 2 == 0 { 300 } else { 2 });
    }
}

/// The values of a nested chain in a form independent of length encodings:
/// `{` and `}` around each child, then `field=value` for the varints.
fn chain_values(bytes: &[u8]) -> String {
    let mut out = String::new();
    for field in protozero::Decoder::new(bytes) {
        let field = field.expect("well-formed");
        if field.id == 1 {
            let child = field.as_bytes().expect("length-delimited");
            out.push('{');
            out.push_str(&chain_values(child));
            out.push('}');
        } else {
            out.push_str(&format!(
                "{}={} ",
                field.id,
                field.as_u64().expect("varint")
            ));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 512 }, ..ProptestConfig::default() })]

    /// Chains of nested messages whose sizes sit around the 127-byte limit,
    /// where the fast path's limit is stricter than the exact one while
    /// several short slots are open: the bytes must match move-based
    /// compaction exactly.
    #[test]
    fn nested_chains_at_the_limit_match_move_compaction(
        levels in proptest::collection::vec((0u8..70, 0u8..70), 1..8),
    ) {
        let (pre, post): (Vec<u8>, Vec<u8>) = levels.into_iter().unzip();
        let build = |m: &mut Message<'_>| nested_chain(m, &pre, &post);
        let spec = one_slice_with(true, build);
        let moved = one_slice_with(false, build);
        assert_bytes_eq(&spec, &moved);
    }

    /// The same chains written into a fixed slice that ends anywhere near
    /// them: the writer either fits them (the same values as in one big
    /// slice; a message opened in the last few bytes may keep a 4-byte
    /// length) or reports that it ran out of space, never anything else.
    #[test]
    fn nested_chains_in_tight_fixed_slices(
        levels in proptest::collection::vec((0u8..40, 0u8..40), 1..6),
        len in 0usize..400,
    ) {
        let (pre, post): (Vec<u8>, Vec<u8>) = levels.into_iter().unzip();
        let build = |m: &mut Message<'_>| nested_chain(m, &pre, &post);
        let whole = one_slice_with(true, build);
        let mut buf = vec![0u8; len];
        let mut w = SliceWriter::new(&mut buf);
        build(&mut w.root());
        match w.finish() {
            Ok(bytes) => prop_assert_eq!(chain_values(bytes), chain_values(&whole)),
            Err(e) => prop_assert!(
                matches!(e, protozero::WriteError::OutOfSpace { .. }),
                "unexpected error {e:?}"
            ),
        }
    }
}

/// An outer message that ends at 124..=127 bytes while a child was open when
/// it got there: the fast path's limit is 3 bytes stricter than the exact one
/// at that point, and the outer length must still end up as one byte. (A
/// slot widened early would be compacted back when it closes, so this checks
/// the bytes, not which path produced them.)
#[test]
fn outer_reaches_the_limit_while_a_child_is_open() {
    for outer_total in 120usize..=130 {
        let build = |m: &mut Message<'_>| {
            let mut outer = m.begin_nested(1);
            for _ in 0..50 {
                outer.append_bool(2, true); // 100 bytes
            }
            let mut child = outer.begin_nested(3); // 2 more
            // 2-byte fields, then one 3-byte field for odd totals.
            let mut left = outer_total - 102;
            if left % 2 == 1 {
                child.append_uint32(4, 128);
                left -= 3;
            }
            for _ in 0..left / 2 {
                child.append_bool(5, true);
            }
        };
        let spec = one_slice_with(true, build);
        let moved = one_slice_with(false, build);
        assert_bytes_eq(&spec, &moved);
        if outer_total <= 127 {
            assert_eq!(spec[1] as usize, outer_total, "outer {outer_total}");
        } else {
            assert_eq!(spec.len(), 5 + outer_total, "outer {outer_total}");
        }
    }
}

/// Children leaked with `mem::forget` below 16 levels (so the slot stack
/// spills to the heap), then their shallow parents closed and more nested
/// messages written: the stack stays consistent, nothing panics, and the
/// output still parses as far as the leaked lengths allow.
#[test]
fn leaked_deep_children_then_more_nesting() {
    for depth in [15usize, 16, 17, 20, 40] {
        let mut buf = vec![0u8; 1 << 16];
        let mut w = SliceWriter::new(&mut buf);
        {
            let mut root = w.root();
            {
                let mut outer = root.begin_nested(1);
                // A chain of `depth` children, the innermost leaked: every
                // level stays open in the stack when `outer` closes.
                fn chain(m: &mut Message<'_>, left: usize) {
                    let mut child = m.begin_nested(2);
                    child.append_uint32(3, left as u32);
                    if left > 1 {
                        chain(&mut child, left - 1);
                    }
                    core::mem::forget(child);
                }
                chain(&mut outer, depth);
            }
            // The stack must be back to the root level: more nesting works,
            // including the slow paths that walk the stack (a message that
            // outgrows 127 bytes with a child open).
            for i in 0..40u32 {
                let mut a = root.begin_nested(4);
                let mut b = a.begin_nested(5);
                b.append_uint32(6, i);
            }
            {
                let mut big = root.begin_nested(8);
                let mut inner = big.begin_nested(9);
                for _ in 0..100 {
                    inner.append_uint32(10, 300);
                }
            }
            root.append_uint32(7, 99);
        }
        assert!(w.error().is_none(), "depth {depth}");
        assert_eq!(w.stream().open_slot_count(), 0, "depth {depth}");
        let bytes = w.finish().expect("fits").to_vec();
        // Field 1 (the outer message) decodes; what follows it is intact.
        let fields: Vec<_> = protozero::Decoder::new(&bytes)
            .map(|f| f.expect("well-formed top level").id)
            .collect();
        assert_eq!(fields.first(), Some(&1), "depth {depth}");
        assert_eq!(fields.last(), Some(&7), "depth {depth}");
        assert_eq!(
            fields.iter().filter(|&&id| id == 4).count(),
            40,
            "depth {depth}"
        );
    }
}
