//! Records a trace end to end on embedded defaults: starts `zerotraced`'s
//! service in this process (on private sockets), connects a producer that
//! writes track events (a process and a thread track, nested slices, a
//! counter) through the shared memory buffer, and records a session with
//! the consumer client; the file opens in the Perfetto UI.
//!
//! `cargo run -p zerotrace-core --example record -- trace.pftrace [MS]`

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::os_env::boottime_ns;
use zerotrace_core::producer::{DataSourceEvent, DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_core::service::driver::{Daemon, DaemonConfig};
use zerotrace_protos::protos::TraceConfig;

const PROCESS_TRACK: u64 = 1;
const THREAD_TRACK: u64 = 2;
const COUNTER_TRACK: u64 = 3;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: record OUT [DURATION_MS]");
        return ExitCode::from(2);
    };
    let ms: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    match record(&out, ms) {
        Ok((bytes, packets)) => {
            println!("wrote {bytes} bytes ({packets} packets) to {out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("record: {e}");
            ExitCode::FAILURE
        }
    }
}

fn record(out: &str, ms: u32) -> Result<(usize, usize), Box<dyn std::error::Error>> {
    // The service, on sockets of its own.
    let dir = std::env::temp_dir().join(format!("zerotrace-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let cfg = DaemonConfig {
        producer_sockets: vec![Endpoint::Path(dir.join("producer"))],
        consumer_socket: Endpoint::Path(dir.join("consumer")),
        ..DaemonConfig::default()
    };
    let (producer_ep, consumer_ep) = (cfg.producer_sockets[0].clone(), cfg.consumer_socket.clone());
    let (mut stop, stop_rx) = UnixStream::pair()?;
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let service =
        std::thread::spawn(
            move || match Daemon::bind(cfg, Some(OwnedFd::from(stop_rx))) {
                Ok(mut d) => {
                    let _ = ready_tx.send(Ok(()));
                    let _ = d.run();
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                }
            },
        );
    ready.recv()??;

    // A producer with a track_event data source.
    let producer = Arc::new(ProducerClient::connect(
        &producer_ep,
        ProducerOptions {
            name: "zerotrace-record-demo".into(),
            ..Default::default()
        },
    )?);
    let running = Arc::new(AtomicBool::new(false));
    let flag = running.clone();
    producer.register_data_source(
        DataSourceSpec {
            name: "track_event".into(),
            will_notify_on_stop: true,
            ..Default::default()
        },
        move |e| match e {
            DataSourceEvent::Start(_) => flag.store(true, Ordering::Release),
            DataSourceEvent::Stop(_) => flag.store(false, Ordering::Release),
            _ => {}
        },
    )?;

    // The session: one buffer, the data source, a duration.
    let mut w = protozero::HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(16 * 1024);
        c.add_data_sources().begin_config().set_name("track_event");
        c.set_duration_ms(ms);
    }
    let mut consumer = ConsumerClient::connect(&consumer_ep)?;
    let session = consumer.enable_tracing(&w.finish()?, None)?;
    let instance = producer.wait_for_start("track_event", Duration::from_secs(10))?;

    // Write until the service stops the data source.
    let writer_producer = producer.clone();
    let writer = std::thread::spawn(move || -> Result<(), String> {
        let mut w = writer_producer
            .create_trace_writer(instance.target_buffer)
            .map_err(|e| e.to_string())?;
        w.packet(|p| {
            p.set_timestamp(boottime_ns());
            p.set_sequence_flags(1);
            let mut t = p.begin_track_descriptor();
            t.set_uuid(PROCESS_TRACK);
            t.begin_process()
                .set_pid(std::process::id() as i32)
                .set_process_name("zerotrace record");
        });
        w.packet(|p| {
            p.set_timestamp(boottime_ns());
            let mut t = p.begin_track_descriptor();
            t.set_uuid(THREAD_TRACK).set_parent_uuid(PROCESS_TRACK);
            t.begin_thread()
                .set_pid(std::process::id() as i32)
                .set_tid(1)
                .set_thread_name("worker");
        });
        w.packet(|p| {
            p.set_timestamp(boottime_ns());
            let mut t = p.begin_track_descriptor();
            t.set_uuid(COUNTER_TRACK)
                .set_parent_uuid(PROCESS_TRACK)
                .set_name("queue depth");
            t.begin_counter();
        });
        let start = Instant::now();
        let mut i = 0u64;
        while running.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(60) {
            slice(&mut w, "frame", || {});
            slice(&mut w, "update", || {
                std::thread::sleep(Duration::from_micros(200))
            });
            w.packet(|p| {
                p.set_timestamp(boottime_ns());
                let mut e = p.begin_track_event();
                e.set_type_raw(4)
                    .set_track_uuid(COUNTER_TRACK)
                    .set_counter_value((i % 17) as i64);
            });
            i += 1;
            std::thread::sleep(Duration::from_millis(2));
        }
        w.flush(None);
        Ok(())
    });

    let end = consumer.wait_for_end(session, Some(Duration::from_millis(ms as u64 + 30_000)))?;
    if let SessionEnd::Error(e) = end {
        return Err(e.into());
    }
    writer.join().map_err(|_| "writer panicked")??;
    let trace = consumer.read_trace()?;
    std::fs::write(out, &trace)?;
    let packets = protozero::Decoder::new(&trace).count();

    let _ = stop.write_all(&[1]);
    let _ = service.join();
    let _ = std::fs::remove_dir_all(&dir);
    Ok((trace.len(), packets))
}

/// A slice on the thread track around `body`.
fn slice(w: &mut zerotrace_core::producer::TraceWriter, name: &str, body: impl FnOnce()) {
    w.packet(|p| {
        p.set_timestamp(boottime_ns());
        let mut e = p.begin_track_event();
        e.set_type_raw(1)
            .set_track_uuid(THREAD_TRACK)
            .set_name(name);
    });
    body();
    w.packet(|p| {
        p.set_timestamp(boottime_ns());
        let mut e = p.begin_track_event();
        e.set_type_raw(2).set_track_uuid(THREAD_TRACK);
    });
}
