//! End to end over real sockets: `zerotraced`'s driver in a thread, our
//! producer client writing through a memfd SMB the service created, our
//! consumer client recording and reading back.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::Duration;

use protozero::{Decoder, HeapWriter};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_core::service::driver::{Daemon, DaemonConfig};
use zerotrace_protos::protos::{TraceConfig, TracePacketDecoder};

struct Running {
    stop: UnixStream,
    thread: Option<JoinHandle<()>>,
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
        let mut producer = if tcp {
            Endpoint::Tcp("127.0.0.1:0".into())
        } else {
            Endpoint::Path(dir.join("producer"))
        };
        let consumer = Endpoint::Path(dir.join("consumer"));
        let (stop, stop_rx) = UnixStream::pair().unwrap();
        let cfg = DaemonConfig {
            producer_sockets: vec![producer.clone()],
            consumer_socket: consumer.clone(),
            log_level: 1,
            ..DaemonConfig::default()
        };
        let (ready_tx, ready) = std::sync::mpsc::channel();
        // The core is single-threaded (not Send): build it on its thread.
        let thread = std::thread::spawn(move || {
            let mut daemon = Daemon::bind(cfg, Some(OwnedFd::from(stop_rx))).unwrap();
            ready_tx.send(daemon.producer_tcp_addr()).unwrap();
            daemon.run().unwrap();
        });
        if let Some(addr) = ready.recv().unwrap() {
            producer = Endpoint::Tcp(addr.to_string());
        }
        Running {
            stop,
            thread: Some(thread),
            producer,
            consumer,
            dir,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.stop.write_all(&[1]);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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

#[test]
fn record_over_unix_sockets() {
    record(Running::start("unix"), true);
}

/// Over TCP no fd can pass: the service answers `use_shmem_emulation` and
/// the producer sends its chunks inline; there are no kernel credentials,
/// so the packets carry uid 0 and no pid.
#[test]
fn record_over_tcp_with_smb_emulation() {
    record(Running::start_on("tcp", true), false);
}

fn record(svc: Running, unix: bool) {
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
        if unix {
            let uid = rustix::process::getuid().as_raw() as i32;
            assert_eq!(d.trusted_uid(), Some(uid));
            assert_eq!(d.trusted_pid(), Some(std::process::id() as i32));
        } else {
            assert_eq!(d.trusted_uid(), Some(0), "no kernel credentials over TCP");
            assert_eq!(d.trusted_pid(), None);
        }
    }
}
