//! The buffer-exhausted policies, as DataSourceConfig numbers them: DROP
//! loses packets at once and flags the next one; STALL_THEN_DROP waits out
//! its stall limit and then drops; STALL_THEN_ABORT waits and then ends the
//! process with a message naming the cause. A packet larger than the whole
//! SMB goes through intact when a service keeps freeing chunks, and is lost
//! cleanly (flagged, nothing corrupted) when none does.

use crate::common;
use crate::service_support;

use std::sync::Arc;
use std::time::Duration;

use common::InProcessService;
use zerotrace_core::producer::{
    ArbiterConfig, BufferExhaustedPolicy, ChannelCommitSink, SharedMemoryArbiter, StallConfig,
    TraceWriter,
};
use zerotrace_core::shm::HeapShm;

const SMB: usize = 16 * 1024;
const PAGE: usize = 4096;

fn quick_stalls() -> ArbiterConfig {
    ArbiterConfig {
        stall: StallConfig {
            max_stalls: 5,
            max_interval: Duration::from_millis(1),
        },
        ..ArbiterConfig::default()
    }
}

/// An arbiter whose service never frees a chunk.
fn starved(policy: BufferExhaustedPolicy) -> (Arc<SharedMemoryArbiter>, TraceWriter) {
    let region = Arc::new(HeapShm::new(SMB).unwrap());
    let (sink, rx) = ChannelCommitSink::new();
    // Nobody reads the commits; keep the receiver so sends succeed.
    std::mem::forget(rx);
    let arbiter = SharedMemoryArbiter::new(region, PAGE, Arc::new(sink), quick_stalls()).unwrap();
    let writer = arbiter.create_trace_writer(1, policy).unwrap();
    (arbiter, writer)
}

fn write(w: &mut TraceWriter, n: u64, size: usize) {
    let body = vec![0xabu8; size];
    for i in 0..n {
        w.write_packet(|m| {
            m.append_uint64(8, i);
            m.append_bytes(1000, &body);
        });
    }
}

#[test]
fn config_numbers_choose_the_policy() {
    let cfg = |v: u64| {
        let mut w = protozero::HeapWriter::new();
        {
            let mut m = w.root();
            m.append_string(1, "ds");
            m.append_uint64(9, v);
        }
        w.finish().unwrap()
    };
    let d = BufferExhaustedPolicy::StallThenDrop;
    assert_eq!(
        BufferExhaustedPolicy::from_data_source_config(&cfg(1), d),
        BufferExhaustedPolicy::Drop
    );
    assert_eq!(
        BufferExhaustedPolicy::from_data_source_config(&cfg(2), d),
        BufferExhaustedPolicy::StallThenAbort
    );
    assert_eq!(
        BufferExhaustedPolicy::from_data_source_config(&cfg(3), BufferExhaustedPolicy::Drop),
        BufferExhaustedPolicy::StallThenDrop
    );
    // UNSPECIFIED, unknown numbers and no field: the default.
    for v in [0, 77] {
        assert_eq!(
            BufferExhaustedPolicy::from_data_source_config(&cfg(v), d),
            d
        );
    }
    assert_eq!(BufferExhaustedPolicy::from_data_source_config(&[], d), d);
}

#[test]
fn drop_gives_up_at_once() {
    let (arbiter, mut w) = starved(BufferExhaustedPolicy::Drop);
    write(&mut w, 200, 200);
    let s = arbiter.stats();
    assert!(s.acquire_failures > 0, "{s:?}");
    assert_eq!(s.stalls, 0, "DROP never waits: {s:?}");
}

#[test]
fn stall_then_drop_waits_its_limit_then_drops() {
    let (arbiter, mut w) = starved(BufferExhaustedPolicy::StallThenDrop);
    write(&mut w, 200, 200);
    let s = arbiter.stats();
    assert!(s.acquire_failures > 0, "gave up: {s:?}");
    // It stalled up to the limit once, then (in drop mode) gives up at once
    // until a chunk frees.
    assert_eq!(s.stalls, 5, "{s:?}");
}

/// STALL_THEN_ABORT ends the process: the test runs itself again in a
/// child (with `ZT_ABORT_CHILD` set, the child is the half that aborts)
/// and checks how the child ended. No test passes without checking.
#[test]
fn stall_then_abort_ends_the_process_with_a_reason() {
    if std::env::var_os("ZT_ABORT_CHILD").is_some() {
        let (_arbiter, mut w) = starved(BufferExhaustedPolicy::StallThenAbort);
        write(&mut w, 200, 200);
        unreachable!("STALL_THEN_ABORT returned");
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &crate::test_name(
                module_path!(),
                "stall_then_abort_ends_the_process_with_a_reason",
            ),
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ZT_ABORT_CHILD", "1")
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(6), "SIGABRT: {:?}", out.status);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("STALL_THEN_ABORT") && err.contains("stayed full"),
        "{err}"
    );
}

/// A service that frees every committed chunk at once.
fn served(policy: BufferExhaustedPolicy) -> (Arc<InProcessService>, TraceWriter) {
    let region = Arc::new(HeapShm::new(SMB).unwrap());
    let service = InProcessService::new(region.clone(), PAGE, 0);
    let arbiter = SharedMemoryArbiter::new(region, PAGE, service.clone(), quick_stalls()).unwrap();
    let writer = arbiter.create_trace_writer(1, policy).unwrap();
    (service, writer)
}

#[test]
fn a_packet_larger_than_the_smb_goes_through_when_chunks_are_freed() {
    for policy in [
        BufferExhaustedPolicy::StallThenAbort,
        BufferExhaustedPolicy::StallThenDrop,
    ] {
        let (service, mut w) = served(policy);
        let big: Vec<u8> = (0..SMB * 3).map(|i| i as u8).collect();
        w.write_packet(|m| {
            m.append_uint64(8, 1);
            m.append_bytes(1000, &big);
        });
        write(&mut w, 3, 10);
        w.flush(None);
        let (writers, errors) = service.reader.lock().unwrap().reassemble();
        assert!(errors.is_empty(), "{errors:?}");
        let packets = &writers[&1].packets;
        assert_eq!(packets.len(), 4, "{policy:?}");
        assert!(
            packets[0].len() > big.len(),
            "{policy:?}: the big packet whole"
        );
        assert!(
            packets[0].windows(64).any(|w| w == &big[SMB..SMB + 64]),
            "{policy:?}: its payload intact"
        );
    }
}

#[test]
fn a_packet_larger_than_the_smb_is_lost_cleanly_when_nothing_is_freed() {
    for policy in [
        BufferExhaustedPolicy::Drop,
        BufferExhaustedPolicy::StallThenDrop,
    ] {
        let (arbiter, mut w) = starved(policy);
        let big = vec![7u8; SMB * 2];
        w.write_packet(|m| {
            m.append_uint64(8, 1);
            m.append_bytes(1000, &big);
        });
        // The writer is in drop mode; later packets are dropped too, and
        // nothing panics or writes out of bounds.
        write(&mut w, 10, 10);
        assert!(arbiter.stats().acquire_failures > 0, "{policy:?}");
    }
}

/// A sink whose committer thread never gets round to sending.
struct SlowCommitter;

impl zerotrace_core::producer::CommitSink for SlowCommitter {
    fn commit_data(
        &self,
        _request: &mut zerotrace_core::protocol::CommitDataRequest,
        _on_complete: Option<zerotrace_core::producer::FlushCallback>,
    ) {
    }
    fn commits_in_background(&self) -> bool {
        true
    }
}

#[test]
fn a_stall_with_a_committer_thread_waits_out_its_back_off() {
    // With a committer thread the writer does not send itself; it must
    // still wait between attempts, or STALL_THEN_DROP gives up at once.
    let region = Arc::new(HeapShm::new(SMB).unwrap());
    let config = ArbiterConfig {
        stall: StallConfig {
            max_stalls: 6,
            max_interval: Duration::from_millis(100),
        },
        ..ArbiterConfig::default()
    };
    let arbiter = SharedMemoryArbiter::new(region, PAGE, Arc::new(SlowCommitter), config).unwrap();
    let mut w = arbiter
        .create_trace_writer(1, BufferExhaustedPolicy::StallThenDrop)
        .unwrap();
    let start = std::time::Instant::now();
    write(&mut w, 200, 200);
    // The back-off's sleeps: 8 µs, 72 µs, 584 µs, 4.68 ms and 37.4 ms.
    assert!(
        start.elapsed() >= Duration::from_millis(42),
        "gave up after {:?}",
        start.elapsed()
    );
    assert!(arbiter.stats().acquire_failures > 0);
}

/// End to end through the service core: a DROP writer runs out of shared
/// memory in the middle of a packet larger than the SMB (the service has
/// not freed anything yet). The packet is lost whole, the loss reaches the
/// trace twice — the next packet's `previous_packet_dropped` and the
/// buffer's `trace_writer_packet_loss` in TraceStats — and the writer
/// carries on once chunks are free again.
#[test]
fn a_dropped_packet_shows_in_the_trace_and_its_stats() {
    use service_support::{Harness, bytes, config};
    use zerotrace_core::service::{ConsumerCall, Reply};
    use zerotrace_protos::protos::{
        GetAsyncCommandResponseDecoder, GetTraceStatsResponseDecoder, TracePacketDecoder,
    };
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    h.register(p, "ds", false, false);
    let c = h.consumer(2000);
    h.enable(c, config(&[(4096, false)], &[("ds", 0)], |_| {}));
    let target = h
        .take_commands(p)
        .iter()
        .filter_map(|c| GetAsyncCommandResponseDecoder::new(c).setup_data_source())
        .find_map(|s| s.config().and_then(|c| c.target_buffer()))
        .expect("the data source was set up");
    let mut w = h.writer(p, target as u16);
    let smb = zerotrace_core::shm::SharedMemoryRegion::size(&*h.shared.borrow().smbs[&p]);
    let small = |w: &mut TraceWriter, ts: u64| {
        w.write_packet(|m| {
            m.append_uint64(8, ts);
            m.append_bytes(900, b"small");
        })
    };
    small(&mut w, 1);
    // Nothing is committed (so nothing freed) while this is written.
    w.write_packet(|m| {
        m.append_uint64(8, 2);
        m.append_bytes(900, &vec![0xab; smb + 4096]);
    });
    assert!(w.drop_count() >= 1, "the writer ran out of chunks");
    h.pump(p);
    for ts in 3..6 {
        small(&mut w, ts);
    }
    w.flush(None);
    h.pump(p);

    let packets = h.read(c);
    let data: Vec<(u64, bool)> = packets
        .iter()
        .filter(|b| bytes(b, 900).is_some())
        .map(|b| {
            let d = TracePacketDecoder::new(b);
            (
                d.timestamp().unwrap(),
                d.previous_packet_dropped().unwrap_or(0) != 0,
            )
        })
        .collect();
    assert_eq!(
        data,
        [(1, true), (3, true), (4, false), (5, false)],
        "the big packet lost whole, the next one flagged (the first packet \
         of a sequence is flagged too: nothing is known before it)"
    );
    let r = h.ccall(c, ConsumerCall::GetTraceStats);
    let replies = h.replies(c, r);
    let Some(Reply::Ok { data, .. }) = replies.first() else {
        panic!("GetTraceStats failed: {replies:?}");
    };
    let stats = GetTraceStatsResponseDecoder::new(data)
        .trace_stats()
        .expect("trace stats");
    let loss: u64 = stats
        .buffer_stats()
        .map(|b| b.trace_writer_packet_loss().unwrap_or(0))
        .sum();
    assert_eq!(loss, 1, "the abandoned packet is counted in TraceStats");
}
