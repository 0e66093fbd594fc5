//! [`BufferStats`]: what a [`TraceBuffer`](super::TraceBuffer) counts, named
//! after the fields of Perfetto's `TraceStats.BufferStats` that describe the
//! same thing, and the per-writer chunk-fill histogram of `TraceStats.WriterStats`.
//!
//! Fields of `BufferStats` that describe another design's internals are not
//! here: `readaheads_*`, `padding_bytes_written/cleared` (V1's readahead and
//! padding records) and `chunks_relocated` (V2's record moves). Our buffer
//! reassembles without a readahead counter of its own meaning, wastes the tail
//! of the ring at a wrap instead of writing padding records (counted as
//! `padding_bytes_written` since it is the same loss of space) and never moves
//! a record.

use std::collections::BTreeMap;

/// Upper bounds (inclusive) of the chunk-fill histogram buckets, in bytes;
/// one more bucket counts larger chunks.
pub const CHUNK_FILL_BUCKETS: [u64; 10] = [8, 32, 128, 512, 1024, 2048, 4096, 8192, 12288, 16384];

/// Counters of one trace buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BufferStats {
    /// Size of the buffer in bytes.
    pub buffer_size: u64,
    /// Payload bytes copied in.
    pub bytes_written: u64,
    /// Chunks copied in (re-commits of a stored chunk included).
    pub chunks_written: u64,
    /// Chunks evicted by the ring before they were read.
    pub chunks_overwritten: u64,
    /// Payload bytes of those chunks.
    pub bytes_overwritten: u64,
    /// Times the write position wrapped to the start.
    pub write_wrap_count: u64,
    /// Bytes at the end of the ring left unused by a wrap.
    pub padding_bytes_written: u64,
    /// Patches applied.
    pub patches_succeeded: u64,
    /// Patch batches refused (chunk gone, or an offset out of range).
    pub patches_failed: u64,
    /// Fragments or chunks that broke the ABI (bad size header, bad re-commit).
    pub abi_violations: u64,
    /// Stored chunks replaced by a later copy (a scrape, then the real commit).
    pub chunks_rewritten: u64,
    /// Chunks that arrived with an id below one already stored for the writer.
    pub chunks_committed_out_of_order: u64,
    /// Payload bytes of chunks read to the end.
    pub bytes_read: u64,
    /// Chunks read to the end.
    pub chunks_read: u64,
    /// Chunks refused (a DISCARD buffer full of unread data, or too large).
    pub chunks_discarded: u64,
    /// Packets the writer itself abandoned (the drop sentinel).
    pub trace_writer_packet_loss: u64,
}

/// Chunk-fill histogram of one writer sequence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Chunks per bucket ([`CHUNK_FILL_BUCKETS`], then one overflow bucket).
    pub counts: [u64; CHUNK_FILL_BUCKETS.len() + 1],
    /// Payload bytes per bucket.
    pub sums: [u64; CHUNK_FILL_BUCKETS.len() + 1],
}

impl WriterStats {
    /// Counts one chunk of `bytes` payload bytes.
    pub fn add(&mut self, bytes: u64) {
        let i = CHUNK_FILL_BUCKETS
            .iter()
            .position(|&b| bytes <= b)
            .unwrap_or(CHUNK_FILL_BUCKETS.len());
        self.counts[i] += 1;
        self.sums[i] += bytes;
    }
}

/// Histograms keyed by (producer id, writer id).
pub type WriterStatsMap = BTreeMap<(u16, u16), WriterStats>;
