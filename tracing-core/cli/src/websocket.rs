//! `zerotraced --websocket`: recording from the Perfetto UI. The UI reaches
//! a Linux machine the way Perfetto's `websocket_bridge` serves it: a
//! WebSocket on `/traced` whose binary messages carry the consumer
//! socket's byte stream, both ways (messages need not line up with IPC
//! frames: it is a stream). Each WebSocket gets its own connection to the
//! service's consumer socket, so the service sees an ordinary consumer
//! with the uid `zerotraced` runs as.
//!
//! A web page the user happens to visit must not be able to read or start
//! traces: only the origins Perfetto's bridge allows (the UI at
//! `https://ui.perfetto.dev` and a local UI on port 10000), plus those
//! given with `--http-additional-cors-origins`, get the upgrade; any other
//! origin, or none, gets 403 before it. The listener binds loopback unless
//! an address is given.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use rustix::event::{PollFd, PollFlags, poll};
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::http::StatusCode;
use tungstenite::{Message, WebSocket};
use zerotrace_core::ipc::Endpoint;

/// Where the bridge listens by default (Perfetto's `websocket_bridge`).
pub const DEFAULT_ADDR: &str = "127.0.0.1:8037";

/// The path the UI opens for the tracing service.
pub const TRACED_PATH: &str = "/traced";

/// The origins Perfetto's bridge lets in: the UI and a local UI build.
pub const ALLOWED_ORIGINS: &[&str] = &[
    "https://ui.perfetto.dev",
    "http://localhost:10000",
    "http://127.0.0.1:10000",
];

/// The most bytes read from the consumer socket into one message.
const READ_CHUNK: usize = 64 * 1024;

/// Whether a request with `Origin` header `origin` may open the WebSocket:
/// one of [`ALLOWED_ORIGINS`] or of `extra`, exactly. No origin (a
/// non-browser client that does not say) is refused too, as is the opaque
/// `null` of a `file://` page.
pub fn origin_allowed(origin: Option<&str>, extra: &[String]) -> bool {
    origin.is_some_and(|o| ALLOWED_ORIGINS.contains(&o) || extra.iter().any(|e| e == o))
}

/// The WebSocket bridge, serving until dropped.
#[derive(Debug)]
pub struct Bridge {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Bridge {
    /// Listens on `listen` (`host:port`) and serves each WebSocket over its
    /// own connection to the consumer socket `consumer`; `extra_origins`
    /// are let in besides [`ALLOWED_ORIGINS`].
    pub fn start(
        listen: &str,
        consumer: Endpoint,
        extra_origins: Vec<String>,
        log: bool,
    ) -> io::Result<Bridge> {
        let listener = TcpListener::bind(listen)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let extra = Arc::new(extra_origins);
        let thread = std::thread::Builder::new()
            .name("zt-websocket".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if stopping.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (consumer, extra) = (consumer.clone(), extra.clone());
                    let _ = std::thread::Builder::new()
                        .name("zt-websocket-conn".into())
                        .spawn(move || {
                            if let Err(e) = serve(conn, &consumer, &extra) {
                                if log {
                                    eprintln!("zerotraced: websocket: {e}");
                                }
                            }
                        });
                }
            })?;
        Ok(Bridge {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port the system picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop; it sees the flag and ends.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Why a WebSocket ended other than by a close.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The handshake was refused or failed.
    #[error("handshake: {0}")]
    Handshake(String),
    /// The service's consumer socket cannot be reached.
    #[error("consumer socket {0}: {1}")]
    Consumer(String, io::Error),
    /// The WebSocket failed.
    #[error("websocket: {0}")]
    WebSocket(#[from] tungstenite::Error),
    /// A socket failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

fn refuse(status: StatusCode, why: &str) -> ErrorResponse {
    let mut r = ErrorResponse::new(Some(why.to_owned()));
    *r.status_mut() = status;
    r
}

/// The consumer socket, whatever its transport.
enum Upstream {
    Unix(UnixStream),
    Tcp(TcpStream),
    /// A vsock socket, read and written as a file.
    #[cfg(target_os = "linux")]
    Vsock(std::fs::File),
}

impl Upstream {
    fn connect(endpoint: &Endpoint) -> io::Result<Upstream> {
        Ok(match zerotrace_core::ipc::connect(endpoint)? {
            zerotrace_core::ipc::Stream::Unix(s) => Upstream::Unix(s),
            zerotrace_core::ipc::Stream::Tcp(s) => Upstream::Tcp(s),
            #[cfg(target_os = "linux")]
            zerotrace_core::ipc::Stream::Vsock(fd) => Upstream::Vsock(std::fs::File::from(fd)),
        })
    }
}

impl Read for Upstream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Upstream::Unix(s) => s.read(buf),
            Upstream::Tcp(s) => s.read(buf),
            #[cfg(target_os = "linux")]
            Upstream::Vsock(s) => s.read(buf),
        }
    }
}

impl Write for Upstream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Upstream::Unix(s) => s.write(buf),
            Upstream::Tcp(s) => s.write(buf),
            #[cfg(target_os = "linux")]
            Upstream::Vsock(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsFd for Upstream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Upstream::Unix(s) => s.as_fd(),
            Upstream::Tcp(s) => s.as_fd(),
            #[cfg(target_os = "linux")]
            Upstream::Vsock(s) => s.as_fd(),
        }
    }
}

/// One WebSocket: the handshake with its path and origin checks, then the
/// byte streams pumped both ways until either side ends.
// The handshake callback's error type is tungstenite's HTTP response.
#[allow(clippy::result_large_err)]
fn serve(conn: TcpStream, consumer: &Endpoint, extra: &[String]) -> Result<(), BridgeError> {
    conn.set_nodelay(true)?;
    let check = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        if req.uri().path() != TRACED_PATH {
            return Err(refuse(StatusCode::NOT_FOUND, "only /traced is served"));
        }
        let origin = req.headers().get("origin").and_then(|v| v.to_str().ok());
        if !origin_allowed(origin, extra) {
            return Err(refuse(StatusCode::FORBIDDEN, "origin not allowed"));
        }
        Ok(resp)
    };
    let mut ws =
        tungstenite::accept_hdr(conn, check).map_err(|e| BridgeError::Handshake(e.to_string()))?;
    let mut upstream = match Upstream::connect(consumer) {
        Ok(u) => u,
        Err(e) => {
            let _ = ws.close(None);
            let _ = ws.flush();
            return Err(BridgeError::Consumer(consumer.to_string(), e));
        }
    };
    pump(&mut ws, &mut upstream)
}

/// Moves bytes between the WebSocket and the consumer socket, each way as
/// it comes, until one of them closes.
fn pump(ws: &mut WebSocket<TcpStream>, upstream: &mut Upstream) -> Result<(), BridgeError> {
    ws.get_mut().set_nonblocking(true)?;
    let mut buf = vec![0u8; READ_CHUNK];
    // The WebSocket holds unsent bytes (its socket was full).
    let mut unsent = false;
    loop {
        let (ws_ready, ws_out, up_ready) = {
            let mut ws_flags = PollFlags::IN;
            if unsent {
                ws_flags |= PollFlags::OUT;
            }
            // While the browser is behind, leave the service's bytes in
            // its socket (back-pressure instead of an unbounded queue).
            let up_flags = if unsent {
                PollFlags::empty()
            } else {
                PollFlags::IN
            };
            let mut fds = [
                PollFd::new(ws.get_ref(), ws_flags),
                PollFd::new(upstream, up_flags),
            ];
            poll(&mut fds, None).map_err(io::Error::from)?;
            let w = fds[0].revents();
            let u = fds[1].revents();
            (
                w.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR),
                w.contains(PollFlags::OUT),
                u.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR),
            )
        };
        if up_ready {
            let n = match upstream.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                // The service closed the consumer connection.
                let _ = ws.close(None);
                let _ = flush(ws);
                return Ok(());
            }
            match ws.write(Message::binary(buf[..n].to_vec())) {
                Ok(()) => {}
                Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.into()),
            }
            unsent = flush(ws)?;
        } else if ws_out {
            unsent = flush(ws)?;
        }
        if ws_ready {
            loop {
                match ws.read() {
                    Ok(Message::Binary(bytes)) => upstream.write_all(&bytes)?,
                    Ok(Message::Close(_)) => {
                        let _ = flush(ws);
                        return Ok(());
                    }
                    // Pings are answered by the library; text has no meaning here.
                    Ok(_) => {}
                    Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                        break;
                    }
                    Err(
                        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed,
                    ) => {
                        return Ok(());
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            unsent = flush(ws)?;
        }
    }
}

/// Flushes the WebSocket; whether bytes are left for when it can take them.
fn flush(ws: &mut WebSocket<TcpStream>) -> Result<bool, BridgeError> {
    match ws.flush() {
        Ok(()) => Ok(false),
        Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => Ok(true),
        Err(tungstenite::Error::ConnectionClosed) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bridges_origins_and_the_extra_ones_are_let_in() {
        let extra = vec!["http://localhost:4242".to_owned()];
        for ok in ALLOWED_ORIGINS {
            assert!(origin_allowed(Some(ok), &[]), "{ok}");
        }
        assert!(origin_allowed(Some("http://localhost:4242"), &extra));
        for bad in [
            None,
            Some("null"),
            Some(""),
            Some("https://ui.perfetto.dev.evil.example"),
            Some("https://evil.example"),
            Some("http://ui.perfetto.dev"),
            Some("http://localhost:10001"),
            Some("http://localhost:4242/"),
        ] {
            assert!(!origin_allowed(bad, &extra), "{bad:?}");
        }
    }
}
