//! Known answer from a recorded genuine Perfetto session (`tests/vectors`):
//! the 75 chunks the genuine C SDK producer committed (whole SMB pages as the
//! genuine service was about to read them) and its patches, fed to our
//! service path in commit order (SMB view → chunk copied out → TraceBuffer →
//! patches), must give back the 62 data packets of the trace the genuine
//! service wrote, byte for byte, once the fields a service appends to each
//! packet are set aside.

use crate::service_support;

use std::collections::BTreeMap;

use protozero::Decoder;
use service_support::{hex, vectors};
use zerotrace_core::abi::SharedMemoryAbi;
use zerotrace_core::protocol::CommitDataRequest;
use zerotrace_core::service::__private::{
    ChunkMeta, FillPolicy, SequenceKey, TraceBuffer, validate,
};
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};

/// Fields the service appends to every producer packet.
const SERVICE_APPENDED: [u32; 4] = [3, 10, 42, 79];

/// Each producer packet of the genuine trace, per trusted sequence id, with
/// the service-appended trailing fields removed.
fn genuine_packets() -> BTreeMap<u64, Vec<Vec<u8>>> {
    let trace = std::fs::read(vectors().join("genuine-session.pftrace")).expect("trace vector");
    let mut out: BTreeMap<u64, Vec<Vec<u8>>> = BTreeMap::new();
    for field in Decoder::new(&trace) {
        let packet = field
            .expect("well-formed trace")
            .as_bytes()
            .expect("packet");
        let mut seq = 0;
        let mut keep = packet.len();
        let mut d = Decoder::new(packet);
        let mut trailing = true;
        let mut fields = Vec::new();
        while let Some(f) = d.read_field() {
            let f = f.expect("well-formed packet");
            fields.push((f.id, d.offset()));
            if f.id == 10 {
                seq = f.as_u64().expect("sequence id");
            }
        }
        // Strip the run of service fields at the end.
        for i in (0..fields.len()).rev() {
            if trailing && SERVICE_APPENDED.contains(&fields[i].0) {
                keep = if i == 0 { 0 } else { fields[i - 1].1 };
            } else {
                trailing = false;
            }
        }
        if seq != 1 {
            out.entry(seq).or_default().push(packet[..keep].to_vec());
        }
    }
    out
}

#[test]
fn genuine_chunks_reassemble_into_the_genuine_packets() {
    let session = std::fs::read_to_string(vectors().join("genuine-producer-session.jsonl"))
        .expect("producer session vector (tests/vectors)");
    let mut buffer = TraceBuffer::new(4 << 20, FillPolicy::RingBuffer).unwrap();
    let page_mem = HeapShm::new(4096).unwrap();
    // SAFETY: `page_mem` outlives the view; this test is its only user.
    let abi = unsafe { SharedMemoryAbi::new(page_mem.as_ptr(), 4096, 4096) }.unwrap();
    let (mut moves, mut patches) = (0, 0);
    let mut payload = Vec::new();
    for line in session.lines() {
        let m: serde_json::Value = serde_json::from_str(line).expect("json line");
        if m["method"] != "CommitData" || m["dir"] != "c2s" {
            continue;
        }
        assert_eq!(m["page_size"].as_u64(), Some(4096));
        for mv in m["moved_pages"].as_array().expect("moves") {
            let page = hex(mv["page_hex"].as_str().expect("page bytes"));
            assert_eq!(page.len(), 4096);
            // SAFETY: 4096 bytes into the 4096-byte region, which no chunk
            // or other thread is using.
            unsafe { std::ptr::copy_nonoverlapping(page.as_ptr(), page_mem.as_ptr(), 4096) };
            let index = mv["chunk"].as_u64().expect("chunk index") as usize;
            let chunk = abi
                .try_acquire_chunk_for_reading(0, index)
                .expect("complete chunk");
            let h = chunk.header();
            chunk.copy_payload(&mut payload);
            abi.release_chunk_as_free(chunk).expect("free");
            let meta = ChunkMeta {
                sequence: SequenceKey {
                    producer: 1,
                    writer: h.writer_id,
                },
                chunk_id: h.chunk_id,
                num_fragments: h.packets.count,
                flags: h.packets.flags,
                complete: true,
            };
            buffer.copy_chunk(&meta, &payload);
            moves += 1;
        }
        let req = CommitDataRequest::decode(&hex(m["args_hex"].as_str().expect("args")))
            .expect("our decoder reads the genuine request");
        for p in &req.chunks_to_patch {
            let data: Vec<(u32, [u8; 4])> = p.patches.iter().map(|d| (d.offset, d.data)).collect();
            let seq = SequenceKey {
                producer: 1,
                writer: p.writer_id as u16,
            };
            assert!(buffer.try_patch(seq, p.chunk_id, &data, p.has_more_patches));
            patches += data.len();
        }
    }
    assert_eq!(moves, 75);
    assert_eq!(patches, 3);

    let mut ours: BTreeMap<u16, Vec<Vec<u8>>> = BTreeMap::new();
    buffer.begin_read();
    let mut out = Vec::new();
    while let Some(info) = buffer.read_next_packet(&mut out) {
        // As in the genuine trace: each sequence's first packet carries
        // previous_packet_dropped = 1, no other packet is flagged.
        let first = !ours.contains_key(&info.sequence.writer);
        assert_eq!(
            info.loss.0,
            u32::from(first),
            "no loss in the recorded session"
        );
        assert_eq!(
            validate(&out),
            Ok(()),
            "the genuine producer uses no reserved field"
        );
        ours.entry(info.sequence.writer)
            .or_default()
            .push(std::mem::take(&mut out));
    }
    let genuine = genuine_packets();
    let total: usize = genuine.values().map(Vec::len).sum();
    assert_eq!(total, 62);
    let mut ours: Vec<Vec<Vec<u8>>> = ours.into_values().collect();
    let mut theirs: Vec<Vec<Vec<u8>>> = genuine.into_values().collect();
    ours.sort_by_key(|s| std::cmp::Reverse(s.len()));
    theirs.sort_by_key(|s| std::cmp::Reverse(s.len()));
    assert_eq!(
        ours.iter().map(Vec::len).collect::<Vec<_>>(),
        theirs.iter().map(Vec::len).collect::<Vec<_>>()
    );
    for (s, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                x == y,
                "sequence {s} packet {i}: {} vs {} bytes",
                x.len(),
                y.len()
            );
        }
    }
    assert_eq!(buffer.stats().patches_succeeded, 3);
}
