//! The only places a listening socket of the project accepts a peer. A gate
//! is a listener with its [`Policy`]; what it accepts is an [`Arrival`],
//! which becomes a peer to serve ([`AdmittedPeer`]) or one to tell why not
//! ([`RefusedPeer`]) only through [`Arrival::judge`]. Judging is apart
//! from accepting so that a listener may turn a flood away (over its
//! connection limit) before it asks the kernel who each peer is, as the
//! bridge did before the gates: a `/proc/net/tcp` read per connection of a
//! flood would slow the accept loop down.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;

use super::{Policy, Refusal, Vouched, admit, peer_uid};
use crate::ipc::socket::{Endpoint, Listener, Stream, listen};
use crate::platform::current_uid;

/// A peer just accepted, not yet judged.
#[derive(Debug)]
pub struct Arrival<S> {
    stream: S,
    policy: Arc<Policy>,
}

/// A peer the policy lets in, with who the kernel says it is.
#[derive(Debug)]
pub struct AdmittedPeer<S> {
    /// The connection.
    pub stream: S,
    /// Who is on its other end.
    pub peer: Vouched,
}

/// A peer the policy keeps out: the connection is the listener's to tell
/// it why (in its protocol) and close, nothing more.
#[derive(Debug)]
pub struct RefusedPeer<S> {
    /// The connection, to answer on.
    pub stream: S,
    /// Who is on its other end.
    pub peer: Vouched,
    /// Why it is refused.
    pub refusal: Refusal,
}

/// The outcome of [`Arrival::judge`].
pub type Judged<S> = Result<AdmittedPeer<S>, RefusedPeer<S>>;

fn judged<S>(stream: S, peer: Vouched, policy: &Policy) -> Judged<S> {
    match admit(policy, peer, current_uid()) {
        Ok(()) => Ok(AdmittedPeer { stream, peer }),
        Err(refusal) => Err(RefusedPeer {
            stream,
            peer,
            refusal,
        }),
    }
}

/// The uid of a loopback TCP peer, where the policy asks the kernel.
fn tcp_owner(s: &TcpStream, policy: &Policy) -> Option<u32> {
    if !policy.looks_up_tcp_owner() {
        return None;
    }
    peer_uid(s.local_addr().ok()?, s.peer_addr().ok()?)
}

/// A listening TCP socket of an HTTP-like endpoint (the bridge, the RPC
/// server), blocking.
#[derive(Debug)]
pub struct TcpGate {
    listener: TcpListener,
    policy: Arc<Policy>,
}

impl TcpGate {
    /// Binds `addr` (the first of its addresses that binds) for peers
    /// `policy` admits.
    pub fn bind(addr: impl ToSocketAddrs, policy: Policy) -> io::Result<TcpGate> {
        Ok(TcpGate {
            listener: TcpListener::bind(addr)?,
            policy: Arc::new(policy),
        })
    }

    /// The address bound.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Sets the listen backlog (Linux takes a second `listen` as a new
    /// backlog; elsewhere it may fail and the first one stays).
    pub fn set_backlog(&self, backlog: i32) -> io::Result<()> {
        Ok(rustix::net::listen(&self.listener, backlog)?)
    }

    /// Waits for the next peer.
    pub fn next_arrival(&self) -> io::Result<Arrival<TcpStream>> {
        let (stream, _) = self.listener.accept()?;
        Ok(Arrival {
            stream,
            policy: self.policy.clone(),
        })
    }
}

impl Arrival<TcpStream> {
    /// Asks the kernel who the peer is (`/proc/net/tcp` on loopback, where
    /// the policy wants a uid) and judges it.
    pub fn judge(self) -> Judged<TcpStream> {
        let peer = Vouched {
            uid: tcp_owner(&self.stream, &self.policy),
            pid: None,
        };
        judged(self.stream, peer, &self.policy)
    }

    /// Sends `reply` if the socket takes it at once (a listener over its
    /// connection limit), then closes, judging nothing.
    pub fn turn_away(self, reply: &[u8]) {
        let mut s = self.stream;
        let _ = s.set_nonblocking(true);
        let _ = s.write(reply);
    }
}

/// A listening socket of the service's transports (unix, TCP, vsock), as
/// the daemon and the relay listen: non-blocking.
#[derive(Debug)]
pub struct ServiceGate {
    listener: Listener,
    policy: Arc<Policy>,
}

impl ServiceGate {
    /// Binds and listens on `endpoint` (see [`listen`]; `mode` is a socket
    /// file's permissions) for peers `policy` admits.
    pub fn listen(endpoint: &Endpoint, mode: Option<u32>, policy: Policy) -> io::Result<Self> {
        Ok(ServiceGate {
            listener: listen(endpoint, mode)?,
            policy: Arc::new(policy),
        })
    }

    /// The TCP address actually bound (for port 0).
    pub fn local_tcp_addr(&self) -> Option<SocketAddr> {
        self.listener.local_tcp_addr()
    }

    /// The next peer, if one is waiting (an error of kind `WouldBlock`
    /// where none is). Its connection is non-blocking.
    pub fn next_arrival(&self) -> io::Result<Arrival<Stream>> {
        let s = match &self.listener {
            #[cfg(unix)]
            Listener::Unix(l) => Stream::Unix(l.accept()?.0),
            #[cfg(target_os = "linux")]
            Listener::Vsock(l) => Stream::Vsock(rustix::net::accept_with(
                l,
                rustix::net::SocketFlags::CLOEXEC,
            )?),
            Listener::Tcp(l) => {
                let s = l.accept()?.0;
                s.set_nodelay(true)?;
                Stream::Tcp(s)
            }
        };
        s.set_nonblocking(true)?;
        s.no_sigpipe()?;
        Ok(Arrival {
            stream: s,
            policy: self.policy.clone(),
        })
    }
}

impl Arrival<Stream> {
    /// Who the peer is (a unix socket's credentials; a TCP peer's uid
    /// where the policy asks the kernel; else none) and whether the policy
    /// admits it.
    pub fn judge(self) -> Judged<Stream> {
        let peer = match self.stream.peer_cred() {
            Some(c) => Vouched {
                uid: Some(c.uid),
                pid: Some(c.pid),
            },
            None => Vouched {
                uid: match &self.stream {
                    Stream::Tcp(t) => tcp_owner(t, &self.policy),
                    #[allow(unreachable_patterns)]
                    _ => None,
                },
                pid: None,
            },
        };
        judged(self.stream, peer, &self.policy)
    }
}

#[cfg(unix)]
impl std::os::fd::AsFd for ServiceGate {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.listener.as_fd()
    }
}

#[cfg(windows)]
impl std::os::windows::io::AsSocket for ServiceGate {
    fn as_socket(&self) -> std::os::windows::io::BorrowedSocket<'_> {
        self.listener.as_socket()
    }
}

/// Two connected loopback TCP sockets of this process (where there are no
/// socket pairs: the daemon's stop signal on Windows). Its one policy: the
/// listener, on a port the system picks, lives for this call and takes
/// only the connection whose address is our own socket's; any other peer
/// that connects first is dropped unserved.
pub fn own_loopback_pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let ours = TcpStream::connect(listener.local_addr()?)?;
    let own = ours.local_addr()?;
    loop {
        let (theirs, peer) = listener.accept()?;
        if peer == own {
            return Ok((ours, theirs));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "sockets are not available under Miri")]
    fn a_loopback_pair_is_connected_to_itself() {
        use std::io::Read;
        let (mut a, mut b) = own_loopback_pair().unwrap();
        a.write_all(b"x").unwrap();
        let mut buf = [0u8; 1];
        b.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"x");
        assert_eq!(a.local_addr().unwrap(), b.peer_addr().unwrap());
    }

    #[test]
    #[cfg(target_os = "linux")]
    #[cfg_attr(miri, ignore = "sockets are not available under Miri")]
    fn a_gate_names_its_own_loopback_peer() {
        let me = current_uid();
        let gate = TcpGate::bind(
            "127.0.0.1:0",
            Policy::OwnUidAndRoot {
                admit_unvouched: false,
            },
        )
        .unwrap();
        let _c = TcpStream::connect(gate.local_addr().unwrap()).unwrap();
        let admitted = gate.next_arrival().unwrap().judge().unwrap();
        assert_eq!(admitted.peer.uid, Some(me));
        // The service sockets keep Perfetto's rule: a TCP peer has no uid.
        let svc = ServiceGate::listen(
            &Endpoint::Tcp("127.0.0.1:0".into()),
            None,
            Policy::ProducerSocket,
        )
        .unwrap();
        let _p = TcpStream::connect(svc.local_tcp_addr().unwrap()).unwrap();
        let arrival = loop {
            match svc.next_arrival() {
                Ok(a) => break a,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!(arrival.judge().unwrap().peer.uid, None);
    }
}
