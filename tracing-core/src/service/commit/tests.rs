//! Producer to service core: packets written by a real TraceWriter into a
//! heap SMB, committed through `commit_data` (and `scrape`) into trace
//! buffers, come back whole and in order.

use std::sync::Arc;
use std::sync::mpsc::Receiver;

use protozero::Decoder;

use super::*;
use crate::producer::{
    ArbiterConfig, BufferExhaustedPolicy, ChannelCommitSink, SharedMemoryArbiter, SinkMessage,
};
use crate::service::trace_buffer::FillPolicy;
use crate::shm::HeapShm;

struct Setup {
    arbiter: Arc<SharedMemoryArbiter>,
    smb: ProducerSmb,
    rx: Receiver<SinkMessage>,
}

fn setup() -> Setup {
    let region = Arc::new(HeapShm::new(64 * 1024).unwrap());
    let (sink, rx) = ChannelCommitSink::new();
    let arbiter = SharedMemoryArbiter::new(
        region.clone(),
        4096,
        Arc::new(sink),
        ArbiterConfig::default(),
    )
    .unwrap();
    // SAFETY: the arbiter uses the same page size; the tests scrape only
    // while no writer is writing.
    let smb = unsafe { ProducerSmb::new(region, 4096) }.unwrap();
    Setup { arbiter, smb, rx }
}

fn commit_all(s: &Setup, buffer: &mut TraceBuffer, granted: u32, stats: &mut CommitStats) {
    for msg in s.rx.try_iter() {
        if let SinkMessage::Commit(req) = msg {
            let mut resolver = SliceResolver {
                buffers: std::slice::from_mut(buffer),
                commit: |b: BufferId, _w: u16| (u32::from(b.0) == granted).then_some(0),
                scrape: |_w: u16| None,
            };
            commit_data(&req, 7, Some(&s.smb), &mut resolver, stats);
        }
    }
}

fn read_markers(buffer: &mut TraceBuffer) -> Vec<(u16, u64, usize)> {
    buffer.begin_read();
    let mut out = Vec::new();
    let mut got = Vec::new();
    while let Some(info) = buffer.read_next_packet(&mut out) {
        assert_eq!(info.sequence.producer, 7, "identity comes from the caller");
        let marker = Decoder::new(&out)
            .filter_map(Result::ok)
            .find(|f| f.id == 1)
            .and_then(|f| f.as_u64().ok())
            .unwrap_or(u64::MAX);
        got.push((info.sequence.writer, marker, out.len()));
        out.clear();
    }
    got
}

fn write(w: &mut crate::producer::TraceWriter, marker: u64, len: usize) {
    w.write_packet(|p| {
        p.append_uint64(1, marker);
        p.begin_nested(2).append_bytes(3, &vec![marker as u8; len]);
    });
}

#[test]
fn committed_packets_come_back_whole_and_in_order() {
    let s = setup();
    let mut buffer = TraceBuffer::new(1 << 20, FillPolicy::RingBuffer).unwrap();
    let mut a = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::StallThenAbort)
        .unwrap();
    let mut b = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::StallThenAbort)
        .unwrap();
    for i in 0..30 {
        // Some packets span chunks (their lengths become patches).
        write(&mut a, i, if i % 7 == 3 { 9000 } else { 50 });
        write(&mut b, 100 + i, 20);
    }
    a.flush(None);
    b.flush(None);
    let mut stats = CommitStats::default();
    commit_all(&s, &mut buffer, 1, &mut stats);
    assert_eq!(stats, CommitStats::default());
    let got = read_markers(&mut buffer);
    let of = |w: u16| -> Vec<u64> { got.iter().filter(|g| g.0 == w).map(|g| g.1).collect() };
    assert_eq!(of(a.writer_id()), (0..30).collect::<Vec<_>>());
    assert_eq!(of(b.writer_id()), (100..130).collect::<Vec<_>>());
    assert!(buffer.stats().patches_succeeded + s.arbiter.stats().patches_applied_directly > 0);
    // Every chunk was freed for the producer to reuse.
    assert!((0..16).all(|p| s.smb.abi().is_page_free(p)));
}

#[test]
fn chunks_for_a_buffer_not_granted_are_discarded() {
    let s = setup();
    let mut buffer = TraceBuffer::new(1 << 20, FillPolicy::RingBuffer).unwrap();
    let mut w = s
        .arbiter
        .create_trace_writer(2, BufferExhaustedPolicy::StallThenAbort)
        .unwrap();
    write(&mut w, 1, 10);
    w.flush(None);
    let mut stats = CommitStats::default();
    commit_all(&s, &mut buffer, 1, &mut stats);
    assert_eq!(stats.chunks_discarded, 1);
    assert!(read_markers(&mut buffer).is_empty());
}

#[test]
fn hostile_moves_are_discarded_not_fatal() {
    let s = setup();
    let mut buffer = TraceBuffer::new(1 << 20, FillPolicy::RingBuffer).unwrap();
    let req = CommitDataRequest::decode(&[
        // chunks_to_move { page: 9999, chunk: 0, target_buffer: 1 }
        0x0A, 0x07, 0x08, 0x8F, 0x4E, 0x10, 0x00, 0x18, 0x01,
        // chunks_to_move { page: 0, chunk: 13, target_buffer: 1 } (free page)
        0x0A, 0x06, 0x08, 0x00, 0x10, 0x0D, 0x18, 0x01,
    ])
    .unwrap();
    let mut stats = CommitStats::default();
    let mut resolver = SliceResolver {
        buffers: std::slice::from_mut(&mut buffer),
        commit: |_b: BufferId, _w: u16| Some(0),
        scrape: |_w: u16| None,
    };
    commit_data(&req, 7, Some(&s.smb), &mut resolver, &mut stats);
    assert_eq!(stats.chunks_discarded, 2);
}

#[test]
fn scraping_salvages_what_was_not_committed() {
    let s = setup();
    let mut buffer = TraceBuffer::new(1 << 20, FillPolicy::RingBuffer).unwrap();
    let mut w = s
        .arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::StallThenAbort)
        .unwrap();
    let writer = w.writer_id();
    for i in 0..2 {
        write(&mut w, i, 30);
    }
    let scrape_now = |buffer: &mut TraceBuffer| {
        let mut resolver = SliceResolver {
            buffers: std::slice::from_mut(buffer),
            commit: |_b: BufferId, _w: u16| None,
            scrape: |id: u16| (id == writer).then_some(0),
        };
        scrape(&s.smb, 7, &mut resolver)
    };
    {
        // Packet 2 is half written when the service scrapes.
        let mut handle = w.new_trace_packet();
        handle.root().append_uint64(1, 2);
        assert_eq!(scrape_now(&mut buffer), 1);
        handle.root().begin_nested(2).append_bytes(3, &[2; 30]);
    }
    // Nothing was committed: the chunk is still being written. The packet
    // in progress is not read from the scraped copy.
    assert!(
        s.rx.try_iter()
            .all(|m| !matches!(m, SinkMessage::Commit(_)))
    );
    let got: Vec<u64> = read_markers(&mut buffer).iter().map(|g| g.1).collect();
    assert_eq!(got, [0, 1]);
    // A scrape between packets loses nothing: the writer counts a finished
    // packet's successor in advance, so the last counted one is empty.
    assert_eq!(scrape_now(&mut buffer), 1);
    let got: Vec<u64> = read_markers(&mut buffer).iter().map(|g| g.1).collect();
    assert_eq!(got, [2]);
    // The real commit replaces the scraped copy; nothing is read twice.
    w.flush(None);
    let mut stats = CommitStats::default();
    commit_all(&s, &mut buffer, 1, &mut stats);
    assert!(read_markers(&mut buffer).is_empty());
    assert_eq!(buffer.stats().chunks_rewritten, 2);
}
