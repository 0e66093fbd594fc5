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

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::OwnedFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use protozero::Decoder;
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};
use zerotrace_cli::websocket::{ALLOWED_ORIGINS, Bridge, TRACED_PATH};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::daemon::{Daemon, DaemonConfig};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};
use zerotrace_protos::protos::TraceConfig;

const EXTRA: &str = "http://127.0.0.1:47001";
const WAIT: Duration = Duration::from_secs(20);
const PAYLOAD_FIELD: u32 = 900;

/// A service on a thread of this process, with the bridge in front of its
/// consumer socket; stopped when dropped.
struct Setup {
    dir: std::path::PathBuf,
    producer: Endpoint,
    bridge: Option<Bridge>,
    stop: UnixStream,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Setup {
    fn start(tag: &str) -> Setup {
        let dir = std::env::temp_dir().join(format!("zt-ws-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (producer, consumer) = (
            Endpoint::Path(dir.join("producer")),
            Endpoint::Path(dir.join("consumer")),
        );
        let cfg = DaemonConfig {
            producer_sockets: vec![producer.clone()],
            consumer_socket: consumer.clone(),
            log_level: 0,
            ..DaemonConfig::default()
        };
        let (stop, stop_rx) = UnixStream::pair().unwrap();
        let (ready, bound) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut d = Daemon::bind(cfg, Some(OwnedFd::from(stop_rx))).unwrap();
            ready.send(()).unwrap();
            d.run().unwrap();
        });
        bound.recv().unwrap();
        let bridge = Bridge::start("127.0.0.1:0", consumer, vec![EXTRA.to_owned()], false).unwrap();
        Setup {
            dir,
            producer,
            bridge: Some(bridge),
            stop,
            thread: Some(thread),
        }
    }

    fn addr(&self) -> SocketAddr {
        self.bridge.as_ref().unwrap().local_addr()
    }

    /// A consumer whose bytes go through a WebSocket of the bridge: a unix
    /// socket of the test's own, piped to the WebSocket in messages of at
    /// most 7 bytes one way (so they never line up with IPC frames).
    fn consumer(&self, name: &str) -> ConsumerClient {
        let path = self.dir.join(name);
        let listener = UnixListener::bind(&path).unwrap();
        let ws = open(self.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0])).unwrap();
        std::thread::spawn(move || {
            let (local, _) = listener.accept().unwrap();
            pipe(local, ws);
        });
        ConsumerClient::connect(&Endpoint::Path(path)).unwrap()
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        drop(self.bridge.take());
        let _ = self.stop.write_all(&[1]);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

type Ws = WebSocket<TcpStream>;

/// Opens a WebSocket to the bridge at `path` with `origin` (if any).
fn open(addr: SocketAddr, path: &str, origin: Option<&str>) -> Result<Ws, tungstenite::Error> {
    let mut req = format!("ws://{addr}{path}").into_client_request()?;
    if let Some(o) = origin {
        req.headers_mut().insert("Origin", o.parse().unwrap());
    }
    let stream = TcpStream::connect(addr).unwrap();
    match tungstenite::client(req, stream) {
        Ok((ws, _)) => Ok(ws),
        Err(tungstenite::HandshakeError::Failure(e)) => Err(e),
        Err(tungstenite::HandshakeError::Interrupted(_)) => unreachable!("blocking stream"),
    }
}

/// Pipes a unix stream and a WebSocket both ways until either ends.
fn pipe(mut local: UnixStream, ws: Ws) {
    ws.get_ref()
        .set_read_timeout(Some(Duration::from_millis(5)))
        .unwrap();
    let ws = Arc::new(Mutex::new(ws));
    let ws_out = ws.clone();
    let mut local_in = local.try_clone().unwrap();
    let up = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            let n = match local_in.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut ws = ws_out.lock().unwrap();
            for piece in buf[..n].chunks(7) {
                if ws.send(Message::binary(piece.to_vec())).is_err() {
                    return;
                }
            }
        }
        let _ = ws_out.lock().unwrap().close(None);
    });
    loop {
        let msg = ws.lock().unwrap().read();
        match msg {
            Ok(Message::Binary(b)) => {
                if local.write_all(&b).is_err() {
                    break;
                }
            }
            Ok(Message::Close(_)) => break,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                std::thread::yield_now();
            }
            Err(_) => break,
        }
    }
    let _ = local.shutdown(std::net::Shutdown::Both);
    let _ = up.join();
}

fn status(r: Result<Ws, tungstenite::Error>) -> u16 {
    match r {
        Ok(_) => 101,
        Err(tungstenite::Error::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("unexpected error: {e}"),
    }
}

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
