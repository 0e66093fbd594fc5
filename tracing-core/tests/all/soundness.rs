//! Regression tests for the soundness defects of issue #10, on the producer
//! side: each drives safe API only. They run under Miri in CI (Stacked and
//! Tree Borrows), which flags the use-after-free, aliasing and data-race
//! versions of these paths; the byte-level checks hold everywhere.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::InProcessService;
use protozero::Decoder;
use zerotrace_core::abi::{ChunkHeader, SharedMemoryAbi};
use zerotrace_core::producer::{ArbiterConfig, BufferExhaustedPolicy, SharedMemoryArbiter};
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};

const PAGE: usize = 4096;

fn in_process(pages: usize) -> (Arc<InProcessService>, Arc<SharedMemoryArbiter>) {
    let region: Arc<dyn SharedMemoryRegion> = Arc::new(HeapShm::new(pages * PAGE).unwrap());
    let service = InProcessService::new(region.clone(), PAGE, 0);
    let arbiter =
        SharedMemoryArbiter::new(region, PAGE, service.clone(), ArbiterConfig::default()).unwrap();
    (service, arbiter)
}

/// A packet whose nested message spans a chunk boundary (so its length
/// becomes a patch), tagged with `marker` in field 1.
fn spanning_packet(m: &mut protozero::Message<'_>, marker: u32, len: usize) {
    m.append_uint32(1, marker);
    let mut child = m.begin_nested(2);
    child.append_bytes(3, &vec![marker as u8; len]);
}

fn markers(packets: &[Vec<u8>]) -> Vec<u32> {
    packets
        .iter()
        .map(|p| {
            Decoder::new(p)
                .filter_map(Result::ok)
                .find(|f| f.id == 1)
                .and_then(|f| f.as_u64().ok())
                .map_or(0, |v| v as u32)
        })
        .collect()
}

/// A child writer leaked with `mem::forget` while its length is a pending
/// patch costs that packet only: later packets (whose own lengths are
/// patches too) all arrive whole, and no chunk waits for a patch forever.
#[test]
fn leaked_child_costs_only_its_packet() {
    let (service, arbiter) = in_process(4);
    let mut w = arbiter
        .create_trace_writer(0, BufferExhaustedPolicy::Drop)
        .unwrap();
    w.write_packet(|p| spanning_packet(p, 1, 100));
    w.write_packet(|p| {
        p.append_uint32(1, 2);
        let mut child = p.begin_nested(2);
        child.append_bytes(3, &[2u8; 6000]);
        std::mem::forget(child);
    });
    for marker in 3..8 {
        w.write_packet(|p| spanning_packet(p, marker, 5000));
    }
    w.flush(None);
    assert_eq!(w.abandoned_packets(), 1);
    drop(w);
    let (writers, errors) = service.reader.lock().unwrap().reassemble();
    assert_eq!(errors, Vec::<String>::new());
    let got = &writers[&1];
    assert_eq!(got.abandoned, 1, "the leaked packet is marked dropped");
    assert_eq!(markers(&got.packets), [1, 3, 4, 5, 6, 7]);
    for p in &got.packets[1..] {
        // Every later packet decodes whole: field 2 holds its 5000 bytes.
        let child = Decoder::new(p)
            .filter_map(Result::ok)
            .find(|f| f.id == 2)
            .and_then(|f| f.as_bytes().ok())
            .expect("nested message");
        assert_eq!(child.len(), 5000 + 3);
    }
}

/// Leaking the packet handle itself (with a child leaked inside it) loses
/// that packet only; the next packet starts clean.
#[test]
fn leaked_handle_with_open_child_costs_only_its_packet() {
    leaked_handle_with_open_child(false);
}

/// The same, with the writer flushed right after the leak.
#[test]
fn leaked_handle_then_flush_costs_only_its_packet() {
    leaked_handle_with_open_child(true);
}

fn leaked_handle_with_open_child(flush_right_after: bool) {
    let (service, arbiter) = in_process(4);
    let mut w = arbiter
        .create_trace_writer(0, BufferExhaustedPolicy::Drop)
        .unwrap();
    w.write_packet(|p| spanning_packet(p, 1, 10));
    {
        let mut handle = w.new_trace_packet();
        let mut root = handle.root();
        root.append_uint32(1, 2);
        let mut child = root.begin_nested(2);
        child.append_bytes(3, &[2u8; 5000]);
        std::mem::forget(child);
        drop(root);
        std::mem::forget(handle);
    }
    if flush_right_after {
        w.flush(None);
    }
    for marker in 3..6 {
        w.write_packet(|p| spanning_packet(p, marker, 3000));
    }
    w.flush(None);
    drop(w);
    let (writers, errors) = service.reader.lock().unwrap().reassemble();
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(markers(&writers[&1].packets), [1, 3, 4, 5]);
}

/// A packet dropped because the buffer is full wraps around the writer's
/// private garbage chunk several times with a length slot open in it; the
/// slot stays writable across every wrap (Miri checks the aliasing).
#[test]
fn garbage_chunk_wraps_with_open_slots() {
    let (service, arbiter) = in_process(1);
    let mut holder = arbiter
        .create_trace_writer(0, BufferExhaustedPolicy::Drop)
        .unwrap();
    // Takes the only chunk and keeps it.
    holder.write_packet(|p| p.append_uint32(1, 1));
    let mut w = arbiter
        .create_trace_writer(0, BufferExhaustedPolicy::Drop)
        .unwrap();
    w.write_packet(|p| {
        p.append_uint32(1, 9);
        let mut outer = p.begin_nested(2);
        for _ in 0..4 {
            let mut inner = outer.begin_nested(3);
            inner.append_bytes(4, &[7u8; 900]);
        }
    });
    assert!(w.is_dropping());
    assert_eq!(w.drop_count(), 1);
    drop(holder);
    w.write_packet(|p| p.append_uint32(1, 10));
    w.flush(None);
    drop(w);
    let (writers, errors) = service.reader.lock().unwrap().reassemble();
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(markers(&writers[&1].packets), [1]);
    assert_eq!(markers(&writers[&2].packets), [10]);
}

/// `snapshot` and `copy_payload` read memory another thread keeps writing
/// (standing in for a producer process, whose writes this process sees as
/// atomic stores): the copies are plain data, never a data race.
#[test]
fn copies_race_with_a_writer_without_ub() {
    let region = Arc::new(HeapShm::new(PAGE).unwrap());
    // SAFETY: the region outlives the view (both live to the end of the test).
    let abi = unsafe { SharedMemoryAbi::new(region.as_ptr(), region.size(), PAGE) }.unwrap();
    abi.try_partition_page(0, zerotrace_core::abi::PageLayout::Div1)
        .unwrap();
    let chunk = abi
        .try_acquire_chunk_for_writing(0, 0, &ChunkHeader::default())
        .unwrap();
    /// The payload address, sent to the writer thread.
    struct Payload(*mut u64);
    // SAFETY: the thread only stores atomically through the pointer, into a
    // region that outlives it (joined below).
    unsafe impl Send for Payload {}
    let payload = Payload(chunk.payload_begin().cast::<u64>());
    // The copies read 8-byte words; a racing writer in this process must use
    // the same access size (a producer process is outside this program).
    assert_eq!(payload.0 as usize % 8, 0);
    let writer = std::thread::spawn(move || {
        let payload = payload;
        for i in 0..64u64 {
            // SAFETY: 8-aligned word inside the payload of a live region; in
            // this test it is only ever accessed atomically or copied by
            // `copy_from_shared`.
            let word = unsafe { AtomicU64::from_ptr(payload.0.add(i as usize % 16)) };
            word.store(i, Ordering::Relaxed);
        }
    });
    let mut out = Vec::new();
    for _ in 0..4 {
        chunk.copy_payload(&mut out);
        assert_eq!(out.len(), chunk.payload_size());
        // SAFETY: the racing thread stores only 8-byte atomics to aligned words.
        assert_eq!(unsafe { region.snapshot() }.len(), PAGE);
    }
    writer.join().unwrap();
    abi.release_chunk_as_complete(chunk).unwrap();
}

/// A chunk of one buffer given back to another buffer's view is refused:
/// otherwise it would mark a chunk someone else owns as complete or free.
#[test]
fn foreign_chunk_release_is_refused() {
    use zerotrace_core::abi::{AbiError, ChunkState, PageLayout};
    let (_sa, a) = in_process(1);
    let (_sb, b) = in_process(1);
    for arbiter in [&a, &b] {
        arbiter
            .abi()
            .try_partition_page(0, PageLayout::Div1)
            .unwrap();
    }
    let mine = a
        .abi()
        .try_acquire_chunk_for_writing(0, 0, &ChunkHeader::default())
        .unwrap();
    let other = b
        .abi()
        .try_acquire_chunk_for_writing(0, 0, &ChunkHeader::default())
        .unwrap();
    assert_eq!(
        a.abi().release_chunk_as_complete(other),
        Err(AbiError::ForeignChunk { page: 0 })
    );
    assert_eq!(a.abi().chunk_state(0, 0), Ok(ChunkState::BeingWritten));
    a.abi().release_chunk_as_complete(mine).unwrap();
}

/// One region, one arbiter: a second arbiter over the same memory (perhaps
/// with another page size) could hand the same bytes to two writers.
#[test]
fn a_region_serves_one_arbiter() {
    use zerotrace_core::producer::{ChannelCommitSink, ProducerError};
    let region = Arc::new(HeapShm::new(2 * PAGE).unwrap());
    let (sink, _rx) = ChannelCommitSink::new();
    let sink = Arc::new(sink);
    let first =
        SharedMemoryArbiter::new(region.clone(), PAGE, sink.clone(), ArbiterConfig::default());
    assert!(first.is_ok());
    let second = SharedMemoryArbiter::new(region, 2 * PAGE, sink, ArbiterConfig::default());
    assert_eq!(second.err(), Some(ProducerError::RegionInUse));
}

/// Children leaked with `mem::forget` (in one chunk and across chunks),
/// compaction switched on and off between packets, packets spanning chunks
/// (patches): the open short slots of a leaked child never outlive their
/// chunk, nothing is written into a chunk the writer returned, and every
/// packet without a leak arrives whole and in order.
#[test]
fn leaks_and_compaction_toggles_between_packets() {
    let rounds = if cfg!(miri) { 2 } else { 48 };
    for seed in 0..rounds {
        let (service, arbiter) = in_process(8);
        let mut w = arbiter
            .create_trace_writer(0, BufferExhaustedPolicy::Drop)
            .unwrap();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ seed;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut whole = Vec::new();
        for marker in 1..14u32 {
            let r = next();
            let leak = r % 3 == 0;
            let len = [10usize, 90, 200, 3000, 5000][(r >> 8) as usize % 5];
            w.write_packet(|p| {
                p.append_uint32(1, marker);
                let mut child = p.begin_nested(2);
                child.append_bytes(3, &vec![marker as u8; len]);
                if leak {
                    std::mem::forget(child);
                }
            });
            if !leak {
                whole.push(marker);
            }
            match (r >> 16) % 3 {
                0 => w.set_compaction(false),
                1 => w.set_compaction(true),
                _ => {}
            }
        }
        w.flush(None);
        drop(w);
        let (writers, errors) = service.reader.lock().unwrap().reassemble();
        assert_eq!(errors, Vec::<String>::new(), "seed {seed}");
        let got = markers(&writers[&1].packets);
        let got_whole: Vec<u32> = got.into_iter().filter(|m| whole.contains(m)).collect();
        assert_eq!(got_whole, whole, "seed {seed}");
    }
}
