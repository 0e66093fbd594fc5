//! The trace buffer driven by arbitrary commits, patches and reads from
//! hostile producers: it must never panic, every packet it returns must be
//! made of bytes its own sequence committed, and it never reports more bytes
//! read than written.

use zerotrace_core::abi::ChunkFlags;
use zerotrace_core::service::__private::{ChunkMeta, FillPolicy, SequenceKey, TraceBuffer};

/// The `trace_buffer` target.
pub fn trace_buffer(data: &[u8]) {
    run(data);
}

/// Runs the program `data` (the target's input) and returns the length of
/// every packet its reads returned, in order; the seed tests use it to
/// check that each committed seed reaches the buffer's read path.
///
/// The input: a mode byte (bit 0: discard instead of ring buffer; the rest:
/// the size, 256 + 64 × (mode >> 1) bytes), then operations. An operation
/// byte names the sequence (bit 0: producer 0 or 1; bits 1–2: writer) and
/// what to do (`op >> 3`): 0–3 read everything readable; 4–7 a patch of 6
/// bytes (`p0`: chunk id × 2 + "more patches pending"; `p1`, `p2`: the
/// offset, little-endian; `p3..=p5`: the patch's first three bytes, its
/// fourth is `p0`);
/// 8–31 a chunk: id, fragment count, flags (bits 0–2; bit 3 "incomplete"),
/// length, then that many payload bytes. Every payload and patch byte
/// below 0x80 gets its low 3 bits replaced by the sequence's tag
/// (producer × 4 + writer), so the reads can tell whose bytes a packet
/// holds.
pub fn run(data: &[u8]) -> Vec<usize> {
    let mut lengths = Vec::new();
    let Some((&mode, mut rest)) = data.split_first() else {
        return lengths;
    };
    let policy = if mode & 1 == 0 {
        FillPolicy::RingBuffer
    } else {
        FillPolicy::Discard
    };
    let size = 256 + usize::from(mode >> 1) * 64;
    let mut buffer = TraceBuffer::new(size, policy).expect("non-empty");
    let mut out = Vec::new();
    while let Some((&op, tail)) = rest.split_first() {
        rest = tail;
        let seq = SequenceKey {
            producer: u16::from(op & 1),
            writer: u16::from(op >> 1 & 3),
        };
        match op >> 3 {
            // Read everything readable.
            0..=3 => {
                buffer.begin_read();
                while let Some(info) = buffer.read_next_packet(&mut out) {
                    // Payload bytes carry their writer in the low bits (below).
                    let tag = (info.sequence.producer << 2 | info.sequence.writer) as u8;
                    assert!(
                        out.iter().all(|&b| b & 7 == tag & 7 || b & 0x80 != 0),
                        "a packet of {:?} holds another sequence's bytes: {out:02x?}",
                        info.sequence
                    );
                    lengths.push(out.len());
                    out.clear();
                }
            }
            // A patch.
            4..=7 => {
                let Some((p, tail)) = rest.split_first_chunk::<6>() else {
                    return lengths;
                };
                rest = tail;
                let offset = u32::from(u16::from_le_bytes([p[1], p[2]]));
                let tag = (seq.producer << 2 | seq.writer) as u8;
                let bytes = [p[3], p[4], p[5], p[0]].map(|b| tagged(b, tag));
                buffer.try_patch(seq, u32::from(p[0] >> 1), &[(offset, bytes)], p[0] & 1 == 1);
            }
            // A chunk: id, fragment count, flags, length, then fragments whose
            // bytes are tagged with the writer.
            _ => {
                let Some((h, tail)) = rest.split_first_chunk::<4>() else {
                    return lengths;
                };
                rest = tail;
                let len = usize::from(h[3]);
                let Some((body, tail)) = rest.split_at_checked(len.min(rest.len())) else {
                    return lengths;
                };
                rest = tail;
                let tag = (seq.producer << 2 | seq.writer) as u8;
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
    lengths
}

/// A byte as a sequence may write it: high bit set (size-header
/// continuation bytes stay arbitrary), or low 3 bits naming the sequence.
fn tagged(b: u8, tag: u8) -> u8 {
    if b & 0x80 != 0 { b } else { (b & !7) | tag }
}
