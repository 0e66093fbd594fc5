//! The trace buffer against a reference model: several writers' packets are
//! cut into chunks (fragments, continuation flags), some chunks never arrive,
//! some arrive first as scraped copies, commits of different writers
//! interleave and reads happen at random points. Whatever the schedule, each
//! sequence must give back exactly the packets whose every chunk arrived, in
//! order, and flag a loss on the first packet after any packet that was lost
//! and on the sequence's first packet (earlier data may be missing, as
//! Perfetto flags it), and on no other.

use proptest::prelude::*;
use protozero::varint::redundant_varint4;
use zerotrace_core::abi::ChunkFlags;
use zerotrace_core::service::__private::{ChunkMeta, FillPolicy, SequenceKey, TraceBuffer};

const FIRST: u8 = ChunkFlags::FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK.bits();
const LAST: u8 = ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK.bits();

#[derive(Debug, Clone)]
struct Chunk {
    id: u32,
    payload: Vec<u8>,
    fragments: u16,
    flags: u8,
    /// Indexes of the packets with a fragment in this chunk.
    packets: Vec<usize>,
}

/// Cuts `packets` into chunks of `size` payload bytes, as a TraceWriter does
/// (4-byte fragment headers; a packet that does not fit continues in the
/// next chunk). Chunk ids start at `first_id` and wrap.
fn chunk_up(packets: &[Vec<u8>], size: usize, first_id: u32) -> Vec<Chunk> {
    let new_chunk = |id: u32, flags: u8| Chunk {
        id,
        payload: Vec::new(),
        fragments: 0,
        flags,
        packets: Vec::new(),
    };
    let mut chunks = vec![new_chunk(first_id, 0)];
    for (i, p) in packets.iter().enumerate() {
        let mut rest: &[u8] = p;
        loop {
            let c = chunks.last_mut().expect("one chunk at least");
            if c.payload.len() + 4 >= size {
                // No room for a header and a byte: the packet starts afresh.
                let id = c.id.wrapping_add(1);
                chunks.push(new_chunk(id, 0));
                continue;
            }
            let room = size - c.payload.len() - 4;
            let n = rest.len().min(room);
            c.payload.extend_from_slice(&redundant_varint4(n as u32));
            c.payload.extend_from_slice(&rest[..n]);
            c.fragments += 1;
            c.packets.push(i);
            rest = &rest[n..];
            if rest.is_empty() {
                break;
            }
            c.flags |= LAST;
            let id = c.id.wrapping_add(1);
            chunks.push(new_chunk(id, FIRST));
        }
    }
    for c in &mut chunks {
        c.payload.resize(size, 0);
    }
    chunks
}

#[derive(Debug, Clone)]
struct Writer {
    packets: Vec<Vec<u8>>,
    chunk_size: usize,
    first_id: u32,
    /// Per chunk: (delivered, scraped first with this many fragments).
    fate: Vec<(bool, Option<u16>)>,
}

fn writer(w: u16) -> impl Strategy<Value = Writer> {
    (
        prop::collection::vec(0usize..300, 1..25),
        64usize..200,
        prop_oneof![Just(0u32), Just(u32::MAX - 3), any::<u32>()],
        prop::collection::vec((prop::bool::weighted(0.85), prop::option::of(0u16..4)), 64),
    )
        .prop_map(move |(sizes, chunk_size, first_id, fate)| Writer {
            packets: sizes
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let mut p = vec![(w as u8) ^ (i as u8); n];
                    p.extend_from_slice(&(i as u32).to_le_bytes());
                    p
                })
                .collect(),
            chunk_size,
            first_id,
            fate,
        })
}

/// One commit step: (writer, how many of its chunks to commit), or a read.
#[derive(Debug, Clone)]
enum Step {
    Commit(usize, usize),
    Read,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            4 => (0usize..3, 1usize..4).prop_map(|(w, n)| Step::Commit(w, n)),
            1 => Just(Step::Read),
        ],
        1..60,
    )
}

fn meta(w: usize, c: &Chunk, fragments: u16, complete: bool) -> ChunkMeta {
    ChunkMeta {
        sequence: SequenceKey {
            producer: 1,
            writer: w as u16 + 1,
        },
        chunk_id: c.id,
        num_fragments: fragments,
        flags: ChunkFlags::from_bits(c.flags),
        complete,
    }
}

fn drain(b: &mut TraceBuffer, got: &mut [Vec<(Vec<u8>, u32)>]) {
    b.begin_read();
    let mut out = Vec::new();
    while let Some(info) = b.read_next_packet(&mut out) {
        got[usize::from(info.sequence.writer) - 1].push((std::mem::take(&mut out), info.loss.0));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 256 }, ..ProptestConfig::default() })]
    #[test]
    fn matches_the_model(
        writers in (writer(1), writer(2), writer(3)),
        schedule in steps(),
        swap_in_batch in any::<bool>(),
    ) {
        let writers = [writers.0, writers.1, writers.2];
        let chunks: Vec<Vec<Chunk>> = writers
            .iter()
            .map(|w| chunk_up(&w.packets, w.chunk_size, w.first_id))
            .collect();
        let mut b = TraceBuffer::new(1 << 20, FillPolicy::RingBuffer).unwrap();
        let mut next = [0usize; 3];
        let mut got: Vec<Vec<(Vec<u8>, u32)>> = vec![Vec::new(); 3];
        let commit = |b: &mut TraceBuffer, w: usize, c: &Chunk, fate: (bool, Option<u16>)| {
            if !fate.0 {
                return;
            }
            if let Some(k) = fate.1 {
                b.copy_chunk(&meta(w, c, k.min(c.fragments), false), &c.payload);
            }
            b.copy_chunk(&meta(w, c, c.fragments, true), &c.payload);
        };
        for step in schedule.iter().chain(std::iter::once(&Step::Read)) {
            match *step {
                Step::Read => drain(&mut b, &mut got),
                Step::Commit(w, n) => {
                    // One CommitData: its chunks may come in any order.
                    let end = (next[w] + n).min(chunks[w].len());
                    let mut batch: Vec<usize> = (next[w]..end).collect();
                    if swap_in_batch {
                        batch.reverse();
                    }
                    for i in batch {
                        let fate = writers[w].fate.get(i).copied().unwrap_or((true, None));
                        commit(&mut b, w, &chunks[w][i], fate);
                    }
                    next[w] = end;
                }
            }
        }
        // Commit whatever the schedule left, then read the rest.
        for w in 0..3 {
            for (i, c) in chunks[w].iter().enumerate().skip(next[w]) {
                let fate = writers[w].fate.get(i).copied().unwrap_or((true, None));
                commit(&mut b, w, c, fate);
            }
        }
        drain(&mut b, &mut got);

        for w in 0..3 {
            let packets = &writers[w].packets;
            let mut complete = vec![true; packets.len()];
            for (i, c) in chunks[w].iter().enumerate() {
                let delivered = writers[w].fate.get(i).is_none_or(|f| f.0);
                if !delivered {
                    for &p in &c.packets {
                        complete[p] = false;
                    }
                }
            }
            // A packet is expected if all its chunks arrived and it is not
            // an empty one (empty fragments are skipped).
            let mut expected = Vec::new();
            // A sequence's first packet is flagged, whatever its chunk id.
            let mut lost_since = true;
            for (i, p) in packets.iter().enumerate() {
                if complete[i] {
                    expected.push((p.clone(), lost_since));
                    lost_since = false;
                } else {
                    lost_since = true;
                }
            }
            let got_w = &got[w];
            prop_assert_eq!(got_w.len(), expected.len(), "writer {} packet count", w);
            for (i, ((g, loss), (e, flagged))) in got_w.iter().zip(&expected).enumerate() {
                prop_assert_eq!(g, e, "writer {} packet {}", w, i);
                prop_assert_eq!(*loss != 0, *flagged, "writer {} packet {} loss {:#x}", w, i, loss);
            }
        }
    }
}

const NEEDS_PATCHING: u8 = ChunkFlags::CHUNK_NEEDS_PATCHING.bits();

/// A patch owed to a chunk: payload offset and the four real bytes.
#[derive(Debug, Clone)]
struct OwedPatch {
    chunk: usize,
    offset: u32,
    data: [u8; 4],
}

/// Blanks the size header of the last fragment of every chunk whose packet
/// continues (when `patch` says so for that chunk), as a writer does before
/// it knows the size, and returns the patches that restore them.
fn blank_sizes(chunks: &mut [Chunk], patch: &[bool]) -> Vec<OwedPatch> {
    let mut owed = Vec::new();
    for (i, c) in chunks.iter_mut().enumerate() {
        if c.flags & LAST == 0 || !patch.get(i).copied().unwrap_or(false) {
            continue;
        }
        // Walk the fragments to the last one.
        let mut pos = 0usize;
        for _ in 0..c.fragments - 1 {
            let len = (c.payload[pos] & 0x7f) as usize
                | ((c.payload[pos + 1] & 0x7f) as usize) << 7
                | ((c.payload[pos + 2] & 0x7f) as usize) << 14
                | ((c.payload[pos + 3] & 0x7f) as usize) << 21;
            pos += 4 + len;
        }
        let mut data = [0u8; 4];
        data.copy_from_slice(&c.payload[pos..pos + 4]);
        c.payload[pos..pos + 4].copy_from_slice(&redundant_varint4(0));
        c.flags |= NEEDS_PATCHING;
        owed.push(OwedPatch {
            chunk: i,
            offset: pos as u32,
            data,
        });
    }
    owed
}

/// Ring overwrites and late patches: whatever is lost, each sequence gives
/// back its packets in order, byte for byte, and a packet is flagged exactly
/// when something before it on its sequence was not returned (its start
/// included).
#[derive(Debug, Clone)]
enum RingStep {
    Commit(usize, usize),
    /// Deliver the oldest owed patch of a writer.
    Patch(usize),
    Read,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn ring_overwrites_and_late_patches(
        writers in (writer(1), writer(2), writer(3)),
        patch_mask in prop::collection::vec(prop::bool::weighted(0.6), 64),
        schedule in prop::collection::vec(
            prop_oneof![
                4 => (0usize..3, 1usize..4).prop_map(|(w, n)| RingStep::Commit(w, n)),
                2 => (0usize..3).prop_map(RingStep::Patch),
                1 => Just(RingStep::Read),
            ],
            1..80,
        ),
        size_kb in 1usize..4,
    ) {
        let writers = [writers.0, writers.1, writers.2];
        let mut chunks: Vec<Vec<Chunk>> = writers
            .iter()
            .map(|w| chunk_up(&w.packets, w.chunk_size, w.first_id))
            .collect();
        let mut owed: Vec<std::collections::VecDeque<OwedPatch>> = chunks
            .iter_mut()
            .map(|c| blank_sizes(c, &patch_mask).into())
            .collect();
        let mut b = TraceBuffer::new(size_kb * 1024, FillPolicy::RingBuffer).unwrap();
        let mut next = [0usize; 3];
        let mut got: Vec<Vec<(Vec<u8>, u32)>> = vec![Vec::new(); 3];
        let deliver = |b: &mut TraceBuffer, w: usize, owed: &mut std::collections::VecDeque<OwedPatch>, next: usize, chunks: &[Chunk]| {
            // Only patches for chunks already committed can be sent.
            if owed.front().is_some_and(|p| p.chunk < next) {
                let p = owed.pop_front().unwrap();
                let seq = SequenceKey { producer: 1, writer: w as u16 + 1 };
                b.try_patch(seq, chunks[p.chunk].id, &[(p.offset, p.data)], false);
            }
        };
        for step in &schedule {
            match *step {
                RingStep::Read => drain(&mut b, &mut got),
                RingStep::Patch(w) => deliver(&mut b, w, &mut owed[w], next[w], &chunks[w]),
                RingStep::Commit(w, n) => {
                    let end = (next[w] + n).min(chunks[w].len());
                    for c in &chunks[w][next[w]..end] {
                        b.copy_chunk(&meta(w, c, c.fragments, true), &c.payload);
                    }
                    next[w] = end;
                }
            }
        }
        for w in 0..3 {
            for c in &chunks[w][next[w]..] {
                b.copy_chunk(&meta(w, c, c.fragments, true), &c.payload);
            }
            next[w] = chunks[w].len();
            while !owed[w].is_empty() {
                deliver(&mut b, w, &mut owed[w], next[w], &chunks[w]);
            }
        }
        drain(&mut b, &mut got);
        let overwritten = b.stats().chunks_overwritten;
        for w in 0..3 {
            let packets = &writers[w].packets;
            let mut expect_from = 0usize;
            for (i, (g, loss)) in got[w].iter().enumerate() {
                let at = packets[expect_from..].iter().position(|p| p == g);
                prop_assert!(at.is_some(), "writer {} packet {} is one it wrote, after the previous", w, i);
                let at = expect_from + at.unwrap();
                let skipped = i == 0 || at != expect_from;
                prop_assert_eq!(*loss != 0, skipped, "writer {} packet {} (index {}) loss {:#x}", w, i, at, loss);
                expect_from = at + 1;
            }
            if overwritten == 0 {
                prop_assert_eq!(got[w].len(), packets.len(), "nothing overwritten: writer {} loses nothing", w);
            }
        }
    }
}
