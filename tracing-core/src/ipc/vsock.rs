//! vsock sockets (Linux): how a VM and its host reach each other without a
//! network, `vsock://CID:PORT` in Perfetto's socket names. std has no
//! vsock type and rustix no vsock address, so this file spells the
//! kernel's `struct sockaddr_vm` for rustix's `bind` and `connect`; the
//! sockets themselves are plain fds that `socket.rs` reads and writes with
//! the same calls as its unix and TCP ones (no fds or credentials pass).

use std::io;
use std::os::fd::OwnedFd;

use rustix::net::addr::{SocketAddrArg, SocketAddrLen, SocketAddrOpaque};
use rustix::net::{AddressFamily, SocketFlags, SocketType};

/// The kernel's `struct sockaddr_vm` (`linux/vm_sockets.h`): 16 bytes.
#[repr(C)]
struct SockaddrVm {
    family: u16,
    reserved1: u16,
    port: u32,
    cid: u32,
    flags: u8,
    zero: [u8; 3],
}

/// A vsock address, passed to rustix as a `sockaddr`.
struct VsockAddr(SockaddrVm);

impl VsockAddr {
    fn new(cid: u32, port: u32) -> VsockAddr {
        VsockAddr(SockaddrVm {
            family: AddressFamily::VSOCK.as_raw(),
            reserved1: 0,
            port,
            cid,
            flags: 0,
            zero: [0; 3],
        })
    }
}

// SAFETY: `with_sockaddr` passes a pointer to a whole, initialized
// `sockaddr_vm` (the kernel's layout: `repr(C)`, 16 bytes, no padding) and
// its exact size; it is valid for the duration of the call, as required.
unsafe impl SocketAddrArg for VsockAddr {
    unsafe fn with_sockaddr<R>(
        &self,
        f: impl FnOnce(*const SocketAddrOpaque, SocketAddrLen) -> R,
    ) -> R {
        f(
            (&raw const self.0).cast::<SocketAddrOpaque>(),
            size_of::<SockaddrVm>() as SocketAddrLen,
        )
    }
}

fn socket() -> io::Result<OwnedFd> {
    Ok(rustix::net::socket_with(
        AddressFamily::VSOCK,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// Connects to `cid:port` (blocking).
pub(super) fn connect(cid: u32, port: u32) -> io::Result<OwnedFd> {
    let fd = socket()?;
    rustix::net::connect(&fd, &VsockAddr::new(cid, port))?;
    Ok(fd)
}

/// Listens on `cid:port` (`u32::MAX`, `vsock://-1:PORT` in Perfetto's
/// spelling, for any CID).
pub(super) fn listen(cid: u32, port: u32) -> io::Result<OwnedFd> {
    let fd = socket()?;
    rustix::net::bind(&fd, &VsockAddr::new(cid, port))?;
    rustix::net::listen(&fd, 64)?;
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_the_kernels_layout() {
        assert_eq!(size_of::<SockaddrVm>(), 16);
        let a = VsockAddr::new(3, 20001);
        assert_eq!(a.0.family, 40, "AF_VSOCK");
        assert_eq!((a.0.cid, a.0.port), (3, 20001));
    }
}
