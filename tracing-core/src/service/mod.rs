//! The tracing service core, sans-IO: the state machine that `zerotraced`
//! drives. Nothing here opens a socket, maps memory, reads a clock or
//! spawns a thread; events and the current time go in, actions come out.
//!
//! So far: [`trace_buffer`], where committed chunks wait until a consumer
//! reads them.

pub mod trace_buffer;

pub use trace_buffer::{
    BufferStats, ChunkMeta, CopyOutcome, DataLoss, FillPolicy, PacketInfo, SequenceKey,
    TraceBuffer, TraceBufferError,
};
