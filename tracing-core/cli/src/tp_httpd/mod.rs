//! The trace processor's HTTP server (`zerotrace sql --httpd`,
//! `zerotrace-tp -D`): Perfetto's `trace_processor_shell --httpd` endpoints
//! over one [`RpcSession`], which does all the protocol work; this file
//! only moves bytes.
//!
//! - `/status`, `/parse`, `/notify_eof`, `/restore_initial_tables`: one
//!   response each; `/query` and `/rpc`: chunked, one chunk per message;
//!   `/websocket`: the framed stream as binary WebSocket messages
//!   (tungstenite); `/`: a help page. `/compute_metric`, `/trace_summary`,
//!   `/disable_and_read_metatrace` answer their result with its `error`
//!   set and `/export` a chunked body cut short after the reason (as
//!   upstream's failed export), so that Google's client raises;
//!   `/enable_metatrace` says 501; anything else 404 with a reason.
//! - Web pages: `Host` must name the address bound (DNS rebinding gets
//!   403) and what changes the session needs `POST` (405 with `Allow:
//!   POST`): `request.rs` judges both from the head.
//! - Origins as upstream: a browser's request from an origin outside the
//!   UI's (`https://ui.perfetto.dev`, a local UI build on port 10000, and
//!   any given) gets 403; an allowed one gets `Access-Control-Allow-Origin`
//!   back; `OPTIONS` gets the CORS preflight answer; the WebSocket needs an
//!   allowed origin. The Perfetto UI's own origins are let in, but its
//!   `/status` probe gets 403 (the reason in the body, and on stderr once):
//!   it would draw with PerfettoSQL's standard library, which is not
//!   served, and any answer but 200 keeps it on its built-in engine.
//! - Peers: its own uid and root only, as the kernel vouches for them;
//!   others get 403 naming the rule. Loopback unless told otherwise with
//!   [`ServerOptions::serve_remote_peers`] (`admission.rs`, over
//!   `zerotrace_core::peer_policy`, through whose gate it accepts).
//! - Bounds: heads and bodies as
//!   `request.rs` bounds them; at most [`MAX_CONNECTIONS`] connections at
//!   once (the rest get 503), a keep-alive connection waiting for its next
//!   request not counted (`idle.rs` keeps at most [`MAX_IDLE_CONNECTIONS`]
//!   of those, closing the longest-waiting); a new connection that sends
//!   no request within [`REQUEST_TIMEOUT`] is closed, and so is a begun
//!   request that stalls for as long. A connection that has been served
//!   waits for its next request without a clock: Google's Python client
//!   keeps one between queries for as long as its user thinks and does
//!   not reconnect when the server closes it. Requests are served one at a
//!   time, as upstream's single-threaded server serves them, but
//!   `/status` is answered from the session's status board without
//!   waiting for it, and a query stops (its error says why) when its
//!   client hangs up (`watch.rs`, and a chunk that cannot be written) or
//!   past the session's time limit (`--query-timeout`).

mod admission;
mod idle;
pub mod request;
mod watch;

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};
use zerotrace_core::peer_policy::TcpGate;
use zerotrace_trace_processor::rpc::{MAX_FRAME_BYTES, RpcSession, StatusBoard, Unsupported};

use crate::websocket::origin::origin_allowed;
pub use admission::{BindError, remote_warning};
pub use idle::MAX_IDLE_CONNECTIONS;
use request::{Head, MAX_BODY_BYTES, check_host, check_method, parse_head};
use watch::{CLIENT_GONE, Watch};

/// Where the server listens by default (upstream's port, on loopback).
pub const DEFAULT_ADDR: &str = "127.0.0.1:9001";
/// The most connections served at once.
pub const MAX_CONNECTIONS: usize = 64;
/// How long a begun request may stall before it is dropped.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The help page at `/`.
const HELP: &str = "zerotrace trace processor (Perfetto's trace processor RPC)\n\n\
Python: perfetto.TraceProcessor(addr='127.0.0.1:9001') queries the trace loaded here.\n\
Endpoints: /status /parse /notify_eof /query /restore_initial_tables /rpc /websocket\n";

/// What the server is configured with.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// Origins let in besides the UI's.
    pub extra_origins: Vec<String>,
    /// Print a line on stderr per request.
    pub log: bool,
    /// Listen beyond loopback if told to, and admit peers whose uid the
    /// kernel does not vouch for (remote ones). RISK: anyone who reaches
    /// the address reads the loaded trace and runs SQL over it. Local
    /// peers keep the rule (own uid and root only). Off by default
    /// (`--insecure-serve-remote-peers`).
    pub serve_remote_peers: bool,
    /// How long a new connection may wait before its first request
    /// begins (None: [`REQUEST_TIMEOUT`]). A connection served once then
    /// waits for its next request without a clock.
    pub first_request_timeout: Option<Duration>,
}

/// A listening server; [`Server::run`] serves until the process ends.
#[derive(Debug)]
pub struct Server {
    gate: TcpGate,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// The session's `/status` answer, read without taking `session`.
    status: StatusBoard,
    /// Keep-alive connections waiting for a request.
    idle: idle::IdlePool,
    session: Mutex<RpcSession>,
    options: ServerOptions,
    connections: AtomicUsize,
    /// The Perfetto UI was told no once (said on stderr once).
    ui_refused: std::sync::atomic::AtomicBool,
}

impl Server {
    /// Binds `addr` (`IP:PORT`; port 0 picks one): a loopback address,
    /// unless `options` say to serve remote peers (then a warning on
    /// stderr says what that exposes).
    pub fn bind(
        addr: &str,
        session: RpcSession,
        options: ServerOptions,
    ) -> Result<Self, BindError> {
        let addrs: Vec<SocketAddr> = addr.to_socket_addrs()?.collect();
        admission::check_bind(addr, &addrs, options.serve_remote_peers)?;
        let gate = TcpGate::bind(&addrs[..], admission::policy(&options))?;
        if let Some(warning) = remote_warning(gate.local_addr()?) {
            eprintln!("{warning}");
        }
        Ok(Server {
            gate,
            shared: Arc::new(Shared {
                status: session.status_board(),
                idle: idle::IdlePool::default(),
                session: Mutex::new(session),
                options,
                connections: AtomicUsize::new(0),
                ui_refused: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// The address bound.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.gate.local_addr()
    }

    /// Accepts connections, each on its own thread, where the peer is
    /// judged: served if admitted, told why not (403) if refused.
    pub fn run(self) -> io::Result<()> {
        loop {
            let Ok(arrival) = self.gate.next_arrival() else {
                continue;
            };
            let shared = self.shared.clone();
            if shared.connections.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
                shared.connections.fetch_sub(1, Ordering::AcqRel);
                arrival.turn_away(
                    admission::plain("503 Service Unavailable", "Too many connections").as_bytes(),
                );
                continue;
            }
            let spawned = std::thread::Builder::new()
                .name("tp-httpd".into())
                .spawn(move || {
                    match arrival.judge() {
                        Ok(admitted) => {
                            let _ = serve(admitted.stream, &shared);
                        }
                        Err(refused) => admission::refuse_peer(refused, shared.options.log),
                    }
                    shared.connections.fetch_sub(1, Ordering::AcqRel);
                });
            if spawned.is_err() {
                self.shared.connections.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

/// Serves one connection's requests until it closes.
fn serve(mut conn: TcpStream, shared: &Shared) -> io::Result<()> {
    let _ = conn.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::new();
    let first_wait = shared
        .options
        .first_request_timeout
        .unwrap_or(REQUEST_TIMEOUT);
    let mut served = false;
    loop {
        // Wait for a request to begin, not counted as working meanwhile:
        // the first for a while (a connection that never asks is closed),
        // the next ones as long as it takes.
        conn.set_read_timeout((!served).then_some(first_wait))?;
        let (head, head_len) = loop {
            match parse_head(&buf) {
                Ok(Some(h)) => break h,
                Ok(None) => {}
                Err(r) => return refuse(&conn, r.status, r.body, None),
            }
            let waiting = buf
                .is_empty()
                .then(|| shared.idle.park(&conn, &shared.connections));
            let read = read_more(&mut conn, &mut buf);
            if let Some(ticket) = waiting {
                shared.idle.unpark(ticket, &shared.connections);
            }
            if read? == 0 {
                return Ok(());
            }
            conn.set_read_timeout(Some(REQUEST_TIMEOUT))?;
        };
        let total = head_len + head.content_length;
        while buf.len() < total {
            if read_more(&mut conn, &mut buf)? == 0 {
                return Ok(());
            }
        }
        let body: Vec<u8> = buf.drain(..total).skip(head_len).collect();
        if shared.options.log {
            eprintln!("[HTTP] {} {} [body={}B]", head.method, head.uri, body.len());
        }
        let allowed = head
            .origin
            .as_deref()
            .filter(|o| origin_allowed(Some(o), &shared.options.extra_origins))
            .map(str::to_owned);
        if head.method == "OPTIONS" {
            return respond(
                &mut conn,
                "204 No Content",
                &[
                    "Access-Control-Allow-Methods: POST, GET, OPTIONS",
                    "Access-Control-Allow-Headers: *",
                    "Access-Control-Max-Age: 86400",
                    "Access-Control-Allow-Private-Network: true",
                ],
                b"",
                false,
                allowed.as_deref(),
            );
        }
        if head.origin.as_deref().is_some_and(|o| !o.is_empty()) && allowed.is_none() {
            return refuse(&conn, "403 Forbidden", "Origin not allowed", None);
        }
        let local = conn.local_addr()?;
        if let Err(r) = check_host(&head, local) {
            return refuse(&conn, r.status, r.body, allowed.as_deref());
        }
        if let Err(r) = check_method(&head) {
            return refuse_with(
                &conn,
                r.status,
                &["Allow: POST"],
                r.body,
                allowed.as_deref(),
            );
        }
        if head.uri == "/status" && is_perfetto_ui(head.origin.as_deref()) {
            return refuse_ui(&conn, shared, allowed.as_deref());
        }
        if head.uri == "/websocket" && head.upgrade {
            if allowed.is_none() {
                return refuse(&conn, "403 Forbidden", "Origin not allowed", None);
            }
            return websocket(conn, &head, buf, shared, allowed.as_deref());
        }
        if !route(&mut conn, &head, &body, shared, allowed.as_deref())? || !head.keep_alive {
            return Ok(());
        }
        served = true;
    }
}

/// Whether `origin` is the Perfetto UI's own (its site, or a local build of
/// it), not an origin the user let in.
fn is_perfetto_ui(origin: Option<&str>) -> bool {
    origin.is_some_and(|o| {
        crate::websocket::origin::ALLOWED_ORIGINS
            .iter()
            .any(|a| a.eq_ignore_ascii_case(o))
    })
}

/// What the Perfetto UI is told when it probes `/status`. The UI draws a
/// trace with PerfettoSQL's standard library modules and internal tables
/// that are not served here, so a "yes" would leave it half-drawn; any
/// answer but 200 makes it keep its built-in engine without asking (its
/// `checkConnection`). The person running the server reads why, once.
const UI_REFUSED: &str = "zerotrace serves Perfetto's trace processor RPC for the Python \
client; the Perfetto UI needs PerfettoSQL's standard library, which it does not serve, \
so the UI keeps its built-in engine.";

/// Refuses the Perfetto UI's `/status` probe (403, the reason in the body).
fn refuse_ui(conn: &TcpStream, shared: &Shared, origin: Option<&str>) -> io::Result<()> {
    if !shared.ui_refused.swap(true, Ordering::Relaxed) {
        eprintln!(
            "zerotrace: the Perfetto UI ({}) asked to use this server: {UI_REFUSED}",
            origin.unwrap_or("?")
        );
    }
    refuse(conn, "403 Forbidden", UI_REFUSED, origin)
}

/// Reads what is there into `buf`; 0 at the end of the stream.
fn read_more(conn: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut chunk = [0u8; 64 * 1024];
    let n = conn.read(&mut chunk)?;
    if buf.len() + n > MAX_BODY_BYTES + request::MAX_HEAD_BYTES {
        return Err(io::Error::other("request too large"));
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

const PROTOBUF: [&str; 2] = [
    "Cache-Control: no-cache",
    "Content-Type: application/x-protobuf",
];
const CHUNKED: [&str; 3] = [
    "Cache-Control: no-cache",
    "Content-Type: application/x-protobuf",
    "Transfer-Encoding: chunked",
];

/// Serves one plain request; false when the connection must close.
fn route(
    conn: &mut TcpStream,
    head: &Head,
    body: &[u8],
    shared: &Shared,
    origin: Option<&str>,
) -> io::Result<bool> {
    let ka = head.keep_alive;
    let session = || {
        shared
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    };
    match head.uri.as_str() {
        "/" => respond(
            conn,
            "200 OK",
            &["Content-Type: text/plain"],
            HELP.as_bytes(),
            ka,
            origin,
        )?,
        "/status" => {
            let status = shared.status.get();
            respond(conn, "200 OK", &PROTOBUF, &status, ka, origin)?;
        }
        "/parse" => {
            let result = session().parse(body);
            respond(conn, "200 OK", &PROTOBUF, &result, ka, origin)?;
        }
        "/notify_eof" => {
            let _ = session().notify_eof();
            respond(conn, "200 OK", &PROTOBUF, b"", ka, origin)?;
        }
        "/restore_initial_tables" => {
            session().restore_initial_tables();
            respond(conn, "200 OK", &PROTOBUF, b"", ka, origin)?;
        }
        "/query" | "/rpc" => {
            write_head(conn, "200 OK", &CHUNKED, None, ka, origin)?;
            let mut session = session();
            let cancel = session.new_cancel();
            // Until the answer ends, a client hanging up stops the query.
            let watch = Watch::start(conn, cancel.clone())?;
            // Each message is a chunk, sent as soon as it is made; a client
            // gone mid-answer stops the sending and the query.
            let mut sent: io::Result<()> = Ok(());
            let mut out = |f: &[u8]| {
                if sent.is_ok() {
                    sent = write_chunk(conn, f);
                    if sent.is_err() {
                        cancel.cancel(CLIENT_GONE);
                    }
                }
            };
            let close = if head.uri == "/query" {
                session.query_into(body, &mut out);
                false
            } else {
                session.rpc_into(body, &mut out)
            };
            drop(watch);
            drop(session);
            sent?;
            conn.write_all(b"0\r\n\r\n")?;
            if close {
                return Ok(false);
            }
        }
        "/enable_metatrace" => {
            let why = Unsupported::Metatrace.message();
            respond(conn, "501 Not Implemented", &[], why.as_bytes(), ka, origin)?;
        }
        "/export" => {
            // As upstream's failed export: the chunked body is left
            // unfinished (the client raises), after the reason.
            write_head(conn, "501 Not Implemented", &CHUNKED, None, false, origin)?;
            write_chunk(conn, Unsupported::Export.message().as_bytes())?;
            return Ok(false);
        }
        uri => match Unsupported::for_endpoint(uri) {
            Some(what) => respond(conn, "200 OK", &PROTOBUF, &what.result(), ka, origin)?,
            None => {
                let why = format!("No such endpoint: {uri}");
                respond(conn, "404 Not Found", &[], why.as_bytes(), false, origin)?;
                return Ok(false);
            }
        },
    }
    Ok(true)
}

/// `/websocket`: answers the handshake, then carries the framed stream.
fn websocket(
    mut conn: TcpStream,
    head: &Head,
    leftover: Vec<u8>,
    shared: &Shared,
    origin: Option<&str>,
) -> io::Result<()> {
    if head.websocket_version.as_deref() != Some("13") {
        return refuse(&conn, "505 HTTP Version Not Supported", "", origin);
    }
    let Some(key) = head.websocket_key.as_deref() else {
        return refuse(&conn, "400 Bad Request", "", origin);
    };
    let accept = format!(
        "Sec-WebSocket-Accept: {}",
        tungstenite::handshake::derive_accept_key(key.as_bytes())
    );
    let mut out = String::from("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n");
    out += "Connection: Upgrade\r\n";
    out += &accept;
    out += "\r\n";
    if let Some(o) = origin {
        out += &format!("Access-Control-Allow-Origin: {o}\r\nVary: Origin\r\n");
    }
    out += "\r\n";
    conn.write_all(out.as_bytes())?;
    conn.set_read_timeout(None)?;
    let config = WebSocketConfig::default().max_message_size(Some(MAX_FRAME_BYTES));
    let mut ws = WebSocket::from_partially_read(conn, leftover, Role::Server, Some(config));
    loop {
        let msg = match ws.read() {
            Ok(m) => m,
            Err(_) => return Ok(()),
        };
        let data = match msg {
            Message::Binary(b) => b,
            Message::Close(_) => return Ok(()),
            _ => continue,
        };
        let mut sent = true;
        let mut session = shared
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let cancel = session.new_cancel();
        let watch = Watch::start(ws.get_ref(), cancel.clone())?;
        let close = session.rpc_into(&data, &mut |f| {
            sent = sent && ws.send(Message::binary(f.to_vec())).is_ok();
            if !sent {
                cancel.cancel(CLIENT_GONE);
            }
        });
        drop(watch);
        drop(session);
        if !sent {
            return Ok(());
        }
        if close {
            let _ = ws.close(None);
            let _ = ws.flush();
            return Ok(());
        }
    }
}

/// Writes a status line and headers; `len` is the `Content-Length`, or
/// none for a chunked body.
fn write_head(
    conn: &mut TcpStream,
    status: &str,
    headers: &[&str],
    len: Option<usize>,
    keep_alive: bool,
    origin: Option<&str>,
) -> io::Result<()> {
    let mut out = format!("HTTP/1.1 {status}\r\n");
    for h in headers {
        out += h;
        out += "\r\n";
    }
    if let Some(n) = len {
        out += &format!("Content-Length: {n}\r\n");
    }
    out += if keep_alive {
        "Connection: keep-alive\r\n"
    } else {
        "Connection: close\r\n"
    };
    if let Some(o) = origin {
        out += &format!("Access-Control-Allow-Origin: {o}\r\nVary: Origin\r\n");
    }
    out += "\r\n";
    conn.write_all(out.as_bytes())
}

fn write_chunk(conn: &mut TcpStream, data: &[u8]) -> io::Result<()> {
    conn.write_all(format!("{:x}\r\n", data.len()).as_bytes())?;
    conn.write_all(data)?;
    conn.write_all(b"\r\n")
}

fn respond(
    conn: &mut TcpStream,
    status: &str,
    headers: &[&str],
    body: &[u8],
    keep_alive: bool,
    origin: Option<&str>,
) -> io::Result<()> {
    write_head(conn, status, headers, Some(body.len()), keep_alive, origin)?;
    conn.write_all(body)
}

/// Answers `status` with `body` and closes.
fn refuse(conn: &TcpStream, status: &str, body: &str, origin: Option<&str>) -> io::Result<()> {
    refuse_with(conn, status, &[], body, origin)
}

/// Answers `status` with `headers` and `body`, and closes.
fn refuse_with(
    conn: &TcpStream,
    status: &str,
    headers: &[&str],
    body: &str,
    origin: Option<&str>,
) -> io::Result<()> {
    let mut c = conn.try_clone()?;
    respond(&mut c, status, headers, body.as_bytes(), false, origin)?;
    let _ = c.shutdown(std::net::Shutdown::Both);
    Ok(())
}
