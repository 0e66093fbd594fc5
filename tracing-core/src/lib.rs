//! Perfetto-compatible tracing core (shared memory ABI, TraceWriter, IPC, service).
//!
//! * [`abi`]: the byte-exact shared memory buffer layout and chunk state machine.
//! * [`shm`]: memfd / tmpfile / heap backed buffers and the size policy.
//! * [`producer`]: the SharedMemoryArbiter and the TraceWriter that serialize
//!   trace packets straight into shared memory chunks.
//! * [`protocol`]: what producer and service share on the wire (method
//!   tables, `CommitDataRequest`, id limits), owned by neither.
//! * [`service`]: the sans-IO tracing service core (so far its trace buffer).
//!
//! Linux has everything. On macOS and Windows the TrackEvent API, the
//! in-process backend (its service on loopback TCP), the clients and the
//! daemon build too; what needs Linux (memfd SMBs, abstract sockets, peer
//! credentials) or unix sockets is gated, and endpoints that need it are
//! refused with an [`ipc::Unsupported`] error.

// Every type reachable from the public API can be named by a user: a type in
// a private module that a public signature mentions must be re-exported.
#![warn(unnameable_types)]

pub mod abi;
pub mod consumer;
pub mod ipc;
mod os_env;
pub mod producer;
pub mod protocol;
#[cfg(feature = "service")]
pub mod service;
pub mod shm;
mod sync;
pub mod track_event;

pub use os_env::boottime_ns;

/// The code blocks of the crate README, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
