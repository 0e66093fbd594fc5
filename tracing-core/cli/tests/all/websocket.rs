//! `zerotraced --websocket` for the Perfetto UI: the origin matrix (the
//! bridge's origins and an extra one get the upgrade; any other origin, a
//! `file://` page's `null`, or none get 403; another path 404), checked
//! with a tungstenite client that sets any header; and the UI's call
//! sequence through the WebSocket, with the consumer's byte stream split
//! into messages that do not line up with IPC frames: QueryServiceState on
//! one connection, then on another EnableTracing while a producer writes,
//! GetTraceStats, Flush, DisableTracing, ReadBuffers, FreeBuffers, and
//! CloneSession on a third, every reply of the right kind and the packets
//! as written.

use std::net::SocketAddr;
use std::time::Duration;

use protozero::Decoder;
use zerotrace_cli::websocket::{ALLOWED_ORIGINS, TRACED_PATH};
use zerotrace_core::consumer::SessionEnd;
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_protos::protos::TraceConfig;

const WAIT: Duration = Duration::from_secs(20);
const PAYLOAD_FIELD: u32 = 900;

use crate::websocket_support;
use websocket_support::{EXTRA, Setup, open, status};

#[test]
fn only_the_ui_origins_get_the_upgrade() {
    let s = Setup::start("origins");
    let addr = s.addr();
    for ok in ALLOWED_ORIGINS.iter().copied().chain([EXTRA]) {
        assert_eq!(status(open(addr, TRACED_PATH, Some(ok))), 101, "{ok}");
    }
    for bad in [
        Some("https://evil.example"),
        Some("null"),
        Some("http://ui.perfetto.dev"),
        Some("https://ui.perfetto.dev.evil.example"),
        Some("http://localhost:10001"),
        None,
    ] {
        assert_eq!(status(open(addr, TRACED_PATH, bad)), 403, "{bad:?}");
    }
    assert_eq!(status(open(addr, "/other", Some(ALLOWED_ORIGINS[0]))), 404);
}

/// The packets of a trace (`Trace.packet`) with our payload field.
fn payloads(trace: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for p in Decoder::new(trace) {
        let p = p.unwrap();
        if p.id != 1 {
            continue;
        }
        if let Some(f) = Decoder::new(p.as_bytes().unwrap()).find_last(PAYLOAD_FIELD) {
            out.push(f.as_bytes().unwrap().to_vec());
        }
    }
    out
}

#[test]
fn the_uis_call_sequence_works_through_the_websocket() {
    let s = Setup::start("calls");
    let producer = ProducerClient::start(&s.producer, ProducerOptions::default()).unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "zt.websocket".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    producer.wait_connected(WAIT).unwrap();

    // The UI's first connection: what is there to record.
    let mut query = s.consumer("query");
    let state = query.query_service_state().unwrap();
    assert!(
        state.windows(12).any(|w| w == b"zt.websocket"),
        "the data source is listed"
    );

    // A recording on a connection of its own.
    let mut rec = s.consumer("record");
    let mut w = protozero::HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(1024);
        c.add_data_sources().begin_config().set_name("zt.websocket");
        c.set_unique_session_name("zt-websocket-session");
    }
    let session = rec.enable_tracing(&w.finish().unwrap(), None).unwrap();
    let instance = producer.wait_for_start("zt.websocket", WAIT).unwrap();
    let mut writer = producer.create_trace_writer_for(&instance).unwrap();
    let written: Vec<Vec<u8>> = (0..200u32)
        .map(|i| format!("packet {i} {}", "x".repeat((i % 50) as usize)).into_bytes())
        .collect();
    for p in &written {
        writer.packet(|m| {
            m.message().append_bytes(PAYLOAD_FIELD, p);
        });
    }
    writer.flush(None);
    producer.flush_blocking(WAIT).unwrap();
    let stats = rec.trace_stats().unwrap();
    assert!(!stats.is_empty(), "GetTraceStats answered");
    assert!(rec.flush(5000).unwrap(), "Flush acknowledged");

    // A clone of the running session, on a third connection.
    let mut cloner = s.consumer("clone");
    let cloned = cloner.clone_session(None, Some("zt-websocket-session"));
    assert!(cloned.is_ok(), "CloneSession answered: {cloned:?}");
    let cloned_trace = cloner.read_trace().unwrap();
    assert_eq!(
        payloads(&cloned_trace),
        written,
        "the clone holds the packets"
    );

    rec.disable_tracing().unwrap();
    assert_eq!(
        rec.wait_for_end(session, Some(WAIT)).unwrap(),
        SessionEnd::Disabled
    );
    let trace = rec.read_trace().unwrap();
    assert_eq!(payloads(&trace), written, "every packet, as written");
    rec.free_buffers().unwrap();
}

/// The flags of the binary: `zerotraced --websocket ADDR
/// --http-additional-cors-origins ORIGIN` says where it listens and lets
/// the extra origin in, and no other.
#[test]
fn zerotraced_serves_the_websocket_with_its_flags() {
    use std::io::BufRead;
    let dir = std::env::temp_dir().join(format!("zt-ws-bin-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .args([
            "--websocket",
            "127.0.0.1:0",
            "--http-additional-cors-origins",
        ])
        .arg(format!("{EXTRA},http://localhost:47002"))
        .arg("--producer-socket")
        .arg(dir.join("p"))
        .arg("--consumer-socket")
        .arg(dir.join("c"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut addr = None;
    for line in stderr.lines() {
        let line = line.unwrap();
        if let Some(rest) = line.split("ws://").nth(1) {
            addr = rest.strip_suffix(TRACED_PATH).map(str::to_owned);
            break;
        }
    }
    let addr: SocketAddr = addr.expect("the listening address").parse().unwrap();
    assert!(addr.ip().is_loopback());
    assert_eq!(status(open(addr, TRACED_PATH, Some(EXTRA))), 101);
    assert_eq!(
        status(open(addr, TRACED_PATH, Some("http://localhost:47002"))),
        101
    );
    assert_eq!(
        status(open(addr, TRACED_PATH, Some("http://localhost:47003"))),
        403
    );
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
