//! What the loading core hands the parsers once it has sorted a trace:
//! each packet with its trace time, stream position and sequence
//! generation, and the state the packets point into (generations, track
//! descriptors, clocks, the storage so far). A leaf that both sides read,
//! so the parsers need nothing else of the loader.

use super::clock::ClockTracker;
use super::descriptors::Descriptors;
use super::sequence::Generation;
use super::track_event_times::TrackEventTimes;
use crate::storage::Storage;

/// A packet read and waiting for the sort.
#[derive(Debug)]
pub struct Packet {
    /// Time on the trace clock.
    pub ts: i64,
    /// The packet's bytes.
    pub bytes: Vec<u8>,
    /// Index of its sequence's generation.
    pub generation: u32,
    /// For a TrackEvent: the times and values resolved in stream order.
    pub track_event: Option<TrackEventTimes>,
    /// Position in the stream (ties in `ts` keep stream order).
    pub order: u64,
    /// Index of the trace packet it came from (`compressed_packets`
    /// expanded), as [`crate::packets::packets`] lists them.
    pub index: u64,
    /// For one event of an ftrace bundle: its CPU (`bytes` then hold the
    /// `FtraceEvent`, not a packet).
    pub ftrace_cpu: Option<u32>,
    /// The machine the packet came from (0: the host).
    pub machine: u32,
    /// For an event of a bundle's `compact_sched` (`bytes` then empty).
    pub inline_sched: Option<super::ftrace_bundle::InlineSched>,
}

/// Everything `finish` hands the parsers.
pub struct Loaded {
    /// The sorted packets.
    pub packets: Vec<Packet>,
    /// Generations the packets point into.
    pub generations: Vec<Generation>,
    /// Track descriptors by uuid.
    pub descriptors: Descriptors,
    /// The storage with the tokenizer's stats and metadata.
    pub storage: Storage,
    /// The clocks, for timestamps inside packets.
    pub clocks: ClockTracker,
    /// Raw machine ids by machine index (0: the host).
    pub machines: Vec<i64>,
}
