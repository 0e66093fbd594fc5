//! Perfetto-compatible tracing: the TrackEvent API and a `tracing` Layer for
//! instrumenting apps, producers that write trace packets straight into
//! shared memory, the tracing service (`zerotraced`, a drop-in for
//! Perfetto's `traced`) and its clients, all speaking Perfetto's protocols
//! byte for byte.
//!
//! # Where to start
//!
//! * Instrumenting an app: [`track_event`] — [`trace_event!`] and the other
//!   macros on [`Category`](track_event::Category)s, recorded in-process
//!   with [`InProcessSession`](track_event::InProcessSession) (feature
//!   `service`) or sent to a running service through a
//!   [`ProducerClient`](producer::ProducerClient) with
//!   [`TrackEvent::register`](track_event::TrackEvent::register); the
//!   examples `record`, `track_event` and `tracing_layer` (feature
//!   `tracing`).
//! * A data source of your own: [`producer::ProducerClient`]; the example
//!   `custom_data_source`.
//! * Writing packets into a shared memory buffer directly:
//!   [`producer::SharedMemoryArbiter`] and [`producer::TraceWriter`]; the
//!   program `tracing-core/hot-paths/src/bin/smb_packets.rs`.
//! * Reading traces from a service: [`consumer::ConsumerClient`].
//! * Running the service: `daemon::Daemon`, or the sans-IO
//!   `service::TracingService` under a driver of your own.
//!
//! # Modules
//!
//! Each module is a facade that re-exports what a user needs, each item at
//! one path; the files behind it are private.
//!
//! * [`track_event`]: categories, slices, instants, counters, flows and
//!   tracks as Perfetto `TrackEvent`s; the system and in-process backends;
//!   `PerfettoLayer` (feature `tracing`).
//! * [`producer`]: the `SharedMemoryArbiter` that hands chunks to
//!   per-thread `TraceWriter`s and batches their commits; the
//!   `ProducerClient` that connects to a service, registers data sources and
//!   serves their sessions; startup tracing.
//! * [`consumer`]: the `ConsumerClient` that starts sessions and reads
//!   traces.
//! * `service` (feature `service`): the sans-IO tracing service core
//!   (producers, consumers, sessions, trace buffers, flushes, file output):
//!   calls and `now` in, actions out.
//! * `daemon` (feature `service`): `zerotraced`, the `Daemon` that drives
//!   the core over its sockets and files.
//! * [`relay`]: multi-machine tracing's relay side (Perfetto's
//!   `traced_relay`): the sans-IO RelayPort client that names the machine
//!   and syncs its clocks with the central service; `zerotrace relay`
//!   drives it.
//! * [`protocol`]: what producer and service share on the wire (method
//!   tables, `CommitDataRequest`, id limits), owned by neither.
//! * [`ipc`]: Perfetto's IPC framing and RPC (sans-IO), endpoints and
//!   sockets.
//! * [`abi`]: the byte-exact shared memory buffer layout and chunk state
//!   machine; [`shm`]: the memory behind it (memfd, tmpfile, heap) and its
//!   size policy.
//! * [`platform`]: clocks (the [`boottime_ns`](platform::boottime_ns) trace
//!   timestamps use), thread ids and who this process is.
//!
//! # Features
//!
//! * `service` (default): the service core, the daemon and the in-process
//!   backend. An app that only instruments (the TrackEvent API, the Layer,
//!   the system backend connecting to an external `traced` or `zerotraced`)
//!   leaves it out: `default-features = false, features = ["tracing"]`.
//! * `tracing`: `track_event::PerfettoLayer`, a `tracing-subscriber` Layer.
//!
//! # Platforms
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
#[cfg(feature = "service")]
pub mod daemon;
pub mod ipc;
#[cfg(feature = "service")]
pub mod peer_policy;
pub mod platform;
pub mod producer;
pub mod protocol;
pub mod relay;
#[cfg(feature = "service")]
pub mod service;
pub mod shm;
mod sync;
pub mod track_event;

/// The code blocks of the crate README, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
