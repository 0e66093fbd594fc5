//! A flush ends with the service scraping every producer's shared memory,
//! while the producer's writer threads go on writing: a chunk its writer
//! completed a moment ago, whose commit is still on its way, is scraped as
//! complete, and the commit then brings the same chunk again. That is the
//! protocol working, not a broken producer: Perfetto's buffer keeps the
//! stored copy and counts nothing. We once counted it as an ABI violation
//! and discarded the commit (a `linux.perf` recording made on a busy
//! machine said `ABI violations 1, chunks discarded 1`).
//!
//! This stresses exactly that: writer threads that never pause, a consumer
//! that flushes again and again under them, then the stop (a last scrape).
//! The trace stats must show no ABI violation and no chunk discarded, and
//! every packet read must be whole, in order per writer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use protozero::{Decoder, HeapWriter};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_protos::protos::{TraceConfig, TraceStatsDecoder};

const WRITERS: u64 = 4;
const FLUSHES: u32 = 150;
/// Our payload field (TracePacket.for_testing).
const PAYLOAD: u32 = 900;

#[test]
fn flushes_under_busy_writers_are_no_abi_violation() {
    let dir = std::env::temp_dir().join(format!("zt-scrape-race-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (producer_ep, consumer_ep) = (
        Endpoint::Path(dir.join("producer")),
        Endpoint::Path(dir.join("consumer")),
    );
    let daemon = DaemonThread::spawn(DaemonConfig {
        producer_sockets: vec![producer_ep.clone()],
        consumer_socket: consumer_ep.clone(),
        log_level: 0,
        ..DaemonConfig::default()
    })
    .unwrap();
    let producer = Arc::new(
        ProducerClient::connect(
            &producer_ep,
            ProducerOptions {
                name: "racer".into(),
                // A small SMB: chunks fill, complete and commit all the time.
                smb_size_hint: 64 * 1024,
                ..ProducerOptions::default()
            },
        )
        .unwrap(),
    );
    producer
        .register_data_source(
            DataSourceSpec {
                name: "race".into(),
                ..DataSourceSpec::default()
            },
            |_| {},
        )
        .unwrap();
    let mut consumer = ConsumerClient::connect(&consumer_ep).unwrap();
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        // Ring buffer, large enough that nothing is overwritten.
        c.add_buffers().set_size_kb(64 * 1024);
        c.add_data_sources().begin_config().set_name("race");
    }
    let req = consumer.enable_tracing(&w.finish().unwrap(), None).unwrap();
    let inst = producer
        .wait_for_start("race", Duration::from_secs(10))
        .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|t| {
            let (stop, written, producer) = (stop.clone(), written.clone(), producer.clone());
            let buffer = inst.target_buffer;
            std::thread::spawn(move || {
                let mut tw = producer.create_trace_writer(buffer).unwrap();
                let mut seq = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    tw.packet(|p| {
                        let m = p.message();
                        // writer, sequence, and a payload of varying size.
                        let mut body = m.begin_nested(PAYLOAD);
                        body.append_uint64(1, t);
                        body.append_uint64(2, seq);
                        body.append_bytes(3, &vec![seq as u8; (seq % 200) as usize]);
                    });
                    seq += 1;
                    written.fetch_add(1, Ordering::Relaxed);
                }
                tw.flush(None);
            })
        })
        .collect();
    // Flushes (each ends with a scrape) under the writers; no timing, a
    // count of written packets between them keeps the writers busy.
    for _ in 0..FLUSHES {
        let before = written.load(Ordering::Relaxed);
        while written.load(Ordering::Relaxed) < before + 200 {
            std::hint::spin_loop();
        }
        consumer.flush(5_000).unwrap();
    }
    // The stop scrapes once more, with the writers still running.
    consumer.disable_tracing().unwrap();
    assert_eq!(
        consumer
            .wait_for_end(req, Some(Duration::from_secs(30)))
            .unwrap(),
        SessionEnd::Disabled
    );
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let trace = consumer.read_trace().unwrap();

    // Every packet whole and in order per writer.
    let mut last = vec![None::<u64>; WRITERS as usize];
    let mut read = 0u64;
    let mut stats = None;
    for f in Decoder::new(&trace) {
        let packet = f.unwrap().as_bytes().unwrap();
        if let Some(s) = Decoder::new(packet).find_last(35) {
            stats = Some(s.as_bytes().unwrap().to_vec());
        }
        let Some(body) = Decoder::new(packet).find_last(PAYLOAD) else {
            continue;
        };
        let body = body.as_bytes().unwrap();
        let t = Decoder::new(body).find_last(1).unwrap().as_u64().unwrap();
        let seq = Decoder::new(body).find_last(2).unwrap().as_u64().unwrap();
        let data = Decoder::new(body)
            .find_last(3)
            .map(|d| d.as_bytes().unwrap().to_vec());
        assert_eq!(
            data.unwrap_or_default(),
            vec![seq as u8; (seq % 200) as usize],
            "packet {seq} of writer {t} is whole"
        );
        let prev = &mut last[t as usize];
        assert!(
            prev.is_none_or(|p| seq > p),
            "writer {t}: {seq} after {prev:?}"
        );
        *prev = Some(seq);
        read += 1;
    }
    assert!(read > u64::from(FLUSHES) * 100, "only {read} packets read");
    let stats = stats.expect("the trace has its stats");
    let stats = TraceStatsDecoder::new(&stats);
    let (violations, discarded) = stats.buffer_stats().fold((0, 0), |(v, d), b| {
        (
            v + b.abi_violations().unwrap_or(0),
            d + b.chunks_discarded().unwrap_or(0),
        )
    });
    assert_eq!(
        (violations, discarded),
        (0, 0),
        "a scrape racing a commit is the protocol working ({read} packets read)"
    );
    drop(consumer);
    drop(producer);
    daemon.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
