//! The driver that makes the sans-IO core a daemon: one thread, one event
//! loop (epoll on Linux, `poll` elsewhere; see `poller.rs`) over the listening
//! sockets, the connections and a shutdown fd. It feeds the core what
//! arrives, writes what the core asks (replies with the SMB fd attached
//! where asked, trace files), arms the core's next deadline as the wait's
//! timeout, and disconnects peers that stop reading. This module is the
//! only part of the service that touches sockets, clocks and files.
//!
//! It runs wherever its sockets do: on Windows only TCP endpoints, whose
//! producers emulate their SMB (see [`crate::ipc::socket`]).

mod poller;

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;

use rustix::fd::AsFd;

use self::poller::{Poller, Ready};
use crate::ipc::fd::OwnedFd;
use crate::ipc::host::{HostConnection, HostEvent, Port};
use crate::ipc::socket::{Endpoint, Listener, Stream, listen};
use crate::os_env::{
    OsEnv, PassedSmb, SmbTable, boottime_ns, local_machine_name, machine_id_from_hint,
    map_provided_smb,
};
use crate::service::{
    Action, ConsumerCall, ConsumerId, Peer, PeerIdentity, ProducerCall, ProducerId,
    ProducerTransport, Reply, RequestId, ServiceOptions, SessionId, TracingService,
};

/// What stops a [`Daemon`] when it becomes readable: any fd on unix (a
/// signal pipe, one end of a socket pair), a socket on Windows.
pub type ShutdownFd = rustix::fd::OwnedFd;

/// How `zerotraced` is set up.
#[derive(Debug, Clone)]
pub struct DaemonConfig {
    /// Producer sockets (Perfetto allows several).
    pub producer_sockets: Vec<Endpoint>,
    /// The consumer socket.
    pub consumer_socket: Endpoint,
    /// Permissions of the producer socket file (any user may produce).
    pub producer_socket_mode: Option<u32>,
    /// Permissions of the consumer socket file (owner only by default).
    pub consumer_socket_mode: Option<u32>,
    /// The core's settings.
    pub options: ServiceOptions,
    /// Bytes a connection may have queued for sending before it is dropped.
    pub max_send_queue: usize,
    /// A peer that accepts nothing for this long is dropped (Perfetto: 10 s).
    pub send_timeout_ms: u64,
    /// Log level: 0 errors, 1 warnings, 2 info, 3 debug.
    pub log_level: u8,
    /// Ignores `set_peer_identity` from TCP peers, so every peer stays a
    /// process of this machine (its packets get no `machine_id`): for a
    /// service that only its own process reaches, such as the in-process
    /// backend's on loopback TCP outside Linux. Without it, as in
    /// Perfetto, a TCP peer is local until it names its machine with
    /// `set_peer_identity` (a relay does).
    pub tcp_peers_are_local: bool,
}

impl Default for DaemonConfig {
    fn default() -> DaemonConfig {
        DaemonConfig {
            producer_sockets: vec![Endpoint::parse(&crate::ipc::socket::producer_socket_name())],
            consumer_socket: Endpoint::parse(&crate::ipc::socket::consumer_socket_name()),
            producer_socket_mode: Some(0o666),
            consumer_socket_mode: Some(0o600),
            options: ServiceOptions {
                service_uid: crate::os_env::current_uid(),
                machine_name: local_machine_name(),
                ..ServiceOptions::default()
            },
            max_send_queue: 32 << 20,
            send_timeout_ms: 10_000,
            log_level: 1,
            tcp_peers_are_local: false,
        }
    }
}

/// A frame waiting to be sent, with the fd that goes with its first byte.
struct Outgoing {
    bytes: Vec<u8>,
    sent: usize,
    fd: Option<Arc<PassedSmb>>,
}

/// One accepted connection.
struct Conn {
    stream: Stream,
    host: HostConnection,
    peer: Peer,
    out: VecDeque<Outgoing>,
    queued: usize,
    /// Since when the peer has accepted nothing while data waits.
    stalled_since: Option<u64>,
    /// Fds received and not yet taken by a call.
    fds: Vec<OwnedFd>,
    identity_set: bool,
    writable_armed: bool,
}

/// Below this many queued bytes a consumer gets the next batch of a read
/// (with the core's `READ_BATCH_BYTES`,
/// this bounds what a read holds in the send queue).
const READ_LOW_WATER: usize = 64 << 10;

const TOKEN_SHUTDOWN: u64 = 0;
const TOKEN_LISTENER_BASE: u64 = 1;
const TOKEN_CONN_BASE: u64 = 1 << 32;

/// `zerotraced`: the service core on its sockets.
pub struct Daemon {
    cfg: DaemonConfig,
    poller: Poller,
    listeners: Vec<(Listener, Port)>,
    conns: HashMap<u64, Conn>,
    next_conn: u64,
    svc: TracingService,
    smbs: SmbTable,
    producers: HashMap<ProducerId, u64>,
    consumers: HashMap<ConsumerId, u64>,
    files: HashMap<SessionId, File>,
    shutdown: Option<ShutdownFd>,
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon")
            .field("connections", &self.conns.len())
            .finish_non_exhaustive()
    }
}

impl Daemon {
    /// Binds every socket (listening at once) and builds the core.
    /// `shutdown`, when readable, stops the loop (a signal pipe).
    pub fn bind(cfg: DaemonConfig, shutdown: Option<ShutdownFd>) -> io::Result<Daemon> {
        let poller = Poller::new()?;
        let mut listeners = Vec::new();
        for ep in &cfg.producer_sockets {
            listeners.push((listen(ep, cfg.producer_socket_mode)?, Port::Producer));
        }
        listeners.push((
            listen(&cfg.consumer_socket, cfg.consumer_socket_mode)?,
            Port::Consumer,
        ));
        for (i, (l, _)) in listeners.iter().enumerate() {
            poller.add(l, TOKEN_LISTENER_BASE + i as u64)?;
        }
        if let Some(fd) = &shutdown {
            poller.add(fd, TOKEN_SHUTDOWN)?;
        }
        let smbs: SmbTable = Arc::default();
        let svc = TracingService::new(cfg.options.clone(), Box::new(OsEnv::new(smbs.clone())));
        Ok(Daemon {
            cfg,
            poller,
            listeners,
            conns: HashMap::new(),
            next_conn: TOKEN_CONN_BASE,
            svc,
            smbs,
            producers: HashMap::new(),
            consumers: HashMap::new(),
            files: HashMap::new(),
            shutdown,
        })
    }

    /// The TCP address a `:0` producer socket was bound to.
    pub fn producer_tcp_addr(&self) -> Option<std::net::SocketAddr> {
        self.tcp_addr(Port::Producer)
    }

    /// The TCP address a `:0` consumer socket was bound to.
    pub fn consumer_tcp_addr(&self) -> Option<std::net::SocketAddr> {
        self.tcp_addr(Port::Consumer)
    }

    fn tcp_addr(&self, port: Port) -> Option<std::net::SocketAddr> {
        self.listeners
            .iter()
            .filter(|(_, p)| *p == port)
            .find_map(|(l, _)| l.local_tcp_addr())
    }

    fn log(&self, level: u8, msg: std::fmt::Arguments<'_>) {
        if level <= self.cfg.log_level {
            let tag = ["E", "W", "I", "D"][level.min(3) as usize];
            eprintln!("zerotraced {tag}: {msg}");
        }
    }

    /// Runs until the shutdown fd becomes readable.
    pub fn run(&mut self) -> io::Result<()> {
        let mut events: Vec<Ready> = Vec::with_capacity(64);
        loop {
            let now = boottime_ns();
            let timeout = self.svc.poll_timeout().map(|t| {
                let d = t.saturating_sub(now);
                rustix::event::Timespec {
                    tv_sec: (d / 1_000_000_000) as i64,
                    tv_nsec: (d % 1_000_000_000) as _,
                }
            });
            // With data stuck in a send queue, wake up to enforce the timeout.
            let stall_tick = rustix::event::Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            };
            let timeout = match (timeout, self.conns.values().any(|c| c.queued > 0)) {
                (Some(t), true) if t.tv_sec >= 1 => Some(stall_tick),
                (None, true) => Some(stall_tick),
                (t, _) => t,
            };
            events.clear();
            // What `poll` needs listed at every wait (epoll ignores it).
            let watched = self
                .shutdown
                .iter()
                .map(|fd| (fd.as_fd(), TOKEN_SHUTDOWN, false))
                .chain(
                    self.listeners
                        .iter()
                        .enumerate()
                        .map(|(i, (l, _))| (l.as_fd(), TOKEN_LISTENER_BASE + i as u64, false)),
                )
                .chain(
                    self.conns
                        .iter()
                        .map(|(&token, c)| (c.stream.as_fd(), token, c.writable_armed)),
                );
            match self.poller.wait(watched, timeout.as_ref(), &mut events) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in &events {
                let token = ev.token;
                if token == TOKEN_SHUTDOWN {
                    self.shutdown_now();
                    return Ok(());
                } else if token < TOKEN_CONN_BASE {
                    self.accept((token - TOKEN_LISTENER_BASE) as usize);
                } else {
                    if ev.read {
                        self.read(token);
                    }
                    if ev.write {
                        self.flush_conn(token);
                    }
                }
            }
            self.svc.handle_timeout(boottime_ns());
            self.apply_actions();
            self.flush_all();
        }
    }

    /// Stops every session (file sessions write what they hold) and closes.
    fn shutdown_now(&mut self) {
        self.log(2, format_args!("shutting down"));
        self.svc.shutdown(boottime_ns());
        self.apply_actions();
        self.flush_all();
        for f in self.files.values_mut() {
            let _ = f.flush();
        }
        self.remove_socket_files();
    }

    /// Removes the socket files this daemon created.
    fn remove_socket_files(&self) {
        let paths = self
            .cfg
            .producer_sockets
            .iter()
            .chain(std::iter::once(&self.cfg.consumer_socket));
        for ep in paths {
            if let Endpoint::Path(p) = ep {
                let _ = std::fs::remove_file(p);
            }
        }
    }

    fn accept(&mut self, index: usize) {
        loop {
            let Some((listener, port)) = self.listeners.get(index) else {
                return;
            };
            let port = *port;
            let stream = match listener.accept() {
                Ok(s) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.log(1, format_args!("accept: {e}"));
                    return;
                }
            };
            let now = boottime_ns();
            let cred = stream.peer_cred();
            // Every peer is of this machine (as in Perfetto, a TCP peer too)
            // until a relay names its machine with set_peer_identity.
            let identity = PeerIdentity {
                uid: cred.map(|c| c.uid).unwrap_or(0),
                pid: cred.map(|c| c.pid),
                machine_id: None,
            };
            let token = self.next_conn;
            self.next_conn += 1;
            let peer = match port {
                Port::Producer => {
                    let transport = ProducerTransport {
                        can_pass_fds: stream.is_unix(),
                    };
                    match self.svc.producer_connected(now, identity, transport) {
                        Some(id) => {
                            self.producers.insert(id, token);
                            Peer::Producer(id)
                        }
                        None => {
                            self.log(1, format_args!("producer uid {} refused", identity.uid));
                            continue;
                        }
                    }
                }
                Port::Consumer => {
                    let id = ConsumerId(token);
                    self.svc.consumer_connected(now, id, identity);
                    self.consumers.insert(id, token);
                    Peer::Consumer(id)
                }
            };
            if self.poller.add(&stream, token).is_err() {
                continue;
            }
            self.log(
                3,
                format_args!(
                    "{peer:?} connected (uid {}, pid {:?})",
                    identity.uid, identity.pid
                ),
            );
            self.conns.insert(
                token,
                Conn {
                    stream,
                    host: HostConnection::new(port),
                    peer,
                    out: VecDeque::new(),
                    queued: 0,
                    stalled_since: None,
                    fds: Vec::new(),
                    identity_set: false,
                    writable_armed: false,
                },
            );
        }
    }

    fn read(&mut self, token: u64) {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let Some(c) = self.conns.get_mut(&token) else {
                return;
            };
            let n = match c.stream.recv(&mut buf, &mut c.fds) {
                Ok(0) => {
                    self.close(token, "end of stream");
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.close(token, &format!("read: {e}"));
                    return;
                }
            };
            let events = c.host.receive(&buf[..n]);
            for ev in events {
                match ev {
                    HostEvent::Call {
                        request_id,
                        method,
                        args,
                    } => self.call(token, request_id, method, &args),
                    HostEvent::SetPeerIdentity {
                        pid,
                        uid,
                        machine_id_hint,
                        machine_name,
                    } => self.set_identity(token, pid, uid, machine_id_hint, machine_name),
                    HostEvent::Fatal(e) => {
                        self.close(token, &e.to_string());
                        return;
                    }
                }
            }
            self.apply_actions();
        }
    }

    /// `set_peer_identity`: honoured once, and only where the kernel gives
    /// no credentials (TCP, as from a relay). The producer becomes one of
    /// another machine, whose id Perfetto derives from the hint (else from
    /// the peer's address) and whose name the relay gives.
    fn set_identity(
        &mut self,
        token: u64,
        pid: Option<i32>,
        uid: Option<i32>,
        hint: Option<String>,
        machine_name: Option<String>,
    ) {
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        if c.stream.is_unix() || c.identity_set || self.cfg.tcp_peers_are_local {
            return;
        }
        c.identity_set = true;
        if let Peer::Producer(id) = c.peer {
            let hint = match hint.filter(|h| !h.is_empty()) {
                Some(h) => h,
                None => match c.stream.peer_ip() {
                    Some(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
                    Some(ip) => ip.to_string(),
                    None => String::new(),
                },
            };
            let identity = PeerIdentity {
                uid: uid.unwrap_or(0) as u32,
                pid,
                machine_id: Some(machine_id_from_hint(hint.as_bytes())),
            };
            self.svc
                .set_producer_identity(id, identity, machine_name.unwrap_or_default());
        }
    }

    fn call(&mut self, token: u64, request_id: u64, method: &'static str, args: &[u8]) {
        let now = boottime_ns();
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        let request = RequestId(request_id);
        let fd = c.fds.pop();
        c.fds.clear();
        match c.peer {
            Peer::Producer(id) => match ProducerCall::decode(method, args) {
                Ok(call) => {
                    let smb = match (&call, fd) {
                        (
                            ProducerCall::InitializeConnection {
                                producer_provided_shmem: true,
                                ..
                            },
                            Some(fd),
                        ) => map_provided_smb(fd),
                        _ => None,
                    };
                    self.svc.handle_producer_call(now, id, request, call, smb);
                }
                Err(e) => {
                    c.host.reply(request_id, Err(()), false);
                    self.log(1, format_args!("producer {id}: {e}"));
                }
            },
            Peer::Consumer(id) => match ConsumerCall::decode(method, args) {
                Ok(call) => {
                    let enabling = matches!(
                        call,
                        ConsumerCall::EnableTracing {
                            attach_notification_only: false,
                            ..
                        }
                    );
                    let passed = enabling && fd.is_some();
                    self.svc
                        .handle_consumer_call_with_fd(now, id, request, call, passed);
                    if passed {
                        self.keep_passed_output(id, fd);
                    }
                }
                Err(e) => {
                    c.host.reply(request_id, Err(()), false);
                    self.log(1, format_args!("consumer {id}: {e}"));
                }
            },
        }
    }

    /// The fd a consumer passed with EnableTracing: the output file of its
    /// new `write_into_file` session, if the core accepted it (else it is
    /// closed here).
    fn keep_passed_output(&mut self, consumer: ConsumerId, fd: Option<OwnedFd>) {
        let (Some(fd), Some(session)) = (fd, self.svc.session_of(consumer)) else {
            return;
        };
        if self
            .svc
            .output_of(session)
            .is_some_and(|(into_file, path)| into_file && path.is_none())
        {
            self.files.insert(session, File::from(fd));
        }
    }

    /// Creates the `output_path` of a session; an existing file is never
    /// replaced (Perfetto's service creates it with `O_EXCL` too).
    fn create_output(&mut self, session: SessionId, path: &str) {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o644);
        let result = match opts.open(path) {
            Ok(f) => {
                self.files.insert(session, f);
                Ok(())
            }
            Err(e) => {
                self.log(
                    1,
                    format_args!("session {session}: cannot create {path}: {e}"),
                );
                Err(e.to_string())
            }
        };
        self.svc.output_file_created(boottime_ns(), session, result);
    }

    /// Appends to a session's file; a failed write closes the file (what
    /// it holds stays) and the core stops the session.
    fn write_output(&mut self, session: SessionId, data: &[u8], sync: bool) {
        let Some(f) = self.files.get_mut(&session) else {
            return;
        };
        let r = f
            .write_all(data)
            .and_then(|_| if sync { f.sync_data() } else { Ok(()) });
        if let Err(e) = r {
            eprintln!("zerotraced E: session {session}: write failed: {e}");
            self.files.remove(&session);
            self.svc
                .output_file_closed(boottime_ns(), session, Some(e.to_string()));
        }
    }

    /// Carries out what the core asked.
    fn apply_actions(&mut self) {
        while let Some(a) = self.svc.poll_action() {
            match a {
                Action::Reply { to, request, reply } => {
                    let token = match to {
                        Peer::Producer(p) => self.producers.get(&p),
                        Peer::Consumer(c) => self.consumers.get(&c),
                    };
                    let Some(&token) = token else { continue };
                    let Some(c) = self.conns.get_mut(&token) else {
                        continue;
                    };
                    let (result, has_more, attach) = match reply {
                        Reply::Ok {
                            data,
                            has_more,
                            attach_smb,
                        } => (Ok(data), has_more, attach_smb),
                        Reply::Err(e) => {
                            if self.cfg.log_level >= 3 {
                                eprintln!(
                                    "zerotraced D: request {} of {to:?} failed: {e}",
                                    request.0
                                );
                            }
                            (Err(()), false, false)
                        }
                    };
                    c.host.reply(request.0, result, has_more);
                    let mut fd = match (attach, to) {
                        (true, Peer::Producer(p)) => {
                            self.smbs.lock().ok().and_then(|t| t.get(&p).cloned())
                        }
                        _ => None,
                    };
                    for bytes in c.host.take_transmit() {
                        c.queued += bytes.len();
                        c.out.push_back(Outgoing {
                            bytes,
                            sent: 0,
                            fd: fd.take(),
                        });
                    }
                }
                Action::CreateFile { session, path } => self.create_output(session, &path),
                Action::WriteFile {
                    session,
                    data,
                    sync,
                } => self.write_output(session, &data, sync),
                Action::CloseFile { session } => {
                    let error = self
                        .files
                        .remove(&session)
                        .and_then(|mut f| f.flush().err())
                        .map(|e| e.to_string());
                    self.svc.output_file_closed(boottime_ns(), session, error);
                }
                Action::Disconnect { to, reason } => {
                    let token = match to {
                        Peer::Producer(p) => self.producers.get(&p).copied(),
                        Peer::Consumer(c) => self.consumers.get(&c).copied(),
                    };
                    if let Some(t) = token {
                        self.close(t, &reason);
                    }
                }
            }
        }
        // Replies that were queued by the host itself (binds, rejections).
        for c in self.conns.values_mut() {
            for bytes in c.host.take_transmit() {
                c.queued += bytes.len();
                c.out.push_back(Outgoing {
                    bytes,
                    sent: 0,
                    fd: None,
                });
            }
        }
    }

    fn flush_all(&mut self) {
        let tokens: Vec<u64> = self
            .conns
            .iter()
            .filter(|(_, c)| c.queued > 0)
            .map(|(t, _)| *t)
            .collect();
        for t in tokens {
            self.flush_conn(t);
        }
    }

    /// Writes what a connection has queued; drops a peer that stopped
    /// reading (queue over its limit, or nothing accepted for too long).
    fn flush_conn(&mut self, token: u64) {
        let now = boottime_ns();
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        let mut progressed = false;
        while let Some(front) = c.out.front_mut() {
            let fd = if front.sent == 0 {
                front.fd.as_ref().map(|s| s.fd())
            } else {
                None
            };
            match c.stream.send(&front.bytes[front.sent..], fd) {
                Ok(n) => {
                    progressed |= n > 0;
                    front.sent += n;
                    c.queued -= n;
                    if front.sent == front.bytes.len() {
                        c.out.pop_front();
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let msg = format!("write: {e}");
                    self.close(token, &msg);
                    return;
                }
            }
        }
        if progressed || c.queued == 0 {
            c.stalled_since = None;
        } else if c.stalled_since.is_none() {
            c.stalled_since = Some(now);
        }
        let stalled_ms = c
            .stalled_since
            .map(|t| now.saturating_sub(t) / 1_000_000)
            .unwrap_or(0);
        if c.queued > self.cfg.max_send_queue || stalled_ms > self.cfg.send_timeout_ms {
            let msg = format!(
                "peer stopped reading ({} bytes queued for {stalled_ms} ms)",
                c.queued
            );
            self.close(token, &msg);
            return;
        }
        // A streaming ReadBuffers goes on once the consumer has drained
        // most of what it was sent.
        if let Peer::Consumer(consumer) = c.peer
            && c.queued < READ_LOW_WATER
            && self.svc.has_pending_read(consumer)
        {
            self.svc.resume_read(now, consumer);
            self.apply_actions();
            let Some(c) = self.conns.get_mut(&token) else {
                return;
            };
            if c.queued > 0 && !c.writable_armed {
                c.writable_armed = true;
                let _ = self.poller.set_write(&c.stream, token, true);
            }
            return;
        }
        let want_out = c.queued > 0;
        if want_out != c.writable_armed {
            c.writable_armed = want_out;
            let _ = self.poller.set_write(&c.stream, token, want_out);
        }
    }

    fn close(&mut self, token: u64, reason: &str) {
        let Some(c) = self.conns.remove(&token) else {
            return;
        };
        let _ = self.poller.remove(&c.stream);
        let now = boottime_ns();
        let level = if reason == "end of stream" { 3 } else { 1 };
        self.log(level, format_args!("{:?} disconnected: {reason}", c.peer));
        match c.peer {
            Peer::Producer(p) => {
                self.producers.remove(&p);
                self.svc.producer_disconnected(now, p);
                if let Ok(mut t) = self.smbs.lock() {
                    t.remove(&p);
                }
            }
            Peer::Consumer(id) => {
                self.consumers.remove(&id);
                self.svc.consumer_disconnected(now, id);
            }
        }
        self.apply_actions();
    }
}
