//! The producer side of the shared memory ABI: the [`SharedMemoryArbiter`] that
//! hands chunks to per-thread [`TraceWriter`]s and batches commits for the
//! service, and the writers that encode packets straight into chunks.

mod arbiter;
mod buffer_exhausted_policy;
mod client;
mod commit_sink;
mod endpoint;
mod error;
mod patch_list;
pub(crate) mod small_packet;
mod smb_view;
mod startup;
mod trace_packet;
mod trace_writer;
mod writer_id_allocator;

// The arbiter and its writers: chunks out, commits batched.
pub use arbiter::{ArbiterConfig, ArbiterStats, SharedMemoryArbiter};
pub use buffer_exhausted_policy::{BufferExhaustedPolicy, StallConfig};
pub use error::ProducerError;
pub use trace_packet::TracePacketHandle;
pub use trace_writer::TraceWriter;

// Where the arbiter's commits go: a socket in a client, a channel in tests.
pub use commit_sink::{ChannelCommitSink, CommitSink, FlushCallback, SinkMessage};

// The client of a tracing service: data sources, their instances, startup tracing.
pub use client::{
    DataSourceEvent, DataSourceSpec, Instance, ProducerClient, ProducerClientError,
    ProducerOptions, StartupTracingOptions,
};
pub use startup::ReservationState;

// The sans-IO producer endpoint: service bytes, connection events and `now`
// in; frames to send, events for the app and the next deadline out.
pub use endpoint::{
    Backoff, EndpointError, EndpointEvent, EndpointOptions, EndpointStats, ProducerEndpoint,
    SmbSetup, StartupError, StartupOffer, StartupReservation, StartupStep, Transmit,
};
