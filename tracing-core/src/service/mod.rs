//! The tracing service core, sans-IO: the state machine that `zerotraced`
//! drives. Nothing here opens a socket, maps memory, reads a clock or
//! spawns a thread; calls and the current time go in, [`Action`]s come out,
//! and what the core needs from the machine (clocks, uuids, shared memory)
//! it asks of the [`ServiceEnv`] it is given.
//!
//! * [`TracingService`]: producers, consumers, sessions, routing, flushes,
//!   timers; the entry points are `handle_*_call`, `*_connected`,
//!   `*_disconnected`, `handle_timeout`, `poll_action` and `poll_timeout`.
//! * [`ProducerCall`], [`ConsumerCall`]: the calls of the two ports, decoded
//!   into owned values; [`Action`]: what the core asks its driver to do.
//! * [`ServiceEnv`]: what the core asks of the machine.
//! * [`CONFIG_FIELDS`]: what the service does with each TraceConfig field.
//!
//! The driver that runs the core over sockets (`zerotraced`) is
//! [`crate::daemon`], beside the service.
//!
//! Inside, and private: the trace buffers where committed chunks wait until
//! they are read, the commit path from a producer's SMB into them, and the
//! packet validator that drops producer packets using fields reserved for
//! the service.

mod action;
mod calls;
mod commit;
mod config;
mod core;
mod env;
mod ids;
pub(crate) mod machines;
mod packet_validator;
// The daemon's `ServiceEnv` builds the service's packets.
pub(crate) mod service_packets;
mod trace_buffer;

// The sans-IO core: calls and time in, actions out.
pub use action::{Action, Peer, Reply};
pub use calls::{
    CallError, CloneArgs, CloneTrigger, ConsumerCall, DataSourceDescriptor, ProducerCall,
};
pub use core::{
    DataSourceState, GlobalStats, ProducerTransport, ServiceOptions, ServiceStats, SessionState,
    SessionSummary, TracingService,
};
pub use env::{ClockReading, PeerIdentity, ServiceEnv, UNKNOWN_UID};
pub use ids::{ConsumerId, DataSourceInstanceId, FlushRequestId, ProducerId, RequestId, SessionId};

// What the service accepts: its limits, and its decision on every TraceConfig field.
pub use config::{CONFIG_FIELDS, ConfigError, FieldDecisions, Handling, Limits};

// Statistics the core keeps.
pub use commit::CommitStats;
pub use trace_buffer::{BufferStats, CHUNK_FILL_BUCKETS, WriterStats};

/// The service's parts for the fuzz targets, the interop tests and benches
/// and this crate's tests only: not part of the API, may change in any
/// release.
#[doc(hidden)]
pub mod __private {
    pub use super::config::{
        BufferSpec, DataSourceOverrides, DataSourceSpec, SessionConfig, TriggerMode, TriggerSpec,
        rewrite_data_source_config,
    };
    pub use super::packet_validator::{InvalidPacket, MAX_FIELD_LENGTH, validate};
    pub use super::trace_buffer::{
        ChunkMeta, CopyOutcome, DataLoss, FillPolicy, PacketInfo, SequenceKey, TraceBuffer,
        TraceBufferError,
    };
}
