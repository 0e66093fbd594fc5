//! Untrusted bytes never panic a derived decoder: random buffers, truncated
//! and bit-flipped valid encodings all end in `Ok` or a `ReadError`, eagerly
//! and through lazy `Repeated` iteration.

use proptest::prelude::*;
use protozero::{ProtoRead, ProtoWrite, Repeated};

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq, Clone, Copy)]
enum Mode {
    Off = 0,
    On = 1,
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
enum Value<'a> {
    #[proto(tag = 10)]
    Text(&'a str),
    #[proto(tag = 11, fixed)]
    Bits(u64),
    #[proto(tag = 12)]
    Child(Box<Tree<'a>>),
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Tree<'a> {
    #[proto(tag = 1)]
    name: &'a str,
    #[proto(tag = 2, sint)]
    weight: i64,
    #[proto(tag = 3)]
    mode: Mode,
    #[proto(tag = 4)]
    children: Vec<Tree<'a>>,
    #[proto(tag = 5, packed)]
    points: Vec<f32>,
    #[proto(tag = 6)]
    blob: Option<&'a [u8]>,
    #[proto(oneof)]
    value: Option<Value<'a>>,
}

#[derive(ProtoRead, Debug)]
struct LazyTree<'a> {
    #[proto(tag = 1)]
    name: &'a str,
    #[proto(tag = 4)]
    children: Repeated<'a, LazyTree<'a>>,
    #[proto(tag = 5)]
    points: Repeated<'a, f32>,
    #[proto(tag = 3)]
    modes: Repeated<'a, Mode>,
}

/// Decodes `bytes` every way we can; returns whether the eager decode succeeded.
fn decode_all_ways(bytes: &[u8]) -> bool {
    let eager = Tree::decode(bytes);
    if let Ok(lazy) = LazyTree::decode(bytes) {
        walk(&lazy, 0);
    }
    eager.is_ok()
}

fn walk(tree: &LazyTree<'_>, depth: usize) {
    let _ = tree.points.iter().count();
    let _ = tree.modes.iter().count();
    if depth >= 64 {
        return;
    }
    for child in tree.children.iter().flatten() {
        walk(&child, depth + 1);
    }
}

fn sample() -> Vec<u8> {
    let leaf = Tree {
        name: "leaf",
        weight: -3,
        mode: Mode::On,
        children: vec![],
        points: vec![1.5, -0.0],
        blob: Some(b"\x00\xff"),
        value: Some(Value::Bits(7)),
    };
    let root = Tree {
        name: "root",
        weight: 1 << 40,
        mode: Mode::Off,
        children: vec![leaf],
        points: vec![],
        blob: None,
        value: Some(Value::Child(Box::new(Tree {
            name: "boxed",
            weight: 0,
            mode: Mode::On,
            children: vec![],
            points: vec![2.0],
            blob: None,
            value: Some(Value::Text("t")),
        }))),
    };
    root.write_to_vec().unwrap()
}

#[test]
fn sample_is_valid() {
    assert!(decode_all_ways(&sample()));
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        decode_all_ways(&bytes);
    }

    #[test]
    fn truncations_never_panic(cut in 0usize..200) {
        let bytes = sample();
        let cut = cut.min(bytes.len());
        decode_all_ways(&bytes[..cut]);
    }

    #[test]
    fn bit_flips_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..6)) {
        let mut bytes = sample();
        for (at, bit) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= 1 << bit;
        }
        decode_all_ways(&bytes);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // 1000 nested `children` occurrences: far beyond the recursion limit.
    let mut bytes: Vec<u8> = Vec::new();
    for _ in 0..1_000 {
        let mut outer = vec![0x22];
        let mut len = bytes.len();
        while len >= 0x80 {
            outer.push((len as u8) | 0x80);
            len >>= 7;
        }
        outer.push(len as u8);
        outer.extend_from_slice(&bytes);
        bytes = outer;
    }
    assert!(Tree::decode(&bytes).is_err());
}
