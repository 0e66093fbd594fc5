//! Perfetto's genuine tracing service (what `traced` runs: the service
//! business logic behind its ProducerPort and ConsumerPort IPC hosts) on a
//! producer and a consumer socket, on its own task-runner thread, through
//! the `zt_svc_*` shims of `cpp/service_shim.cc`. A real peer for our
//! producer and consumer clients; dropping it stops the service.

use core::ptr::NonNull;
use std::ffi::{CString, c_char};

/// The C++ object behind a [`GenuineService`].
#[repr(C)]
struct Handle {
    _opaque: [u8; 0],
}

// SAFETY: these declarations match the definitions in cpp/service_shim.cc.
unsafe extern "C" {
    fn zt_svc_start(producer_socket: *const c_char, consumer_socket: *const c_char) -> *mut Handle;
    fn zt_svc_start_relay(
        producer_socket: *const c_char,
        relay_socket: *const c_char,
        consumer_socket: *const c_char,
    ) -> *mut Handle;
    fn zt_svc_stop(handle: *mut Handle);
}

/// Why the genuine service did not start.
#[derive(Debug, thiserror::Error)]
pub enum GenuineServiceError {
    /// A socket name held a NUL byte.
    #[error("socket name with a NUL byte: {0:?}")]
    BadName(String),
    /// Perfetto could not bind or listen on a socket.
    #[error("the genuine service could not listen on {producer:?} / {consumer:?}")]
    Listen {
        /// The producer socket name.
        producer: String,
        /// The consumer socket name.
        consumer: String,
    },
}

/// A running genuine Perfetto service; dropping it stops the service.
#[derive(Debug)]
pub struct GenuineService {
    handle: NonNull<Handle>,
}

// SAFETY: the handle is only touched by `drop`, which posts the teardown to
// the service's own thread and waits for it; nothing else reaches the C++
// object from Rust.
unsafe impl Send for GenuineService {}

impl GenuineService {
    /// Starts the service listening on `producer_socket` and
    /// `consumer_socket`, named as Perfetto names sockets (a path, `@name`
    /// for an abstract socket, `host:port` for TCP). It listens as soon as
    /// this returns.
    pub fn start(
        producer_socket: &str,
        consumer_socket: &str,
    ) -> Result<GenuineService, GenuineServiceError> {
        let p = CString::new(producer_socket)
            .map_err(|_| GenuineServiceError::BadName(producer_socket.into()))?;
        let c = CString::new(consumer_socket)
            .map_err(|_| GenuineServiceError::BadName(consumer_socket.into()))?;
        // SAFETY: two NUL-terminated strings that outlive the call (the shim
        // copies them before returning); it returns an owned object or null.
        let raw = unsafe { zt_svc_start(p.as_ptr(), c.as_ptr()) };
        NonNull::new(raw)
            .map(|handle| GenuineService { handle })
            .ok_or_else(|| GenuineServiceError::Listen {
                producer: producer_socket.into(),
                consumer: consumer_socket.into(),
            })
    }
}

impl GenuineService {
    /// As [`GenuineService::start`], with a further producer socket,
    /// `relay_socket` (e.g. `127.0.0.1:PORT`), that also serves RelayPort
    /// (`traced --enable-relay-endpoint`), for relays of other machines.
    pub fn start_with_relay(
        producer_socket: &str,
        relay_socket: &str,
        consumer_socket: &str,
    ) -> Result<GenuineService, GenuineServiceError> {
        let name = |s: &str| CString::new(s).map_err(|_| GenuineServiceError::BadName(s.into()));
        let (p, r, c) = (
            name(producer_socket)?,
            name(relay_socket)?,
            name(consumer_socket)?,
        );
        // SAFETY: three NUL-terminated strings that outlive the call (the
        // shim copies them before returning); it returns an owned object or
        // null.
        let raw = unsafe { zt_svc_start_relay(p.as_ptr(), r.as_ptr(), c.as_ptr()) };
        NonNull::new(raw)
            .map(|handle| GenuineService { handle })
            .ok_or_else(|| GenuineServiceError::Listen {
                producer: format!("{producer_socket},{relay_socket}"),
                consumer: consumer_socket.into(),
            })
    }
}

impl Drop for GenuineService {
    fn drop(&mut self) {
        // SAFETY: the handle came from zt_svc_start and is stopped once.
        unsafe { zt_svc_stop(self.handle.as_ptr()) }
    }
}
