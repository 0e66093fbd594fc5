//! End to end over real sockets: `zerotraced`'s driver in a thread, our
//! producer client writing through a memfd SMB the service created, our
//! consumer client recording and reading back.
#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::time::Duration;

use protozero::{Decoder, HeapWriter};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_protos::protos::{TraceConfig, TracePacketDecoder};

struct Running {
    daemon: Option<DaemonThread>,
    producer: Endpoint,
    consumer: Endpoint,
    dir: PathBuf,
}

impl Running {
    fn start(name: &str) -> Running {
        Running::start_on(name, false)
    }

    fn start_on(name: &str, tcp: bool) -> Running {
        let dir = std::env::temp_dir().join(format!("zt-e2e-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let producer = if tcp {
            Endpoint::Tcp("127.0.0.1:0".into())
        } else {
            Endpoint::Path(dir.join("producer"))
        };
        let consumer = Endpoint::Path(dir.join("consumer"));
        let cfg = DaemonConfig {
            producer_sockets: vec![producer],
            consumer_socket: consumer,
            log_level: 1,
            ..DaemonConfig::default()
        };
        Running::with(cfg, dir)
    }

    fn with(cfg: DaemonConfig, dir: PathBuf) -> Running {
        let daemon = DaemonThread::spawn(cfg).unwrap();
        Running {
            producer: daemon.producer_endpoints()[0].clone(),
            consumer: daemon.consumer_endpoint().clone(),
            daemon: Some(daemon),
            dir,
        }
    }
}

impl Running {
    /// Stops the daemon (its sockets go away), keeping the directory.
    fn stop(&mut self) {
        if let Some(d) = self.daemon.take() {
            d.stop().unwrap();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(buffer_kb: u32, ds: &str, extra: impl FnOnce(&mut TraceConfig<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers()
            .set_size_kb(buffer_kb)
            .set_fill_policy_raw(2);
        c.add_data_sources().begin_config().set_name(ds);
        extra(&mut c);
    }
    w.finish().unwrap()
}

fn payload(i: u64) -> Vec<u8> {
    let n = if i % 97 == 5 {
        20_000
    } else {
        40 + (i as usize * 7) % 80
    };
    (0..n).map(|k| (k as u64 ^ i) as u8).collect()
}

fn data_packets(trace: &[u8]) -> Vec<Vec<u8>> {
    Decoder::new(trace)
        .map(|f| f.unwrap().as_bytes().unwrap().to_vec())
        .filter(|p| TracePacketDecoder::new(p).trusted_packet_sequence_id() != Some(1))
        .collect()
}

/// How the producer reaches the service in [`record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Unix,
    Tcp,
    /// TCP to a service that counts TCP peers as local.
    LocalTcp,
}

#[test]
fn record_over_unix_sockets() {
    record(Running::start("unix"), Transport::Unix);
}

/// Over TCP no fd can pass: the service answers `use_shmem_emulation` and
/// the producer sends its chunks inline; there are no kernel credentials,
/// so the packets carry uid 0 and no pid; the producer named no other
/// machine, so it is local (no `machine_id`), and gets the data source that
/// has no `machine_name_filter`.
#[test]
fn record_over_tcp_with_smb_emulation() {
    record(Running::start_on("tcp", true), Transport::Tcp);
}

/// The in-process backend's service outside Linux (loopback TCP, only its
/// own process connects) keeps TCP peers local whatever they claim: no
/// `machine_id`.
#[test]
fn tcp_peers_counted_as_local_carry_no_machine_id() {
    let dir = std::env::temp_dir().join(format!("zt-e2e-local-tcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = DaemonConfig {
        producer_sockets: vec![Endpoint::Tcp("127.0.0.1:0".into())],
        consumer_socket: Endpoint::Path(dir.join("consumer")),
        log_level: 1,
        tcp_peers_are_local: true,
        ..DaemonConfig::default()
    };
    record(Running::with(cfg, dir), Transport::LocalTcp);
}

fn record(svc: Running, transport: Transport) {
    let producer = ProducerClient::connect(
        &svc.producer,
        ProducerOptions {
            name: "e2e-producer".into(),
            ..ProducerOptions::default()
        },
    )
    .unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "e2e".into(),
                will_notify_on_stop: true,
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    let mut consumer = ConsumerClient::connect(&svc.consumer).unwrap();
    let session = consumer
        .enable_tracing(&config(8 * 1024, "e2e", |_| {}), None)
        .unwrap();
    let instance = producer
        .wait_for_start("e2e", Duration::from_secs(10))
        .unwrap();
    let mut w = producer
        .create_trace_writer(instance.target_buffer)
        .unwrap();
    for i in 0..500u64 {
        w.packet(|p| {
            p.set_timestamp(i);
            p.message().append_bytes(900, &payload(i));
        });
    }
    w.flush(None);
    producer.flush_blocking(Duration::from_secs(10)).unwrap();
    assert!(consumer.flush(5000).unwrap());
    consumer.disable_tracing().unwrap();
    assert_eq!(
        consumer
            .wait_for_end(session, Some(Duration::from_secs(20)))
            .unwrap(),
        SessionEnd::Disabled
    );
    let trace = consumer.read_trace().unwrap();
    let data = data_packets(&trace);
    if data.len() != 500 {
        for f in Decoder::new(&trace) {
            let p = f.unwrap().as_bytes().unwrap();
            if let Some(st) = TracePacketDecoder::new(p).trace_stats() {
                eprintln!("trace stats: {st:?}");
            }
        }
    }
    assert_eq!(data.len(), 500);
    for (i, p) in data.iter().enumerate() {
        let d = TracePacketDecoder::new(p);
        assert_eq!(d.timestamp(), Some(i as u64));
        assert_eq!(
            Decoder::new(p).find_last(900).unwrap().as_bytes().unwrap(),
            payload(i as u64)
        );
        if transport == Transport::Unix {
            let uid = rustix::process::getuid().as_raw() as i32;
            assert_eq!(d.trusted_uid(), Some(uid));
            assert_eq!(d.trusted_pid(), Some(std::process::id() as i32));
        } else {
            // No kernel credentials over TCP: Perfetto's kInvalidUid, -1;
            // the service's own uid where every TCP peer is this process.
            let uid = match transport {
                Transport::LocalTcp => rustix::process::getuid().as_raw() as i32,
                _ => -1,
            };
            assert_eq!(d.trusted_uid(), Some(uid), "uid over TCP");
            assert_eq!(d.trusted_pid(), None);
            // As in Perfetto, a TCP producer is of this machine unless it
            // names another with set_peer_identity (a relay does).
            let machine = Decoder::new(p).find_last(98).and_then(|f| f.as_u32().ok());
            assert_eq!(machine, None, "a TCP producer without an identity is local");
        }
    }
}

fn write(producer: &ProducerClient, target: u16, from: u64, n: u64) {
    let mut w = producer.create_trace_writer(target).unwrap();
    for i in from..from + n {
        w.packet(|p| {
            p.set_timestamp(i);
            p.message().append_bytes(900, &payload(i));
        });
    }
    w.flush(None);
    producer.flush_blocking(Duration::from_secs(10)).unwrap();
}

fn timestamps(trace: &[u8]) -> Vec<u64> {
    data_packets(trace)
        .iter()
        .map(|p| TracePacketDecoder::new(p).timestamp().unwrap())
        .collect()
}

fn record_session(consumer: &Endpoint, ds: &str, run: impl FnOnce()) -> Vec<u8> {
    let mut c = ConsumerClient::connect(consumer).unwrap();
    let s = c.enable_tracing(&config(4096, ds, |_| {}), None).unwrap();
    run();
    c.disable_tracing().unwrap();
    assert_eq!(
        c.wait_for_end(s, Some(Duration::from_secs(20))).unwrap(),
        SessionEnd::Disabled
    );
    c.read_trace().unwrap()
}

/// The service restarts: the producer reconnects by itself, registers its
/// data source again, and records into the new service's sessions.
#[test]
fn producer_reconnects_after_a_service_restart() {
    let mut svc = Running::start("restart");
    let producer = ProducerClient::connect(
        &svc.producer,
        ProducerOptions {
            name: "phoenix".into(),
            ..Default::default()
        },
    )
    .unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "r".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    let first = record_session(&svc.consumer.clone(), "r", || {
        let i = producer
            .wait_for_start("r", Duration::from_secs(10))
            .unwrap();
        write(&producer, i.target_buffer, 0, 10);
    });
    assert_eq!(timestamps(&first), (0..10).collect::<Vec<_>>());
    svc.stop();
    let cfg = DaemonConfig {
        producer_sockets: vec![svc.producer.clone()],
        consumer_socket: svc.consumer.clone(),
        log_level: 1,
        ..DaemonConfig::default()
    };
    let svc2 = Running::with(cfg, svc.dir.clone());
    producer
        .wait_reconnected(1, Duration::from_secs(20))
        .unwrap();
    assert!(producer.reconnects() >= 1);
    let second = record_session(&svc2.consumer.clone(), "r", || {
        let i = producer
            .wait_for_start("r", Duration::from_secs(10))
            .unwrap();
        write(&producer, i.target_buffer, 100, 10);
    });
    assert_eq!(timestamps(&second), (100..110).collect::<Vec<_>>());
}

/// A writer made on the first service's SMB outlives a service restart:
/// what it writes afterwards is lost (its chunks belong to a buffer the new
/// service never saw) but corrupts nothing and never blocks it, and its id,
/// reused by the new connection's first writer, is not unregistered there.
#[test]
fn a_writer_from_before_a_restart_neither_leaks_nor_blocks() {
    let mut svc = Running::start("stale");
    let producer = ProducerClient::connect(
        &svc.producer,
        ProducerOptions {
            name: "survivor".into(),
            ..Default::default()
        },
    )
    .unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "s".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    let mut old = None;
    record_session(&svc.consumer.clone(), "s", || {
        let i = producer
            .wait_for_start("s", Duration::from_secs(10))
            .unwrap();
        old = Some(producer.create_trace_writer(i.target_buffer).unwrap());
    });
    let mut old = old.unwrap();
    svc.stop();
    let cfg = DaemonConfig {
        producer_sockets: vec![svc.producer.clone()],
        consumer_socket: svc.consumer.clone(),
        log_level: 1,
        ..DaemonConfig::default()
    };
    let svc2 = Running::with(cfg, svc.dir.clone());
    producer
        .wait_reconnected(1, Duration::from_secs(20))
        .unwrap();
    let trace = record_session(&svc2.consumer.clone(), "s", || {
        let i = producer
            .wait_for_start("s", Duration::from_secs(10))
            .unwrap();
        let mut new = producer.create_trace_writer(i.target_buffer).unwrap();
        assert_eq!(new.writer_id(), old.writer_id(), "the id is reused");
        let started = std::time::Instant::now();
        // Twice the old SMB (256 KiB): its chunks must be recycled.
        for k in 0..256u64 {
            old.packet(|p| {
                p.set_timestamp(900_000 + k);
                p.message().append_bytes(900, &[k as u8; 2048]);
            });
        }
        old.flush(None);
        drop(old);
        assert!(started.elapsed() < Duration::from_secs(5), "never blocked");
        for k in 200..210u64 {
            new.packet(|p| {
                p.set_timestamp(k);
                p.message().append_bytes(900, &payload(k));
            });
        }
        new.flush(None);
        producer.flush_blocking(Duration::from_secs(10)).unwrap();
    });
    assert_eq!(timestamps(&trace), (200..210).collect::<Vec<_>>());
}

/// Several producers and consumers at once, over an abstract socket for
/// the producers: each session gets exactly its data sources' packets.
#[test]
fn several_producers_and_consumers() {
    let dir = std::env::temp_dir().join(format!("zt-e2e-many-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = DaemonConfig {
        producer_sockets: vec![Endpoint::Abstract(format!(
            "zt-e2e-many-{}",
            std::process::id()
        ))],
        consumer_socket: Endpoint::Path(dir.join("consumer")),
        log_level: 1,
        ..DaemonConfig::default()
    };
    let svc = Running::with(cfg, dir);
    let producers: Vec<ProducerClient> = (0..3)
        .map(|i| {
            let p = ProducerClient::connect(
                &svc.producer,
                ProducerOptions {
                    name: format!("p{i}"),
                    ..Default::default()
                },
            )
            .unwrap();
            p.register_data_source(
                DataSourceSpec {
                    name: format!("ds{}", i % 2),
                    ..Default::default()
                },
                |_| {},
            )
            .unwrap();
            p
        })
        .collect();
    let mut c0 = ConsumerClient::connect(&svc.consumer).unwrap();
    let mut c1 = ConsumerClient::connect(&svc.consumer).unwrap();
    let s0 = c0
        .enable_tracing(&config(2048, "ds0", |_| {}), None)
        .unwrap();
    let s1 = c1
        .enable_tracing(&config(2048, "ds1", |_| {}), None)
        .unwrap();
    for (i, p) in producers.iter().enumerate() {
        let inst = p
            .wait_for_start(&format!("ds{}", i % 2), Duration::from_secs(10))
            .unwrap();
        write(p, inst.target_buffer, 1000 * i as u64, 50);
    }
    c0.disable_tracing().unwrap();
    c1.disable_tracing().unwrap();
    c0.wait_for_end(s0, Some(Duration::from_secs(20))).unwrap();
    c1.wait_for_end(s1, Some(Duration::from_secs(20))).unwrap();
    let mut t0 = timestamps(&c0.read_trace().unwrap());
    let t1 = timestamps(&c1.read_trace().unwrap());
    t0.sort();
    let mut expected0: Vec<u64> = (0..50).chain(2000..2050).collect();
    expected0.sort();
    assert_eq!(t0, expected0, "producers 0 and 2 (ds0)");
    assert_eq!(t1, (1000..1050).collect::<Vec<_>>(), "producer 1 (ds1)");
}

/// A consumer that asks for its buffers and stops reading its socket is
/// dropped after the send timeout; another session goes on meanwhile, and
/// a consumer that disconnects mid-read leaves the service unharmed.
#[test]
fn a_stalled_consumer_does_not_block_the_service() {
    let dir = std::env::temp_dir().join(format!("zt-e2e-slow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = DaemonConfig {
        producer_sockets: vec![Endpoint::Path(dir.join("producer"))],
        consumer_socket: Endpoint::Path(dir.join("consumer")),
        log_level: 0,
        send_timeout_ms: 500,
        max_send_queue: 64 << 20,
        ..DaemonConfig::default()
    };
    let svc = Running::with(cfg, dir);
    let producer = ProducerClient::connect(
        &svc.producer,
        ProducerOptions {
            name: "big".into(),
            ..Default::default()
        },
    )
    .unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "slow".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "fast".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    // The stalled consumer: a session with megabytes of data, read but never drained.
    let mut slow = ConsumerClient::connect(&svc.consumer).unwrap();
    let ss = slow
        .enable_tracing(&config(16 * 1024, "slow", |_| {}), None)
        .unwrap();
    let inst = producer
        .wait_for_start("slow", Duration::from_secs(10))
        .unwrap();
    write(&producer, inst.target_buffer, 0, 3000);
    slow.disable_tracing().unwrap();
    slow.wait_for_end(ss, Some(Duration::from_secs(20)))
        .unwrap();
    slow.channel()
        .call("ReadBuffers", Vec::new(), false)
        .unwrap();
    // Meanwhile another session records and reads normally.
    let t = record_session(&svc.consumer.clone(), "fast", || {
        let i = producer
            .wait_for_start("fast", Duration::from_secs(10))
            .unwrap();
        write(&producer, i.target_buffer, 50_000, 20);
    });
    assert_eq!(timestamps(&t), (50_000..50_020).collect::<Vec<_>>());
    // The stalled consumer is dropped by the service.
    std::thread::sleep(Duration::from_millis(3000));
    let dropped = (0..50).any(|_| {
        slow.channel()
            .poll_reply(u64::MAX, Duration::from_millis(100))
            .is_err()
    });
    assert!(dropped, "the service closed the stalled connection");
    // A consumer that disconnects mid-read.
    let mut quitter = ConsumerClient::connect(&svc.consumer).unwrap();
    let qs = quitter
        .enable_tracing(&config(4096, "fast", |_| {}), None)
        .unwrap();
    let i = producer
        .wait_for_start("fast", Duration::from_secs(10))
        .unwrap();
    write(&producer, i.target_buffer, 7, 500);
    quitter.disable_tracing().unwrap();
    quitter
        .wait_for_end(qs, Some(Duration::from_secs(20)))
        .unwrap();
    quitter
        .channel()
        .call("ReadBuffers", Vec::new(), false)
        .unwrap();
    drop(quitter);
    // The service still serves.
    let mut c = ConsumerClient::connect(&svc.consumer).unwrap();
    assert!(!c.query_service_state().unwrap().is_empty());
}

/// A read far larger than a connection's send queue streams in batches as
/// the consumer drains its socket, instead of piling up (or getting the
/// consumer dropped for a full queue).
#[test]
fn a_large_read_streams_under_the_send_queue_limit() {
    let dir = std::env::temp_dir().join(format!("zt-e2e-large-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = DaemonConfig {
        producer_sockets: vec![Endpoint::Path(dir.join("producer"))],
        consumer_socket: Endpoint::Path(dir.join("consumer")),
        log_level: 1,
        max_send_queue: 4 << 20,
        ..DaemonConfig::default()
    };
    let svc = Running::with(cfg, dir);
    let producer = ProducerClient::connect(
        &svc.producer,
        ProducerOptions {
            name: "large".into(),
            ..Default::default()
        },
    )
    .unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "l".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    let mut c = ConsumerClient::connect(&svc.consumer).unwrap();
    let s = c
        .enable_tracing(&config(32 * 1024, "l", |_| {}), None)
        .unwrap();
    let inst = producer
        .wait_for_start("l", Duration::from_secs(10))
        .unwrap();
    let mut w = producer.create_trace_writer(inst.target_buffer).unwrap();
    let blob = vec![0x5a; 5000];
    for i in 0..3000u64 {
        w.packet(|p| {
            p.set_timestamp(i);
            p.message().append_bytes(900, &blob);
        });
    }
    w.flush(None);
    producer.flush_blocking(Duration::from_secs(10)).unwrap();
    c.disable_tracing().unwrap();
    c.wait_for_end(s, Some(Duration::from_secs(20))).unwrap();
    let trace = c.read_trace().unwrap();
    assert!(trace.len() > 15_000_000, "{} bytes", trace.len());
    assert_eq!(timestamps(&trace), (0..3000).collect::<Vec<_>>());
}
