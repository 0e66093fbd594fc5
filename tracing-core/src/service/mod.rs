//! The tracing service core, sans-IO: the state machine that `zerotraced`
//! drives. Nothing here opens a socket, maps memory, reads a clock or
//! spawns a thread; calls and the current time go in, [`Action`]s come out,
//! and what the core needs from the machine (clocks, uuids, shared memory)
//! it asks of the [`ServiceEnv`] it is given.
//!
//! * [`TracingService`]: producers, consumers, sessions, routing, flushes,
//!   timers; the entry points are `handle_*_call`, `*_connected`,
//!   `*_disconnected`, `handle_timeout`, `poll_action` and `poll_timeout`.
//! * [`trace_buffer`]: where committed chunks wait until they are read.
//! * [`commit`]: the commit path from a producer's SMB into trace buffers.
//! * [`packet_validator`]: drops producer packets that use fields reserved
//!   for the service and appends the trusted fields.

pub mod action;
pub mod calls;
pub mod commit;
pub mod config;
mod core;
pub mod driver;
pub mod env;
pub mod ids;
pub mod packet_validator;
pub mod service_packets;
pub mod trace_buffer;

pub use action::{Action, Peer, Reply};
pub use calls::{
    CallError, CloneArgs, CloneTrigger, ConsumerCall, DataSourceDescriptor, ProducerCall,
};
pub use commit::{BufferResolver, CommitStats, ProducerSmb, SliceResolver, commit_data, scrape};
pub use config::{ConfigError, Limits, SessionConfig};
pub use core::{
    DataSourceState, GlobalStats, ProducerTransport, ServiceOptions, ServiceStats, SessionState,
    SessionSummary, TracingService,
};
pub use env::{ClockReading, PeerIdentity, ServiceEnv};
pub use ids::{
    BufferId, ConsumerId, DataSourceInstanceId, FlushRequestId, ProducerId, RequestId, SessionId,
};
pub use packet_validator::{InvalidPacket, TrustedFields, append_trusted_fields, validate};
pub use trace_buffer::{
    BufferStats, ChunkMeta, CopyOutcome, DataLoss, FillPolicy, PacketInfo, SequenceKey,
    TraceBuffer, TraceBufferError,
};
