//! The heap profiler across a service restart, in a Rust program
//! (`HeapProfiler` as the global allocator, `android.heapprofd` registered
//! with a producer connected to a real service): a profile lives as long
//! as the producer's connection it came on. When the service dies
//! mid-session (a process of its own, this test binary run again in
//! service mode, killed with SIGKILL: no stop reaches the producer),
//! sampling stops; the producer reconnects to the restarted service, and a
//! new session profiles the program (not `rejected_concurrent`, as a
//! profile left running would make it).
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::consumer::ConsumerClient;
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{ProducerClient, ProducerOptions};
use zerotrace_heap_profile::{HeapProfiler, profiling, register, sampling};
use zerotrace_protos::protos::{TraceConfig, TracePacketDecoder};

#[global_allocator]
static ALLOC: HeapProfiler = HeapProfiler::system();

const WAIT: Duration = Duration::from_secs(20);

/// The service's sockets, named after the test process (the service
/// process is told its parent's name).
fn endpoints() -> (Endpoint, Endpoint) {
    let owner = std::env::var(SERVICE_VAR).unwrap_or_else(|_| std::process::id().to_string());
    let base = format!("zerotrace-heap-restart-{owner}");
    (
        Endpoint::Abstract(format!("{base}-p")),
        Endpoint::Abstract(format!("{base}-c")),
    )
}

/// Set in the service process this test runs.
const SERVICE_VAR: &str = "ZEROTRACE_HEAP_RESTART_SERVICE";

/// In service mode: the service, until the process is killed.
#[test]
fn service_process() {
    if std::env::var_os(SERVICE_VAR).is_none() {
        return;
    }
    let _service = service();
    println!("service-ready");
    // Until killed: stdin is the test's pipe, never written.
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// The service as a process of its own, once it listens.
fn service_as_process() -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "service_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SERVICE_VAR, std::process::id().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the service process");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("service-ready") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the service started");
    }
    child
}

fn service() -> DaemonThread {
    let (p, c) = endpoints();
    DaemonThread::spawn(DaemonConfig {
        producer_sockets: vec![p],
        consumer_socket: c,
        log_level: 0,
        ..DaemonConfig::default()
    })
    .expect("service")
}

/// A session profiling this process in exact mode.
fn session_config() -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(8 * 1024);
        let mut ds = c.add_data_sources();
        let mut dc = ds.begin_config();
        dc.set_name("android.heapprofd");
        dc.begin_heapprofd_config()
            .set_sampling_interval_bytes(1)
            .add_pid(u64::from(std::process::id()));
    }
    w.finish().unwrap()
}

#[inline(never)]
fn after_restart() -> Vec<u8> {
    std::hint::black_box(vec![3u8; 12_345])
}

/// Each heap dump of this process in `trace`: (rejected_concurrent,
/// number of samples).
fn dumps(trace: &[u8]) -> Vec<(bool, usize)> {
    let mut out = Vec::new();
    for f in protozero::Decoder::new(trace).filter_map(Result::ok) {
        let Ok(b) = f.as_bytes() else { continue };
        if f.id != 1 {
            continue;
        }
        if let Some(pp) = TracePacketDecoder::new(b).profile_packet() {
            for d in pp.process_dumps() {
                if d.pid() == Some(u64::from(std::process::id())) {
                    out.push((
                        d.rejected_concurrent().unwrap_or(false),
                        d.samples().count(),
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn a_service_restart_ends_the_profile_and_a_new_session_profiles_again() {
    if std::env::var_os(SERVICE_VAR).is_some() {
        return;
    }
    let mut first = service_as_process();
    let producer = Arc::new(
        ProducerClient::connect(
            &endpoints().0,
            ProducerOptions {
                name: "heap-restart".into(),
                ..ProducerOptions::default()
            },
        )
        .expect("producer"),
    );
    register(&producer).expect("register");
    let mut consumer = ConsumerClient::connect(&endpoints().1).expect("consumer");
    consumer
        .enable_tracing(&session_config(), None)
        .expect("first session");
    producer
        .wait_for_start("android.heapprofd", WAIT)
        .expect("the first session starts");
    assert!(profiling() && sampling(), "the first session profiles");

    // The service dies mid-session, and comes back.
    first.kill().expect("SIGKILL the service");
    first.wait().expect("the service is gone");
    drop(consumer);
    let second = service();
    producer
        .wait_reconnected(1, WAIT)
        .expect("the producer reconnects");
    assert!(
        !profiling() && !sampling(),
        "the old connection's profile ended and sampling stopped"
    );

    let mut consumer = ConsumerClient::connect(&endpoints().1).expect("consumer");
    let session = consumer
        .enable_tracing(&session_config(), None)
        .expect("second session");
    producer
        .wait_for_start("android.heapprofd", WAIT)
        .expect("the second session starts");
    assert!(profiling() && sampling(), "the new session profiles");
    let kept = after_restart();
    consumer.disable_tracing().expect("disable");
    consumer.wait_for_end(session, Some(WAIT)).expect("end");
    let trace = consumer.read_trace().expect("trace");
    drop(kept);
    let got = dumps(&trace);
    assert!(!got.is_empty(), "a dump of this process");
    assert!(
        got.iter().all(|(rejected, _)| !rejected),
        "not rejected as concurrent: {got:?}"
    );
    assert!(
        got.iter().any(|(_, samples)| *samples > 0),
        "the new session has samples: {got:?}"
    );
    assert!(!profiling(), "the session's stop ended the profile");
    drop(second);
}
