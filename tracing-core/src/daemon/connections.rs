//! The daemon's peers: accepting connections, reading frames into the
//! core as calls (with the fds that came with them), queueing replies
//! (with the SMB fd where the core asks), writing them as the socket
//! accepts, and dropping a peer that stops reading.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;

use super::Daemon;
use super::env::{PassedSmb, machine_id_from_hint, map_provided_smb};
use crate::ipc::fd::OwnedFd;
use crate::ipc::host::{HostConnection, HostEvent, Port};
use crate::ipc::socket::Stream;
use crate::peer_policy::Vouched;
use crate::platform::boottime_ns;
#[cfg(doc)]
use crate::service::UNKNOWN_UID;
use crate::service::{
    ConsumerCall, ConsumerId, Peer, PeerIdentity, ProducerCall, ProducerTransport, Reply, RequestId,
};

/// A frame waiting to be sent, with the fd that goes with its first byte.
pub(super) struct Outgoing {
    bytes: Vec<u8>,
    sent: usize,
    fd: Option<Arc<PassedSmb>>,
}

/// One accepted connection.
pub(super) struct Conn {
    pub(super) stream: Stream,
    host: HostConnection,
    peer: Peer,
    out: VecDeque<Outgoing>,
    pub(super) queued: usize,
    /// Since when the peer has accepted nothing while data waits.
    stalled_since: Option<u64>,
    /// Fds received and not yet taken by a call.
    fds: Vec<OwnedFd>,
    identity_set: bool,
    pub(super) writable_armed: bool,
}

/// Below this many queued bytes a consumer gets the next batch of a read
/// (with the core's `READ_BATCH_BYTES`,
/// this bounds what a read holds in the send queue).
const READ_LOW_WATER: usize = 64 << 10;

impl Daemon {
    /// Takes every peer waiting on listener `index`, each through its
    /// gate (the producer and consumer sockets' policies admit whoever
    /// the kernel let connect; the gate says who that is).
    pub(super) fn admit_arrivals(&mut self, index: usize) {
        loop {
            let Some((gate, port)) = self.listeners.get(index) else {
                return;
            };
            let port = *port;
            let arrival = match gate.next_arrival() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.log(1, format_args!("accept: {e}"));
                    return;
                }
            };
            match arrival.judge() {
                Ok(admitted) => {
                    let identity = self.identity_of(admitted.peer);
                    self.add_conn(admitted.stream, port, identity);
                }
                Err(refused) => {
                    self.log(1, format_args!("peer refused: {}", refused.refusal));
                }
            }
        }
    }

    /// The service's identity for a peer the kernel vouched for as
    /// `peer`: a unix socket's credentials; for TCP (and vsock) no uid
    /// ([`UNKNOWN_UID`]), as Perfetto's `kInvalidUid`, except where every
    /// TCP peer is this process (`tcp_peers_are_local`). Every peer is of
    /// this machine (as in Perfetto, a TCP peer too) until a relay names
    /// its machine with set_peer_identity.
    fn identity_of(&self, peer: Vouched) -> PeerIdentity {
        match peer.uid {
            Some(uid) => PeerIdentity {
                uid,
                pid: peer.pid,
                machine_id: None,
            },
            None if self.cfg.tcp_peers_are_local => PeerIdentity {
                uid: self.cfg.options.service_uid,
                ..PeerIdentity::default()
            },
            // A TCP producer too: its packets say trusted_uid -1, as
            // Perfetto's do, and lockdown refuses it.
            None => PeerIdentity::UNKNOWN,
        }
    }

    /// Admits the consumer connections opened through the door, each with
    /// the identity its opener vouched for.
    pub(super) fn admit_door(&mut self) {
        #[cfg(unix)]
        {
            let entries = self.door.as_mut().map(|d| d.drain()).unwrap_or_default();
            for (stream, identity) in entries {
                if stream.set_nonblocking(true).is_err() {
                    continue;
                }
                self.add_conn(Stream::Unix(stream), Port::Consumer, identity);
            }
        }
    }

    /// A new connection on `port` whose peer is `identity`: the core is
    /// told, the poller watches it.
    fn add_conn(&mut self, stream: Stream, port: Port, identity: PeerIdentity) {
        let now = boottime_ns();
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
                        return;
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
            return;
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
                host: HostConnection::with_relay_port(port, self.cfg.relay_endpoint),
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

    pub(super) fn read(&mut self, token: u64) {
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
    pub(super) fn set_identity(
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
                    // The core says whether a passed fd is the output file
                    // of the session this call creates
                    // (`Action::AdoptPassedOutput`); if not, it is closed.
                    let passed = fd.is_some();
                    self.passed_output = fd.map(|fd| (id, fd));
                    self.svc
                        .handle_consumer_call_with_fd(now, id, request, call, passed);
                    if passed {
                        self.apply_actions();
                        self.passed_output = None;
                    }
                }
                Err(e) => {
                    c.host.reply(request_id, Err(()), false);
                    self.log(1, format_args!("consumer {id}: {e}"));
                }
            },
        }
    }

    /// Queues the reply to `request` of `to`, with the producer's SMB fd
    /// on its first frame when the core asks to attach it.
    pub(super) fn queue_reply(&mut self, to: Peer, request: RequestId, reply: Reply) {
        let token = match to {
            Peer::Producer(p) => self.producers.get(&p),
            Peer::Consumer(c) => self.consumers.get(&c),
        };
        let Some(&token) = token else { return };
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        let (result, has_more, attach) = match reply {
            Reply::Ok {
                data,
                has_more,
                attach_smb,
            } => (Ok(data), has_more, attach_smb),
            Reply::Err(e) => {
                if self.cfg.log_level >= 3 {
                    eprintln!("zerotraced D: request {} of {to:?} failed: {e}", request.0);
                }
                (Err(()), false, false)
            }
        };
        c.host.reply(request.0, result, has_more);
        let mut fd = match (attach, to) {
            (true, Peer::Producer(p)) => self.smbs.lock().ok().and_then(|t| t.get(&p).cloned()),
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

    /// Closes the connection to `to`, as the core asked.
    pub(super) fn disconnect(&mut self, to: Peer, reason: &str) {
        let token = match to {
            Peer::Producer(p) => self.producers.get(&p).copied(),
            Peer::Consumer(c) => self.consumers.get(&c).copied(),
        };
        if let Some(t) = token {
            self.close(t, reason);
        }
    }

    /// Queues the replies the host made by itself (binds, rejections).
    pub(super) fn queue_host_replies(&mut self) {
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

    pub(super) fn flush_all(&mut self) {
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
    pub(super) fn flush_conn(&mut self, token: u64) {
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

    pub(super) fn close(&mut self, token: u64, reason: &str) {
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
