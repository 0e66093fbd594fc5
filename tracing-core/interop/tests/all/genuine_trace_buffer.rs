//! Our service trace buffer against Perfetto's own `TraceBufferV1` and
//! `TraceBufferV2` (compiled from the amalgamation, see `build.rs`): the same
//! chunks, the same read-out, the same packets.
//!
//! * DISCARD, everything fits: all three give back every packet of every
//!   sequence, byte for byte, in sequence order.
//! * RING, several times the buffer written: each keeps the newest chunks of
//!   each sequence, so what each reads back is a suffix of that sequence's
//!   packets, byte for byte. The suffixes differ in length because each
//!   stores a chunk in a different footprint (ours: the 4,080-byte payload;
//!   V1: a 16-byte header plus the payload; V2: a 16-byte header plus only the
//!   bytes up to the last fragment), so each evicts a different number of
//!   chunks.
//! * DISCARD drained while recording: ours and V1 refuse a chunk only when it
//!   would overwrite unread data, so reading periodically keeps the session
//!   recording; V2 stops at the end of its buffer however much was read.

use std::collections::BTreeMap;

use zerotrace_core::abi::ChunkFlags;
use zerotrace_core::service::__private::{ChunkMeta, FillPolicy, SequenceKey, TraceBuffer};
use zerotrace_interop::genuine::{BufferVersion, GenuineChunk, GenuinePolicy, GenuineTraceBuffer};
use zerotrace_interop::workload::{CHUNK_PAYLOAD, Workload, WorkloadChunk, WorkloadConfig};

/// Packets read back per (producer, writer): bytes and loss flag.
type ReadOut = BTreeMap<(u16, u16), Vec<(Vec<u8>, u32)>>;

fn meta(c: &WorkloadChunk) -> ChunkMeta {
    ChunkMeta {
        sequence: SequenceKey {
            producer: c.producer,
            writer: c.writer,
        },
        chunk_id: c.chunk_id,
        num_fragments: c.num_fragments,
        flags: ChunkFlags::from_bits(c.flags),
        complete: true,
    }
}

fn genuine_chunk(c: &WorkloadChunk) -> GenuineChunk {
    GenuineChunk {
        producer_id: c.producer,
        producer_uid: c.uid,
        writer_id: c.writer,
        chunk_id: c.chunk_id,
        num_fragments: c.num_fragments,
        flags: c.flags,
        complete: true,
    }
}

fn read_ours(buf: &mut TraceBuffer, into: &mut ReadOut) {
    buf.begin_read();
    let mut out = Vec::new();
    while let Some(info) = buf.read_next_packet(&mut out) {
        let key = (info.sequence.producer, info.sequence.writer);
        into.entry(key)
            .or_default()
            .push((std::mem::take(&mut out), info.loss.0));
    }
}

fn read_genuine(buf: &mut GenuineTraceBuffer, w: &Workload, into: &mut ReadOut) {
    buf.begin_read();
    let mut out = Vec::new();
    while let Some(info) = buf.read_next_packet(&mut out) {
        let key = (info.producer_id, info.writer_id);
        assert_eq!(
            info.producer_uid,
            1000 + u32::from(key.0),
            "trusted uid kept"
        );
        assert!(w.packets.contains_key(&key), "a known sequence: {key:?}");
        into.entry(key)
            .or_default()
            .push((std::mem::take(&mut out), info.loss));
    }
}

fn ours(w: &Workload, size: usize, policy: FillPolicy) -> ReadOut {
    let mut buf = TraceBuffer::new(size, policy).expect("buffer");
    for c in &w.chunks {
        buf.copy_chunk(&meta(c), w.payload(c));
    }
    let mut out = ReadOut::new();
    read_ours(&mut buf, &mut out);
    out
}

fn genuine(w: &Workload, version: BufferVersion, size: usize, policy: GenuinePolicy) -> ReadOut {
    let mut buf = GenuineTraceBuffer::new(version, size, policy).expect("genuine buffer");
    for c in &w.chunks {
        buf.copy_chunk(&genuine_chunk(c), w.payload(c));
    }
    let mut out = ReadOut::new();
    read_genuine(&mut buf, w, &mut out);
    out
}

fn bytes_only(r: &ReadOut) -> BTreeMap<(u16, u16), Vec<Vec<u8>>> {
    r.iter()
        .map(|(k, v)| (*k, v.iter().map(|p| p.0.clone()).collect()))
        .collect()
}

fn workload(chunks: usize) -> Workload {
    Workload::generate(WorkloadConfig {
        chunks,
        ..WorkloadConfig::default()
    })
}

#[test]
fn discard_all_three_read_back_every_packet() {
    let w = workload(600);
    // V1 needs a 16-byte header per chunk; leave a little more.
    let size = w.chunks.len() * (CHUNK_PAYLOAD + 16) + 64 * 1024;
    let ours = ours(&w, size, FillPolicy::Discard);
    let v1 = genuine(&w, BufferVersion::V1, size, GenuinePolicy::Discard);
    let v2 = genuine(&w, BufferVersion::V2, size, GenuinePolicy::Discard);
    assert_eq!(bytes_only(&ours), w.packets, "ours");
    assert_eq!(bytes_only(&v1), w.packets, "Perfetto V1");
    assert_eq!(bytes_only(&v2), w.packets, "Perfetto V2");
    // Nothing was lost. V1 (the genuine service's default buffer) and ours
    // flag the first packet read of each sequence (nothing earlier can be
    // checked against; the recorded genuine trace shows the same); V2 flags
    // nothing when the first chunk is chunk 0.
    let flagged = |r: &[(Vec<u8>, u32)]| -> Vec<usize> {
        r.iter()
            .enumerate()
            .filter(|(_, p)| p.1 != 0)
            .map(|(i, _)| i)
            .collect()
    };
    for key in ours.keys() {
        assert_eq!(flagged(&ours[key]), [0], "ours {key:?}");
        assert_eq!(flagged(&v1[key]), [0], "V1 {key:?}");
        assert!(flagged(&v2[key]).is_empty(), "V2 {key:?}");
    }
}

/// The packets of `read` are the last ones of `all`, with the loss flag on
/// the first one; returns how many.
fn check_suffix(who: &str, key: (u16, u16), read: &[(Vec<u8>, u32)], all: &[Vec<u8>]) -> usize {
    assert!(!read.is_empty(), "{who} {key:?}: something survives");
    assert!(
        read.len() < all.len(),
        "{who} {key:?}: something was overwritten"
    );
    let skip = all.len() - read.len();
    for (i, (p, _)) in read.iter().enumerate() {
        assert!(
            *p == all[skip + i],
            "{who} {key:?}: packet {i} of {} is not packet {} of the sequence",
            read.len(),
            skip + i
        );
    }
    assert_ne!(read[0].1, 0, "{who} {key:?}: the overwrite is reported");
    read.len()
}

#[test]
fn ring_each_reads_back_the_newest_packets_of_every_sequence() {
    let w = workload(1200);
    let size = 1 << 20; // about a quarter of what is written
    let ours = ours(&w, size, FillPolicy::RingBuffer);
    let v1 = genuine(&w, BufferVersion::V1, size, GenuinePolicy::RingBuffer);
    let v2 = genuine(&w, BufferVersion::V2, size, GenuinePolicy::RingBuffer);
    let mut counts = BTreeMap::new();
    for (key, all) in &w.packets {
        let n = [("ours", &ours), ("V1", &v1), ("V2", &v2)]
            .map(|(who, r)| check_suffix(who, *key, &r[key], all));
        // Ours stores a chunk in 4,080 bytes, V1 in 4,096: ours never keeps
        // fewer packets.
        assert!(n[0] >= n[1], "{key:?}: ours {} < V1 {}", n[0], n[1]);
        counts.insert(*key, n);
    }
    let total = |i: usize| counts.values().map(|n| n[i]).sum::<usize>();
    eprintln!(
        "packets read back after a ring wrote {} chunks into {} KiB: ours {}, V1 {}, V2 {}",
        w.chunks.len(),
        size / 1024,
        total(0),
        total(1),
        total(2)
    );
}

#[test]
fn discard_keeps_recording_while_drained_like_v1() {
    let w = workload(600);
    // A quarter of what is written, read after every 64 chunks.
    let size = w.chunks.len() * (CHUNK_PAYLOAD + 16) / 4;
    let mut ours = TraceBuffer::new(size, FillPolicy::Discard).expect("buffer");
    let mut v1 = GenuineTraceBuffer::new(BufferVersion::V1, size, GenuinePolicy::Discard)
        .expect("genuine buffer");
    let mut v2 = GenuineTraceBuffer::new(BufferVersion::V2, size, GenuinePolicy::Discard)
        .expect("genuine buffer");
    let (mut r_ours, mut r_v1, mut r_v2) = (ReadOut::new(), ReadOut::new(), ReadOut::new());
    for (i, c) in w.chunks.iter().enumerate() {
        ours.copy_chunk(&meta(c), w.payload(c));
        v1.copy_chunk(&genuine_chunk(c), w.payload(c));
        v2.copy_chunk(&genuine_chunk(c), w.payload(c));
        if i % 64 == 63 {
            read_ours(&mut ours, &mut r_ours);
            read_genuine(&mut v1, &w, &mut r_v1);
            read_genuine(&mut v2, &w, &mut r_v2);
        }
    }
    read_ours(&mut ours, &mut r_ours);
    read_genuine(&mut v1, &w, &mut r_v1);
    read_genuine(&mut v2, &w, &mut r_v2);
    assert_eq!(bytes_only(&r_ours), w.packets, "ours records it all");
    assert_eq!(bytes_only(&r_v1), w.packets, "V1 records it all");
    assert_eq!(ours.stats().chunks_discarded, 0);
    assert_eq!(v1.stats()[18], 0, "V1 chunks_discarded");
    let v2_read: usize = r_v2.values().map(Vec::len).sum();
    assert!(
        v2_read < w.packet_count() && v2.stats()[18] > 0,
        "V2 stops at the end of its buffer: {v2_read} of {} packets",
        w.packet_count()
    );
}
