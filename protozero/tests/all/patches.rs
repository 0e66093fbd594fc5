//! Patch awareness: a delegate that hands every slice back as soon as the
//! writer leaves it (like a committed shared-memory chunk) must receive every
//! length whose slot lay in a released slice through a patch, and applying the
//! patches afterwards must give exactly the contiguous encoding.

use crate::common;

use common::model::{make_string, tree};
use common::*;
use proptest::prelude::*;
use protozero::{HeapBuffer, HeapWriter, NullWriter};

/// Contiguous reference encoding: one big slice, compaction off.
fn contiguous(n: &Node) -> Vec<u8> {
    let len = write_heap(n, 1, 1 << 16, false).len();
    write_slice(n, len, false).expect("exact-size buffer")
}

/// Slots that must have become patches: those whose message was still open
/// when the writer left the slice holding the slot, i.e. whose last byte lies
/// past that slice. Returns their absolute offsets, sorted.
fn expected_patched_slots(spans: &Spans, released_lens: &[usize]) -> Vec<usize> {
    let mut ends = Vec::with_capacity(released_lens.len());
    let mut total = 0;
    for len in released_lens {
        total += len;
        ends.push(total);
    }
    let mut slots: Vec<usize> = spans
        .iter()
        .filter(|&&(slot, end)| {
            // The released slice holding the slot, if any (the last slice is
            // never released while the writer runs).
            match ends.iter().position(|&e| slot < e) {
                Some(i) => end > ends[i],
                None => false,
            }
        })
        .map(|&(slot, _)| slot)
        .collect();
    slots.sort_unstable();
    slots
}

/// Absolute offsets of the recorded patches, sorted.
fn patched_slots(e: &Eager) -> Vec<usize> {
    let starts: Vec<usize> = e
        .released_lens
        .iter()
        .scan(0, |acc, len| {
            let start = *acc;
            *acc += len;
            Some(start)
        })
        .collect();
    let mut slots: Vec<usize> = e
        .patches
        .iter()
        .map(|p| starts[p.slice] + p.offset)
        .collect();
    slots.sort_unstable();
    slots
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 128 }, ..ProptestConfig::default() })]

    /// Without compaction, released-and-patched output is byte-for-byte the
    /// contiguous encoding.
    #[test]
    fn patched_output_equals_contiguous(n in tree(), seed in any::<u64>(), max in slice_max()) {
        let eager = write_eager(&n, seed, max, false, &mut Spans::new());
        assert_bytes_eq(&eager.bytes, &contiguous(&n));
    }

    /// With compaction, the output differs in length bytes but decodes the same.
    #[test]
    fn patched_compacted_output_decodes_the_same(
        n in tree(),
        seed in any::<u64>(),
        max in slice_max(),
    ) {
        let eager = write_eager(&n, seed, max, true, &mut Spans::new());
        assert_same(&n, &prost_decode(&eager.bytes));
        prop_assert!(eager.bytes.len() <= contiguous(&n).len());
    }

    /// Exactly the slots whose message outlived the slice they sit in were
    /// patched, and each patch was filled once (the delegate checks that).
    #[test]
    fn exactly_the_crossing_slots_are_patched(
        n in tree(),
        seed in any::<u64>(),
        max in slice_max(),
    ) {
        let mut spans = Spans::new();
        let eager = write_eager(&n, seed, max, false, &mut spans);
        let expected = expected_patched_slots(&spans, &eager.released_lens);
        prop_assert_eq!(patched_slots(&eager), expected.clone());
        // Any message longer than the largest slice must have crossed one.
        if spans.iter().any(|&(slot, end)| end - slot > max + 4) {
            prop_assert!(!expected.is_empty());
        }
    }
}

/// A hand-made tree that crosses slices: patches do happen and all are applied.
#[test]
fn nested_messages_across_small_slices_are_patched() {
    let leaf = Node {
        s: Some(make_string(1000, 9)),
        p_u64: (0..50).map(|i| i * 1_000_003).collect(),
        ..Node::default()
    };
    let n = Node {
        children: vec![leaf.clone(), Node::default(), leaf.clone()],
        child: Some(Box::new(Node {
            children: vec![leaf],
            ..Node::default()
        })),
        ..Node::default()
    };
    let maxes: &[usize] = if cfg!(miri) {
        &[16, 200]
    } else {
        &[1, 16, 200]
    };
    for &max in maxes {
        let mut spans = Spans::new();
        let eager = write_eager(&n, 5, max, false, &mut spans);
        assert_bytes_eq(&eager.bytes, &contiguous(&n));
        // Every nested message is larger than a slice here, except the empty one.
        assert!(eager.patches.len() >= 4, "{} patches", eager.patches.len());
        assert_eq!(
            patched_slots(&eager),
            expected_patched_slots(&spans, &eager.released_lens)
        );
        let compacted = write_eager(&n, 5, max, true, &mut Spans::new());
        assert_same(&n, &prost_decode(&compacted.bytes));
    }
}

/// A message that fits in one slice needs no patch even though later slices
/// are released.
#[test]
fn message_closed_inside_its_slice_needs_no_patch() {
    let n = Node {
        children: vec![Node {
            i32: Some(1),
            ..Node::default()
        }],
        s: Some(make_string(5000, 2)),
        ..Node::default()
    };
    let mut spans = Spans::new();
    let eager = write_eager(&n, 1, 64, false, &mut spans);
    assert!(eager.released_lens.len() > 10);
    assert!(eager.patches.is_empty());
    assert_bytes_eq(&eager.bytes, &contiguous(&n));
}

/// The discarding delegate turns every slot into a dropped patch, yet counts
/// the same bytes as the contiguous encoding.
#[test]
fn null_delegate_counts_like_contiguous() {
    let n = Node {
        children: vec![Node {
            by: Some(vec![7; 3000]),
            children: vec![Node::default(); 3],
            ..Node::default()
        }],
        ..Node::default()
    };
    let mut w = NullWriter::new();
    write_with(&mut w, &n, false);
    assert_eq!(w.error(), None);
    assert_eq!(w.written(), contiguous(&n).len());

    // The heap delegate never needs patches: same bytes through 1-byte slices.
    let tiny = if cfg!(miri) { 8 } else { 1 };
    let mut h = HeapWriter::with_delegate(HeapBuffer::with_slice_sizes(tiny, tiny));
    write_with(&mut h, &n, false);
    assert_bytes_eq(&h.finish().expect("heap"), &contiguous(&n));
}
