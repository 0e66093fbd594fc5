//! The bridge's connection to the service, whatever its transport: a
//! socket pair through the service's door, or a connection to a consumer
//! socket (unix, TCP or vsock).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;

use zerotrace_core::ipc::Endpoint;

/// The consumer connection behind one WebSocket.
pub(super) enum Upstream {
    /// A unix socket (a consumer socket, or the door's socket pair).
    Unix(UnixStream),
    /// A TCP consumer socket.
    Tcp(TcpStream),
    /// A vsock socket, read and written as a file.
    #[cfg(target_os = "linux")]
    Vsock(std::fs::File),
}

impl Upstream {
    /// Connects to the consumer socket `endpoint`.
    pub(super) fn connect(endpoint: &Endpoint) -> io::Result<Upstream> {
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
