//! The vocabulary a producer and the service share on the wire, owned by
//! neither: the IPC method tables of the two ports, the argument types both
//! sides encode or decode (the [`CommitDataRequest`] with its chunks to move
//! and patches), and the id limits both sides check.
//!
//! The producer builds these values and the service receives them; both
//! import them from here, so neither side imports protocol types from the
//! other.
//!
//! * [`PRODUCER_METHODS`], [`CONSUMER_METHODS`], [`RELAY_METHODS`]: the
//!   ProducerPort, ConsumerPort and RelayPort method names (RelayPort's
//!   SyncClock phases [`SYNC_CLOCK_PING`], [`SYNC_CLOCK_UPDATE`]).
//! * [`CommitDataRequest`] and its protobuf encoding.
//! * [`WriterId`], [`BufferId`], [`ChunkId`] with [`MAX_WRITER_ID`] and
//!   [`is_valid_writer_id`]: the ids both sides name, and their ranges.

mod commit_request;
mod ids;
mod methods;

pub use commit_request::{
    ChunkToMove, ChunkToPatch, CommitDataRequest, CommitDecodeError, PatchData,
};
pub use ids::{BufferId, ChunkId, MAX_WRITER_ID, WriterId, is_valid_writer_id};
pub use methods::{
    CONSUMER_METHODS, PRODUCER_METHODS, RELAY_METHODS, SYNC_CLOCK_PING, SYNC_CLOCK_UPDATE,
};
