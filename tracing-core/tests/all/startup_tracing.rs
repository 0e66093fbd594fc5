//! Startup tracing against `zerotraced` over real sockets: a producer that
//! writes before the service exists (its own sealed memfd SMB, offered with
//! InitializeConnection), a reservation no session claims in time (its
//! data dropped, nothing leaking into a later session), and a buffer the
//! service refuses (startup data dropped, the service's SMB used).
#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use protozero::Decoder;
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::platform::boottime_ns;
use zerotrace_core::producer::{
    DataSourceSpec, ProducerClient, ProducerOptions, StartupTracingOptions,
};
use zerotrace_protos::protos::TracePacketDecoder;

use crate::startup_support;
use startup_support::{EarlyWriter, SEQ_FIELD, config, data_packets, write};

const WAIT: Duration = Duration::from_secs(20);

/// The socket paths of a daemon that may not be running yet.
struct Paths {
    dir: PathBuf,
    producer: Endpoint,
    consumer: Endpoint,
}

impl Paths {
    fn new(name: &str) -> Paths {
        let dir = std::env::temp_dir().join(format!("zt-startup-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Paths {
            producer: Endpoint::Path(dir.join("producer")),
            consumer: Endpoint::Path(dir.join("consumer")),
            dir,
        }
    }
}

impl Drop for Paths {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `zerotraced`'s driver on a thread.
struct Running {
    _daemon: DaemonThread,
}

impl Running {
    fn start(paths: &Paths) -> Running {
        let cfg = DaemonConfig {
            producer_sockets: vec![paths.producer.clone()],
            consumer_socket: paths.consumer.clone(),
            log_level: 1,
            ..DaemonConfig::default()
        };
        Running {
            _daemon: DaemonThread::spawn(cfg).unwrap(),
        }
    }
}

fn producer(paths: &Paths, startup: StartupTracingOptions) -> Arc<ProducerClient> {
    let p = ProducerClient::start(
        &paths.producer,
        ProducerOptions {
            name: "startup-producer".into(),
            startup_tracing: Some(startup),
            ..ProducerOptions::default()
        },
    )
    .unwrap();
    Arc::new(p)
}

fn register(p: &ProducerClient, ds: &str) {
    p.register_data_source(
        DataSourceSpec {
            name: ds.into(),
            will_notify_on_stop: true,
            ..Default::default()
        },
        |_| {},
    )
    .unwrap();
}

/// Runs a session for `ds`: `during` runs once the data source started.
fn record(paths: &Paths, producer: &ProducerClient, ds: &str, during: impl FnOnce()) -> Vec<u8> {
    let mut consumer = ConsumerClient::connect(&paths.consumer).unwrap();
    let session = consumer.enable_tracing(&config(ds), None).unwrap();
    producer.wait_for_start(ds, WAIT).unwrap();
    during();
    producer.flush_blocking(WAIT).unwrap();
    assert!(consumer.flush(5000).unwrap());
    consumer.disable_tracing().unwrap();
    assert_eq!(
        consumer.wait_for_end(session, Some(WAIT)).unwrap(),
        SessionEnd::Disabled
    );
    consumer.read_trace().unwrap()
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The producer writes for a second before the daemon exists; once a
/// session starts the data source, every packet, written before and after,
/// arrives intact and in order, the early ones stamped before the session.
#[test]
fn packets_written_before_the_service_starts_arrive_in_order() {
    let paths = Paths::new("early");
    let producer = producer(&paths, StartupTracingOptions::default());
    register(&producer, "early");
    let writer = EarlyWriter::spawn(&producer, "early");
    let before_service = writer.before_service;
    assert!(before_service > 5, "{before_service}");
    assert!(!producer.is_connected());
    let session_start = boottime_ns();
    let _daemon = Running::start(&paths);
    producer.wait_connected(WAIT).unwrap();
    assert!(producer.uses_own_smb(), "the service adopted our buffer");
    let mut total = 0;
    let trace = record(&paths, &producer, "early", || {
        total = writer.start_and_join();
    });
    let packets = data_packets(&trace);
    let seqs: Vec<u64> = packets.iter().map(|&(s, _)| s).collect();
    assert_eq!(seqs, (0..total).collect::<Vec<_>>());
    for &(seq, ts) in &packets[..before_service as usize] {
        assert!(
            ts < session_start,
            "packet {seq} at {ts} >= {session_start}"
        );
    }
    let ts: Vec<u64> = packets.iter().map(|&(_, t)| t).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(producer.startup_reservations_aborted(), 0);
}

/// No session claims the reservation in time: its data is dropped, the
/// writer keeps writing (into nothing), and a later session gets only what
/// was written for it.
#[test]
fn an_unclaimed_reservation_is_dropped_after_the_timeout() {
    let paths = Paths::new("unclaimed");
    let _daemon = Running::start(&paths);
    let producer = producer(
        &paths,
        StartupTracingOptions {
            timeout: Duration::from_millis(300),
            ..StartupTracingOptions::default()
        },
    );
    register(&producer, "unclaimed");
    let mut w = producer.create_startup_trace_writer("unclaimed").unwrap();
    for i in 0..50 {
        write(&mut w, i);
    }
    producer.wait_connected(WAIT).unwrap();
    assert!(producer.uses_own_smb());
    wait_until("the abort", || producer.startup_reservations_aborted() == 1);
    // Dropped from now on, without a panic.
    for i in 50..100 {
        write(&mut w, i);
    }
    w.flush(None);
    assert!(w.drop_count() > 0);
    let trace = record(&paths, &producer, "unclaimed", || {
        for i in 100..110 {
            write(&mut w, i);
        }
        w.flush(None);
        // With the data source running, a "startup" writer is an ordinary one.
        let mut fresh = producer.create_startup_trace_writer("unclaimed").unwrap();
        for i in 1000..1020 {
            write(&mut fresh, i);
        }
        fresh.flush(None);
    });
    let seqs: Vec<u64> = data_packets(&trace).iter().map(|&(s, _)| s).collect();
    assert_eq!(seqs, (1000..1020).collect::<Vec<_>>());
}

/// The service refuses the buffer (64 KiB pages, above what it grants): the
/// startup data is dropped with a logged reason, and the producer goes on
/// with the service's own buffer.
#[test]
fn a_refused_buffer_falls_back_to_the_services() {
    let paths = Paths::new("refused");
    let producer = producer(
        &paths,
        StartupTracingOptions {
            page_size: 64 * 1024,
            ..StartupTracingOptions::default()
        },
    );
    register(&producer, "refused");
    let mut w = producer.create_startup_trace_writer("refused").unwrap();
    for i in 0..30 {
        write(&mut w, i);
    }
    let _daemon = Running::start(&paths);
    producer.wait_connected(WAIT).unwrap();
    assert!(!producer.uses_own_smb());
    assert_eq!(producer.startup_reservations_aborted(), 1);
    for i in 30..40 {
        write(&mut w, i);
    }
    let trace = record(&paths, &producer, "refused", || {
        let mut fresh = producer.create_startup_trace_writer("refused").unwrap();
        for i in 2000..2030 {
            write(&mut fresh, i);
        }
        fresh.flush(None);
    });
    let seqs: Vec<u64> = data_packets(&trace).iter().map(|&(s, _)| s).collect();
    assert_eq!(seqs, (2000..2030).collect::<Vec<_>>());
}

/// More startup data than the producer's buffer holds: the writer drops
/// (it never stalls) and flags the loss on its next packet; what fitted
/// arrives first, in order, and the writer recovers once the session
/// frees the buffer.
#[test]
fn startup_data_beyond_the_buffer_is_dropped_and_flagged() {
    let paths = Paths::new("overflow");
    let producer = producer(
        &paths,
        StartupTracingOptions {
            smb_size: 64 * 1024,
            ..StartupTracingOptions::default()
        },
    );
    register(&producer, "overflow");
    let mut w = producer.create_startup_trace_writer("overflow").unwrap();
    let started = Instant::now();
    for i in 0..400 {
        write(&mut w, i);
    }
    assert!(started.elapsed() < Duration::from_secs(5), "never stalls");
    assert!(w.drop_count() > 0, "64 KiB cannot hold it all");
    let _daemon = Running::start(&paths);
    producer.wait_connected(WAIT).unwrap();
    let trace = record(&paths, &producer, "overflow", || {
        // Once the service took the held chunks, the buffer is free again.
        producer.flush_blocking(WAIT).unwrap();
        for i in 1000..1100 {
            write(&mut w, i);
            // A pace the service keeps up with (the writer drops, not waits).
            std::thread::sleep(Duration::from_millis(1));
        }
        w.flush(None);
    });
    let packets: Vec<(u64, bool)> = Decoder::new(&trace)
        .map(|f| f.unwrap().as_bytes().unwrap().to_vec())
        .filter_map(|p| {
            let seq = Decoder::new(&p).find_last(SEQ_FIELD)?.as_u64().ok()?;
            let lost = TracePacketDecoder::new(&p)
                .previous_packet_dropped()
                .is_some_and(|v| v != 0);
            Some((seq, lost))
        })
        .collect();
    data_packets(&trace); // payloads intact
    let seqs: Vec<u64> = packets.iter().map(|&(s, _)| s).collect();
    let fitted = seqs.iter().take_while(|&&s| s < 400).count();
    assert!(fitted > 10, "{seqs:?}");
    assert_eq!(seqs[..fitted], (0..fitted as u64).collect::<Vec<_>>());
    assert!(seqs[fitted..].iter().all(|&s| s >= 1000));
    assert!(
        seqs.ends_with(&(1000..1100).collect::<Vec<_>>()[50..]),
        "recovered: {seqs:?}"
    );
    // The first packet after the gap says data was lost.
    assert!(packets[fitted].1, "{:?}", packets[fitted]);
}
