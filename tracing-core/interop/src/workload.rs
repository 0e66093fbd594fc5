//! A deterministic trace-buffer workload: what the service's commit path
//! hands a trace buffer when several writers of a few producers trace at
//! once, as chunks of 4 KiB SMB pages.
//!
//! Each writer emits a stream of realistic TracePackets (timestamps, track
//! events with interned names and debug annotations, occasional interned
//! data and large process-tree snapshots): mostly 40–120 bytes, some up to
//! 1 KiB, a few of 8–20 KiB. A writer packs its stream into chunks the way a
//! TraceWriter does: a packet that does not fit the rest of a chunk is split
//! into fragments across the following chunks (with the continuation flags
//! set on both sides), and a whole packet shorter than 127 bytes gets a
//! one-byte size header (the SDK's compaction), any other fragment a
//! redundant 4-byte one. Every chunk payload is the whole page's chunk minus
//! its header (4,080 bytes), zero-filled after the last fragment, as the
//! service copies it. Commits of the writers interleave at random (each
//! writer's chunks in order).
//!
//! The payloads lie back to back in one allocation, so every implementation
//! fed from a [`Workload`] reads the same bytes from the same addresses, and
//! a single `memcpy` of [`Workload::bytes`] is the floor to compare with.

use std::collections::BTreeMap;
use std::ops::Range;

/// Chunk payload of a 4 KiB page holding one chunk: the page minus its
/// 8-byte page header and the chunk's 8-byte header.
pub const CHUNK_PAYLOAD: usize = 4096 - 8 - 8;

/// Flag: the first fragment continues a packet of the previous chunk.
pub const FIRST_CONTINUES: u8 = 1;
/// Flag: the last fragment continues in the next chunk.
pub const LAST_CONTINUES: u8 = 2;

/// How to generate a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadConfig {
    /// Number of producers (ids 1..).
    pub producers: u16,
    /// Number of writers in all, spread over the producers.
    pub writers: u16,
    /// Chunks to generate in all.
    pub chunks: usize,
    /// Seed of the generator.
    pub seed: u64,
}

impl Default for WorkloadConfig {
    /// 8 writers of 3 producers, 2,048 chunks (8 MiB of payload).
    fn default() -> WorkloadConfig {
        WorkloadConfig {
            producers: 3,
            writers: 8,
            chunks: 2048,
            seed: 0x5eed_7ace,
        }
    }
}

/// One chunk as the service hands it to a trace buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadChunk {
    /// Trusted producer id.
    pub producer: u16,
    /// The producer's uid.
    pub uid: u32,
    /// Writer id (unique within its producer).
    pub writer: u16,
    /// Chunk id (0 for the writer's first chunk).
    pub chunk_id: u32,
    /// Fragments started in the chunk.
    pub num_fragments: u16,
    /// [`FIRST_CONTINUES`] / [`LAST_CONTINUES`].
    pub flags: u8,
    /// Where its payload lies in [`Workload::bytes`].
    pub range: Range<usize>,
}

/// A generated workload: chunks in commit order and the packets they carry.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Every chunk payload, back to back in commit order.
    pub bytes: Vec<u8>,
    /// The chunks in commit order.
    pub chunks: Vec<WorkloadChunk>,
    /// Each sequence's packets, in order, keyed by (producer, writer).
    pub packets: BTreeMap<(u16, u16), Vec<Vec<u8>>>,
    /// Chunks generated per sequence.
    pub chunks_per_sequence: BTreeMap<(u16, u16), u32>,
}

impl Workload {
    /// Generates the workload `config` describes.
    pub fn generate(config: WorkloadConfig) -> Workload {
        let mut rng = Rng(config.seed);
        let writers = config.writers.max(1);
        let producers = config.producers.clamp(1, writers);
        // Writers trace at different rates.
        let weights: Vec<usize> = (0..writers)
            .map(|w| [4, 3, 2, 2, 1, 1, 1, 2][w as usize % 8])
            .collect();
        let total_weight: usize = weights.iter().sum();
        let mut streams = Vec::new();
        let mut packets = BTreeMap::new();
        let mut chunks_per_sequence = BTreeMap::new();
        for w in 0..writers {
            let producer = 1 + w % producers;
            let writer = 1 + w / producers;
            let want = (config.chunks * weights[w as usize] / total_weight).max(1);
            let (chunks, stream) = write_stream(&mut rng, want);
            chunks_per_sequence.insert((producer, writer), chunks.len() as u32);
            packets.insert((producer, writer), stream);
            streams.push((producer, writer, chunks.into_iter()));
        }
        // Interleave the writers' commits, each writer's chunks in order,
        // picking writers in proportion to what they have left.
        let mut left: Vec<usize> = streams.iter().map(|s| s.2.len()).collect();
        let mut bytes = Vec::with_capacity(left.iter().sum::<usize>() * CHUNK_PAYLOAD);
        let mut chunks = Vec::new();
        loop {
            let total: usize = left.iter().sum();
            if total == 0 {
                break;
            }
            let mut pick = rng.below(total as u64) as usize;
            let i = left
                .iter()
                .position(|&n| {
                    if pick < n {
                        true
                    } else {
                        pick -= n;
                        false
                    }
                })
                .expect("a writer with chunks left");
            left[i] -= 1;
            let (producer, writer, it) = &mut streams[i];
            let c = it.next().expect("chunks left");
            let start = bytes.len();
            bytes.extend_from_slice(&c.payload);
            chunks.push(WorkloadChunk {
                producer: *producer,
                uid: 1000 + u32::from(*producer),
                writer: *writer,
                chunk_id: c.id,
                num_fragments: c.fragments,
                flags: c.flags,
                range: start..bytes.len(),
            });
        }
        Workload {
            bytes,
            chunks,
            packets,
            chunks_per_sequence,
        }
    }

    /// The payload of `chunk`.
    pub fn payload(&self, chunk: &WorkloadChunk) -> &[u8] {
        &self.bytes[chunk.range.clone()]
    }

    /// Total payload bytes.
    pub fn payload_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Total bytes of packets (without fragment headers).
    pub fn packet_bytes(&self) -> usize {
        self.packets.values().flatten().map(Vec::len).sum()
    }

    /// Number of packets.
    pub fn packet_count(&self) -> usize {
        self.packets.values().map(Vec::len).sum()
    }
}

/// A chunk being filled by a writer.
struct Chunk {
    id: u32,
    payload: Vec<u8>,
    fragments: u16,
    flags: u8,
}

impl Chunk {
    fn new(id: u32, flags: u8) -> Chunk {
        Chunk {
            id,
            payload: Vec::with_capacity(CHUNK_PAYLOAD),
            fragments: 0,
            flags,
        }
    }

    fn room(&self) -> usize {
        CHUNK_PAYLOAD - self.payload.len()
    }
}

/// One writer's packets until they fill `want` chunks; returns the chunks
/// (payloads zero-filled to the chunk size) and the packets.
fn write_stream(rng: &mut Rng, want: usize) -> (Vec<Chunk>, Vec<Vec<u8>>) {
    let mut chunks = vec![Chunk::new(0, 0)];
    let mut packets = Vec::new();
    let mut ts = 1_700_000_000_000_000_000 + rng.below(1 << 30);
    loop {
        ts += 1 + rng.below(20_000);
        let packet = random_packet(rng, ts);
        let mut rest: &[u8] = &packet;
        let mut whole = true;
        loop {
            let c = chunks.last_mut().expect("a chunk");
            // A packet starts only where its 4-byte header and a byte fit.
            if c.room() < 5 {
                let id = c.id + 1;
                chunks.push(Chunk::new(id, 0));
                continue;
            }
            let fits = rest.len() + 4 <= c.room();
            if whole && fits && rest.len() < 127 {
                c.payload.push(rest.len() as u8);
                c.payload.extend_from_slice(rest);
                c.fragments += 1;
                break;
            }
            let n = rest.len().min(c.room() - 4);
            c.payload.extend_from_slice(&redundant_varint4(n as u32));
            c.payload.extend_from_slice(&rest[..n]);
            c.fragments += 1;
            rest = &rest[n..];
            if rest.is_empty() {
                break;
            }
            whole = false;
            c.flags |= LAST_CONTINUES;
            let id = c.id + 1;
            chunks.push(Chunk::new(id, FIRST_CONTINUES));
        }
        packets.push(packet);
        // Stop at a packet boundary once the wanted chunks are started.
        if chunks.len() >= want {
            break;
        }
    }
    for c in &mut chunks {
        c.payload.resize(CHUNK_PAYLOAD, 0);
    }
    (chunks, packets)
}

/// A size varint in the redundant 4-byte form.
fn redundant_varint4(v: u32) -> [u8; 4] {
    [
        (v & 0x7F) as u8 | 0x80,
        ((v >> 7) & 0x7F) as u8 | 0x80,
        ((v >> 14) & 0x7F) as u8 | 0x80,
        ((v >> 21) & 0x7F) as u8,
    ]
}

/// One TracePacket: 88% track events of 40–120 bytes, 11.5% larger events
/// or interned data up to 1 KiB, 0.5% process trees of 8–20 KiB.
fn random_packet(rng: &mut Rng, ts: u64) -> Vec<u8> {
    let roll = rng.below(1000);
    let target = if roll < 880 {
        40 + rng.below(81) as usize
    } else if roll < 995 {
        121 + rng.below(904) as usize
    } else {
        8 * 1024 + rng.below(12 * 1024 + 1) as usize
    };
    let mut p = Vec::with_capacity(target + 16);
    if target >= 8 * 1024 {
        process_tree(rng, &mut p, ts, target);
    } else if roll % 7 == 0 && target > 200 {
        interned_data(rng, &mut p, ts, target);
    } else {
        track_event(rng, &mut p, ts, target);
    }
    p
}

/// `timestamp` (8), `sequence_flags` (13, SEQ_NEEDS_INCREMENTAL_STATE),
/// `track_event` (11) {type 9, track_uuid 11, name_iid 10, category_iids 3,
/// debug_annotations 4 {name_iid 1, int_value 4 | string_value 6}}; the
/// string annotation's length brings the packet to `target` bytes.
fn track_event(rng: &mut Rng, p: &mut Vec<u8>, ts: u64, target: usize) {
    let ty = 1 + rng.below(3);
    let uuid = 0x9a3f_1c2b_7d4e_5f60 ^ rng.below(64);
    let name = 1 + rng.below(300);
    let category = 1 + rng.below(12);
    let (arg1, value) = (1 + rng.below(40), rng.below(1 << 40));
    let arg2 = 1 + rng.below(40);
    let text = text_bytes(rng, target);
    let build = |p: &mut Vec<u8>, text: &[u8]| {
        p.clear();
        varint_field(p, 8, ts);
        varint_field(p, 13, 2);
        let mut te = Vec::new();
        varint_field(&mut te, 9, ty);
        varint_field(&mut te, 11, uuid);
        varint_field(&mut te, 10, name);
        varint_field(&mut te, 3, category);
        let mut da = Vec::new();
        varint_field(&mut da, 1, arg1);
        varint_field(&mut da, 4, value);
        bytes_field(&mut te, 4, &da);
        da.clear();
        varint_field(&mut da, 1, arg2);
        bytes_field(&mut da, 6, text);
        bytes_field(&mut te, 4, &da);
        bytes_field(p, 11, &te);
    };
    build(p, &text[..1]);
    let len = (target + 1).saturating_sub(p.len()).clamp(1, target);
    build(p, &text[..len]);
}

/// `timestamp`, `interned_data` (12) {event_names 2 {iid 1, name 2}…}.
fn interned_data(rng: &mut Rng, p: &mut Vec<u8>, ts: u64, target: usize) {
    varint_field(p, 8, ts);
    let mut data = Vec::new();
    while p.len() + data.len() + 4 < target {
        let mut name = Vec::new();
        varint_field(&mut name, 1, 1 + rng.below(5000));
        let len = (8 + rng.below(40) as usize)
            .min(target.saturating_sub(p.len() + data.len() + 12).max(1));
        bytes_field(&mut name, 2, &text_bytes(rng, len));
        bytes_field(&mut data, 2, &name);
    }
    bytes_field(p, 12, &data);
}

/// `timestamp`, `process_tree` (2) {processes 1 {pid 1, ppid 2, cmdline 3}…}.
fn process_tree(rng: &mut Rng, p: &mut Vec<u8>, ts: u64, target: usize) {
    varint_field(p, 8, ts);
    let mut tree = Vec::new();
    while p.len() + tree.len() + 4 < target {
        let mut proc_ = Vec::new();
        varint_field(&mut proc_, 1, 1 + rng.below(60_000));
        varint_field(&mut proc_, 2, 1 + rng.below(2_000));
        let len = (10 + rng.below(60) as usize)
            .min(target.saturating_sub(p.len() + tree.len() + 16).max(1));
        bytes_field(&mut proc_, 3, &text_bytes(rng, len));
        bytes_field(&mut tree, 1, &proc_);
    }
    bytes_field(p, 2, &tree);
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_field(out: &mut Vec<u8>, id: u32, v: u64) {
    varint(out, u64::from(id) << 3);
    varint(out, v);
}

fn bytes_field(out: &mut Vec<u8>, id: u32, bytes: &[u8]) {
    varint(out, (u64::from(id) << 3) | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// `len` printable bytes.
fn text_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz_/.0123456789";
    (0..len)
        .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize])
        .collect()
}

/// splitmix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_reassemble_into_the_packets() {
        let w = Workload::generate(WorkloadConfig {
            chunks: 300,
            ..WorkloadConfig::default()
        });
        assert!(w.chunks.len() >= 290);
        // Reassemble each sequence from its chunks, trusting the flags.
        /// Per sequence: packets so far, the packet being reassembled, the
        /// next chunk id.
        type State = (Vec<Vec<u8>>, Vec<u8>, u32);
        let mut seqs: BTreeMap<(u16, u16), State> = BTreeMap::new();
        for c in &w.chunks {
            let (out, partial, next_id) = seqs.entry((c.producer, c.writer)).or_default();
            assert_eq!(c.chunk_id, *next_id, "chunks of a writer commit in order");
            *next_id += 1;
            let payload = w.payload(c);
            assert_eq!(payload.len(), CHUNK_PAYLOAD);
            let mut pos = 0;
            for i in 0..c.num_fragments {
                let mut size = 0usize;
                let mut shift = 0;
                loop {
                    let b = payload[pos];
                    pos += 1;
                    size |= usize::from(b & 0x7F) << shift;
                    shift += 7;
                    if b & 0x80 == 0 {
                        break;
                    }
                }
                let frag = &payload[pos..pos + size];
                pos += size;
                let continues = i + 1 == c.num_fragments && c.flags & LAST_CONTINUES != 0;
                let continued = i == 0 && c.flags & FIRST_CONTINUES != 0;
                assert_eq!(continued, !partial.is_empty());
                partial.extend_from_slice(frag);
                if !continues {
                    out.push(std::mem::take(partial));
                }
            }
        }
        for (key, (out, partial, _)) in seqs {
            assert!(partial.is_empty());
            assert_eq!(out, w.packets[&key], "sequence {key:?}");
        }
        let sizes: Vec<usize> = w.packets.values().flatten().map(Vec::len).collect();
        assert!(sizes.iter().any(|&s| s > 8 * 1024));
        let small = sizes.iter().filter(|&&s| (40..=120).contains(&s)).count();
        assert!(small * 10 > sizes.len() * 8, "mostly small packets");
    }
}
