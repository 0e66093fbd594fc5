//! The file descriptors that travel with IPC messages (SCM_RIGHTS over unix
//! sockets): an SMB the service sends, a trace file a consumer passes.
//!
//! On unix these are `std::os::fd`'s types. Where there are no unix sockets
//! (Windows) nothing can travel with a message, and these are types without
//! values: a `Vec<OwnedFd>` of received fds stays empty and an
//! `Option<BorrowedFd>` to send is always `None`, so the same signatures
//! serve every platform.

#[cfg(unix)]
pub use std::os::fd::{BorrowedFd, OwnedFd};

/// A received file descriptor. None can exist on this platform.
#[cfg(not(unix))]
#[derive(Debug)]
pub enum OwnedFd {}

/// A file descriptor to send. None can exist on this platform.
#[cfg(not(unix))]
#[derive(Debug, Clone, Copy)]
pub struct BorrowedFd<'fd> {
    never: std::convert::Infallible,
    _owner: std::marker::PhantomData<&'fd OwnedFd>,
}

#[cfg(not(unix))]
impl From<OwnedFd> for std::fs::File {
    fn from(fd: OwnedFd) -> std::fs::File {
        match fd {}
    }
}

#[cfg(not(unix))]
impl BorrowedFd<'_> {
    /// Unreachable: there are no values.
    pub fn never<T>(self) -> T {
        match self.never {}
    }
}
