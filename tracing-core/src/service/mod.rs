//! The tracing service core, sans-IO: the state machine that `zerotraced`
//! drives. Nothing here opens a socket, maps memory, reads a clock or
//! spawns a thread; events and the current time go in, actions come out.
//!
//! So far: [`trace_buffer`], where committed chunks wait until a consumer
//! reads them, and [`packet_validator`], which drops producer packets that
//! use fields reserved for the service and appends the trusted fields.

pub mod commit;
pub mod packet_validator;
pub mod trace_buffer;

pub use commit::{CommitStats, ProducerSmb, commit_data, scrape};
pub use packet_validator::{InvalidPacket, TrustedFields, append_trusted_fields, validate};
pub use trace_buffer::{
    BufferStats, ChunkMeta, CopyOutcome, DataLoss, FillPolicy, PacketInfo, SequenceKey,
    TraceBuffer, TraceBufferError,
};
