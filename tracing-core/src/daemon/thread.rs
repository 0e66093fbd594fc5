//! The service on a thread of the calling process: what the in-process
//! backend, the tests and anyone embedding `zerotraced` need. The daemon is
//! bound on its own thread (the core is not `Send`), the caller gets the
//! endpoints it listens on (a `:0` TCP socket's port resolved) and, on
//! unix, its consumer door; dropping the handle stops the service and
//! joins the thread.

use std::io::{self, Write};
use std::thread::JoinHandle;

use super::{Daemon, DaemonConfig, ShutdownFd};
use crate::ipc::socket::Endpoint;

#[cfg(unix)]
use super::ConsumerDoor;

/// The end of the stop signal this side writes a byte to.
#[cfg(unix)]
type StopSender = std::os::unix::net::UnixStream;
/// The end of the stop signal this side writes a byte to.
#[cfg(not(unix))]
type StopSender = std::net::TcpStream;

/// What the daemon's thread reports once it listens.
struct Bound {
    producers: Vec<Endpoint>,
    consumer: Endpoint,
    #[cfg(unix)]
    door: ConsumerDoor,
}

/// A [`Daemon`] running on a thread of this process, stopped when dropped.
pub struct DaemonThread {
    stop: StopSender,
    thread: Option<JoinHandle<io::Result<()>>>,
    bound: Bound,
}

impl std::fmt::Debug for DaemonThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DaemonThread")
            .field("producers", &self.bound.producers)
            .field("consumer", &self.bound.consumer)
            .finish_non_exhaustive()
    }
}

impl DaemonThread {
    /// Binds `cfg`'s sockets on a new thread and returns once they listen
    /// (or with the error that kept them from it).
    pub fn spawn(cfg: DaemonConfig) -> io::Result<DaemonThread> {
        let (stop, stop_rx) = stop_pair()?;
        let (ready_tx, ready) = std::sync::mpsc::channel::<io::Result<Bound>>();
        let thread = std::thread::Builder::new()
            .name("zerotrace-service".into())
            .spawn(move || {
                let (producers, consumer) =
                    (cfg.producer_sockets.clone(), cfg.consumer_socket.clone());
                let mut d = match Daemon::bind(cfg, Some(stop_rx)) {
                    Ok(d) => d,
                    Err(e) => {
                        let _ = ready_tx.send(Err(io::Error::new(e.kind(), e.to_string())));
                        return Err(e);
                    }
                };
                // A TCP socket's port, now that the system picked it.
                let resolve = |ep: Endpoint, addr: Option<std::net::SocketAddr>| match (&ep, addr) {
                    (Endpoint::Tcp(_), Some(a)) => Endpoint::Tcp(a.to_string()),
                    _ => ep,
                };
                let producer_tcp = d.producer_tcp_addr();
                let producers = producers
                    .into_iter()
                    .map(|ep| match &ep {
                        Endpoint::Tcp(s) if s.ends_with(":0") => resolve(ep, producer_tcp),
                        _ => ep,
                    })
                    .collect();
                let consumer = resolve(consumer, d.consumer_tcp_addr());
                #[cfg(unix)]
                let door = match d.consumer_door() {
                    Ok(door) => door,
                    Err(e) => {
                        let _ = ready_tx.send(Err(io::Error::new(e.kind(), e.to_string())));
                        return Err(e);
                    }
                };
                let _ = ready_tx.send(Ok(Bound {
                    producers,
                    consumer,
                    #[cfg(unix)]
                    door,
                }));
                d.run()
            })?;
        match ready.recv() {
            Ok(Ok(bound)) => Ok(DaemonThread {
                stop,
                thread: Some(thread),
                bound,
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err(match thread.join() {
                Ok(Err(e)) => e,
                _ => io::Error::other("the service's thread ended before it listened"),
            }),
        }
    }

    /// The producer sockets, as listening (a `:0` TCP port resolved).
    pub fn producer_endpoints(&self) -> &[Endpoint] {
        &self.bound.producers
    }

    /// The consumer socket, as listening (a `:0` TCP port resolved).
    pub fn consumer_endpoint(&self) -> &Endpoint {
        &self.bound.consumer
    }

    /// The first TCP producer socket's address, if any.
    pub fn producer_tcp_addr(&self) -> Option<std::net::SocketAddr> {
        self.bound.producers.iter().find_map(|ep| match ep {
            Endpoint::Tcp(s) => s.parse().ok(),
            _ => None,
        })
    }

    /// The service's door for consumer connections with a vouched
    /// identity (see [`Daemon::consumer_door`]).
    #[cfg(unix)]
    pub fn consumer_door(&self) -> ConsumerDoor {
        self.bound.door.clone()
    }

    /// Stops the service (file sessions write what they hold first) and
    /// waits for its thread; the error that ended its loop, if any.
    pub fn stop(mut self) -> io::Result<()> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> io::Result<()> {
        let _ = self.stop.write_all(&[1]);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the service's thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for DaemonThread {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

/// The two ends of the service's stop signal: a byte written to the first
/// makes the second readable, which stops the service.
#[cfg(unix)]
fn stop_pair() -> io::Result<(StopSender, ShutdownFd)> {
    let (tx, rx) = StopSender::pair()?;
    Ok((tx, ShutdownFd::from(rx)))
}

/// The two ends of the service's stop signal: a connected pair of loopback
/// TCP sockets (Windows has no socket pairs, and its `poll` waits on
/// sockets only).
#[cfg(not(unix))]
fn stop_pair() -> io::Result<(StopSender, ShutdownFd)> {
    let (tx, rx) = crate::peer_policy::own_loopback_pair()?;
    Ok((tx, ShutdownFd::from(rx)))
}
