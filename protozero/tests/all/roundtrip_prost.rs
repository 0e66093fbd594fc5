//! Random message trees written through every delegate, with compaction on
//! and off, must decode with `prost` (an independent implementation) to the
//! same values; and `prost`'s encoding must decode with our decoders back to
//! the same values.

use crate::common;

use common::model::{MAX_BIG, chain_tree, depth, make_bytes, make_string, tree};
use common::*;
use proptest::prelude::*;
use protozero::{HeapBuffer, HeapWriter, WriteError};

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 128 }, ..ProptestConfig::default() })]

    /// The heap delegate, its first slice anywhere from 1 byte and a random cap.
    #[test]
    fn heap_delegate_decodes_with_prost(
        n in tree(),
        initial in 1usize..300,
        extra in 0usize..5000,
        compact in any::<bool>(),
    ) {
        let bytes = write_heap(&n, initial, initial + extra, compact);
        assert_same(&n, &prost_decode(&bytes));
    }

    /// Slices of random size (1 byte and up) from a test delegate.
    #[test]
    fn random_slices_decode_with_prost(
        n in tree(),
        seed in any::<u64>(),
        max in slice_max(),
        compact in any::<bool>(),
    ) {
        let (bytes, _) = write_random(&n, seed, max, compact);
        assert_same(&n, &prost_decode(&bytes));
    }

    /// One fixed slice; without compaction a buffer of exactly the output size
    /// suffices and one byte less is a reported error.
    #[test]
    fn slice_writer_decodes_with_prost(n in tree(), compact in any::<bool>()) {
        let contiguous = write_heap(&n, 1 << 20, 1 << 20, false);
        let bytes = write_slice(&n, contiguous.len(), compact).expect("exact-size buffer");
        assert_same(&n, &prost_decode(&bytes));
        if !compact {
            assert_bytes_eq(&bytes, &contiguous);
            if !bytes.is_empty() {
                let short = write_slice(&n, bytes.len() - 1, false);
                prop_assert!(matches!(short, Err(WriteError::OutOfSpace { .. })), "{:?}", short);
            }
        }
    }

    /// Slices handed back as soon as they are left; lengths go through patches.
    #[test]
    fn eager_release_decodes_with_prost(
        n in tree(),
        seed in any::<u64>(),
        max in slice_max(),
        compact in any::<bool>(),
    ) {
        let bytes = write_eager(&n, seed, max, compact, &mut Spans::new()).bytes;
        assert_same(&n, &prost_decode(&bytes));
    }

    /// Without compaction the output does not depend on where slices end: all
    /// delegates give the same bytes. Compaction only ever removes bytes.
    #[test]
    fn delegates_agree_without_compaction(
        n in tree(),
        seed in any::<u64>(),
        max in slice_max(),
    ) {
        let heap = write_heap(&n, 1, 64, false);
        assert_bytes_eq(&write_random(&n, seed, max, false).0, &heap);
        assert_bytes_eq(&write_slice(&n, heap.len(), false).expect("fits"), &heap);
        assert_bytes_eq(&write_eager(&n, seed, max, false, &mut Spans::new()).bytes, &heap);
        let compacted = write_random(&n, seed, max, true).0;
        prop_assert!(compacted.len() <= heap.len());
    }

    /// A heap writer cleared and reused (its slices recycled, so boundaries
    /// move) writes the same bytes as a fresh one when compaction is off, the
    /// same values when it is on; a second root appends to the same stream.
    #[test]
    fn reused_heap_writer_matches_fresh(
        a in tree(),
        b in tree(),
        initial in 1usize..64,
        compact in any::<bool>(),
    ) {
        let mut w = HeapWriter::with_delegate(HeapBuffer::with_slice_sizes(initial, 4096));
        write_with(&mut w, &a, compact);
        assert_same(&a, &prost_decode(&w.to_vec()));
        w.clear();
        write_with(&mut w, &b, compact);
        let b_bytes = w.to_vec();
        assert_same(&b, &prost_decode(&b_bytes));
        if !compact {
            let fresh = write_heap(&b, initial, 4096, false);
            assert_bytes_eq(&b_bytes, &fresh);
        }
        write_with(&mut w, &a, compact);
        let both = w.finish().expect("heap");
        let (head, tail) = both.split_at(b_bytes.len());
        assert_bytes_eq(head, &b_bytes);
        assert_same(&a, &prost_decode(tail));
    }

    /// The typed decoder: last occurrence wins for `get`, `repeated` yields
    /// every occurrence in arrival order, for dense and spilled ids alike.
    #[test]
    fn typed_decoder_last_wins_and_keeps_order(
        fields in proptest::collection::vec(
            (prop_oneof![1u32..20, Just(1000u32), Just(536_870_911u32)], any::<u64>()),
            0..60,
        ),
    ) {
        let mut w = HeapWriter::new();
        {
            let mut root = w.root();
            for &(id, v) in &fields {
                root.append_uint64(id, v);
            }
        }
        let bytes = w.finish().expect("heap");
        let d = protozero::TypedDecoder::<'_, 16>::new(&bytes);
        prop_assert_eq!(d.error(), None);
        let mut ids: Vec<u32> = fields.iter().map(|&(id, _)| id).collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids.iter().copied().chain([20, 999]) {
            let all: Vec<u64> = fields.iter().filter(|f| f.0 == id).map(|f| f.1).collect();
            prop_assert_eq!(d.get(id).map(|f| f.as_u64()), all.last().map(|&v| Ok(v)));
            let got: Vec<u64> = d.repeated(id).map(|f| f.as_u64().expect("varint")).collect();
            prop_assert_eq!(got, all);
        }
    }

    /// prost's encoding, read back by both of our decoders.
    #[test]
    fn our_decoders_read_prost_bytes(n in tree()) {
        let bytes = prost::Message::encode_to_vec(&n);
        assert_same(&n, &decode_iter(&bytes).expect("Decoder"));
        assert_same(&n, &decode_typed(&bytes).expect("TypedDecoder"));
    }

    /// Our own output (1- and 4-byte lengths mixed), read back by our decoders.
    #[test]
    fn our_decoders_read_our_bytes(
        n in tree(),
        seed in any::<u64>(),
        max in slice_max(),
        compact in any::<bool>(),
    ) {
        let (bytes, _) = write_random(&n, seed, max, compact);
        assert_same(&n, &decode_iter(&bytes).expect("Decoder"));
        assert_same(&n, &decode_typed(&bytes).expect("TypedDecoder"));
    }
}

/// The deepest case the issue names: 64 nested levels, through every delegate,
/// crossing the 16 inline slots of the open-slot stack.
#[test]
fn sixty_four_levels_deep() {
    let mut n = Node {
        s: Some(make_string(300, 1)),
        ..Node::default()
    };
    for i in 0..64 {
        n = Node {
            i32: Some(-i),
            children: vec![n],
            ..Node::default()
        };
    }
    assert_eq!(depth(&n), 64);
    for compact in [true, false] {
        for max in [1, 7, 100, 4096] {
            assert_same(&n, &prost_decode(&write_heap(&n, max, max, compact)));
            assert_same(&n, &prost_decode(&write_random(&n, 7, max, compact).0));
            let eager = write_eager(&n, 7, max, compact, &mut Spans::new());
            assert_same(&n, &prost_decode(&eager.bytes));
            assert_same(&n, &decode_typed(&eager.bytes).expect("typed"));
            if max < 100 {
                assert!(!eager.patches.is_empty());
            }
        }
        let bytes = write_slice(&n, 1 << 16, compact).expect("fits");
        assert_same(&n, &prost_decode(&bytes));
    }
}

/// The generator reaches the deep end too (not only hand-built chains).
#[test]
fn chain_strategy_reaches_64_levels() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let deepest = (0..200)
        .map(|_| depth(&chain_tree().new_tree(&mut runner).expect("tree").current()))
        .max();
    assert_eq!(deepest, Some(64));
}

/// 100 KiB string and bytes fields across 1-byte-ish slices.
#[test]
fn hundred_kib_payloads() {
    let n = Node {
        s: Some(make_string(MAX_BIG, 3)),
        by: Some(make_bytes(MAX_BIG, 4)),
        children: vec![Node {
            u_by: vec![make_bytes(MAX_BIG, 5)],
            ..Node::default()
        }],
        ..Node::default()
    };
    for max in [1, 3, 1000] {
        for compact in [true, false] {
            let (bytes, slices) = write_random(&n, 11, max, compact);
            assert!(slices > 100);
            assert_same(&n, &prost_decode(&bytes));
            let eager = write_eager(&n, 11, max, compact, &mut Spans::new());
            assert_same(&n, &prost_decode(&eager.bytes));
        }
    }
}
