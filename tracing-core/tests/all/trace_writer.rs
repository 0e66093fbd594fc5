//! Known-answer tests of what the TraceWriter leaves in the shared memory
//! buffer: chunk headers, fragment headers (compact and 4-byte), continuation
//! flags, patch offsets, the inflated count fix-up, and drop mode.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use zerotrace_core::abi::{ChunkHeader, FragmentIter, PAGE_HEADER_SIZE, SharedMemoryAbi};
use zerotrace_core::producer::{
    ArbiterConfig, BufferExhaustedPolicy, ChannelCommitSink, SharedMemoryArbiter, SinkMessage,
    StallConfig,
};
use zerotrace_core::protocol::{ChunkToMove, ChunkToPatch, CommitDataRequest, PatchData};
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};

struct Setup {
    region: Arc<HeapShm>,
    arbiter: Arc<SharedMemoryArbiter>,
    rx: mpsc::Receiver<SinkMessage>,
}

fn setup(size: usize) -> Setup {
    setup_with(size, ArbiterConfig::default())
}

fn setup_with(size: usize, config: ArbiterConfig) -> Setup {
    let region = Arc::new(HeapShm::new(size).unwrap());
    let (sink, rx) = ChannelCommitSink::new();
    let arbiter = SharedMemoryArbiter::new(region.clone(), 4096, Arc::new(sink), config).unwrap();
    Setup {
        region,
        arbiter,
        rx,
    }
}

fn spanning_packet_data() -> Vec<u8> {
    (0..5000u32).map(|i| (i % 251) as u8).collect()
}

fn commits(rx: &mpsc::Receiver<SinkMessage>) -> Vec<CommitDataRequest> {
    rx.try_iter()
        .filter_map(|m| match m {
            SinkMessage::Commit(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn chunk_bytes(region: &HeapShm, page: usize, len: usize) -> Vec<u8> {
    let start = page * 4096 + PAGE_HEADER_SIZE;
    // SAFETY: the tests read the buffer only after their writers stopped.
    let s = unsafe { region.snapshot() };
    s[start..start + len].to_vec()
}

fn page_word(region: &HeapShm, page: usize) -> u32 {
    // SAFETY: as in `chunk_bytes`.
    let s = unsafe { region.snapshot() };
    u32::from_le_bytes(s[page * 4096..page * 4096 + 4].try_into().unwrap())
}

#[test]
fn small_packet_compact_header_and_inflated_count() {
    let s = setup(8192);
    let mut w = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    assert_eq!(w.writer_id(), 1);
    w.write_packet(|p| p.append_uint32(1, 42));
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    w.flush(Some(Box::new(move || d.store(true, Ordering::SeqCst))));
    assert!(done.load(Ordering::SeqCst));

    // Header: chunk 0, writer 1, 2 packets (1 + the inflated count), no flags.
    // Payload: compact size 5, first_packet_on_sequence (87: true), field 1 = 42,
    // then the 00 empty fragment that makes the inflated count truthful.
    // (Bytes after it are stale leftovers of the compaction move: unused space.)
    assert_eq!(
        chunk_bytes(&s.region, 0, 15),
        [
            0, 0, 0, 0, 1, 0, 2, 0, 0x05, 0xB8, 0x05, 0x01, 0x08, 0x2A, 0x00
        ]
    );
    assert_eq!(page_word(&s.region, 0), 0x1000_0003);
    let msgs: Vec<SinkMessage> = s.rx.try_iter().collect();
    assert_eq!(
        msgs,
        [
            SinkMessage::RegisterTraceWriter {
                writer_id: 1,
                target_buffer: 1
            },
            SinkMessage::Commit(CommitDataRequest {
                chunks_to_move: vec![ChunkToMove {
                    page: 0,
                    chunk: 0,
                    target_buffer: 1,
                    ..Default::default()
                }],
                ..Default::default()
            }),
        ]
    );
    drop(w);
    assert_eq!(
        s.rx.try_iter().collect::<Vec<_>>(),
        [SinkMessage::UnregisterTraceWriter { writer_id: 1 }]
    );
}

#[test]
fn four_byte_header_without_compaction_and_packet_reuse_of_inflated_slot() {
    let s = setup(8192);
    let mut w = s
        .arbiter
        .create_trace_writer(0, BufferExhaustedPolicy::Drop)
        .unwrap();
    w.set_compaction(false);
    w.write_packet(|p| p.append_uint32(1, 1));
    w.write_packet(|p| p.append_uint32(1, 2));
    w.flush(None);
    // Two packets: count 2 (+1 inflated after the second), second packet reused
    // the slot inflated by the first; fix-up 00 at the end.
    assert_eq!(
        chunk_bytes(&s.region, 0, 24),
        [
            0, 0, 0, 0, 1, 0, 3, 0, // header
            0x85, 0x80, 0x80, 0x00, 0xB8, 0x05, 0x01, 0x08, 0x01, // packet 1
            0x82, 0x80, 0x80, 0x00, 0x08, 0x02, // packet 2
            0x00, // empty fragment
        ]
    );
}

#[test]
fn packet_spanning_chunks_sets_flags_and_patches_payload_offsets() {
    // Patches go to the service (no direct SMB patching).
    let s = setup_with(
        8192,
        ArbiterConfig {
            direct_patching: false,
            ..ArbiterConfig::default()
        },
    );
    let mut w = s
        .arbiter
        .create_trace_writer(2, BufferExhaustedPolicy::Drop)
        .unwrap();
    let data = spanning_packet_data();
    w.write_packet(|p| {
        let mut nested = p.begin_nested(2);
        nested.append_bytes(1, &data);
    });
    // Chunk 0: count 1, LastPacketContinuesOnNextChunk | ChunkNeedsPatching
    // (0x0800 | 0x1000); fragment of 4076 bytes = 4080-byte payload minus its header.
    let c0 = chunk_bytes(&s.region, 0, 20);
    assert_eq!(&c0[..8], &[0, 0, 0, 0, 1, 0, 0x01, 0x18]);
    assert_eq!(&c0[8..12], &[0xEC, 0x9F, 0x80, 0x00]); // 4076
    assert_eq!(&c0[12..15], &[0xB8, 0x05, 0x01]);
    // Tag of field 2, then the nested length slot still holding its redundant
    // zero (the real length is patched out of band).
    assert_eq!(&c0[15..20], &[0x12, 0x80, 0x80, 0x80, 0x00]);
    // Chunk 1: count 1 + inflated = 2, FirstPacketContinuesFromPrevChunk (0x0400),
    // continuation fragment of 935 bytes, then the 00 fix-up once flushed.
    w.flush(None);
    let c1 = chunk_bytes(&s.region, 1, 12 + 936);
    assert_eq!(&c1[..8], &[1, 0, 0, 0, 1, 0, 0x02, 0x04]);
    assert_eq!(&c1[8..12], &[0xA7, 0x87, 0x80, 0x00]); // 935
    assert_eq!(c1[12 + 935], 0x00);
    // The patch: chunk 0, payload offset 8 (4-byte fragment header + 3 bytes of
    // field 87 + 1 byte of tag), nested size 1 + 2 + 5000 = 5003.
    let reqs = commits(&s.rx);
    assert_eq!(
        reqs,
        [
            CommitDataRequest {
                chunks_to_move: vec![ChunkToMove {
                    page: 0,
                    chunk: 0,
                    target_buffer: 2,
                    ..Default::default()
                }],
                chunks_to_patch: vec![ChunkToPatch {
                    target_buffer: 2,
                    writer_id: 1,
                    chunk_id: 0,
                    patches: vec![PatchData {
                        offset: 8,
                        data: [0x8B, 0xA7, 0x80, 0x00]
                    }],
                    has_more_patches: false,
                }],
                flush_request_id: None,
            },
            CommitDataRequest {
                chunks_to_move: vec![ChunkToMove {
                    page: 1,
                    chunk: 0,
                    target_buffer: 2,
                    ..Default::default()
                }],
                ..Default::default()
            },
        ]
    );
    // The reference reader puts the packet back together, byte for byte.
    // SAFETY: the region outlives the view.
    let abi = unsafe { SharedMemoryAbi::new(s.region.as_ptr(), 8192, 4096) }.unwrap();
    let mut r = common::ReferenceReader::default();
    for q in &reqs {
        r.process_commit(&abi, q);
    }
    let (out, errors) = r.reassemble();
    assert!(errors.is_empty(), "{errors:?}");
    let mut want = vec![
        0xB8, 0x05, 0x01, 0x12, 0x8B, 0xA7, 0x80, 0x00, 0x0A, 0x88, 0x27,
    ];
    want.extend_from_slice(&data);
    assert_eq!(out[&1].packets, [want]);
}

#[test]
fn direct_patching_fills_the_slot_in_place_and_clears_the_flag() {
    let s = setup(8192);
    let mut w = s
        .arbiter
        .create_trace_writer(2, BufferExhaustedPolicy::Drop)
        .unwrap();
    let data = spanning_packet_data();
    w.write_packet(|p| {
        let mut nested = p.begin_nested(2);
        nested.append_bytes(1, &data);
    });
    // Chunk 0 was still in the uncommitted batch when the nested message
    // ended: the 5003 length sits at payload offset 8, ChunkNeedsPatching is
    // cleared (only 0x0800 remains) and the chunk is complete.
    let c0 = chunk_bytes(&s.region, 0, 20);
    assert_eq!(&c0[..8], &[0, 0, 0, 0, 1, 0, 0x01, 0x08]);
    assert_eq!(&c0[15..20], &[0x12, 0x8B, 0xA7, 0x80, 0x00]);
    assert_eq!(page_word(&s.region, 0), 0x1000_0003);
    assert_eq!(s.arbiter.stats().patches_applied_directly, 1);
    assert!(commits(&s.rx).is_empty(), "no urgent commit was needed");
    w.flush(None);
    let reqs = commits(&s.rx);
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].chunks_to_move.len(), 2);
    assert!(reqs[0].chunks_to_patch.is_empty());
    // SAFETY: the region outlives the view.
    let abi = unsafe { SharedMemoryAbi::new(s.region.as_ptr(), 8192, 4096) }.unwrap();
    let mut r = common::ReferenceReader::default();
    r.process_commit(&abi, &reqs[0]);
    let (out, errors) = r.reassemble();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(out[&1].packets[0].len(), 3 + 1 + 4 + 1 + 2 + 5000);
}

#[test]
fn flush_before_the_patch_sends_the_chunk_unpatched_then_the_patch() {
    // A 3-page SMB so that the second chunk's return doesn't reach half the SMB.
    let s = setup(3 * 4096);
    let mut w = s
        .arbiter
        .create_trace_writer(2, BufferExhaustedPolicy::Drop)
        .unwrap();
    let data = spanning_packet_data();
    let mut h = w.new_trace_packet();
    let mut root = h.root();
    let mut nested = root.begin_nested(2);
    nested.append_bytes(1, &data);
    // Someone (a stalled writer, the IPC thread) flushes while the nested
    // message is still open: chunk 0 leaves with its flag set.
    s.arbiter.flush_pending_commit_data_requests(None);
    assert_eq!(page_word(&s.region, 0), 0x1000_0003);
    assert_eq!(chunk_bytes(&s.region, 0, 8)[7], 0x18);
    drop(nested);
    drop(root);
    drop(h);
    let reqs = commits(&s.rx);
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].chunks_to_move.len(), 1);
    assert_eq!(
        reqs[1].chunks_to_patch,
        [ChunkToPatch {
            target_buffer: 2,
            writer_id: 1,
            chunk_id: 0,
            patches: vec![PatchData {
                offset: 8,
                data: [0x8B, 0xA7, 0x80, 0x00]
            }],
            has_more_patches: false,
        }]
    );
}

#[test]
fn drop_mode_writes_sentinel_and_flags_the_next_packet() {
    // One page: after the first chunk is taken, nothing is free.
    let s = setup(4096);
    let mut w = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    w.write_packet(|p| p.append_uint32(1, 7));
    // This packet does not fit in what is left of the chunk: it is abandoned.
    w.write_packet(|p| p.append_bytes(2, &[0xAB; 5000]));
    assert!(w.is_dropping());
    assert_eq!(w.drop_count(), 1);
    // Chunk 0 went back complete: packet 1 (compact, 5 bytes), then packet 2's
    // header holds the sentinel; count 2, no LastPacketContinuesOnNextChunk.
    let c0 = chunk_bytes(&s.region, 0, 22);
    assert_eq!(&c0[..8], &[0, 0, 0, 0, 1, 0, 0x02, 0x00]);
    assert_eq!(&c0[8..14], &[0x05, 0xB8, 0x05, 0x01, 0x08, 0x07]);
    assert_eq!(&c0[14..18], &[0xFF, 0xFF, 0xFF, 0x7F]);
    assert_eq!(&c0[18..22], &[0x12, 0x88, 0x27, 0xAB]);
    // Free the chunk as the service would.
    // SAFETY: the region outlives the view.
    let abi = unsafe { SharedMemoryAbi::new(s.region.as_ptr(), 4096, 4096) }.unwrap();
    let mut r = common::ReferenceReader::default();
    for q in commits(&s.rx) {
        r.process_commit(&abi, &q);
    }
    // Packets keep going to the 1 KiB garbage chunk until it is nearly full,
    // then the writer retries and gets the freed chunk.
    let mut n = 0u32;
    while w.is_dropping() {
        n += 1;
        w.write_packet(|p| p.append_uint32(3, n));
        assert!(n < 1000);
    }
    assert!(
        n > 1,
        "the writer should only retry once the garbage chunk is full"
    );
    w.flush(None);
    for q in commits(&s.rx) {
        r.process_commit(&abi, &q);
    }
    let (out, errors) = r.reassemble();
    assert!(errors.is_empty(), "{errors:?}");
    let wp = &out[&1];
    assert_eq!(wp.abandoned, 1);
    // Packet 1, then the first packet after the drop: previous_packet_dropped = 257.
    assert_eq!(wp.packets.len(), 2);
    assert_eq!(wp.packets[0], [0xB8, 0x05, 0x01, 0x08, 0x07]);
    let mut want = vec![0xD0, 0x02, 0x81, 0x02, 0x18];
    want.push(n as u8);
    assert_eq!(wp.packets[1], want);
    let hdr = ChunkHeader::from_bytes(chunk_bytes(&s.region, 0, 8).try_into().unwrap());
    // Chunk 1 of the writer is in page 0 again (freed and re-partitioned).
    assert_eq!(
        hdr.chunk_id, 0,
        "header was cleared when the service freed the chunk"
    );
}

#[test]
fn max_packets_per_chunk_is_1022() {
    let s = setup(16384);
    let mut w = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    for _ in 0..1023 {
        w.write_packet(|_| {});
    }
    // Chunk 0 holds 1022 packets (the first has 3 bytes, the rest are empty
    // packets with a 1-byte header) plus the 00 fragment that made the inflated
    // count truthful when the chunk was returned: count 1023. The 1023rd packet
    // went to chunk 1.
    let c0 = chunk_bytes(&s.region, 0, 8 + 4 + 1022 + 1);
    let h0 = ChunkHeader::from_bytes(c0[..8].try_into().unwrap());
    assert_eq!(h0.packets.count, 1023);
    let frags: Vec<_> = FragmentIter::new(&c0[8..], 1023)
        .map(|f| f.unwrap().data.len())
        .collect();
    assert_eq!(frags.len(), 1023);
    assert_eq!(frags[0], 3);
    assert!(frags[1..].iter().all(|&n| n == 0));
    let c1 = chunk_bytes(&s.region, 1, 8);
    let h1 = ChunkHeader::from_bytes(c1.try_into().unwrap());
    assert_eq!((h1.chunk_id, h1.packets.count), (1, 2));
}

#[test]
fn writer_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<zerotrace_core::producer::TraceWriter>();
}

#[test]
fn encoder_error_abandons_only_that_packet() {
    let s = setup(8192);
    let mut w = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    w.write_packet(|p| p.append_uint32(1, 1));
    // Field id 0 is invalid: the encoder enters its error state mid-packet.
    w.write_packet(|p| {
        p.append_uint32(1, 2);
        p.append_uint32(0, 3);
    });
    assert_eq!(w.abandoned_packets(), 1);
    w.write_packet(|p| p.append_uint32(1, 4));
    w.flush(None);
    // SAFETY: the region outlives the view.
    let abi = unsafe { SharedMemoryAbi::new(s.region.as_ptr(), 8192, 4096) }.unwrap();
    let mut r = common::ReferenceReader::default();
    for q in commits(&s.rx) {
        r.process_commit(&abi, &q);
    }
    let (out, errors) = r.reassemble();
    assert!(errors.is_empty(), "{errors:?}");
    let wp = &out[&1];
    assert_eq!(wp.abandoned, 1);
    assert_eq!(
        wp.packets,
        [vec![0xB8, 0x05, 0x01, 0x08, 0x01], vec![0x08, 0x04]]
    );
}

#[test]
fn stall_then_drop_gives_up_after_the_configured_stalls() {
    let s = setup_with(
        4096,
        ArbiterConfig {
            stall: StallConfig {
                max_stalls: 3,
                max_interval: Duration::from_millis(1),
            },
            ..ArbiterConfig::default()
        },
    );
    let mut w = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::StallThenDrop)
        .unwrap();
    // The only chunk is taken by this writer; nobody frees it.
    w.write_packet(|p| p.append_bytes(1, &[1; 5000]));
    assert!(w.is_dropping());
    let st = s.arbiter.stats();
    assert_eq!(st.stalls, 3);
    assert_eq!(st.acquire_failures, 1);
    // While dropping, StallThenDrop degrades to Drop: no further stalls.
    for _ in 0..100 {
        w.write_packet(|p| p.append_bytes(1, &[2; 100]));
    }
    assert_eq!(s.arbiter.stats().stalls, 3);
}

#[test]
fn flush_ack_and_flush_request_id() {
    let s = setup(8192);
    let w = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    s.arbiter.notify_flush_complete(5);
    s.arbiter.notify_flush_complete(3);
    let reqs = commits(&s.rx);
    assert_eq!(
        reqs.iter().map(|r| r.flush_request_id).collect::<Vec<_>>(),
        [Some(5), Some(3)]
    );
    // An empty flush still produces a request, so the callback fires.
    let fired = Arc::new(AtomicBool::new(false));
    let f = fired.clone();
    s.arbiter
        .flush_pending_commit_data_requests(Some(Box::new(move || {
            f.store(true, Ordering::SeqCst)
        })));
    assert!(fired.load(Ordering::SeqCst));
    assert_eq!(commits(&s.rx), [CommitDataRequest::default()]);
    drop(w);
}

#[test]
fn writer_ids_are_reused_round_robin() {
    let s = setup(8192);
    let a = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    let b = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    assert_eq!((a.writer_id(), b.writer_id()), (1, 2));
    drop(a);
    let c = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    assert_eq!(c.writer_id(), 3);
}

#[test]
fn generated_trace_packet_wraps_the_handle() {
    use zerotrace_protos::protos::{TracePacket, TracePacketDecoder};
    let s = setup(8192);
    let mut w = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    {
        let mut h = w.new_trace_packet();
        let mut p = TracePacket::from_message(h.root());
        p.set_timestamp(1234);
        p.begin_track_event().set_name("slice");
    }
    w.flush(None);
    // SAFETY: the region outlives the view.
    let abi = unsafe { SharedMemoryAbi::new(s.region.as_ptr(), 8192, 4096) }.unwrap();
    let mut r = common::ReferenceReader::default();
    for q in commits(&s.rx) {
        r.process_commit(&abi, &q);
    }
    let (out, errors) = r.reassemble();
    assert!(errors.is_empty(), "{errors:?}");
    let d = TracePacketDecoder::new(&out[&1].packets[0]);
    assert_eq!(d.timestamp(), Some(1234));
    assert_eq!(d.first_packet_on_sequence(), Some(true));
    assert_eq!(d.track_event().and_then(|e| e.name()), Some("slice"));
}

#[test]
fn packets_of_one_size_start_in_a_new_chunk_rather_than_straddle() {
    let s = setup(64 * 1024);
    let mut w = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::Drop)
        .unwrap();
    // 53-byte packets: 76 fill 4028 of a chunk's 4080 bytes; the 77th
    // would straddle.
    let payload = [7u8; 50];
    // Over two chunk boundaries under Miri (slow), nine otherwise.
    let written = if cfg!(miri) { 160 } else { 700 };
    for _ in 0..written {
        w.write_packet(|p| p.append_bytes(1, &payload));
    }
    w.flush(None);
    let chunk_payload = 4096 - PAGE_HEADER_SIZE - 8;
    // SAFETY: the writer has flushed; nothing writes the buffer any more.
    let snap = unsafe { s.region.snapshot() };
    let mut packets = 0;
    for page in 0..16 {
        let start = page * 4096 + PAGE_HEADER_SIZE;
        let c = &snap[start..start + 8 + chunk_payload];
        let h = ChunkHeader::from_bytes(c[..8].try_into().unwrap());
        if h.packets.count == 0 {
            break;
        }
        // No fragments: every packet whole in one chunk.
        assert_eq!(
            h.packets.flags.bits() & 0x3,
            0,
            "chunk {page} continues a packet"
        );
        let frags: Vec<_> = FragmentIter::new(&c[8..], h.packets.count)
            .map(|f| f.unwrap())
            .filter(|f| !f.data.is_empty())
            .collect();
        // Each packet whole (the sequence's first also says it is first).
        assert!(frags.iter().all(|f| {
            f.data.ends_with(
                &[0x0a, 50]
                    .iter()
                    .chain(&payload)
                    .copied()
                    .collect::<Vec<_>>(),
            )
        }));
        packets += frags.len();
        // What a chunk leaves unused before the flushed last one is less
        // than one packet plus the slack.
        if packets < written {
            let used: usize = frags.iter().map(|f| f.data.len() + 1).sum();
            let left = chunk_payload - used;
            assert!(left < 53 + 32, "chunk {page} left {left} bytes");
        }
    }
    assert_eq!(packets, written);
}
