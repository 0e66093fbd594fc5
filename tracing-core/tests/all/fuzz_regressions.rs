//! Bugs the fuzz targets found, as tests of zerotrace-core built by hand.
//! The inputs that found them are replayed through the targets' own logic
//! by `fuzz/logic/tests/` (`zerotrace-fuzz-logic`): each is committed under
//! `fuzz/regressions/<target>/` and has a named test there.

use zerotrace_core::abi::ChunkFlags;
use zerotrace_core::service::__private::{ChunkMeta, FillPolicy, SequenceKey, TraceBuffer};

/// The `trace_buffer` target's find (fuzz/regressions/trace_buffer/
/// empty-record-at-ring-end): an empty chunk stored exactly at the end of
/// the ring stayed at the front of the eviction queue after a wrap and
/// stopped the eviction of the chunks the next one overwrote, so a later
/// read returned another writer's bytes. Built by hand: fill to the end, an
/// empty chunk at the end, then wrap over two stored chunks.
#[test]
fn an_empty_chunk_at_the_end_does_not_block_eviction() {
    let mut b = TraceBuffer::new(256, FillPolicy::RingBuffer).unwrap();
    let key = |w| SequenceKey {
        producer: 0,
        writer: w,
    };
    let meta = |w, id, n| ChunkMeta {
        sequence: key(w),
        chunk_id: id,
        num_fragments: n,
        flags: ChunkFlags::NONE,
        complete: true,
    };
    let frag = |tag: u8, n: usize| -> Vec<u8> {
        let mut v = protozero::varint::redundant_varint4(n as u32).to_vec();
        v.extend(std::iter::repeat_n(tag, n));
        v
    };
    b.copy_chunk(&meta(1, 0, 1), &frag(1, 251)); // 0..255
    b.copy_chunk(&meta(2, 0, 0), &[]); // empty, at 255
    b.copy_chunk(&meta(2, 1, 0), &[0x10]); // 255..256
    b.copy_chunk(&meta(2, 2, 0), &[]); // empty, at 256 (the end)
    b.copy_chunk(&meta(3, 0, 1), &frag(3, 89)); // wraps: 0..93
    b.copy_chunk(&meta(4, 0, 1), &frag(4, 126)); // 93..223
    b.copy_chunk(&meta(5, 0, 1), &frag(5, 127)); // wraps: 0..131, over both
    b.begin_read();
    let mut out = Vec::new();
    while let Some(info) = b.read_next_packet(&mut out) {
        let w = info.sequence.writer as u8;
        assert!(out.iter().all(|&x| x == w), "writer {w} got {out:02x?}");
        out.clear();
    }
}
