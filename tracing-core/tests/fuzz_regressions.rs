//! Inputs on which a fuzz target once failed, replayed through the same
//! logic as the target (`fuzz/fuzz_targets/`), so the fix stays fixed.

use zerotrace_core::abi::ChunkFlags;
use zerotrace_core::service::{ChunkMeta, FillPolicy, SequenceKey, TraceBuffer};

/// A byte as a sequence may write it (as in the `trace_buffer` target).
fn tagged(b: u8, tag: u8) -> u8 {
    if b & 0x80 != 0 { b } else { (b & !7) | tag }
}

/// The `trace_buffer` target: commits, patches and reads from the input;
/// every packet read holds only bytes its own sequence wrote.
fn trace_buffer_target(data: &[u8]) {
    let Some((&mode, mut rest)) = data.split_first() else {
        return;
    };
    let policy = if mode & 1 == 0 {
        FillPolicy::RingBuffer
    } else {
        FillPolicy::Discard
    };
    let mut buffer = TraceBuffer::new(256 + usize::from(mode >> 1) * 64, policy).unwrap();
    let mut out = Vec::new();
    while let Some((&op, tail)) = rest.split_first() {
        rest = tail;
        let seq = SequenceKey {
            producer: u16::from(op & 1),
            writer: u16::from(op >> 1 & 3),
        };
        let tag = (seq.producer << 2 | seq.writer) as u8;
        match op >> 3 {
            0..=3 => {
                buffer.begin_read();
                while let Some(info) = buffer.read_next_packet(&mut out) {
                    let own = (info.sequence.producer << 2 | info.sequence.writer) as u8;
                    assert!(
                        out.iter().all(|&b| b & 7 == own & 7 || b & 0x80 != 0),
                        "a packet of {:?} holds another sequence's bytes: {out:02x?}",
                        info.sequence
                    );
                    out.clear();
                }
            }
            4..=7 => {
                let Some((p, tail)) = rest.split_first_chunk::<6>() else {
                    return;
                };
                rest = tail;
                let offset = u32::from(u16::from_le_bytes([p[1], p[2]]));
                let bytes = [p[3], p[4], p[5], p[0]].map(|b| tagged(b, tag));
                buffer.try_patch(seq, u32::from(p[0] >> 1), &[(offset, bytes)], p[0] & 1 == 1);
            }
            _ => {
                let Some((h, tail)) = rest.split_first_chunk::<4>() else {
                    return;
                };
                rest = tail;
                let len = usize::from(h[3]).min(rest.len());
                let (body, tail) = rest.split_at(len);
                rest = tail;
                let payload: Vec<u8> = body.iter().map(|&b| tagged(b, tag)).collect();
                let meta = ChunkMeta {
                    sequence: seq,
                    chunk_id: u32::from(h[0] & 15),
                    num_fragments: u16::from(h[1] & 7),
                    flags: ChunkFlags::from_bits(h[2] & 7),
                    complete: h[2] & 8 == 0,
                };
                buffer.copy_chunk(&meta, &payload);
            }
        }
    }
    let s = buffer.stats();
    assert!(s.bytes_read <= s.bytes_written);
}

/// An empty chunk stored exactly at the end of the ring stayed at the front
/// of the eviction queue after a wrap and stopped the eviction of the chunks
/// the next one overwrote: a later read returned another writer's bytes.
#[test]
fn trace_buffer_empty_record_at_the_ring_end() {
    let input = include_bytes!("fuzz_regressions/trace_buffer-empty-record-at-ring-end");
    trace_buffer_target(input);
}

/// The same, built by hand: fill to the end, an empty chunk at the end,
/// then wrap over two stored chunks.
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
