//! A malicious producer next to an honest one, driven through the sans-IO
//! service core: it forges the honest producer's writer ids, replays and
//! skips chunk ids, patches chunks that are not its own or at offsets past
//! the chunk, writes garbage headers and sizes past the chunk end, commits
//! chunks it never wrote and pages past its SMB, and floods CommitData. The
//! honest producer's data in both sessions comes back byte for byte, the
//! malicious one's packets carry its own trusted uid and no duplicates, and
//! every offence is counted.
//! (Its own test binary, not a module of `all/`: the flood test reads the
//! heap bytes the whole process holds, which other tests would move.)

mod service_support;

use std::sync::{Arc, Mutex};

use protozero::HeapWriter;
use service_support::*;
use zerotrace_core::abi::{
    ChunkFlags, ChunkHeader, ChunkState, Packets, PageLayout, SharedMemoryAbi,
};
use zerotrace_core::producer::TraceWriter;
use zerotrace_core::protocol::{ChunkToMove, ChunkToPatch, CommitDataRequest, PatchData};
use zerotrace_core::service::{ConsumerCall, ConsumerId, ProducerCall, ProducerId, Reply};
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};
use zerotrace_protos::protos::{
    GetAsyncCommandResponseDecoder, GetTraceStatsResponseDecoder, TracePacketDecoder,
};

/// Live heap bytes of this test binary, to see that a flood leaves nothing.
#[global_allocator]
static ALLOC: zerotrace_test_alloc::CountingAlloc = zerotrace_test_alloc::CountingAlloc;

/// The tests run one at a time: the flood test reads a process-wide count.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const HONEST_UID: u32 = 2000;
const EVIL_UID: u32 = 6666;
/// Marker field (TracePacket.for_testing) every test packet carries.
const PAYLOAD: u32 = 900;

/// The payload of honest packet `i`: its bytes tell where it came from.
fn honest_payload(i: u64) -> Vec<u8> {
    let len = match i % 10 {
        0 => 5000, // spans chunks: fragments and a patch
        1..=3 => 300,
        _ => 60,
    };
    (0..len).map(|k| (i as usize * 31 + k) as u8).collect()
}

fn write_honest(w: &mut TraceWriter, from: u64, to: u64) {
    for i in from..to {
        w.packet(|p| {
            p.set_timestamp(i);
            p.message().append_bytes(PAYLOAD, &honest_payload(i));
        });
    }
}

/// A well-formed packet the malicious producer writes by hand.
fn evil_packet(marker: u64) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut m = w.root();
        m.append_varint(8, marker);
        m.append_bytes(PAYLOAD, b"evil");
    }
    w.finish().unwrap()
}

/// Fragments laid out as a TraceWriter would (varint size, bytes).
fn fragments(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in packets {
        let mut n = p.len();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
        out.extend_from_slice(p);
    }
    out
}

/// The malicious producer's hand on its own SMB.
struct Forger {
    smb: Arc<HeapShm>,
    page_size: usize,
}

impl Forger {
    fn abi(&self) -> SharedMemoryAbi {
        // SAFETY: the region is kept alive by `self.smb` for the view's use
        // within the calling method.
        unsafe { SharedMemoryAbi::new(self.smb.as_ptr(), self.smb.size(), self.page_size) }.unwrap()
    }

    /// Writes one chunk (page `page`, chunk 0) with any header and payload
    /// and marks it complete, as a producer can whatever the bytes say.
    fn chunk(&self, page: usize, header: ChunkHeader, payload: &[u8]) {
        let abi = self.abi();
        let _ = abi.try_partition_page(page, PageLayout::Div1);
        let mut c = abi
            .try_acquire_chunk_for_writing(page, 0, &header)
            .expect("a free chunk");
        assert!(c.write_payload(0, payload), "payload fits");
        abi.release_chunk_as_complete(c).unwrap();
    }

    /// The service freed the chunk after copying it? (Every committed chunk
    /// must be returned free, whatever its contents.)
    fn is_free(&self, page: usize) -> bool {
        self.abi().is_page_free(page) || self.abi().chunk_state(page, 0) == Ok(ChunkState::Free)
    }
}

fn header(writer_id: u16, chunk_id: u32, count: u16, flags: ChunkFlags) -> ChunkHeader {
    ChunkHeader {
        chunk_id,
        writer_id,
        packets: Packets { count, flags },
    }
}

fn commit(h: &mut Harness, p: ProducerId, moves: &[(u32, u32)], patches: Vec<ChunkToPatch>) {
    let req = CommitDataRequest {
        chunks_to_move: moves
            .iter()
            .map(|&(page, target_buffer)| ChunkToMove {
                page,
                chunk: 0,
                target_buffer,
                data: None,
                chunk_incomplete: false,
            })
            .collect(),
        chunks_to_patch: patches,
        flush_request_id: None,
    };
    h.pcall(p, ProducerCall::CommitData(req));
}

/// The global buffer id a producer was told to write data source `ds` into.
fn target_buffer(cmds: &[Vec<u8>], ds: &str) -> u32 {
    cmds.iter()
        .filter_map(|c| GetAsyncCommandResponseDecoder::new(c).setup_data_source())
        .filter_map(|s| s.config())
        .find(|c| c.name() == Some(ds))
        .and_then(|c| c.target_buffer())
        .expect("a setup_data_source for the data source")
}

struct Packet {
    uid: Option<i32>,
    seq: Option<u32>,
    dropped: bool,
    ts: Option<u64>,
    payload: Vec<u8>,
}

fn read(h: &mut Harness, c: ConsumerId) -> Vec<Packet> {
    h.read(c)
        .iter()
        .map(|b| {
            let d = TracePacketDecoder::new(b);
            Packet {
                uid: d.trusted_uid(),
                seq: d.trusted_packet_sequence_id(),
                dropped: d.previous_packet_dropped().unwrap_or(0) != 0,
                ts: d.timestamp(),
                payload: bytes(b, PAYLOAD).unwrap_or_default(),
            }
        })
        .collect()
}

/// `abi_violations` and `patches_failed` of the session's buffers, summed
/// (one GetTraceStats call).
fn abi_violations_and_failed_patches(h: &mut Harness, c: ConsumerId) -> (u64, u64) {
    let r = h.ccall(c, ConsumerCall::GetTraceStats);
    let replies = h.replies(c, r);
    let Some(Reply::Ok { data, .. }) = replies.first() else {
        panic!("GetTraceStats failed: {replies:?}");
    };
    let d = GetTraceStatsResponseDecoder::new(data);
    let stats = d.trace_stats().expect("trace stats");
    stats.buffer_stats().fold((0, 0), |(v, p), b| {
        (
            v + b.abi_violations().unwrap_or(0),
            p + b.patches_failed().unwrap_or(0),
        )
    })
}

/// Everything a malicious producer can do through CommitData and its SMB,
/// next to an honest producer writing into two sessions.
#[test]
fn a_malicious_producer_cannot_touch_anyone_elses_data() {
    let _serial = serial();
    let mut h = Harness::new();
    let honest = h.producer("honest", HONEST_UID);
    let evil = h.producer("evil", EVIL_UID);
    h.register(honest, "ds", false, false);
    h.register(honest, "private", false, false);
    h.register(evil, "ds", false, false);
    let c1 = h.consumer(HONEST_UID);
    h.enable(c1, config(&[(1024, false)], &[("ds", 0)], |_| {}));
    let c2 = h.consumer(HONEST_UID);
    h.enable(c2, config(&[(1024, false)], &[("private", 0)], |_| {}));

    let honest_cmds = h.take_commands(honest);
    let shared_buffer = target_buffer(&honest_cmds, "ds");
    let private_buffer = target_buffer(&honest_cmds, "private");
    let evil_cmds = h.take_commands(evil);
    assert_eq!(target_buffer(&evil_cmds, "ds"), shared_buffer);

    let mut w1 = h.writer(honest, shared_buffer as u16);
    let mut w2 = h.writer(honest, private_buffer as u16);
    let honest_writer = 1u16;
    write_honest(&mut w1, 0, 40);
    write_honest(&mut w2, 1000, 1040);
    w1.flush(None);
    w2.flush(None);
    h.pump(honest);

    let page_kb = GetAsyncCommandResponseDecoder::new(&evil_cmds[0])
        .setup_tracing()
        .and_then(|s| s.shared_buffer_page_size_kb())
        .unwrap_or(4) as usize;
    let f = Forger {
        smb: h.shared.borrow().smbs[&evil].clone(),
        page_size: page_kb * 1024,
    };
    let pages = f.smb.size() / f.page_size;
    // Keep clear of the pages the harness's arbiter for `evil` might use.
    let page = |i: usize| pages - 1 - (i % (pages / 2));

    // 1. Forged writer id: the honest producer's writer id and its next
    //    chunk ids, registered and committed into the shared buffer.
    h.pcall(
        evil,
        ProducerCall::RegisterTraceWriter {
            writer_id: honest_writer as u32,
            target_buffer: shared_buffer,
        },
    );
    for id in 0..3u32 {
        let pkts = [evil_packet(900_000 + u64::from(id))];
        f.chunk(
            page(0),
            header(honest_writer, id, 1, ChunkFlags::from_bits(0)),
            &fragments(&pkts),
        );
        commit(&mut h, evil, &[(page(0) as u32, shared_buffer)], vec![]);
        assert!(f.is_free(page(0)), "the service frees what it copied");
    }
    // 2. A replay of chunk 2, then a gap (3, 4 never come).
    f.chunk(
        page(1),
        header(honest_writer, 2, 1, ChunkFlags::from_bits(0)),
        &fragments(&[evil_packet(900_002)]),
    );
    commit(&mut h, evil, &[(page(1) as u32, shared_buffer)], vec![]);
    f.chunk(
        page(1),
        header(honest_writer, 5, 1, ChunkFlags::from_bits(0)),
        &fragments(&[evil_packet(900_005)]),
    );
    commit(&mut h, evil, &[(page(1) as u32, shared_buffer)], vec![]);
    // 3. Patches naming the honest writer's chunks (in range), at offsets past
    //    any chunk, and for a buffer it was not granted.
    let patch = |writer_id, chunk_id, offset, target_buffer| ChunkToPatch {
        target_buffer,
        writer_id,
        chunk_id,
        patches: vec![PatchData {
            offset,
            data: [0xde, 0xad, 0xbe, 0xef],
        }],
        has_more_patches: false,
    };
    let mut patches = Vec::new();
    for chunk_id in 0..8 {
        patches.push(patch(honest_writer as u32, chunk_id, 16, shared_buffer));
        patches.push(patch(honest_writer as u32, chunk_id, 16, private_buffer));
        patches.push(patch(2, chunk_id, 0, private_buffer));
    }
    patches.push(patch(honest_writer as u32, 1, 1 << 20, shared_buffer));
    patches.push(patch(honest_writer as u32, 1, u32::MAX - 1, shared_buffer));
    patches.push(patch(40_000, 1, 0, shared_buffer));
    commit(&mut h, evil, &[], patches);
    // 4. Garbage: a packet count past the ABI, a size past the chunk end,
    //    flags claiming continuations nobody started.
    f.chunk(
        page(2),
        header(7, 0, 1023, ChunkFlags::from_bits(0)),
        &[0xff; 64],
    );
    let mut past_end = vec![0x80, 0x80, 0x04]; // a 64 KiB fragment
    past_end.extend_from_slice(&[1; 32]);
    f.chunk(
        page(3),
        header(8, 0, 1, ChunkFlags::from_bits(0)),
        &past_end,
    );
    f.chunk(
        page(4),
        header(9, 0, 2, ChunkFlags::from_bits(3)),
        &fragments(&[evil_packet(1), evil_packet(2)]),
    );
    commit(
        &mut h,
        evil,
        &[
            (page(2) as u32, shared_buffer),
            (page(3) as u32, shared_buffer),
            (page(4) as u32, shared_buffer),
        ],
        vec![],
    );
    // 5. Chunks it never wrote, pages past its SMB, a buffer not granted.
    let discarded_before = h.svc.stats().commit.chunks_discarded;
    commit(
        &mut h,
        evil,
        &[
            (page(5) as u32, shared_buffer), // free
            (pages as u32, shared_buffer),
            (u32::MAX, shared_buffer),
            (page(6) as u32, private_buffer),
            (page(6) as u32, 0),
            (page(6) as u32, u32::MAX),
        ],
        vec![],
    );
    f.chunk(
        page(6),
        header(3, 0, 1, ChunkFlags::from_bits(0)),
        &fragments(&[evil_packet(666)]),
    );
    commit(&mut h, evil, &[(page(6) as u32, private_buffer)], vec![]);
    assert!(
        h.svc.stats().commit.chunks_discarded >= discarded_before + 7,
        "{:?}",
        h.svc.stats().commit
    );
    assert!(f.is_free(page(6)), "a refused chunk is still given back");

    // The honest producer goes on as if nothing happened.
    write_honest(&mut w1, 40, 80);
    write_honest(&mut w2, 1040, 1080);
    w1.flush(None);
    w2.flush(None);
    h.pump(honest);

    for (c, range) in [(c1, 0..80u64), (c2, 1000..1080u64)] {
        let packets = read(&mut h, c);
        let honest_seqs: std::collections::BTreeSet<_> = packets
            .iter()
            .filter(|p| p.uid == Some(HONEST_UID as i32))
            .map(|p| p.seq)
            .collect();
        let mine: Vec<&Packet> = packets
            .iter()
            .filter(|p| p.uid == Some(HONEST_UID as i32) && p.ts.is_some_and(|t| t < 900_000))
            .collect();
        assert_eq!(honest_seqs.len(), 1, "one honest sequence per session");
        assert_eq!(
            mine.iter().map(|p| p.ts.unwrap()).collect::<Vec<_>>(),
            range.clone().collect::<Vec<_>>(),
            "every honest packet, in order"
        );
        for (k, p) in mine.iter().enumerate() {
            assert_eq!(p.payload, honest_payload(p.ts.unwrap()), "byte for byte");
            // (The first packet of a sequence is flagged: nothing precedes it.)
            assert!(k == 0 || !p.dropped, "no loss on the honest sequence");
        }
        for p in packets.iter().filter(|p| p.payload == b"evil") {
            assert_eq!(p.uid, Some(EVIL_UID as i32), "no spoofed identity");
            assert!(
                !honest_seqs.contains(&p.seq),
                "a forged writer id gets its own sequence"
            );
        }
        if c == c2 {
            assert!(
                packets.iter().all(|p| p.payload != b"evil"),
                "nothing reaches a buffer the producer was not granted"
            );
        }
    }
    // Fragments are parsed as they are read: the garbage is counted then.
    let (abi_violations, patches_failed) = abi_violations_and_failed_patches(&mut h, c1);
    assert!(abi_violations >= 2, "{abi_violations}");
    assert!(patches_failed >= 2, "{patches_failed}");
}

/// Replays and gaps of one writer: a replayed chunk is not read twice and
/// the packet after a gap says that packets were lost before it.
#[test]
fn replayed_and_skipped_chunk_ids_neither_duplicate_nor_hide_loss() {
    let _serial = serial();
    let mut h = Harness::new();
    let evil = h.producer("evil", EVIL_UID);
    h.register(evil, "ds", false, false);
    let c = h.consumer(EVIL_UID);
    h.enable(c, config(&[(256, false)], &[("ds", 0)], |_| {}));
    let cmds = h.take_commands(evil);
    let buffer = target_buffer(&cmds, "ds");
    let f = Forger {
        smb: h.shared.borrow().smbs[&evil].clone(),
        page_size: 4096,
    };
    h.pcall(
        evil,
        ProducerCall::RegisterTraceWriter {
            writer_id: 5,
            target_buffer: buffer,
        },
    );
    for id in [0u32, 1, 1, 0, 2, 7, 7, 8] {
        f.chunk(
            3,
            header(5, id, 1, ChunkFlags::from_bits(0)),
            &fragments(&[evil_packet(u64::from(id))]),
        );
        commit(&mut h, evil, &[(3, buffer)], vec![]);
    }
    let packets = read(&mut h, c);
    let got: Vec<(u64, bool)> = packets
        .iter()
        .filter(|p| p.payload == b"evil")
        .map(|p| (p.ts.unwrap(), p.dropped))
        .collect();
    assert_eq!(
        got,
        [(0, true), (1, false), (2, false), (7, true), (8, false)],
        "each chunk once, in order, the gap flagged (and, as Perfetto \
         does, the first packet of a sequence: nothing is known before it)"
    );
}

/// A flood of CommitData (garbage moves and patches for chunks that never
/// existed, with `has_more_patches`) is bounded work: nothing is kept for
/// it, and a session started afterwards works.
#[test]
fn a_commit_flood_leaves_nothing_behind() {
    let _serial = serial();
    let mut h = Harness::new();
    let evil = h.producer("evil", EVIL_UID);
    let honest = h.producer("honest", HONEST_UID);
    h.register(evil, "ds", false, false);
    h.register(honest, "ds", false, false);
    let c = h.consumer(HONEST_UID);
    h.enable(c, config(&[(256, false)], &[("ds", 0)], |_| {}));
    let buffer = target_buffer(&h.take_commands(honest), "ds");
    h.take_commands(evil);
    let discarded = h.svc.stats().commit.chunks_discarded;
    let mut live_after_warmup = 0;
    for round in 0..2000u32 {
        if round == 100 {
            live_after_warmup = zerotrace_test_alloc::live_bytes();
        }
        let req = CommitDataRequest {
            chunks_to_move: (0..50)
                .map(|i| ChunkToMove {
                    page: round * 50 + i,
                    chunk: i % 16,
                    target_buffer: buffer,
                    data: None,
                    chunk_incomplete: i % 2 == 0,
                })
                .collect(),
            chunks_to_patch: (0..50)
                .map(|i| ChunkToPatch {
                    target_buffer: buffer,
                    writer_id: 1 + (round * 50 + i) % 32767,
                    chunk_id: round,
                    patches: vec![PatchData {
                        offset: i,
                        data: [1, 2, 3, 4],
                    }],
                    has_more_patches: true,
                })
                .collect(),
            flush_request_id: Some(u64::from(round)),
        };
        h.pcall(evil, ProducerCall::CommitData(req));
        h.log.clear();
    }
    let growth = zerotrace_test_alloc::live_bytes() - live_after_warmup;
    assert!(
        growth < 16 * 1024,
        "1,900 rounds of flood left {growth} bytes behind"
    );
    assert!(h.svc.stats().commit.chunks_discarded >= discarded + 2000 * 50 - 1000);
    let mut w = h.writer(honest, buffer as u16);
    write_honest(&mut w, 0, 30);
    w.flush(None);
    h.pump(honest);
    let packets = read(&mut h, c);
    let ts: Vec<u64> = packets
        .iter()
        .filter(|p| p.uid == Some(HONEST_UID as i32))
        .filter_map(|p| p.ts)
        .collect();
    assert_eq!(ts, (0..30).collect::<Vec<_>>());
}
