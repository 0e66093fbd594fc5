//! What producers commit and what the trace buffer gives back, through the
//! sans-IO service core: a ring that wraps under fragmented packets and
//! reports the loss, inline chunks of a producer without shared memory and a
//! patch that comes after its chunk was overwritten, packets salvaged by
//! scraping when a producer disconnects mid-packet, and packets using fields
//! the service reserves, dropped and counted.

use crate::service_support;

use service_support::scenario::*;
use service_support::*;
use zerotrace_core::service::{ConsumerCall, ProducerCall};
use zerotrace_protos::protos::{GetTraceStatsResponseDecoder, TracePacketDecoder};

#[test]
fn ring_wrap_with_fragmented_packets_reports_the_loss() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    h.register(p, "ds", false, false);
    let c = h.consumer(2000);
    h.enable(c, config(&[(32, false)], &[("ds", 0)], |_| {}));
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let mut w = h.writer(p, b);
    for round in 0..20u64 {
        write_packets(&mut w, round * 10, 10, 900);
        // A packet spanning several chunks.
        w.packet(|pk| {
            pk.set_timestamp(1_000_000 + round);
            pk.message().append_bytes(900, &[7u8; 9000]);
        });
        w.flush(None);
        h.pump(p);
    }
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let data = data_packets(&packets);
    assert!(
        !data.is_empty() && data.len() < 220,
        "the ring overwrote the oldest data"
    );
    assert_ne!(
        varint(data[0], 42).unwrap_or(0),
        0,
        "the first packet after the overwrite is flagged"
    );
    let mut last = None;
    for p in &data {
        let ts = varint(p, 8).unwrap();
        if ts >= 1_000_000 {
            assert_eq!(
                bytes(p, 900).unwrap().len(),
                9000,
                "fragmented packets come back whole"
            );
        }
        let order = if ts >= 1_000_000 {
            ((ts - 1_000_000) * 10 + 9) * 2 + 1
        } else {
            ts * 2
        };
        assert!(last.is_none_or(|l| order > l), "in order");
        last = Some(order);
    }
    let stats = h.ccall(c, ConsumerCall::GetTraceStats);
    let r = h.replies(c, stats);
    let st = GetTraceStatsResponseDecoder::new(ok_data(&r[0]))
        .trace_stats()
        .unwrap();
    let buf = st.buffer_stats().next().unwrap();
    assert!(buf.chunks_overwritten().unwrap() > 0);
    assert!(buf.write_wrap_count().unwrap() > 0);
}

/// An SMB-emulation producer (no fd passing) sends chunks inline; a chunk
/// whose size awaits a patch is overwritten by the ring before the patch
/// comes: the patch fails (counted), the packet is lost, and the loss is
/// flagged on the sequence's next packet.
#[test]
fn inline_chunks_and_a_patch_after_its_chunk_was_overwritten() {
    use zerotrace_core::protocol::{ChunkToMove, ChunkToPatch, CommitDataRequest, PatchData};
    let mut h = Harness::new();
    let p = h
        .svc
        .producer_connected(
            h.now,
            zerotrace_core::service::PeerIdentity {
                uid: 7,
                pid: None,
                machine_id: Some(3),
            },
            zerotrace_core::service::ProducerTransport {
                can_pass_fds: false,
            },
        )
        .unwrap();
    h.producers.insert(
        p,
        SimProducer {
            id: p,
            name: "remote".into(),
            async_request: zerotrace_core::service::RequestId(u64::MAX),
            arbiter: None,
            rx: None,
            commands: Vec::new(),
        },
    );
    let init = h.pcall(
        p,
        ProducerCall::InitializeConnection {
            page_size_hint: 0,
            smb_size_hint: 0,
            name: "remote".into(),
            smb_scraping_mode: 0,
            producer_provided_shmem: false,
            sdk_version: String::new(),
        },
    );
    let reply = h.producer_replies(p, init);
    let resp =
        zerotrace_protos::protos::InitializeConnectionResponseDecoder::new(ok_data(&reply[0]));
    assert_eq!(resp.use_shmem_emulation(), Some(true));
    let r = h.request();
    h.producers.get_mut(&p).unwrap().async_request = r;
    h.svc
        .handle_producer_call(h.now, p, r, ProducerCall::GetAsyncCommand, None);
    h.drain();
    h.register(p, "ds", false, false);
    let c = h.consumer(7);
    // A producer of another machine gets data sources only when asked.
    h.enable(
        c,
        config(&[(8, false)], &[("ds", 0)], |c| {
            c.set_trace_all_machines(true);
        }),
    );
    let b = h.svc.sessions()[0].buffers[0].0.0 as u32;
    let chunk = |id: u32, fragments: &[&[u8]], flags: u8| {
        let mut v = Vec::new();
        v.extend_from_slice(&id.to_le_bytes());
        v.extend_from_slice(&1u16.to_le_bytes());
        let packets = fragments.len() as u16 | (flags as u16) << 10;
        v.extend_from_slice(&packets.to_le_bytes());
        for f in fragments {
            v.extend_from_slice(&protozero::varint::redundant_varint4(f.len() as u32));
            v.extend_from_slice(f);
        }
        v.resize(1024, 0);
        v
    };
    let packet = |ts: u8| vec![0x40, ts, 0xa2, 0x38, 0x02, 0xaa, 0xbb];
    let send = |h: &mut Harness, chunks: Vec<Vec<u8>>, patches: Vec<ChunkToPatch>| {
        let req = CommitDataRequest {
            chunks_to_move: chunks
                .into_iter()
                .map(|data| ChunkToMove {
                    page: 0,
                    chunk: 0,
                    target_buffer: b,
                    data: Some(data),
                    chunk_incomplete: false,
                })
                .collect(),
            chunks_to_patch: patches,
            flush_request_id: None,
        };
        h.pcall(p, ProducerCall::CommitData(req));
    };
    // Chunk 0: a packet, then the head of a packet whose size is unknown yet
    // (written as 0, the chunk flagged as needing a patch).
    let mut c0 = chunk(0, &[&packet(1), &[0x40, 2]], 2 | 4);
    let blank = 4 + 8 + packet(1).len();
    c0[blank..blank + 4].copy_from_slice(&protozero::varint::redundant_varint4(0));
    send(&mut h, vec![c0], vec![]);
    // Enough chunks (with whole packets) to wrap the 8 KiB ring.
    for id in 1..12u32 {
        let flags = if id == 1 { 1 } else { 0 };
        let first: &[u8] = if id == 1 { &[0xa2, 0x38, 0x00] } else { &[] };
        let p1 = packet(id as u8 + 10);
        let frags: Vec<&[u8]> = if id == 1 { vec![first, &p1] } else { vec![&p1] };
        send(&mut h, vec![chunk(id, &frags, flags)], vec![]);
    }
    // The patch for chunk 0 comes too late.
    send(
        &mut h,
        vec![],
        vec![ChunkToPatch {
            target_buffer: b,
            writer_id: 1,
            chunk_id: 0,
            patches: vec![PatchData {
                offset: (8 + packet(1).len()) as u32,
                data: protozero::varint::redundant_varint4(2 + 3),
            }],
            has_more_patches: false,
        }],
    );
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let stats = packets.iter().find(|p| bytes(p, 35).is_some()).unwrap();
    let st = TracePacketDecoder::new(stats).trace_stats().unwrap();
    let buf = st.buffer_stats().next().unwrap();
    assert!(buf.chunks_overwritten().unwrap() > 0);
    assert_eq!(buf.patches_failed(), Some(1));
    let data = data_packets(&packets);
    assert!(!data.is_empty());
    assert_ne!(varint(data[0], 42).unwrap_or(0), 0, "the loss is flagged");
    for d in &data {
        let t = TracePacketDecoder::new(d);
        assert_eq!(t.trusted_uid(), Some(7));
        assert_eq!(t.trusted_pid(), None, "no pid over this transport");
        assert_eq!(
            varint(d, 98),
            Some(3),
            "a remote producer's packets carry its machine id"
        );
    }
}

#[test]
fn producer_disconnecting_mid_packet_keeps_what_it_wrote() {
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |_| {});
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let mut w = h.writer(p, b);
    write_packets(&mut w, 0, 5, 40);
    w.flush(None);
    h.pump(p);
    // Complete packets never committed, then a half-written one.
    write_packets(&mut w, 5, 3, 40);
    {
        let mut handle = w.new_trace_packet();
        handle.packet().set_timestamp(99);
        h.disconnect_producer(p);
    }
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let ts: Vec<u64> = data_packets(&packets)
        .iter()
        .map(|p| varint(p, 8).unwrap())
        .collect();
    assert_eq!(
        ts,
        (0..8).collect::<Vec<_>>(),
        "salvaged by scraping; the torn packet is not returned"
    );
}

#[test]
fn reserved_fields_are_dropped_and_counted() {
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |_| {});
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let mut w = h.writer(p, b);
    for reserved in [3u32, 10, 33, 35, 36, 50, 69, 79, 98, 124, 125, 133] {
        w.packet(|pk| {
            pk.set_timestamp(reserved as u64);
            pk.message().append_varint(reserved, 1);
        });
    }
    write_packets(&mut w, 500, 1, 8);
    w.flush(None);
    h.pump(p);
    h.svc.producer_disconnected(h.now, p);
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let data = data_packets(&packets);
    assert_eq!(data.len(), 1, "only the clean packet survives");
    assert_eq!(varint(data[0], 8), Some(500));
    let stats = packets.iter().find(|p| bytes(p, 35).is_some()).unwrap();
    let st = TracePacketDecoder::new(stats).trace_stats().unwrap();
    assert_eq!(st.invalid_packets(), Some(12));
}
