//! `zerotrace relay`: Perfetto's `traced_relay` for machines whose producers
//! trace into a central service elsewhere (a VM and its host, boards, a
//! client and a server).
//!
//! The relay listens on this machine's producer socket. For every producer
//! that connects it opens one connection to the central service, sends the
//! producer's identity first (`SetPeerIdentity`: its pid and uid as the
//! kernel tells them, the machine id hint and name), and then moves bytes
//! both ways until either side closes, when it closes the other. File
//! descriptors cannot cross machines: a producer's own shared memory offer
//! arrives without its fd, the service declines it, and the producer writes
//! through SMB emulation as any remote producer does. Beside them the relay
//! keeps a connection of its own, the sans-IO
//! [`RelayPortClient`], which
//! describes the machine and syncs its clocks, reconnecting with back-off
//! while the central service is away.
//!
//! Threads: one accepts, one per producer pumps, one keeps the RelayPort
//! connection; [`Relay::stop`] (or drop) ends them all.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use zerotrace_core::ipc::{Endpoint, Stream, connect};
use zerotrace_core::peer_policy::{Policy, ServiceGate, Vouched};
use zerotrace_core::platform::{boottime_ns, clock_readings, current_uid, system_info};
use zerotrace_core::relay::{RelayEvent, RelayIdentity, RelayPortClient, peer_identity_frame};

/// Bytes held per direction of a producer's connection before the relay
/// stops reading the sending side (back-pressure, not an unbounded queue).
const PUMP_BUFFER: usize = 1 << 20;
/// One read.
const READ_CHUNK: usize = 64 * 1024;
/// How often the threads look at the stop flag while idle.
const IDLE_WAKE: Duration = Duration::from_millis(100);

/// What the relay is told.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// This machine's producer socket, where local producers connect.
    pub listen: Endpoint,
    /// Permissions of the listening socket file (any user may produce).
    pub listen_mode: Option<u32>,
    /// The central service's producer socket (`host:port`).
    pub central: Endpoint,
    /// The machine id hint sent with every identity.
    pub machine_id_hint: String,
    /// The machine's name (empty for none).
    pub machine_name: String,
}

/// Why the relay could not start.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// The local producer socket could not be bound.
    #[error("cannot listen on {0}: {1}")]
    Listen(String, io::Error),
    /// A thread could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(io::Error),
}

/// Counters of a running relay.
#[derive(Debug, Default)]
pub struct RelayCounters {
    /// Producers that connected.
    pub producers: std::sync::atomic::AtomicU64,
    /// Producers whose central connection could not be opened.
    pub central_refused: std::sync::atomic::AtomicU64,
    /// Clock rounds the RelayPort connection completed.
    pub clock_rounds: std::sync::atomic::AtomicU64,
    /// Whether the RelayPort is bound now.
    pub relay_port_bound: AtomicBool,
    /// RelayPort connections lost or failed.
    pub relay_port_disconnects: std::sync::atomic::AtomicU64,
    /// RelayPort connections the relay closed because the central service
    /// refused something (the bind, InitRelay, a SyncClock).
    pub relay_port_refusals: std::sync::atomic::AtomicU64,
    /// Why the last one was closed.
    last_refusal: Mutex<Option<String>>,
}

impl RelayCounters {
    /// Why the central service's last refusal closed the RelayPort
    /// connection, if it refused anything.
    pub fn last_refusal(&self) -> Option<String> {
        self.last_refusal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A producer's pumping thread and a handle of its local socket (shut down
/// to end it).
type Pair = (JoinHandle<()>, Vec<Stream>);

/// A running relay.
pub struct Relay {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    pairs: Arc<Mutex<Vec<Pair>>>,
    counters: Arc<RelayCounters>,
}

impl Relay {
    /// Binds the local producer socket and starts relaying.
    pub fn start(cfg: RelayConfig) -> Result<Relay, RelayError> {
        // A producer socket: anyone may produce, as who the kernel says.
        let listener = ServiceGate::listen(&cfg.listen, cfg.listen_mode, Policy::ProducerSocket)
            .map_err(|e| RelayError::Listen(cfg.listen.to_string(), e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(RelayCounters::default());
        let pairs: Arc<Mutex<Vec<Pair>>> = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::new();
        let port = {
            let (cfg, stop, counters) = (cfg.clone(), stop.clone(), counters.clone());
            std::thread::Builder::new()
                .name("relay-port".into())
                .spawn(move || relay_port_loop(&cfg, &stop, &counters))
                .map_err(RelayError::Thread)?
        };
        threads.push(port);
        let accept = {
            let (stop, counters, pairs) = (stop.clone(), counters.clone(), pairs.clone());
            std::thread::Builder::new()
                .name("relay-accept".into())
                .spawn(move || accept_loop(&listener, &cfg, &stop, &counters, &pairs))
                .map_err(RelayError::Thread)?
        };
        threads.push(accept);
        Ok(Relay {
            stop,
            threads,
            pairs,
            counters,
        })
    }

    /// The relay's counters.
    pub fn counters(&self) -> &RelayCounters {
        &self.counters
    }

    /// Stops relaying: the listener and every connection close.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let pairs = std::mem::take(&mut *self.pairs.lock().unwrap_or_else(|e| e.into_inner()));
        for (t, socks) in pairs {
            for s in &socks {
                let _ = s.shutdown();
            }
            let _ = t.join();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn wait_readable(fd: &impl std::os::fd::AsFd, timeout: Duration) -> io::Result<bool> {
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    let ts = Timespec::try_from(timeout).unwrap_or(Timespec {
        tv_sec: 0,
        tv_nsec: 100_000_000,
    });
    match poll(&mut fds, Some(&ts)) {
        Ok(n) => Ok(n > 0),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Accepts local producers; each gets a thread that opens its central
/// connection and pumps.
fn accept_loop(
    listener: &ServiceGate,
    cfg: &RelayConfig,
    stop: &AtomicBool,
    counters: &Arc<RelayCounters>,
    pairs: &Mutex<Vec<Pair>>,
) {
    while !stop.load(Ordering::Relaxed) {
        if !wait_readable(listener, IDLE_WAKE).unwrap_or(false) {
            continue;
        }
        let Ok(arrival) = listener.next_arrival() else {
            continue;
        };
        // The producer socket's policy admits every peer; one it did not
        // would be closed here.
        let Ok(admitted) = arrival.judge() else {
            continue;
        };
        let (local, peer) = (admitted.stream, admitted.peer);
        counters.producers.fetch_add(1, Ordering::Relaxed);
        let Ok(local_handle) = local.try_clone() else {
            continue;
        };
        let (cfg, counters) = (cfg.clone(), counters.clone());
        let mut list = pairs.lock().unwrap_or_else(|e| e.into_inner());
        // Threads of closed pairs are joined as new ones come.
        list.retain(|(t, _)| !t.is_finished());
        let spawned = std::thread::Builder::new()
            .name("relay-pair".into())
            .spawn(move || {
                if relay_producer(local, peer, &cfg).is_err() {
                    counters.central_refused.fetch_add(1, Ordering::Relaxed);
                }
            });
        if let Ok(t) = spawned {
            list.push((t, vec![local_handle]));
        }
    }
}

/// One local producer (`peer`, as the kernel vouched for it): its
/// connection to the central service, identity first, then bytes both ways
/// until one side closes.
fn relay_producer(local: Stream, peer: Vouched, cfg: &RelayConfig) -> io::Result<()> {
    let identity = identity_frame(peer, cfg);
    let central = match connect(&cfg.central) {
        Ok(c) => c,
        Err(e) => {
            // As Perfetto's relay: the producer's connection closes, and it
            // sees the disconnect it would see from a service that is away.
            let _ = local.shutdown();
            return Err(e);
        }
    };
    central.set_nonblocking(true)?;
    local.set_nonblocking(true)?;
    pump(&local, &central, identity)
}

/// The identity the relay sends first for a producer: what the kernel
/// vouched for `peer`, as Perfetto's relay sends it. A producer the kernel
/// names no uid for (one on a TCP producer socket) is uid -1 (`kInvalidUid`),
/// never the relay's own uid, which would lend it the relay's rights on
/// the central service.
fn identity_frame(peer: Vouched, cfg: &RelayConfig) -> Vec<u8> {
    let pid = peer.pid.unwrap_or(0);
    let uid = peer.uid.map_or(-1, |u| u as i32);
    peer_identity_frame(pid, uid, &cfg.machine_id_hint, &cfg.machine_name)
}

/// Moves bytes between `local` and `central` until either closes, then
/// closes both. `to_central` starts with what must go first. When the
/// producer hangs up first, everything it sent still reaches the central
/// service: what is queued here and what is still unread in its socket
/// ([`drain`]).
fn pump(local: &Stream, central: &Stream, mut to_central: Vec<u8>) -> io::Result<()> {
    let mut to_local: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; READ_CHUNK];
    let mut local_ended = false;
    let result = loop {
        let local_flags = in_if(to_central.len() < PUMP_BUFFER) | out_if(!to_local.is_empty());
        let central_flags = in_if(to_local.len() < PUMP_BUFFER) | out_if(!to_central.is_empty());
        let (l, c) = {
            let mut fds = [
                PollFd::new(local, local_flags),
                PollFd::new(central, central_flags),
            ];
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => break Err(e.into()),
            }
            (fds[0].revents(), fds[1].revents())
        };
        let gone = PollFlags::HUP | PollFlags::ERR;
        if l.intersects(PollFlags::IN | gone) && local_flags.contains(PollFlags::IN) {
            match read_into(local, &mut buf, &mut to_central) {
                Ok(true) => {}
                Ok(false) => {
                    local_ended = true;
                    break Ok(());
                }
                Err(e) => break Err(e),
            }
        }
        if c.intersects(PollFlags::IN | gone) && central_flags.contains(PollFlags::IN) {
            match read_into(central, &mut buf, &mut to_local) {
                Ok(true) => {}
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
        }
        if let Err(e) = write_from(central, &mut to_central) {
            break Err(e);
        }
        if let Err(e) = write_from(local, &mut to_local) {
            break Err(e);
        }
        // A hang-up the poll reports while the queue toward the central
        // service is full (so the producer's socket was not being read):
        // its unread bytes are drained below, not dropped.
        if l.intersects(gone) && !l.contains(PollFlags::IN) {
            local_ended = true;
            break Ok(());
        }
        if c.intersects(gone) && !c.contains(PollFlags::IN) {
            break Ok(());
        }
    };
    if local_ended {
        // The producer's last writes (its final commits) reach the
        // service, as long as the service keeps taking them.
        let _ = drain(local, central, &mut to_central, &mut buf, DRAIN_STALL);
    }
    let _ = local.shutdown();
    let _ = central.shutdown();
    result
}

/// How long the central service may take no byte at all while a producer
/// that hung up is drained toward it.
const DRAIN_STALL: Duration = Duration::from_secs(5);

/// After the producer hung up: reads what is left in its socket and sends
/// it, with what is queued, to the central service; gives up only when
/// the service takes nothing for `stall`.
fn drain(
    local: &Stream,
    central: &Stream,
    to_central: &mut Vec<u8>,
    buf: &mut [u8],
    stall: Duration,
) -> io::Result<()> {
    let mut local_open = true;
    let mut last_progress = std::time::Instant::now();
    loop {
        while local_open && to_central.len() < PUMP_BUFFER {
            let before = to_central.len();
            match read_into(local, buf, to_central) {
                Ok(true) if to_central.len() > before => {}
                // Nothing more now: a socket that hung up has no more.
                Ok(true) | Ok(false) | Err(_) => local_open = false,
            }
        }
        if !local_open && to_central.is_empty() {
            return Ok(());
        }
        let before = to_central.len();
        write_from(central, to_central)?;
        if to_central.len() < before {
            last_progress = std::time::Instant::now();
            continue;
        }
        let left = stall.saturating_sub(last_progress.elapsed());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        let mut fds = [PollFd::new(central, PollFlags::OUT)];
        let ts = Timespec::try_from(left.min(IDLE_WAKE)).unwrap_or(Timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        });
        match poll(&mut fds, Some(&ts)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        if fds[0].revents().intersects(PollFlags::HUP | PollFlags::ERR) {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
    }
}

fn in_if(on: bool) -> PollFlags {
    if on {
        PollFlags::IN
    } else {
        PollFlags::empty()
    }
}

fn out_if(on: bool) -> PollFlags {
    if on {
        PollFlags::OUT
    } else {
        PollFlags::empty()
    }
}

/// Reads what is there into `into`; `false` at the end of the stream.
/// Descriptors that came along are closed: they cannot cross machines.
fn read_into(s: &Stream, buf: &mut [u8], into: &mut Vec<u8>) -> io::Result<bool> {
    let mut fds = Vec::new();
    match s.recv(buf, &mut fds) {
        Ok(0) => Ok(false),
        Ok(n) => {
            into.extend_from_slice(&buf[..n]);
            Ok(true)
        }
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) =>
        {
            Ok(true)
        }
        Err(e) => Err(e),
    }
}

/// Writes as much of `from` as the socket takes now.
fn write_from(s: &Stream, from: &mut Vec<u8>) -> io::Result<()> {
    while !from.is_empty() {
        match s.send(from, None) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                from.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `bytes` to a non-blocking socket, waiting for room at
/// most `timeout` in all.
fn write_all(s: &Stream, mut bytes: &[u8], timeout: Duration) -> io::Result<()> {
    let deadline = std::time::Instant::now() + timeout;
    while !bytes.is_empty() {
        match s.send(bytes, None) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                let mut fds = [PollFd::new(s, PollFlags::OUT)];
                let ts = Timespec::try_from(left).unwrap_or(Timespec {
                    tv_sec: 1,
                    tv_nsec: 0,
                });
                match poll(&mut fds, Some(&ts)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The relay's own RelayPort connection, driven by the sans-IO client.
fn relay_port_loop(cfg: &RelayConfig, stop: &AtomicBool, counters: &RelayCounters) {
    let mut client = RelayPortClient::new(RelayIdentity {
        pid: std::process::id() as i32,
        uid: current_uid() as i32,
        machine_id_hint: cfg.machine_id_hint.clone(),
        machine_name: cfg.machine_name.clone(),
        system_info: system_info(),
    });
    let mut clocks = || clock_readings();
    let mut conn: Option<Stream> = None;
    let mut buf = vec![0u8; READ_CHUNK];
    while !stop.load(Ordering::Relaxed) {
        while let Some(ev) = client.poll_event() {
            match ev {
                RelayEvent::Connect => match connect(&cfg.central) {
                    Ok(s) => {
                        let _ = s.set_nonblocking(true);
                        conn = Some(s);
                        client.handle_connected(boottime_ns());
                    }
                    Err(_) => client.handle_disconnected(boottime_ns()),
                },
                RelayEvent::Close(reason) => {
                    if let Some(s) = conn.take() {
                        let _ = s.shutdown();
                    }
                    client.handle_disconnected(boottime_ns());
                    counters.relay_port_refusals.fetch_add(1, Ordering::Relaxed);
                    // Said once per reason, not at every retry. Not fatal:
                    // producers are relayed all the same (without clock
                    // sync), and the service may come round, as with
                    // Perfetto's relay, which keeps trying.
                    let mut last = counters
                        .last_refusal
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    if last.as_deref() != Some(reason.as_str()) {
                        eprintln!(
                            "zerotrace relay: {} ({}): its clocks are not synced; trying again \
                             every {} s at most",
                            reason,
                            cfg.central,
                            zerotrace_core::relay::RETRY_DELAY_MAX_MS / 1000
                        );
                        *last = Some(reason);
                    }
                }
            }
        }
        let mut lost = false;
        if let Some(s) = &conn {
            while let Some(bytes) = client.poll_transmit() {
                if write_all(s, &bytes, Duration::from_secs(5)).is_err() {
                    lost = true;
                    break;
                }
            }
        }
        let now = boottime_ns();
        let wait = client
            .poll_timeout()
            .map(|at| Duration::from_nanos(at.saturating_sub(now)))
            .unwrap_or(IDLE_WAKE)
            .min(IDLE_WAKE);
        if !lost {
            match &conn {
                Some(s) => match wait_readable(s, wait) {
                    Ok(true) => {
                        let mut fds = Vec::new();
                        match s.recv(&mut buf, &mut fds) {
                            Ok(0) => lost = true,
                            Ok(n) => client.handle_bytes(boottime_ns(), &buf[..n], &mut clocks),
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                            Err(_) => lost = true,
                        }
                    }
                    Ok(false) => {}
                    Err(_) => lost = true,
                },
                None => std::thread::sleep(wait),
            }
        }
        if lost {
            conn = None;
            client.handle_disconnected(boottime_ns());
        }
        client.handle_timeout(boottime_ns(), &mut clocks);
        let st = client.stats();
        counters
            .clock_rounds
            .store(st.clock_rounds, Ordering::Relaxed);
        counters
            .relay_port_disconnects
            .store(st.disconnects, Ordering::Relaxed);
        counters
            .relay_port_bound
            .store(client.is_bound(), Ordering::Relaxed);
    }
    client.close();
    if let Some(s) = conn {
        let _ = s.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    use super::*;

    #[test]
    fn an_unvouched_producer_is_not_lent_the_relays_uid() {
        use zerotrace_core::ipc::{Frame, FrameMsg};
        let cfg = RelayConfig {
            listen: Endpoint::Tcp("127.0.0.1:0".into()),
            listen_mode: None,
            central: Endpoint::Tcp("127.0.0.1:1".into()),
            machine_id_hint: "hint".into(),
            machine_name: String::new(),
        };
        let uid_of = |peer: Vouched| {
            let bytes = identity_frame(peer, &cfg);
            // The frame's 4-byte length, then its payload.
            match Frame::decode(&bytes[4..]).unwrap().msg {
                FrameMsg::SetPeerIdentity { uid, pid, .. } => (uid, pid),
                other => panic!("{other:?}"),
            }
        };
        // Over TCP the kernel names nobody: uid -1, as upstream's relay.
        assert_eq!(uid_of(Vouched::default()), (Some(-1), Some(0)));
        let local = Vouched {
            uid: Some(1234),
            pid: Some(77),
        };
        assert_eq!(uid_of(local), (Some(1234), Some(77)));
    }

    /// A producer that writes far more than the relay holds, then hangs up
    /// at once, while the central service is slow to read: every byte
    /// still arrives, in order.
    #[test]
    fn a_producer_that_hangs_up_with_bytes_queued_is_drained() {
        let (mut producer, relay_local) = UnixStream::pair().unwrap();
        let (relay_central, mut central) = UnixStream::pair().unwrap();
        let (relay_local, relay_central) = (Stream::Unix(relay_local), Stream::Unix(relay_central));
        relay_local.set_nonblocking(true).unwrap();
        relay_central.set_nonblocking(true).unwrap();
        let total = 6 * PUMP_BUFFER;
        let sent: Vec<u8> = (0..total).map(|i| (i * 7 + i / 4099) as u8).collect();
        let pumping =
            std::thread::spawn(move || pump(&relay_local, &relay_central, b"id".to_vec()));
        let writing = {
            let sent = sent.clone();
            std::thread::spawn(move || {
                producer.write_all(&sent).unwrap();
                // Hangs up at once.
                drop(producer);
            })
        };
        // The central service reads nothing for a while: the relay's queue
        // fills, and it stops reading the producer.
        std::thread::sleep(Duration::from_millis(300));
        let mut got = Vec::new();
        central.read_to_end(&mut got).unwrap();
        writing.join().unwrap();
        pumping.join().unwrap().unwrap();
        assert_eq!(got.len(), total + 2);
        assert!(
            got[..2] == *b"id" && got[2..] == sent[..],
            "bytes lost or reordered"
        );
    }
}
