//! The `zerotraced` binary: records a session from our clients, and on
//! SIGTERM stops cleanly, writing what a file session holds and removing
//! its sockets.

use std::process::{Command, Stdio};
use std::time::Duration;

use zerotrace_core::consumer::ConsumerClient;
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};

#[test]
fn records_and_shuts_down_cleanly_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("ztd-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (p, c) = (dir.join("p"), dir.join("c"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .arg("--producer-socket")
        .arg(&p)
        .arg("--consumer-socket")
        .arg(&c)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let producer_ep = Endpoint::Path(p.clone());
    let producer = ProducerClient::connect(
        &producer_ep,
        ProducerOptions {
            name: "bin-test".into(),
            ..Default::default()
        },
    )
    .unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "d".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    let mut consumer = None;
    for _ in 0..100 {
        if let Ok(cc) = ConsumerClient::connect(&Endpoint::Path(c.clone())) {
            consumer = Some(cc);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut consumer = consumer.expect("consumer socket");
    // A file session: the service writes the trace into this file.
    let out = dir.join("trace.pftrace");
    let file = std::fs::File::create(&out).unwrap();
    let mut w = protozero::HeapWriter::new();
    {
        let mut cfg = zerotrace_protos::protos::TraceConfig::from_message(w.root());
        cfg.add_buffers().set_size_kb(1024);
        cfg.add_data_sources().begin_config().set_name("d");
        cfg.set_write_into_file(true);
        cfg.set_file_write_period_ms(60_000);
    }
    consumer
        .enable_tracing(&w.finish().unwrap(), Some(&file))
        .unwrap();
    let inst = producer
        .wait_for_start("d", Duration::from_secs(10))
        .unwrap();
    let mut tw = producer.create_trace_writer(inst.target_buffer).unwrap();
    for i in 0..100u64 {
        tw.packet(|p| {
            p.set_timestamp(i);
        });
    }
    tw.flush(None);
    producer.flush_blocking(Duration::from_secs(10)).unwrap();
    // SIGTERM: the file gets the data, the sockets go away.
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(!p.exists() && !c.exists(), "socket files removed");
    let trace = std::fs::read(&out).unwrap();
    let packets: Vec<Vec<u8>> = protozero::Decoder::new(&trace)
        .map(|f| f.unwrap().as_bytes().unwrap().to_vec())
        .collect();
    let data = packets
        .iter()
        .filter(|p| {
            zerotrace_protos::protos::TracePacketDecoder::new(p).trusted_packet_sequence_id()
                != Some(1)
        })
        .count();
    assert_eq!(data, 100);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--version` names the program and version; `--background` returns once
/// the detached service listens and prints its pid; the consumer socket is
/// owner-only by default; SIGTERM ends the detached service and removes
/// its sockets.
#[test]
fn version_background_and_socket_modes() {
    use std::os::unix::fs::PermissionsExt;
    let out = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.trim(),
        format!("zerotraced {}", env!("CARGO_PKG_VERSION")),
        "{text}"
    );

    let dir = std::env::temp_dir().join(format!("ztd-bg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (p, c) = (dir.join("p"), dir.join("c"));
    let out = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .arg("--background")
        .arg("--producer-socket")
        .arg(&p)
        .arg("--consumer-socket")
        .arg(&c)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // The foreground process has exited; the service listens on.
    let mut consumer = ConsumerClient::connect(&Endpoint::Path(c.clone())).unwrap();
    consumer.query_service_state().unwrap();
    let mode = |f: &std::path::Path| std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&c), 0o600, "the consumer socket is owner-only");
    assert_eq!(mode(&p), 0o666);
    drop(consumer);

    let pid = rustix::process::Pid::from_raw(pid).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while (c.exists() || p.exists()) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!c.exists() && !p.exists(), "SIGTERM removes the sockets");
    let _ = std::fs::remove_dir_all(&dir);
}
