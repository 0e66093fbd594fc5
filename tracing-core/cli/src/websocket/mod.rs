//! `zerotraced --websocket`: recording from the Perfetto UI. The UI reaches
//! a Linux machine the way Perfetto's `websocket_bridge` serves it: a
//! WebSocket on `/traced` whose messages carry the consumer socket's byte
//! stream, both ways (messages need not line up with IPC frames: it is a
//! stream).
//!
//! Perfetto's bridge is a process of the user who started it, so it lends
//! every peer that user's identity. Ours runs inside the service, which may
//! be root, and follows one rule: a peer gets exactly what its
//! kernel-vouched uid would get by connecting to the consumer socket
//! itself. The kernel names the local process on the other end of the TCP
//! connection ([`peer_uid`]); the bridge lets it in only if that uid
//! could connect to the consumer socket, judged by the socket file's owner,
//! group and mode and the uid's groups, and otherwise answers 403 with a
//! body that says why and what to do. The bridge accepts through the peer
//! policy's gate, which judges (`zerotrace_core::peer_policy`);
//! `admission.rs` says which policy is the bridge's. Inside `zerotraced`
//! the connections go through the service's [`ConsumerDoor`], which carries
//! that identity; a bridge in front of a consumer socket
//! ([`Target::Socket`]) can only lend its own uid, so it lets in only peers
//! the kernel names as that uid. A peer the kernel names nobody for (not
//! on loopback, or no `/proc/net` row) is refused unless the bridge was
//! told to admit such peers ([`Limits::admit_unvouched_peers`]).
//!
//! A web page the user happens to visit must not be able to read or start
//! traces: only the origins Perfetto's bridge allows, plus those given with
//! `--http-additional-cors-origins`, get the upgrade (`origin.rs`); any
//! other origin, or none, gets 403. The origin keeps web pages out, not
//! local programs, which can send any header.
//!
//! Attacks are bounded ([`Limits`]): a handshake has [`HANDSHAKE_TIMEOUT`]
//! and [`HANDSHAKE_MAX_BYTES`]; at most [`MAX_CONNECTIONS`] WebSockets (and
//! handshakes) are served at once, at most [`MAX_CONNECTIONS_PER_UID`] of
//! them for one uid, and the rest get 503 and are closed; a message may
//! carry at most [`MAX_MESSAGE_BYTES`]; a peer that answers nothing, not
//! even a ping, for [`IDLE_TIMEOUT`] is closed (a browser answers pings by
//! itself, so a long recording stays open); and a service that cannot be
//! reached gets 503 (as upstream). Perfetto's bridge bounds none of these.
//!
//! * this file: the listeners, the limits and the handshake.
//! * `admission.rs`: who is let in, and each uid's share of connections.
//! * `origin.rs`: which origins are let in.
//! * `pump.rs`: the byte streams, both ways, after the handshake.

mod admission;
pub(crate) mod origin;
mod pump;
mod upstream;

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::http::StatusCode;
use tungstenite::protocol::WebSocketConfig;
use zerotrace_core::daemon::{ConsumerDoor, DoorError};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::peer_policy::{Arrival, Policy, TcpGate};
pub use zerotrace_core::peer_policy::{Refusal, peer_uid, uid_in_table};

use self::admission::PerUid;
pub use self::origin::{ALLOWED_ORIGINS, origin_allowed};
use self::upstream::Upstream;

/// Where the bridge listens by default: loopback, IPv4 and IPv6, on
/// Perfetto's `websocket_bridge` port.
pub const DEFAULT_ADDR: &str = "localhost:8037";

/// The path the UI opens for the tracing service.
pub const TRACED_PATH: &str = "/traced";

/// The longest a handshake may take from the connection's accept.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The most bytes a handshake request may have.
pub const HANDSHAKE_MAX_BYTES: usize = 64 << 10;

/// The most WebSockets (with the handshakes in progress) served at once.
pub const MAX_CONNECTIONS: usize = 64;

/// The most WebSockets one uid may hold at once: a quarter of all, so
/// that one user holding connections open leaves room for others.
pub const MAX_CONNECTIONS_PER_UID: usize = MAX_CONNECTIONS / 4;

/// The most bytes one WebSocket message (and frame) may carry. The UI
/// sends one IPC frame per message, and Perfetto's IPC frames are far
/// smaller (its client buffer is 128 KiB; a trace config is a few KiB).
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

/// A peer that sends nothing, not even the answer to a ping, for this long
/// is closed. The bridge pings after half of it, so a live browser that
/// waits for a long recording's end stays open.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The bounds a bridge keeps against hostile clients, and whom it admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest a handshake may take from the connection's accept.
    pub handshake_timeout: Duration,
    /// The most bytes a handshake request may have.
    pub handshake_max_bytes: usize,
    /// The most WebSockets (with the handshakes in progress) served at
    /// once; further connections get 503 and are closed.
    pub max_connections: usize,
    /// The most WebSockets (and handshakes) of one uid at once (the
    /// unvouched peers, if admitted, count as one uid); the rest get 503.
    pub max_connections_per_uid: usize,
    /// The most bytes one incoming message or frame may carry; a larger
    /// one closes the WebSocket.
    pub max_message_bytes: usize,
    /// A peer silent for this long, pings unanswered, is closed.
    pub idle_timeout: Duration,
    /// Admits peers whose uid the kernel does not vouch for (another
    /// machine, or no `/proc/net` row), as consumers of no uid. RISK: any
    /// such peer that reaches the bridge may then record with every data
    /// source the service offers (ftrace, perf callstacks of every process)
    /// and read its traces. Off by default.
    pub admit_unvouched_peers: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            handshake_timeout: HANDSHAKE_TIMEOUT,
            handshake_max_bytes: HANDSHAKE_MAX_BYTES,
            max_connections: MAX_CONNECTIONS,
            max_connections_per_uid: MAX_CONNECTIONS_PER_UID,
            max_message_bytes: MAX_MESSAGE_BYTES,
            idle_timeout: IDLE_TIMEOUT,
            admit_unvouched_peers: false,
        }
    }
}

/// Where the bridge's WebSockets go.
#[derive(Debug, Clone)]
pub enum Target {
    /// The service of this process: each connection carries the identity
    /// the kernel gives the WebSocket's peer (or none).
    Door(ConsumerDoor),
    /// A consumer socket: every connection is this process's uid, so only
    /// peers the kernel names as that uid are let in (403 for others).
    Socket(Endpoint),
}

/// The WebSocket bridge, serving until dropped.
#[derive(Debug)]
pub struct Bridge {
    addrs: Vec<SocketAddr>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// What every connection of a bridge shares.
struct Shared {
    target: Target,
    extra: Vec<String>,
    log: bool,
    limits: Limits,
    open: AtomicUsize,
    per_uid: Arc<PerUid>,
}

impl Bridge {
    /// Listens on `listen` (`host:port`; `localhost:PORT` is both
    /// `127.0.0.1` and `[::1]`, as Perfetto's bridge) and serves each
    /// WebSocket over its own consumer connection to `target`;
    /// `extra_origins` are let in besides [`ALLOWED_ORIGINS`].
    pub fn start(
        listen: &str,
        target: Target,
        extra_origins: Vec<String>,
        log: bool,
    ) -> io::Result<Bridge> {
        Bridge::start_with_limits(listen, target, extra_origins, log, Limits::default())
    }

    /// [`Bridge::start`] with other bounds than the default ones.
    pub fn start_with_limits(
        listen: &str,
        target: Target,
        extra_origins: Vec<String>,
        log: bool,
        limits: Limits,
    ) -> io::Result<Bridge> {
        let policy = admission::policy(&target, limits.admit_unvouched_peers);
        let listeners = bind(listen, &policy, log)?;
        let addrs = listeners
            .iter()
            .map(TcpGate::local_addr)
            .collect::<io::Result<Vec<_>>>()?;
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            target,
            extra: extra_origins,
            log,
            limits,
            open: AtomicUsize::new(0),
            per_uid: Arc::default(),
        });
        let mut threads = Vec::new();
        for listener in listeners {
            let (stopping, shared) = (stop.clone(), shared.clone());
            threads.push(
                std::thread::Builder::new()
                    .name("zt-websocket".into())
                    .spawn(move || accept_loop(listener, &stopping, &shared))?,
            );
        }
        Ok(Bridge {
            addrs,
            stop,
            threads,
        })
    }

    /// The first address it listens on (the port the system picked for
    /// port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Every address it listens on.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake each accept loop; it sees the flag and ends.
        for a in &self.addrs {
            let _ = TcpStream::connect_timeout(a, Duration::from_secs(1));
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The listening sockets for `listen`, each a gate of `policy`:
/// `localhost:PORT` binds IPv4 and IPv6 loopback on one port (IPv6 left
/// out, with a log line, where the machine has none); anything else what
/// it resolves to, first address.
fn bind(listen: &str, policy: &Policy, log: bool) -> io::Result<Vec<TcpGate>> {
    if let Some(port) = listen.strip_prefix("localhost:") {
        let port: u16 = port
            .parse()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "invalid port"))?;
        let v4 = TcpGate::bind(("127.0.0.1", port), policy.clone())?;
        let port = v4.local_addr()?.port();
        let mut out = vec![v4];
        match TcpGate::bind(("::1", port), policy.clone()) {
            Ok(v6) => out.push(v6),
            Err(e) if log => eprintln!("zerotraced: websocket: not on [::1]:{port}: {e}"),
            Err(_) => {}
        }
        return Ok(out);
    }
    let addr = listen.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "address resolves to nothing")
    })?;
    Ok(vec![TcpGate::bind(addr, policy.clone())?])
}

/// The listen backlog: deep enough that a burst of connections waits in
/// the kernel for the accept loop (which answers those over the limit at
/// once) instead of being dropped and retried a second later.
const BACKLOG: i32 = 4096;

fn accept_loop(gate: TcpGate, stopping: &AtomicBool, shared: &Arc<Shared>) {
    // Where a second listen() fails the default backlog stays.
    let _ = gate.set_backlog(BACKLOG);
    loop {
        let arrival = gate.next_arrival();
        if stopping.load(Ordering::Relaxed) {
            break;
        }
        let arrival = match arrival {
            Ok(c) => c,
            Err(e) => {
                // Out of fds or memory: wait for connections to end
                // instead of spinning on the same error.
                if shared.log {
                    eprintln!("zerotraced: websocket: accept: {e}");
                }
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        if shared.open.fetch_add(1, Ordering::AcqRel) >= shared.limits.max_connections {
            shared.open.fetch_sub(1, Ordering::AcqRel);
            refuse_busy(arrival);
            continue;
        }
        let shared2 = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("zt-websocket-conn".into())
            .spawn(move || {
                if let Err(e) = serve(arrival, &shared2) {
                    if shared2.log {
                        eprintln!("zerotraced: websocket: {e}");
                    }
                }
                shared2.open.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            shared.open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Over the connection limit: a 503 if the socket takes it at once, then
/// closed, so the accept loop never waits on such a peer (nor asks the
/// kernel who it is).
fn refuse_busy(arrival: Arrival<TcpStream>) {
    arrival.turn_away(
        unavailable("the bridge serves as many connections as it may; try again later").as_bytes(),
    );
}

/// A 503 with `why` as its body.
fn unavailable(why: &str) -> String {
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{why}",
        why.len()
    )
}

/// A 503 with `why` as its body, if the socket takes it at once, then
/// closed.
fn refuse_raw(mut conn: TcpStream, why: &str) {
    let _ = conn.set_nonblocking(true);
    let _ = conn.write(unavailable(why).as_bytes());
}

/// Why a WebSocket ended other than by a close.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The handshake was refused, failed or took too long.
    #[error("handshake: {0}")]
    Handshake(String),
    /// The peer may not be a consumer (it was told why with a 403).
    #[error("refused: {0}")]
    Refused(#[from] Refusal),
    /// The uid already holds its share of the bridge's connections.
    #[error("uid {0:?} holds {1} connections already")]
    TooManyForUid(Option<u32>, usize),
    /// The peer answered nothing, not even a ping, for the idle timeout.
    #[error("the peer was silent for {0:?}")]
    Idle(Duration),
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

/// The TCP connection while it is in its handshake: every read and write
/// waits at most until the deadline, and reads stop after the byte budget.
/// After the handshake both limits are lifted.
struct Bounded {
    stream: TcpStream,
    deadline: Option<Instant>,
    budget: usize,
}

impl Bounded {
    fn left(&self) -> io::Result<Option<Duration>> {
        match self.deadline {
            None => Ok(None),
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "handshake timed out",
                    ))
                } else {
                    Ok(Some(left))
                }
            }
        }
    }

    fn unbound(&mut self) -> io::Result<()> {
        self.deadline = None;
        self.stream.set_read_timeout(None)?;
        self.stream.set_write_timeout(None)
    }
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(left) = self.left()? {
            if self.budget == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "handshake request too large",
                ));
            }
            self.stream.set_read_timeout(Some(left))?;
            let max = buf.len().min(self.budget);
            let n = self.stream.read(&mut buf[..max])?;
            self.budget -= n;
            return Ok(n);
        }
        self.stream.read(buf)
    }
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(left) = self.left()? {
            self.stream.set_write_timeout(Some(left))?;
        }
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// One WebSocket: the peer's identity, the handshake with its path, origin
/// and identity checks and the service's connection, then the byte
/// streams pumped both ways until either side ends.
// The handshake callback's error type is tungstenite's HTTP response.
#[allow(clippy::result_large_err)]
fn serve(arrival: Arrival<TcpStream>, shared: &Shared) -> Result<(), BridgeError> {
    // Asked of the kernel at once, while the peer's socket is surely open;
    // judged before the handshake, so that the refusal's reason is the
    // 403's body; the door judges it again when it opens.
    let (conn, uid, admitted) = match arrival.judge() {
        Ok(a) => (a.stream, a.peer.uid, Ok(())),
        Err(r) => (r.stream, r.peer.uid, Err(r.refusal)),
    };
    conn.set_nodelay(true)?;
    let Some(_slot) = PerUid::take(&shared.per_uid, uid, shared.limits.max_connections_per_uid)
    else {
        let max = shared.limits.max_connections_per_uid;
        refuse_raw(
            conn,
            &format!(
                "your user holds {max} connections to this bridge already, its share; \
                 close one and try again"
            ),
        );
        return Err(BridgeError::TooManyForUid(uid, max));
    };
    let mut refused: Option<Refusal> = None;
    let mut upstream: Option<Upstream> = None;
    let mut unreachable: Option<io::Error> = None;
    let check = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        if req.uri().path() != TRACED_PATH {
            return Err(refuse(StatusCode::NOT_FOUND, "only /traced is served"));
        }
        let origin = req.headers().get("origin").and_then(|v| v.to_str().ok());
        if !origin_allowed(origin, &shared.extra) {
            return Err(refuse(StatusCode::FORBIDDEN, "origin not allowed"));
        }
        if let Err(why) = admitted {
            let r = refuse(StatusCode::FORBIDDEN, &format!("{why}\n"));
            refused = Some(why);
            return Err(r);
        }
        // Err(Ok(e)): the service cannot be reached; Err(Err(r)): refused.
        let opened: Result<Upstream, Result<io::Error, Refusal>> = match (&shared.target, uid) {
            (Target::Door(door), Some(uid)) => {
                door.open(uid, None)
                    .map(Upstream::Unix)
                    .map_err(|e| match e {
                        DoorError::Refused(r) => Err(Refusal::Access(r)),
                        DoorError::Io(e) => Ok(e),
                    })
            }
            (Target::Door(door), None) => door.open_unvouched().map(Upstream::Unix).map_err(Ok),
            (Target::Socket(endpoint), _) => Upstream::connect(endpoint).map_err(Ok),
        };
        match opened {
            Ok(u) => {
                upstream = Some(u);
                Ok(resp)
            }
            Err(Err(why)) => {
                let r = refuse(StatusCode::FORBIDDEN, &format!("{why}\n"));
                refused = Some(why);
                Err(r)
            }
            Err(Ok(e)) => {
                unreachable = Some(e);
                Err(refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the tracing service cannot be reached",
                ))
            }
        }
    };
    let bounded = Bounded {
        stream: conn,
        deadline: Some(Instant::now() + shared.limits.handshake_timeout),
        budget: shared.limits.handshake_max_bytes,
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(shared.limits.max_message_bytes))
        .max_frame_size(Some(shared.limits.max_message_bytes));
    let result = tungstenite::accept_hdr_with_config(bounded, check, Some(config))
        .map_err(|e| e.to_string());
    if let Some(why) = refused {
        return Err(why.into());
    }
    if let Some(e) = unreachable {
        let name = match &shared.target {
            Target::Door(_) => "in-process service".to_owned(),
            Target::Socket(ep) => ep.to_string(),
        };
        return Err(BridgeError::Consumer(name, e));
    }
    let mut ws = result.map_err(BridgeError::Handshake)?;
    ws.get_mut().unbound()?;
    let Some(mut upstream) = upstream else {
        return Err(BridgeError::Handshake("no consumer connection".into()));
    };
    pump::pump(&mut ws, &mut upstream, shared.limits.idle_timeout)
}
