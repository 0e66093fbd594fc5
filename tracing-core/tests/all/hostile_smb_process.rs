//! A producer *process* that keeps rewriting its own shared memory — page
//! headers, chunk states, chunk headers, payloads — while the daemon
//! acquires, copies, scrapes and frees those chunks, and while it sends
//! CommitData naming them. The daemon copies each chunk once and never
//! trusts a second read: it stays up, an honest producer next to it
//! records every packet byte for byte, and another consumer is served.
//!
//! The hostile producer is this test binary re-run as a child process
//! (the test itself, which is the scribbler when `ZT_SCRIBBLER` is set).
#![cfg(target_os = "linux")]

use crate::service_support;

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use protozero::{Decoder, HeapWriter};
use service_support::DaemonThread;
use zerotrace_core::abi::{ChunkFlags, ChunkHeader, Packets, PageLayout, SharedMemoryAbi};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::daemon::DaemonConfig;
use zerotrace_core::ipc::connect;
use zerotrace_core::ipc::{ClientConnection, ClientEvent, Endpoint};
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_core::protocol::{ChunkToMove, ChunkToPatch, CommitDataRequest, PatchData};
use zerotrace_core::shm::{MappedShm, SharedMemoryRegion};
use zerotrace_protos::protos::{
    GetAsyncCommandResponseDecoder, InitializeConnectionRequest,
    InitializeConnectionResponseDecoder, TraceConfig, TracePacketDecoder,
};

const SMB_SIZE: usize = 256 * 1024;
const PAGE: usize = 4096;

/// xorshift64*: the scribbler's randomness (no dependency needed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn payload(i: u64) -> Vec<u8> {
    let n = if i % 50 == 7 {
        9000
    } else {
        40 + (i as usize * 13) % 200
    };
    (0..n).map(|k| ((k as u64 * 7) ^ i) as u8).collect()
}

/// Rewrites words of the SMB at random until told to stop: mostly page
/// header words (every layout and chunk state), chunk headers, and payload.
fn scribble(base: usize, stop: &AtomicBool, seed: u64) -> u64 {
    let mut rng = Rng(seed | 1);
    let mut writes = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let page = rng.below((SMB_SIZE / PAGE) as u64) as usize;
        let offset = match rng.below(10) {
            0..=4 => page * PAGE,                                         // page header
            5..=7 => page * PAGE + 8 + 4 * rng.below(4) as usize,         // chunk header(s)
            _ => page * PAGE + 4 * rng.below((PAGE / 4) as u64) as usize, // anywhere
        };
        let value = match rng.below(4) {
            // A valid-looking layout with every chunk complete (state 2).
            0 => (1 << 28) | 0x02aa_aaaa,
            1 => 0,
            _ => rng.next() as u32,
        };
        // SAFETY: `offset` is a 4-aligned offset below SMB_SIZE in a live
        // shared mapping; other parties access these words atomically too.
        unsafe { AtomicU32::from_ptr((base + offset) as *mut u32) }.store(value, Ordering::Relaxed);
        writes += 1;
    }
    writes
}

fn init_args() -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut r = InitializeConnectionRequest::from_message(w.root());
        r.set_producer_name("scribbler");
        r.set_shared_memory_page_size_hint_bytes(PAGE as u32);
        r.set_shared_memory_size_hint_bytes(SMB_SIZE as u32);
        r.set_producer_provided_shmem(true);
        r.set_smb_scraping_mode_raw(1);
    }
    w.finish().unwrap()
}

fn register_args(name: &str) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut m = w.root();
        let mut d = m.begin_nested(1);
        d.append_string(1, name);
    }
    w.finish().unwrap()
}

/// The hostile producer (the child process), on the producer socket
/// `socket`.
fn scribbler(socket: String) {
    let seconds: u64 = std::env::var("ZT_SCRIBBLE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let shm = MappedShm::create_memfd(SMB_SIZE).unwrap();
    let s = connect(&Endpoint::Path(socket.into())).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(2))).unwrap();
    let mut c = ClientConnection::new("ProducerPort");
    let mut buf = vec![0u8; 1 << 17];
    let mut fds = Vec::new();
    let mut target_buffer = None;
    let mut accepted = None;
    let mut pump =
        |c: &mut ClientConnection, target_buffer: &mut Option<u32>, accepted: &mut Option<bool>| {
            for f in c.take_transmit() {
                let _ = s.send(&f, None);
            }
            let Ok(n) = s.recv(&mut buf, &mut fds) else {
                return true;
            };
            fds.clear();
            if n == 0 {
                return false;
            }
            for e in c.receive(&buf[..n]) {
                if let ClientEvent::Reply { data, .. } = e {
                    let cmd = GetAsyncCommandResponseDecoder::new(&data);
                    if let Some(b) = cmd
                        .setup_data_source()
                        .and_then(|s| s.config())
                        .and_then(|c| c.target_buffer())
                    {
                        *target_buffer = Some(b);
                    }
                    if accepted.is_none() {
                        *accepted = InitializeConnectionResponseDecoder::new(&data)
                            .using_shmem_provided_by_producer();
                    }
                }
            }
            true
        };
    while !c.is_bound() {
        assert!(pump(&mut c, &mut target_buffer, &mut accepted), "bound");
    }
    c.invoke("InitializeConnection", init_args(), false);
    let frames = c.take_transmit();
    s.send(&frames[0], Some(shm.fd())).unwrap();
    c.invoke("GetAsyncCommand", vec![], false);
    c.invoke("RegisterDataSource", register_args("ds"), false);
    let deadline = Instant::now() + Duration::from_secs(10);
    while target_buffer.is_none() && Instant::now() < deadline {
        assert!(
            pump(&mut c, &mut target_buffer, &mut accepted),
            "service went away"
        );
    }
    assert_eq!(accepted, Some(true), "the sealed memfd was accepted");
    let target = target_buffer.expect("the session started the data source");
    println!("scribbler: started, target buffer {target}");

    let stop = Arc::new(AtomicBool::new(false));
    let base = shm.as_ptr() as usize;
    let scribblers: Vec<_> = (0..2)
        .map(|k| {
            let stop = stop.clone();
            std::thread::spawn(move || scribble(base, &stop, 0x9e37_79b9 + k))
        })
        .collect();
    // SAFETY: `shm` outlives the view (joined below before it drops).
    let abi = unsafe { SharedMemoryAbi::new(shm.as_ptr(), SMB_SIZE, PAGE) }.unwrap();
    let mut rng = Rng(42);
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut commits = 0u64;
    while Instant::now() < end {
        // Chunks that look right for an instant, then random moves and
        // patches, some naming them.
        for _ in 0..4 {
            let page = rng.below((SMB_SIZE / PAGE) as u64) as usize;
            let _ = abi.try_partition_page(page, PageLayout::Div1);
            let header = ChunkHeader {
                chunk_id: rng.below(8) as u32,
                writer_id: 1 + rng.below(3) as u16,
                packets: Packets {
                    count: rng.below(4) as u16,
                    flags: ChunkFlags::from_bits(rng.below(4) as u8),
                },
            };
            if let Ok(mut chunk) = abi.try_acquire_chunk_for_writing(page, 0, &header) {
                let bytes: Vec<u8> = (0..64).map(|_| rng.next() as u8).collect();
                chunk.write_payload(0, &bytes);
                let _ = abi.release_chunk_as_complete(chunk);
            }
        }
        let req = CommitDataRequest {
            chunks_to_move: (0..rng.below(8))
                .map(|_| ChunkToMove {
                    page: rng.below((SMB_SIZE / PAGE) as u64 + 2) as u32,
                    chunk: rng.below(15) as u32,
                    target_buffer: if rng.below(8) == 0 {
                        rng.next() as u32
                    } else {
                        target
                    },
                    data: None,
                    chunk_incomplete: rng.below(2) == 0,
                })
                .collect(),
            chunks_to_patch: (0..rng.below(3))
                .map(|_| ChunkToPatch {
                    target_buffer: target,
                    writer_id: 1 + rng.below(3) as u32,
                    chunk_id: rng.below(8) as u32,
                    patches: vec![PatchData {
                        offset: rng.below(PAGE as u64) as u32,
                        data: (rng.next() as u32).to_le_bytes(),
                    }],
                    has_more_patches: rng.below(2) == 0,
                })
                .collect(),
            flush_request_id: None,
        };
        c.invoke("CommitData", req.encode(), true);
        commits += 1;
        if commits % 16 == 0 && !pump(&mut c, &mut target_buffer, &mut accepted) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let writes: u64 = scribblers.into_iter().map(|t| t.join().unwrap()).sum();
    println!("scribbler: {writes} words rewritten, {commits} commits");
}

fn config(ds: &str) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(8 * 1024).set_fill_policy_raw(1);
        c.add_data_sources().begin_config().set_name(ds);
    }
    w.finish().unwrap()
}

#[test]
fn a_producer_rewriting_its_smb_never_hurts_the_service() {
    if let Ok(socket) = std::env::var("ZT_SCRIBBLER") {
        scribbler(socket);
        return;
    }
    let dir = std::env::temp_dir().join(format!("zt-scribble-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let producer_ep = Endpoint::Path(dir.join("p"));
    let consumer_ep = Endpoint::Path(dir.join("c"));
    let _daemon = DaemonThread::spawn(DaemonConfig {
        producer_sockets: vec![producer_ep.clone()],
        consumer_socket: consumer_ep.clone(),
        log_level: 0,
        ..DaemonConfig::default()
    })
    .unwrap();
    let honest = ProducerClient::connect(
        &producer_ep,
        ProducerOptions {
            name: "honest".into(),
            ..ProducerOptions::default()
        },
    )
    .unwrap();
    honest
        .register_data_source(
            DataSourceSpec {
                name: "ds".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    let mut consumer = ConsumerClient::connect(&consumer_ep).unwrap();
    let session = consumer.enable_tracing(&config("ds"), None).unwrap();
    let instance = honest
        .wait_for_start("ds", Duration::from_secs(10))
        .unwrap();

    let ep = match &producer_ep {
        Endpoint::Path(p) => p.clone(),
        _ => unreachable!(),
    };
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &crate::test_name(
                module_path!(),
                "a_producer_rewriting_its_smb_never_hurts_the_service",
            ),
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ZT_SCRIBBLER", &ep)
        .env("ZT_SCRIBBLE_SECS", "4")
        .spawn()
        .unwrap();

    let mut w = honest.create_trace_writer(instance.target_buffer).unwrap();
    let mut other = ConsumerClient::connect(&consumer_ep).unwrap();
    let mut written = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(4) && written < 20_000 {
        for _ in 0..200 {
            w.packet(|p| {
                p.set_timestamp(written);
                p.message().append_bytes(900, &payload(written));
            });
            written += 1;
        }
        w.flush(None);
        // Flushes make the service scrape the scribbler's SMB too.
        // (The scribbler never acks, so each flush runs to its timeout.)
        consumer.flush(100).unwrap();
        other
            .query_service_state()
            .expect("another consumer is served throughout");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "the scribbler ran to its end: {status}");
    honest.flush_blocking(Duration::from_secs(10)).unwrap();
    consumer.disable_tracing().unwrap();
    assert_eq!(
        consumer
            .wait_for_end(session, Some(Duration::from_secs(20)))
            .unwrap(),
        SessionEnd::Disabled
    );
    let trace = consumer.read_trace().unwrap();
    let me = std::process::id() as i32;
    let mut got = Vec::new();
    let mut foreign = 0;
    for f in Decoder::new(&trace) {
        let p = f.unwrap().as_bytes().unwrap();
        let d = TracePacketDecoder::new(p);
        if d.trusted_packet_sequence_id() == Some(1) {
            continue;
        }
        if d.trusted_pid() == Some(me) {
            let ts = d.timestamp().expect("honest packets have timestamps");
            assert_eq!(
                Decoder::new(p).find_last(900).unwrap().as_bytes().unwrap(),
                payload(ts),
                "packet {ts} byte for byte"
            );
            got.push(ts);
        } else {
            foreign += 1;
        }
    }
    assert_eq!(got, (0..written).collect::<Vec<_>>(), "every honest packet");
    println!("{written} honest packets intact; {foreign} packets salvaged from the scribbler");
    let mut late = ConsumerClient::connect(&consumer_ep).unwrap();
    late.query_service_state().expect("the service is up");
    let _ = std::fs::remove_dir_all(&dir);
}
