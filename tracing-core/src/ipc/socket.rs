//! Socket glue: endpoint names as Perfetto spells them, listening and
//! connecting (filesystem and abstract unix sockets, TCP over IPv4 and
//! IPv6, vsock on Linux), file descriptors passed with SCM_RIGHTS, and peer
//! credentials.
//! Everything else about the protocol is in the sans-IO modules. A
//! [`Listener`] is accepted from only by the peer policy's gates
//! (`peer_policy/gate.rs`), so that every peer is judged.
//!
//! TCP works everywhere. Unix sockets and the fds they pass exist on unix
//! only, abstract names and peer credentials on Linux only; elsewhere
//! [`listen`] and [`connect`] refuse such an endpoint with an
//! [`io::ErrorKind::Unsupported`] error that carries an [`Unsupported`].

use std::io;
#[cfg(not(unix))]
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

#[cfg(unix)]
use std::io::{IoSlice, IoSliceMut};
#[cfg(unix)]
use std::mem::MaybeUninit;
#[cfg(target_os = "linux")]
use std::os::linux::net::SocketAddrExt;
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
#[cfg(target_os = "linux")]
use std::os::unix::net::SocketAddr as UnixAddr;
#[cfg(unix)]
use std::os::unix::net::{UnixListener, UnixStream};

#[cfg(unix)]
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, recvmsg, sendmsg,
};

use super::fd::{BorrowedFd, OwnedFd};

/// What an endpoint needs that this platform does not have: the payload of
/// the [`io::ErrorKind::Unsupported`] errors of [`listen`] and [`connect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} are available only on {available_on}, not on {}",
    std::env::consts::OS
)]
pub struct Unsupported {
    /// The missing feature (e.g. "abstract unix sockets").
    pub what: &'static str,
    /// Where it exists (e.g. "Linux").
    pub available_on: &'static str,
}

/// An [`io::ErrorKind::Unsupported`] error carrying an [`Unsupported`]
/// (Linux has everything, so needs none).
#[cfg_attr(target_os = "linux", allow(dead_code))]
pub(crate) fn unsupported(what: &'static str, available_on: &'static str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        Unsupported { what, available_on },
    )
}

/// Most file descriptors accepted with one read; more are closed.
pub const MAX_FDS_PER_READ: usize = 4;

/// Where a socket lives, parsed as Perfetto does: a leading `@` is an
/// abstract unix name, a trailing `:port` is TCP (`[v6]:port` for IPv6),
/// anything else a filesystem path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A unix socket file.
    Path(PathBuf),
    /// An abstract unix socket name (without the `@`).
    Abstract(String),
    /// A TCP `host:port`.
    Tcp(String),
    /// A vsock address, `vsock://CID:PORT` (a VM and its host; Linux):
    /// fds and credentials do not pass, as over TCP.
    Vsock {
        /// The context id (2 is the host; `-1`, `u32::MAX`, any when
        /// listening).
        cid: u32,
        /// The port.
        port: u32,
    },
}

impl Endpoint {
    /// Parses a socket name.
    pub fn parse(name: &str) -> Endpoint {
        if let Some(addr) = name.strip_prefix("vsock://")
            && let Some((cid, port)) = addr.split_once(':')
            && let (Some(cid), Ok(port)) = (
                if cid == "-1" {
                    Some(u32::MAX)
                } else {
                    cid.parse().ok()
                },
                port.parse(),
            )
        {
            return Endpoint::Vsock { cid, port };
        }
        if let Some(abs) = name.strip_prefix('@') {
            return Endpoint::Abstract(abs.to_owned());
        }
        if let Some((host, port)) = name.rsplit_once(':')
            && !host.is_empty()
            && !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
        {
            return Endpoint::Tcp(name.to_owned());
        }
        Endpoint::Path(PathBuf::from(name))
    }

    /// Whether the transport passes file descriptors and peer credentials.
    pub fn is_unix(&self) -> bool {
        !matches!(self, Endpoint::Tcp(_) | Endpoint::Vsock { .. })
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Path(p) => write!(f, "{}", p.display()),
            Endpoint::Abstract(n) => write!(f, "@{n}"),
            Endpoint::Tcp(a) => f.write_str(a),
            Endpoint::Vsock {
                cid: u32::MAX,
                port,
            } => write!(f, "vsock://-1:{port}"),
            Endpoint::Vsock { cid, port } => write!(f, "vsock://{cid}:{port}"),
        }
    }
}

/// The producer socket: `PERFETTO_PRODUCER_SOCK_NAME`, else Perfetto's
/// default (the first entry of a comma-separated list).
pub fn producer_socket_name() -> String {
    std::env::var("PERFETTO_PRODUCER_SOCK_NAME")
        .ok()
        .filter(|s| !s.is_empty())
        .and_then(|s| s.split(',').next().map(str::to_owned))
        .unwrap_or_else(|| {
            default_name(
                "traced-producer.sock",
                "perfetto-producer",
                "127.0.0.1:32278",
            )
        })
}

/// The consumer socket: `PERFETTO_CONSUMER_SOCK_NAME`, else Perfetto's default.
pub fn consumer_socket_name() -> String {
    std::env::var("PERFETTO_CONSUMER_SOCK_NAME")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| {
            default_name(
                "traced-consumer.sock",
                "perfetto-consumer",
                "127.0.0.1:32279",
            )
        })
}

/// Perfetto's defaults: on Windows (no unix sockets) the TCP address `tcp`;
/// elsewhere `/run/perfetto/RUN` when that directory is usable, else
/// `/tmp/TMP`.
fn default_name(run: &str, tmp: &str, tcp: &str) -> String {
    if cfg!(windows) {
        return tcp.to_owned();
    }
    let dir = std::path::Path::new("/run/perfetto");
    let usable = std::fs::metadata(dir).is_ok_and(|m| m.is_dir() && !m.permissions().readonly());
    if usable {
        dir.join(run).display().to_string()
    } else {
        format!("/tmp/{tmp}")
    }
}

/// A listening socket.
#[derive(Debug)]
pub enum Listener {
    /// A unix socket (file or abstract).
    #[cfg(unix)]
    Unix(UnixListener),
    /// A TCP socket.
    Tcp(TcpListener),
    /// A vsock socket.
    #[cfg(target_os = "linux")]
    Vsock(OwnedFd),
}

/// A connected socket.
#[derive(Debug)]
pub enum Stream {
    /// A unix socket.
    #[cfg(unix)]
    Unix(UnixStream),
    /// A TCP socket.
    Tcp(TcpStream),
    /// A vsock socket.
    #[cfg(target_os = "linux")]
    Vsock(OwnedFd),
}

#[cfg(unix)]
impl std::os::fd::AsFd for Listener {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Listener::Unix(l) => l.as_fd(),
            Listener::Tcp(l) => l.as_fd(),
            #[cfg(target_os = "linux")]
            Listener::Vsock(l) => l.as_fd(),
        }
    }
}

#[cfg(unix)]
impl std::os::fd::AsFd for Stream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Stream::Unix(s) => s.as_fd(),
            Stream::Tcp(s) => s.as_fd(),
            #[cfg(target_os = "linux")]
            Stream::Vsock(s) => s.as_fd(),
        }
    }
}

#[cfg(windows)]
impl std::os::windows::io::AsSocket for Listener {
    fn as_socket(&self) -> std::os::windows::io::BorrowedSocket<'_> {
        match self {
            Listener::Tcp(l) => l.as_socket(),
        }
    }
}

#[cfg(windows)]
impl std::os::windows::io::AsSocket for Stream {
    fn as_socket(&self) -> std::os::windows::io::BorrowedSocket<'_> {
        match self {
            Stream::Tcp(s) => s.as_socket(),
        }
    }
}

/// Binds and listens at once (a client that connects in between must not
/// be refused). A stale socket file is replaced; `mode` sets the file's
/// permissions (e.g. 0o600 for an owner-only consumer socket). TCP binds
/// only where told: pass `127.0.0.1:port` for loopback.
pub fn listen(endpoint: &Endpoint, mode: Option<u32>) -> io::Result<Listener> {
    let l = match endpoint {
        Endpoint::Path(p) => listen_path(p, mode)?,
        Endpoint::Abstract(name) => listen_abstract(name)?,
        Endpoint::Tcp(addr) => Listener::Tcp(TcpListener::bind(addr.as_str())?),
        #[cfg(target_os = "linux")]
        Endpoint::Vsock { cid, port } => Listener::Vsock(super::vsock::listen(*cid, *port)?),
        #[cfg(not(target_os = "linux"))]
        Endpoint::Vsock { .. } => return Err(unsupported("vsock sockets", "Linux")),
    };
    match &l {
        #[cfg(unix)]
        Listener::Unix(u) => u.set_nonblocking(true)?,
        Listener::Tcp(t) => t.set_nonblocking(true)?,
        #[cfg(target_os = "linux")]
        Listener::Vsock(v) => rustix::io::ioctl_fionbio(v, true)?,
    }
    Ok(l)
}

#[cfg(unix)]
fn listen_path(p: &std::path::Path, mode: Option<u32>) -> io::Result<Listener> {
    if std::fs::symlink_metadata(p).is_ok() {
        // Replace it only if nobody listens there any more.
        if UnixStream::connect(p).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("{} is in use", p.display()),
            ));
        }
        std::fs::remove_file(p)?;
    }
    let l = UnixListener::bind(p)?;
    if let Some(mode) = mode {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(Listener::Unix(l))
}

#[cfg(not(unix))]
fn listen_path(_: &std::path::Path, _: Option<u32>) -> io::Result<Listener> {
    Err(unsupported("unix sockets", "unix"))
}

#[cfg(target_os = "linux")]
fn listen_abstract(name: &str) -> io::Result<Listener> {
    Ok(Listener::Unix(UnixListener::bind_addr(
        &UnixAddr::from_abstract_name(name)?,
    )?))
}

#[cfg(not(target_os = "linux"))]
fn listen_abstract(_: &str) -> io::Result<Listener> {
    Err(unsupported("abstract unix sockets (@name)", "Linux"))
}

impl Listener {
    /// The TCP address actually bound (for port 0).
    pub fn local_tcp_addr(&self) -> Option<SocketAddr> {
        match self {
            Listener::Tcp(l) => l.local_addr().ok(),
            #[cfg(unix)]
            Listener::Unix(_) => None,
            #[cfg(target_os = "linux")]
            Listener::Vsock(_) => None,
        }
    }
}

/// Connects to `endpoint` (blocking).
pub fn connect(endpoint: &Endpoint) -> io::Result<Stream> {
    let s = match endpoint {
        Endpoint::Path(p) => connect_path(p)?,
        Endpoint::Abstract(n) => connect_abstract(n)?,
        Endpoint::Tcp(a) => {
            let addr = a.to_socket_addrs()?.next().ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("cannot resolve {a}"))
            })?;
            let s = TcpStream::connect(addr)?;
            s.set_nodelay(true)?;
            Stream::Tcp(s)
        }
        #[cfg(target_os = "linux")]
        Endpoint::Vsock { cid, port } => Stream::Vsock(super::vsock::connect(*cid, *port)?),
        #[cfg(not(target_os = "linux"))]
        Endpoint::Vsock { .. } => return Err(unsupported("vsock sockets", "Linux")),
    };
    s.no_sigpipe()?;
    Ok(s)
}

#[cfg(unix)]
fn connect_path(p: &std::path::Path) -> io::Result<Stream> {
    Ok(Stream::Unix(UnixStream::connect(p)?))
}

#[cfg(not(unix))]
fn connect_path(_: &std::path::Path) -> io::Result<Stream> {
    Err(unsupported("unix sockets", "unix"))
}

#[cfg(target_os = "linux")]
fn connect_abstract(name: &str) -> io::Result<Stream> {
    Ok(Stream::Unix(UnixStream::connect_addr(
        &UnixAddr::from_abstract_name(name)?,
    )?))
}

#[cfg(not(target_os = "linux"))]
fn connect_abstract(_: &str) -> io::Result<Stream> {
    Err(unsupported("abstract unix sockets (@name)", "Linux"))
}

/// Peer credentials of a unix connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCred {
    /// The peer's uid.
    pub uid: u32,
    /// The peer's pid.
    pub pid: i32,
}

impl Stream {
    /// Sets blocking or non-blocking mode.
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tcp(s) => s.set_nonblocking(on),
            #[cfg(target_os = "linux")]
            Stream::Vsock(s) => Ok(rustix::io::ioctl_fionbio(s, on)?),
        }
    }

    /// Sets how long a blocking read waits (`None`: forever).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Stream::Unix(s) => s.set_read_timeout(timeout),
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            #[cfg(target_os = "linux")]
            Stream::Vsock(s) => Ok(rustix::net::sockopt::set_socket_timeout(
                s,
                rustix::net::sockopt::Timeout::Recv,
                timeout,
            )?),
        }
    }

    /// Another handle to the same connection.
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            #[cfg(unix)]
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            #[cfg(target_os = "linux")]
            Stream::Vsock(s) => Stream::Vsock(s.try_clone()?),
        })
    }

    /// Shuts both directions down (a blocked reader on a clone wakes up).
    pub fn shutdown(&self) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            #[cfg(target_os = "linux")]
            Stream::Vsock(s) => Ok(rustix::net::shutdown(s, rustix::net::Shutdown::Both)?),
        }
    }

    /// Where a peer that stopped reading would raise SIGPIPE on a write and
    /// `send` has no MSG_NOSIGNAL (Apple's systems), sets SO_NOSIGPIPE.
    pub(crate) fn no_sigpipe(&self) -> io::Result<()> {
        #[cfg(target_vendor = "apple")]
        rustix::net::sockopt::set_socket_nosigpipe(self, true)?;
        Ok(())
    }

    /// Whether fds and credentials can pass.
    pub fn is_unix(&self) -> bool {
        match self {
            #[cfg(unix)]
            Stream::Unix(_) => true,
            Stream::Tcp(_) => false,
            #[cfg(target_os = "linux")]
            Stream::Vsock(_) => false,
        }
    }

    /// The peer's IP address (TCP only), without the port.
    pub fn peer_ip(&self) -> Option<std::net::IpAddr> {
        match self {
            Stream::Tcp(s) => s.peer_addr().ok().map(|a| a.ip()),
            #[cfg(unix)]
            Stream::Unix(_) => None,
            #[cfg(target_os = "linux")]
            Stream::Vsock(_) => None,
        }
    }

    /// The kernel's view of the peer (unix sockets on Linux only: elsewhere
    /// `None`, and the service treats the peer as it treats a TCP one).
    pub fn peer_cred(&self) -> Option<PeerCred> {
        match self {
            #[cfg(target_os = "linux")]
            Stream::Unix(s) => rustix::net::sockopt::socket_peercred(s)
                .ok()
                .map(|c| PeerCred {
                    uid: c.uid.as_raw(),
                    pid: c.pid.as_raw_nonzero().get(),
                }),
            #[cfg(all(unix, not(target_os = "linux")))]
            Stream::Unix(_) => None,
            Stream::Tcp(_) => None,
            #[cfg(target_os = "linux")]
            Stream::Vsock(_) => None,
        }
    }

    /// Sends `bytes`, with `fd` attached to the first byte (unix only).
    /// Returns how many bytes went out.
    #[cfg(unix)]
    pub fn send(&self, bytes: &[u8], fd: Option<BorrowedFd<'_>>) -> io::Result<usize> {
        use std::os::fd::AsFd;
        let iov = [IoSlice::new(bytes)];
        let fds;
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if let (Some(fd), Stream::Unix(_)) = (fd, self) {
            fds = [fd];
            control.push(SendAncillaryMessage::ScmRights(&fds));
        }
        Ok(sendmsg(self.as_fd(), &iov, &mut control, SEND_FLAGS)?)
    }

    /// Sends `bytes` (no fd can go with them on this platform). Returns how
    /// many bytes went out.
    #[cfg(not(unix))]
    pub fn send(&self, bytes: &[u8], fd: Option<BorrowedFd<'_>>) -> io::Result<usize> {
        if let Some(fd) = fd {
            return fd.never();
        }
        match self {
            Stream::Tcp(s) => (&*s).write(bytes),
        }
    }

    /// Reads into `buf`; fds that came with the bytes are appended to `fds`
    /// (beyond [`MAX_FDS_PER_READ`] they are closed at once). `Ok(0)` is
    /// the end of the stream.
    #[cfg(unix)]
    pub fn recv(&self, buf: &mut [u8], fds: &mut Vec<OwnedFd>) -> io::Result<usize> {
        use std::os::fd::AsFd;
        let mut iov = [IoSliceMut::new(buf)];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS_PER_READ))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let r = recvmsg(self.as_fd(), &mut iov, &mut control, RECV_FLAGS)?;
        for msg in control.drain() {
            if let RecvAncillaryMessage::ScmRights(received) = msg {
                for fd in received {
                    if fds.len() < MAX_FDS_PER_READ {
                        set_cloexec(&fd);
                        fds.push(fd);
                    }
                    // Otherwise `fd` drops here and is closed.
                }
            }
        }
        Ok(r.bytes)
    }

    /// Reads into `buf` (no fds can come with the bytes on this platform,
    /// so `fds` stays as it is). `Ok(0)` is the end of the stream.
    #[cfg(not(unix))]
    pub fn recv(&self, buf: &mut [u8], fds: &mut Vec<OwnedFd>) -> io::Result<usize> {
        let _ = fds;
        match self {
            Stream::Tcp(s) => (&*s).read(buf),
        }
    }
}

/// `sendmsg` flags: no SIGPIPE from a peer that went away (on Apple's
/// systems, which lack MSG_NOSIGNAL, SO_NOSIGPIPE on the socket does that).
#[cfg(all(unix, not(target_vendor = "apple")))]
const SEND_FLAGS: SendFlags = SendFlags::NOSIGNAL;
#[cfg(target_vendor = "apple")]
const SEND_FLAGS: SendFlags = SendFlags::empty();

/// `recvmsg` flags: received fds are close-on-exec at once where the
/// kernel can do that (Linux); elsewhere [`set_cloexec`] sets it after.
#[cfg(target_os = "linux")]
const RECV_FLAGS: RecvFlags = RecvFlags::CMSG_CLOEXEC;
#[cfg(all(unix, not(target_os = "linux")))]
const RECV_FLAGS: RecvFlags = RecvFlags::empty();

/// Marks a received fd close-on-exec where `recvmsg` could not (outside
/// Linux; a fork in between may still inherit it). Best effort: a failure
/// here must not lose the bytes read with the fd.
#[cfg(unix)]
fn set_cloexec(fd: &OwnedFd) {
    #[cfg(not(target_os = "linux"))]
    let _ = rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC);
    let _ = fd;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vsock_addresses_parse_as_perfettos() {
        let e = Endpoint::parse("vsock://2:20001");
        assert_eq!(
            e,
            Endpoint::Vsock {
                cid: 2,
                port: 20001
            }
        );
        assert_eq!(e.to_string(), "vsock://2:20001");
        assert!(!e.is_unix());
        // Malformed ones are not vsock.
        assert!(!matches!(
            Endpoint::parse("vsock://x:1"),
            Endpoint::Vsock { .. }
        ));
        assert!(!matches!(
            Endpoint::parse("vsock://2"),
            Endpoint::Vsock { .. }
        ));
        assert_eq!(
            Endpoint::parse("vsock://-1:20001"),
            Endpoint::Vsock {
                cid: u32::MAX,
                port: 20001
            }
        );
        assert_eq!(Endpoint::parse("vsock://-1:7").to_string(), "vsock://-1:7");
    }

    #[test]
    #[cfg(target_os = "linux")]
    #[cfg_attr(miri, ignore = "sockets are not available under Miri")]
    fn a_vsock_connection_nobody_serves_is_an_error() {
        // No vsock transport between two processes of one machine here (no
        // vsock_loopback): a connection to a CID nobody serves fails with the
        // kernel's error, not a panic.
        assert!(connect(&Endpoint::Vsock { cid: 1, port: 9 }).is_err());
    }

    #[test]
    fn names_parse_as_perfetto_parses_them() {
        assert_eq!(
            Endpoint::parse("@traced"),
            Endpoint::Abstract("traced".into())
        );
        assert_eq!(
            Endpoint::parse("127.0.0.1:32278"),
            Endpoint::Tcp("127.0.0.1:32278".into())
        );
        assert_eq!(
            Endpoint::parse("[::1]:32278"),
            Endpoint::Tcp("[::1]:32278".into())
        );
        assert_eq!(
            Endpoint::parse("/tmp/perfetto-producer"),
            Endpoint::Path("/tmp/perfetto-producer".into())
        );
        assert_eq!(
            Endpoint::parse("/tmp/a:b"),
            Endpoint::Path("/tmp/a:b".into())
        );
    }

    #[test]
    fn a_missing_transport_is_a_typed_unsupported_error() {
        let e = unsupported("abstract unix sockets (@name)", "Linux");
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        let inner = e.get_ref().and_then(|i| i.downcast_ref::<Unsupported>());
        assert_eq!(
            inner,
            Some(&Unsupported {
                what: "abstract unix sockets (@name)",
                available_on: "Linux"
            })
        );
        assert_eq!(
            e.to_string(),
            format!(
                "abstract unix sockets (@name) are available only on Linux, not on {}",
                std::env::consts::OS
            )
        );
    }

    #[test]
    #[cfg(target_os = "linux")]
    #[cfg_attr(miri, ignore = "sockets and memfds are not available under Miri")]
    fn fds_and_credentials_cross_a_unix_socket() {
        let (a, b) = UnixStream::pair().unwrap();
        let (a, b) = (Stream::Unix(a), Stream::Unix(b));
        let shm = crate::shm::MappedShm::create(4096).unwrap();
        assert_eq!(a.send(b"hello", Some(shm.fd())).unwrap(), 5);
        let mut buf = [0u8; 16];
        let mut fds = Vec::new();
        assert_eq!(b.recv(&mut buf, &mut fds).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        assert_eq!(fds.len(), 1);
        let cred = b.peer_cred().unwrap();
        assert_eq!(cred.pid, std::process::id() as i32);
    }

    #[test]
    #[cfg(unix)]
    #[cfg_attr(miri, ignore = "sockets are not available under Miri")]
    fn a_stale_socket_file_is_replaced_and_a_live_one_is_not() {
        let dir = std::env::temp_dir().join(format!("zt-sock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s");
        let ep = Endpoint::Path(path.clone());
        let l = listen(&ep, Some(0o600)).unwrap();
        assert!(listen(&ep, None).is_err(), "in use");
        drop(l);
        let _l = listen(&ep, None).expect("stale file replaced");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
