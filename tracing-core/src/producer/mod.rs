//! The producer side of the shared memory ABI: the [`SharedMemoryArbiter`] that
//! hands chunks to per-thread [`TraceWriter`]s and batches commits for the
//! service, and the writers that encode packets straight into chunks.

pub mod arbiter;
pub mod buffer_exhausted_policy;
pub mod client;
pub mod commit_sink;
pub mod endpoint;
pub mod error;
pub mod patch_list;
pub mod startup;
pub mod trace_packet;
pub mod trace_writer;
pub mod writer_id_allocator;

pub use crate::protocol::MAX_WRITER_ID;
pub use crate::protocol::commit_request;
pub use crate::protocol::{
    ChunkToMove, ChunkToPatch, CommitDataRequest, CommitDecodeError, PatchData,
};
pub use arbiter::{ArbiterConfig, ArbiterStats, SharedMemoryArbiter};
pub use buffer_exhausted_policy::{BufferExhaustedPolicy, StallConfig};
pub use client::{
    DataSourceEvent, DataSourceSpec, Instance, ProducerClient, ProducerClientError,
    ProducerOptions, StartupTracingOptions,
};
pub use commit_sink::{ChannelCommitSink, CommitSink, FlushCallback, SinkMessage};
pub use endpoint::{
    Backoff, EndpointError, EndpointEvent, EndpointOptions, EndpointStats, ProducerEndpoint,
    SmbSetup, StartupError, StartupOffer, StartupReservation, StartupStep, Transmit,
};
pub use error::ProducerError;
pub use patch_list::{Patch, PatchList};
pub use startup::{ReservationState, is_placeholder, placeholder_buffer};
pub use trace_packet::TracePacketHandle;
pub use trace_writer::TraceWriter;
pub use writer_id_allocator::WriterIdAllocator;
