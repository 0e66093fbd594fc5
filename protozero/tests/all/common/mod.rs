//! Shared helpers of the protozero integration tests: the random message-tree
//! model with its `prost` oracle, our writer and decoders applied to it, and
//! test delegates. Each test module uses a different subset, hence the
//! `dead_code` allowance.
#![allow(dead_code, unused_imports)]

pub mod decode;
pub mod delegates;
pub mod encode;
pub mod model;

use protozero::{Delegate, HeapBuffer, HeapWriter, SliceWriter, WriteError, Writer};

pub use decode::{decode_iter, decode_typed};
pub use delegates::{EagerRelease, RandomSlices};
pub use encode::{Spans, write_node, write_node_spans};
pub use model::{Node, assert_same};

/// Writes `n` as the root message of `w` with compaction on or off.
pub fn write_with<D: Delegate>(w: &mut Writer<D>, n: &Node, compact: bool) {
    w.set_compaction(compact);
    let mut root = w.root();
    write_node(&mut root, n);
}

/// Through the heap delegate with the given first and largest slice size.
pub fn write_heap(n: &Node, initial: usize, max: usize, compact: bool) -> Vec<u8> {
    let mut w = HeapWriter::with_delegate(HeapBuffer::with_slice_sizes(initial, max));
    write_with(&mut w, n, compact);
    w.finish().expect("heap writer failed")
}

/// Through [`RandomSlices`]: returns the bytes and how many slices were used.
pub fn write_random(n: &Node, seed: u64, max: usize, compact: bool) -> (Vec<u8>, usize) {
    let mut w = Writer::with_delegate(RandomSlices::new(seed, max));
    write_with(&mut w, n, compact);
    assert_eq!(w.error(), None);
    let cursor = w.stream().cursor();
    (w.delegate().stitch(cursor), w.delegate().slice_count())
}

/// Through the fixed-slice delegate over a buffer of `len` bytes.
pub fn write_slice(n: &Node, len: usize, compact: bool) -> Result<Vec<u8>, WriteError> {
    let mut buf = vec![0xEEu8; len];
    let mut w = SliceWriter::new(&mut buf);
    write_with(&mut w, n, compact);
    w.finish().map(|b| b.to_vec())
}

/// What a write through [`EagerRelease`] left behind.
pub struct Eager {
    /// The patched, stitched output.
    pub bytes: Vec<u8>,
    /// Every patch record.
    pub patches: Vec<delegates::Patch>,
    /// Used length of each released slice (the last, current one excluded).
    pub released_lens: Vec<usize>,
}

/// Through [`EagerRelease`], recording slot spans into `spans`.
pub fn write_eager(n: &Node, seed: u64, max: usize, compact: bool, spans: &mut Spans) -> Eager {
    let mut w = Writer::with_delegate(EagerRelease::new(seed, max));
    w.set_compaction(compact);
    {
        let mut root = w.root();
        write_node_spans(&mut root, n, &mut Some(spans));
    }
    assert_eq!(w.error(), None);
    let cursor = w.stream().cursor();
    let d = w.delegate();
    Eager {
        bytes: d.finish(cursor),
        patches: d.patches().to_vec(),
        released_lens: d.released_lens(),
    }
}

/// Decodes with prost, panicking with the error.
pub fn prost_decode(bytes: &[u8]) -> Node {
    <Node as prost::Message>::decode(bytes).expect("prost rejected our encoding")
}

/// A slice-size limit for random slices: mostly tiny, sometimes large.
/// (Under Miri, which interprets every access, no 1-byte slices.)
pub fn slice_max() -> impl proptest::strategy::Strategy<Value = usize> {
    use proptest::prelude::*;
    if cfg!(miri) {
        return prop_oneof![Just(5usize), Just(16), Just(64)].boxed();
    }
    prop_oneof![
        Just(1usize),
        Just(2),
        Just(3),
        Just(5),
        Just(8),
        Just(16),
        Just(64),
        Just(256),
        Just(4096),
        Just(1 << 16),
    ]
    .boxed()
}

/// Byte equality that reports lengths and the first differing offset instead
/// of dumping kilobytes.
#[track_caller]
pub fn assert_bytes_eq(actual: &[u8], expected: &[u8]) {
    if actual != expected {
        let first = actual
            .iter()
            .zip(expected)
            .position(|(a, b)| a != b)
            .unwrap_or(actual.len().min(expected.len()));
        let window = |b: &[u8]| b[first.min(b.len())..(first + 8).min(b.len())].to_vec();
        panic!(
            "bytes differ: {} vs {} bytes; first difference at offset {first}: {:02x?} vs {:02x?}",
            actual.len(),
            expected.len(),
            window(actual),
            window(expected),
        );
    }
}
