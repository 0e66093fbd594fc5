//! The bookkeeping behind the ring: a [`Record`] per chunk copied in, a
//! [`Sequence`] per writer with its unread chunks in id order, and the cheap
//! hasher that finds a sequence once per chunk.

use std::collections::VecDeque;
use std::hash::Hasher;

use super::SequenceKey;
use crate::abi::ChunkFlags;

/// One chunk copied into the ring, in commit order.
#[derive(Debug, Clone, Copy)]
pub(super) struct Record {
    pub(super) offset: usize,
    pub(super) len: usize,
    /// Index of its sequence in `TraceBuffer::sequences`.
    pub(super) seq: u32,
    pub(super) chunk_id: u32,
    pub(super) num_fragments: u16,
    pub(super) flags: ChunkFlags,
    pub(super) complete: bool,
    /// Fragments already read (or skipped).
    pub(super) fragments_read: u16,
    /// Payload offset of the next unread fragment's size header.
    pub(super) read_pos: usize,
    /// Read to the end (or given up on): no longer in its sequence's queue.
    pub(super) consumed: bool,
}

/// Room for unread chunks a sequence always keeps (see [`Sequence::remove`]).
const MIN_RETAINED_CHUNKS: usize = 64;

/// The read state of one writer sequence.
#[derive(Debug, Clone)]
pub(super) struct Sequence {
    pub(super) key: SequenceKey,
    /// Unread chunks in chunk-id order: (chunk id, record id).
    pub(super) chunks: VecDeque<(u32, u64)>,
    /// Id of the last chunk read to the end.
    pub(super) last_consumed: Option<u32>,
    /// Losses to report with the next packet.
    pub(super) pending_loss: u32,
    /// The read pass in which the sequence had nothing more to read.
    pub(super) stalled_in: u64,
}

impl Sequence {
    /// The record id of unread chunk `chunk_id`. Chunks nearly always
    /// arrive in id order, so a chunk id after the newest one is answered
    /// without a search. (Only ids spread over more than 2^31, which no
    /// writer produces, have no consistent order; a copy of a chunk may then
    /// be stored as a chunk of its own, read like any other.)
    pub(super) fn find(&self, chunk_id: u32) -> Option<u64> {
        let &(newest, _) = self.chunks.back()?;
        if precedes(newest, chunk_id) {
            return None;
        }
        self.chunks
            .iter()
            .rev()
            .find(|&&(c, _)| c == chunk_id)
            .map(|&(_, id)| id)
    }

    /// Drops record `id` from the unread chunks (nearly always the oldest).
    ///
    /// The queue gives back most of its room once it is a quarter full: a
    /// sequence that once had many unread chunks (a writer that outpaced
    /// the others while the consumer was not reading) would otherwise keep
    /// that room for the buffer's life, for every sequence (the soak saw
    /// 1.5 MiB of such room across 64 writers of a 32 MiB buffer).
    pub(super) fn remove(&mut self, id: u64) {
        if self.chunks.front().is_some_and(|&(_, r)| r == id) {
            self.chunks.pop_front();
        } else {
            self.chunks.retain(|&(_, r)| r != id);
        }
        let (len, cap) = (self.chunks.len(), self.chunks.capacity());
        if cap > MIN_RETAINED_CHUNKS && len < cap / 4 {
            self.chunks.shrink_to((len * 2).max(MIN_RETAINED_CHUNKS));
        }
    }
}

/// Hashes a [`SequenceKey`] (two `u16`s) with one multiply: the index is
/// looked up once per chunk copied in, and nowhere on the read path.
#[derive(Default)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u16(&mut self, n: u16) {
        self.0 = (self.0 << 16) | u64::from(n);
    }

    fn finish(&self) -> u64 {
        // Fold the high half of the product into the low bits that pick
        // the bucket, so that keys differing only in the producer id (every
        // producer has a writer 1) spread too.
        let h = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 32)
    }
}

/// Whether chunk id `a` comes before `b` (32-bit wrap-aware).
pub(super) fn precedes(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
