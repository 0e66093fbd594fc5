//! `zerotraced`: the sans-IO service core made a daemon, beside the core
//! rather than inside it. One thread, one event loop (epoll on Linux,
//! `poll` elsewhere) over the listening sockets, the connections and a
//! shutdown fd. It feeds the core what arrives, carries out the core's
//! actions (replies with the SMB fd attached where asked, trace files),
//! arms the core's next deadline as the wait's timeout, and disconnects
//! peers that stop reading. The core's world (clocks, uuids, memfd SMBs)
//! is [`OsEnv`].
//!
//! * this file: the setup, and the dispatch of the core's actions.
//! * `event_loop.rs`: the wait, and the orderly stop.
//! * `connections.rs`: peers, calls in, replies out, send queues.
//! * `door.rs`: consumer connections opened in-process with a vouched
//!   identity (the WebSocket bridge's).
//! * `output.rs`: the output files of `write_into_file` sessions.
//! * `env.rs`: [`OsEnv`], the core's [`ServiceEnv`](crate::service::ServiceEnv).
//! * `poller.rs`: readiness (epoll, or `poll`).
//! * `thread.rs`: [`DaemonThread`], the service on a thread of the caller.
//!
//! It runs wherever its sockets do: on Windows only TCP endpoints, whose
//! producers emulate their SMB (see [`crate::ipc::Endpoint`]).

mod connections;
#[cfg(unix)]
mod door;
mod env;
mod event_loop;
mod output;
mod poller;
mod thread;

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::sync::Arc;

use self::connections::Conn;
use self::poller::Poller;
use crate::ipc::fd::OwnedFd;
use crate::ipc::host::Port;
use crate::ipc::socket::Endpoint;
use crate::peer_policy::{Policy, ServiceGate};
use crate::platform::{current_uid, local_machine_name};
use crate::service::{Action, ConsumerId, ProducerId, ServiceOptions, SessionId, TracingService};

#[cfg(unix)]
pub use self::door::{ConsumerDoor, DoorError};
pub use self::env::{OsEnv, PassedSmb, SmbTable, machine_id_from_hint, map_provided_smb};
pub use self::thread::DaemonThread;

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
    /// They decide who may be a consumer, through the socket and through
    /// every other endpoint (see [`may_connect`](crate::peer_policy::may_connect)).
    pub consumer_socket_mode: Option<u32>,
    /// The group given the producer socket files (their owner's otherwise).
    pub producer_socket_group: Option<u32>,
    /// The group given the consumer socket file: with a mode such as
    /// `0o660`, the members of that group may trace (Perfetto's
    /// `--set-socket-permissions`).
    pub consumer_socket_group: Option<u32>,
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
    /// Every producer socket serves RelayPort too (`--enable-relay-endpoint`,
    /// as Perfetto's flag): relays on other machines describe their machine
    /// and sync their clocks there.
    pub relay_endpoint: bool,
}

impl Default for DaemonConfig {
    fn default() -> DaemonConfig {
        DaemonConfig {
            producer_sockets: vec![Endpoint::parse(&crate::ipc::socket::producer_socket_name())],
            consumer_socket: Endpoint::parse(&crate::ipc::socket::consumer_socket_name()),
            producer_socket_mode: Some(0o666),
            consumer_socket_mode: Some(0o600),
            producer_socket_group: None,
            consumer_socket_group: None,
            options: ServiceOptions {
                service_uid: current_uid(),
                machine_name: local_machine_name(),
                ..ServiceOptions::default()
            },
            max_send_queue: 32 << 20,
            send_timeout_ms: 10_000,
            log_level: 1,
            tcp_peers_are_local: false,
            relay_endpoint: false,
        }
    }
}

/// Gives a socket file the group `gid` (nothing for other endpoints).
fn set_group(endpoint: &Endpoint, gid: Option<u32>) -> io::Result<()> {
    match (endpoint, gid) {
        #[cfg(unix)]
        (Endpoint::Path(p), Some(gid)) => std::os::unix::fs::chown(p, None, Some(gid))
            .map_err(|e| io::Error::new(e.kind(), format!("chgrp {}: {e}", p.display()))),
        _ => Ok(()),
    }
}

const TOKEN_SHUTDOWN: u64 = 0;
const TOKEN_LISTENER_BASE: u64 = 1;
const TOKEN_CONN_BASE: u64 = 1 << 32;
/// The door's wake fd (below the connections, above any listener).
const TOKEN_DOOR: u64 = TOKEN_CONN_BASE - 1;

/// `zerotraced`: the service core on its sockets.
pub struct Daemon {
    cfg: DaemonConfig,
    poller: Poller,
    listeners: Vec<(ServiceGate, Port)>,
    conns: HashMap<u64, Conn>,
    next_conn: u64,
    svc: TracingService,
    smbs: SmbTable,
    producers: HashMap<ProducerId, u64>,
    consumers: HashMap<ConsumerId, u64>,
    files: HashMap<SessionId, File>,
    /// The fd a consumer passed with the call being handled, until the
    /// core adopts it as an output file (else it is closed).
    passed_output: Option<(ConsumerId, OwnedFd)>,
    shutdown: Option<ShutdownFd>,
    /// Connections opened through [`Daemon::consumer_door`].
    #[cfg(unix)]
    door: Option<door::DoorInbox>,
    #[cfg(unix)]
    door_handle: Option<ConsumerDoor>,
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
            let gate = ServiceGate::listen(ep, cfg.producer_socket_mode, Policy::ProducerSocket)?;
            listeners.push((gate, Port::Producer));
            set_group(ep, cfg.producer_socket_group)?;
        }
        let gate = ServiceGate::listen(
            &cfg.consumer_socket,
            cfg.consumer_socket_mode,
            Policy::ConsumerSocket,
        )?;
        listeners.push((gate, Port::Consumer));
        set_group(&cfg.consumer_socket, cfg.consumer_socket_group)?;
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
            passed_output: None,
            shutdown,
            #[cfg(unix)]
            door: None,
            #[cfg(unix)]
            door_handle: None,
        })
    }

    /// A door through which code of this process opens consumer
    /// connections with an identity it vouches for, rather than the
    /// daemon's own credentials that a connection to the consumer socket
    /// would carry (the WebSocket bridge's). Every call returns a handle to
    /// the same door.
    #[cfg(unix)]
    pub fn consumer_door(&mut self) -> io::Result<ConsumerDoor> {
        if self.door.is_none() {
            let (door, inbox) = door::door(self.cfg.consumer_socket.clone())?;
            self.poller.add(&inbox.wake, TOKEN_DOOR)?;
            self.door = Some(inbox);
            self.door_handle = Some(door);
        }
        self.door_handle
            .clone()
            .ok_or_else(|| io::Error::other("no consumer door"))
    }

    /// The consumer socket this daemon listens on.
    pub fn consumer_socket(&self) -> &Endpoint {
        &self.cfg.consumer_socket
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

    /// Carries out what the core asked.
    fn apply_actions(&mut self) {
        while let Some(a) = self.svc.poll_action() {
            match a {
                Action::Reply { to, request, reply } => self.queue_reply(to, request, reply),
                Action::AdoptPassedOutput { consumer, session } => {
                    self.adopt_passed_output(consumer, session)
                }
                Action::CreateFile { session, path } => self.create_output(session, &path),
                Action::WriteFile {
                    session,
                    data,
                    sync,
                } => self.write_output(session, &data, sync),
                Action::CloseFile { session } => self.close_output(session),
                Action::Disconnect { to, reason } => self.disconnect(to, &reason),
            }
        }
        self.queue_host_replies();
    }
}
