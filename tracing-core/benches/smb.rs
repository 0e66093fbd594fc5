//! What does writing into the shared memory buffer cost next to writing the
//! same packet into a reused heap buffer?
//!
//! The packet is the TRACE_EVENT slice-begin TracePacket (timestamp 8,
//! sequence_flags 13, track_event 11 {type 9, track_uuid 11, name_iid 10,
//! category_iids 3, two debug_annotations 4}). Variants, side by side:
//! `heap` (reused `HeapWriter`), `smb_1_thread` (one TraceWriter on a 256 KiB
//! SMB), `smb_2_threads` (two writers on their own threads, aggregate rate).
//! A reader thread plays the service: for every committed chunk it acquires it
//! for reading and frees it. Writers use the stall policy, so nothing is dropped.
//! Before timing, a packet written through the SMB is read back and compared
//! with the heap encoding byte for byte. A second group, `chunk_handoff`,
//! writes one 4 KiB packet per chunk, heap vs SMB: the difference is the
//! cost of a chunk hand-off to another core.
//!
//! Run: `cargo bench -p zerotrace-core --bench smb -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use protozero::{HeapWriter, Message};
use zerotrace_core::abi::{FragmentIter, SharedMemoryAbi};
use zerotrace_core::producer::{
    ArbiterConfig, BufferExhaustedPolicy, ChannelCommitSink, SharedMemoryArbiter, SinkMessage,
};
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};

/// `TrackEvent.Type.TYPE_SLICE_BEGIN`.
const SLICE_BEGIN: i32 = 1;
/// `TracePacket.sequence_flags`: SEQ_NEEDS_INCREMENTAL_STATE.
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;
const SMB_SIZE: usize = 256 * 1024;

/// Writes the slice-begin packet.
#[inline(always)]
fn slice_begin(p: &mut Message<'_>, ts: u64) {
    p.append_uint64(8, ts);
    p.append_uint32(13, SEQ_NEEDS_INCREMENTAL_STATE);
    let mut te = p.begin_nested(11);
    te.append_enum(9, SLICE_BEGIN);
    te.append_uint64(11, 0x9a3f_1c2b_7d4e_5f60);
    te.append_uint64(10, 42);
    te.append_uint64(3, 3);
    {
        let mut da = te.begin_nested(4);
        da.append_uint64(1, 7);
        da.append_int64(4, 1_234_567);
    }
    let mut da = te.begin_nested(4);
    da.append_uint64(1, 8);
    da.append_string(6, "https://example.org/");
}

const TS: u64 = 1_718_000_123_456_789;
/// Payload of the one-packet-per-chunk variant: with its tag, length and
/// fragment header it leaves fewer than the 12 bytes a new packet needs in
/// a 4 KiB page's chunk.
const HANDOFF_PAYLOAD: usize = 4070;

/// An SMB with a reader thread that frees every committed chunk. The
/// reader polls for commits (yielding while there are none) instead of
/// sleeping on the channel: a sleeping receiver makes every commit a futex
/// wake on the writer's thread, which a real producer's writer threads
/// never pay (the client's committer thread sends the batches, and the
/// service wakes on its socket).
fn smb() -> (Arc<SharedMemoryArbiter>, thread::JoinHandle<u64>) {
    let region = Arc::new(HeapShm::new(SMB_SIZE).expect("allocate SMB"));
    let (sink, rx) = ChannelCommitSink::new();
    let arbiter = SharedMemoryArbiter::new(
        region.clone(),
        4096,
        Arc::new(sink),
        ArbiterConfig::default(),
    )
    .expect("arbiter");
    let reader = thread::spawn(move || {
        // SAFETY: `region` stays alive in this thread for the view's lifetime.
        let abi = unsafe { SharedMemoryAbi::new(region.as_ptr(), SMB_SIZE, 4096) }.expect("abi");
        let mut chunks = 0;
        loop {
            let msg = match rx.try_recv() {
                Ok(msg) => msg,
                Err(std::sync::mpsc::TryRecvError::Empty) => {
                    thread::yield_now();
                    continue;
                }
                Err(std::sync::mpsc::TryRecvError::Disconnected) => break,
            };
            if let SinkMessage::Commit(req) = msg {
                for m in &req.chunks_to_move {
                    if let Ok(c) =
                        abi.try_acquire_chunk_for_reading(m.page as usize, m.chunk as usize)
                    {
                        black_box(c.header());
                        let _ = abi.release_chunk_as_free(c);
                        chunks += 1;
                    }
                }
            }
        }
        chunks
    });
    (arbiter, reader)
}

/// The SMB output of the second packet equals the heap encoding.
fn check_equivalence(heap_bytes: &[u8]) {
    let region = Arc::new(HeapShm::new(8192).expect("allocate"));
    let (sink, _rx) = ChannelCommitSink::new();
    let arbiter = SharedMemoryArbiter::new(
        region.clone(),
        4096,
        Arc::new(sink),
        ArbiterConfig::default(),
    )
    .expect("arbiter");
    let mut w = arbiter
        .create_trace_writer(0, BufferExhaustedPolicy::StallThenAbort)
        .expect("writer");
    w.write_packet(|p| slice_begin(p, TS));
    w.write_packet(|p| slice_begin(p, TS));
    w.flush(None);
    // SAFETY: the writer has flushed and no thread writes any more.
    let snap = unsafe { region.snapshot() };
    let count = u16::from_le_bytes([snap[14], snap[15]]) & 0x3FF;
    let frags: Vec<&[u8]> = FragmentIter::new(&snap[16..4096], count)
        .map(|f| f.expect("valid fragment").data)
        .collect();
    assert_eq!(frags[1], heap_bytes, "SMB and heap encodings differ");
}

fn bench(c: &mut Criterion) {
    let mut heap = HeapWriter::new();
    slice_begin(&mut heap.root(), TS);
    let heap_bytes = heap.to_vec();
    check_equivalence(&heap_bytes);

    let mut g = c.benchmark_group("smb_slice_begin");
    g.throughput(Throughput::ElementsAndBytes {
        elements: 1,
        bytes: heap_bytes.len() as u64,
    });
    g.bench_function("heap", |b| {
        b.iter(|| {
            heap.clear();
            slice_begin(&mut heap.root(), black_box(TS));
            black_box(&heap);
        })
    });

    let (arbiter, reader) = smb();
    {
        let mut w = arbiter
            .create_trace_writer(0, BufferExhaustedPolicy::StallThenAbort)
            .expect("writer");
        g.bench_function("smb_1_thread", |b| {
            b.iter(|| w.write_packet(|p| slice_begin(p, black_box(TS))))
        });
    }
    g.bench_function("smb_2_threads", |b| {
        b.iter_custom(|iters| {
            let per_thread = iters.div_ceil(2);
            let barrier = Arc::new(Barrier::new(2));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let arbiter = arbiter.clone();
                    let barrier = barrier.clone();
                    thread::spawn(move || {
                        let mut w = arbiter
                            .create_trace_writer(0, BufferExhaustedPolicy::StallThenAbort)
                            .expect("writer");
                        barrier.wait();
                        let t = Instant::now();
                        for _ in 0..per_thread {
                            w.write_packet(|p| slice_begin(p, black_box(TS)));
                        }
                        t.elapsed()
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or(Duration::ZERO))
                .max()
                .unwrap_or(Duration::ZERO)
        })
    });
    g.finish();

    // One packet per chunk: a bytes field that leaves too little room for
    // another packet, so every packet is also one chunk hand-off to the
    // reader thread. Against the same packet into a heap buffer, the
    // difference is what a hand-off costs across cores.
    let big = vec![0x5au8; HANDOFF_PAYLOAD];
    let mut g = c.benchmark_group("chunk_handoff");
    g.throughput(Throughput::Elements(1));
    g.bench_function("heap_4k_packet", |b| {
        b.iter(|| {
            heap.clear();
            heap.root().append_bytes(900, black_box(&big));
            black_box(&heap);
        })
    });
    {
        let mut w = arbiter
            .create_trace_writer(0, BufferExhaustedPolicy::StallThenAbort)
            .expect("writer");
        g.bench_function("smb_4k_packet", |b| {
            b.iter(|| w.write_packet(|p| p.append_bytes(900, black_box(&big))))
        });
    }
    g.finish();
    let stats = arbiter.stats();
    eprintln!(
        "arbiter: {} chunks acquired, {} stall rounds, {} commits",
        stats.chunks_acquired, stats.stalls, stats.commits_sent
    );
    drop(arbiter);
    let chunks = reader.join().unwrap_or(0);
    assert!(chunks > 0, "the reader freed no chunk");
}

criterion_group!(benches, bench);
criterion_main!(benches);
