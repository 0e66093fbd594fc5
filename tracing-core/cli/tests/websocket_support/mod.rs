//! What the WebSocket bridge's tests share: a service on a thread of the
//! test with the bridge in front of it (through the service's door), a
//! tungstenite client that sets any header, and a consumer whose bytes go
//! through a WebSocket.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};
use zerotrace_cli::websocket::{ALLOWED_ORIGINS, Bridge, Limits, TRACED_PATH, Target};
use zerotrace_core::consumer::ConsumerClient;
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;

/// An origin the test bridges let in besides the UI's.
pub const EXTRA: &str = "http://127.0.0.1:47001";

/// A service on a thread of this process, with the bridge in front of it;
/// stopped when dropped.
pub struct Setup {
    pub dir: PathBuf,
    pub producer: Endpoint,
    pub consumer: Endpoint,
    bridge: Option<Bridge>,
    daemon: Option<DaemonThread>,
}

impl Setup {
    pub fn start(tag: &str) -> Setup {
        Setup::start_with("127.0.0.1:0", tag, Limits::default())
    }

    /// A bridge listening on `listen` with `limits`.
    pub fn start_with(listen: &str, tag: &str, limits: Limits) -> Setup {
        Setup::start_full(listen, tag, limits, 0o600, None)
    }

    /// [`Setup::start_with`] with the consumer socket's mode and group.
    pub fn start_full(
        listen: &str,
        tag: &str,
        limits: Limits,
        consumer_mode: u32,
        consumer_group: Option<u32>,
    ) -> Setup {
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
            consumer_socket_mode: Some(consumer_mode),
            consumer_socket_group: consumer_group,
            log_level: 0,
            ..DaemonConfig::default()
        };
        let daemon = DaemonThread::spawn(cfg).unwrap();
        let bridge = Bridge::start_with_limits(
            listen,
            Target::Door(daemon.consumer_door()),
            vec![EXTRA.to_owned()],
            false,
            limits,
        )
        .unwrap();
        Setup {
            dir,
            producer,
            consumer,
            bridge: Some(bridge),
            daemon: Some(daemon),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.bridge.as_ref().unwrap().local_addr()
    }

    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.bridge.as_ref().unwrap().local_addrs().to_vec()
    }

    /// A consumer whose bytes go through a WebSocket of the bridge.
    pub fn consumer(&self, name: &str) -> ConsumerClient {
        let ws = open(self.addr(), TRACED_PATH, Some(ALLOWED_ORIGINS[0])).unwrap();
        consumer_over(ws, &self.dir, name)
    }

    /// Stops the service (the bridge keeps listening).
    pub fn stop_service(&mut self) {
        if let Some(d) = self.daemon.take() {
            d.stop().unwrap();
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        drop(self.bridge.take());
        self.stop_service();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub type Ws = WebSocket<TcpStream>;

/// Opens a WebSocket to the bridge at `path` with `origin` (if any).
pub fn open(addr: SocketAddr, path: &str, origin: Option<&str>) -> Result<Ws, tungstenite::Error> {
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

/// A consumer client speaking through `ws`: a unix socket `name` in `dir`,
/// piped to the WebSocket in messages of at most 7 bytes one way (so they
/// never line up with IPC frames).
pub fn consumer_over(ws: Ws, dir: &Path, name: &str) -> ConsumerClient {
    let path = dir.join(name);
    let listener = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        let (local, _) = listener.accept().unwrap();
        pipe(local, ws);
    });
    ConsumerClient::connect(&Endpoint::Path(path)).unwrap()
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

/// The HTTP status of a handshake's answer (101 for an upgrade).
pub fn status(r: Result<Ws, tungstenite::Error>) -> u16 {
    match r {
        Ok(_) => 101,
        Err(tungstenite::Error::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("unexpected error: {e}"),
    }
}
