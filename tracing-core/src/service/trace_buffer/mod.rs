//! [`TraceBuffer`]: where the service keeps the chunks producers commit until
//! a consumer reads them, one per buffer of a `TraceConfig`.
//!
//! Chunk payloads are copied into one byte ring, back to back in commit order;
//! their metadata lives next to it, in a queue of records in the same order,
//! so evicting the oldest data is popping the front of that queue. Each
//! writer sequence (trusted producer id, writer id) keeps the ids of its
//! unread chunks in chunk-id order (32-bit wrap-aware), which is the order
//! packets are read in.
//!
//! Reading walks the records oldest first (an approximate global FIFO) and
//! drains each sequence in chunk-id order from there: whole fragments become
//! packets, a packet split across chunks is reassembled from the following
//! chunks of the same sequence, and anything that cannot be read is reported
//! as a loss on the next packet of its sequence ([`DataLoss`] bits, as
//! Perfetto's `previous_packet_dropped`): a sequence whose first chunk read
//! is not its writer's first, a missing chunk id (a gap is a loss
//! once a later chunk of the sequence is there, never a stall), a chunk
//! overwritten before it was read, a fragment whose head was lost, a corrupt
//! size header, a packet the writer abandoned. A sequence waits only for data
//! that can still come: a chunk whose lengths await patches, a scraped chunk
//! awaiting its complete copy, the continuation of a packet whose chunk is
//! not committed yet.
//!
//! A ring buffer overwrites the oldest chunks; a discard buffer refuses a
//! chunk only when storing it would overwrite data not yet read, so a session
//! drained periodically keeps recording for as long as it runs.
//!
//! Everything here works on bytes the service owns: the caller copies a chunk
//! out of shared memory once (atomically) straight into the ring through
//! [`TraceBuffer::copy_chunk_with`], and no byte is trusted afterwards.

mod sequence;
mod stats;

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;

use sequence::{KeyHasher, Record, Sequence, precedes};
pub use stats::{BufferStats, CHUNK_FILL_BUCKETS, WriterStats, WriterStatsMap};

use crate::abi::{ChunkFlags, FragmentError, fragment_at};
use crate::protocol::ChunkId;

/// Why packets of a sequence were lost, as bits (Perfetto's `DataLossReason`,
/// carried in `TracePacket.previous_packet_dropped`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataLoss(pub u32);

impl DataLoss {
    /// Some loss happened (always set with any other bit).
    pub const PRESENT: u32 = 1;
    /// A chunk id was skipped.
    pub const READ_GAP: u32 = 2;
    /// A fragment's size header was invalid.
    pub const CHUNK_CORRUPTED: u32 = 4;
    /// A continuation fragment whose head was never seen.
    pub const ORPHAN_CONTINUATION: u32 = 8;
    /// A packet's next chunk was missing.
    pub const REASSEMBLY_GAP: u32 = 16;
    /// A packet's next chunk did not continue it.
    pub const REASSEMBLY_BROKEN_CHAIN: u32 = 32;
    /// Unread chunks were overwritten by the ring.
    pub const OVERWRITE: u32 = 64;
    /// The writer abandoned a packet.
    pub const WRITER_ABORT: u32 = 128;
    /// The producer's shared memory was full (set by writers, not here).
    pub const SMB_FULL: u32 = 256;

    /// Whether any loss is recorded.
    pub fn any(self) -> bool {
        self.0 != 0
    }
}

/// What to do when the buffer is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FillPolicy {
    /// Overwrite the oldest chunks (`RING_BUFFER`).
    #[default]
    RingBuffer,
    /// Refuse chunks that would overwrite unread data (`DISCARD`).
    Discard,
}

/// A writer sequence: the trusted producer id and the writer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SequenceKey {
    /// Producer id, assigned by the service (never taken from the producer).
    pub producer: u16,
    /// Writer id, from the chunk header.
    pub writer: u16,
}

/// The header fields of a chunk being copied in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkMeta {
    /// Whose chunk.
    pub sequence: SequenceKey,
    /// Chunk id from the header.
    pub chunk_id: u32,
    /// Fragment count from the header.
    pub num_fragments: u16,
    /// Flags from the header.
    pub flags: ChunkFlags,
    /// `false` for a chunk scraped while its writer still owned it.
    pub complete: bool,
}

/// What became of a chunk handed to [`TraceBuffer::copy_chunk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyOutcome {
    /// Stored as a new chunk.
    Stored,
    /// Replaced a stored copy of the same chunk (a scrape, then the commit).
    Rewritten,
    /// The same chunk as a stored copy, with nothing new (a chunk scraped
    /// once complete, then committed by its producer, which had completed
    /// it before the scrape): kept as it is, as Perfetto's buffer does.
    Unchanged,
    /// Refused; see the stats (`chunks_discarded`, `abi_violations`).
    Refused,
}

/// A packet handed out by [`TraceBuffer::read_next_packet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketInfo {
    /// The sequence it belongs to.
    pub sequence: SequenceKey,
    /// Losses on this sequence since its previous packet was read.
    pub loss: DataLoss,
}

/// Why a buffer could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TraceBufferError {
    /// The requested size is zero.
    #[error("a trace buffer cannot be empty")]
    Empty,
}

/// A service-side trace buffer; see the module docs.
#[derive(Debug, Clone)]
pub struct TraceBuffer {
    data: Vec<u8>,
    policy: FillPolicy,
    write_pos: usize,
    /// Records in commit order; `records[i]` has id `first_id + i`.
    records: VecDeque<Record>,
    first_id: u64,
    /// Every sequence seen, by index (records name theirs by index).
    sequences: Vec<Sequence>,
    /// Index into `sequences` by key.
    index: HashMap<SequenceKey, u32, BuildHasherDefault<KeyHasher>>,
    stats: BufferStats,
    writer_stats: WriterStatsMap,
    /// Read pass state: the next record id to look at.
    scan: u64,
    /// Read pass number (a sequence with `stalled_in == pass` has nothing
    /// more to read in this pass).
    pass: u64,
    /// Scratch list of the chunks a packet is reassembled from.
    parts: Vec<Part>,
}

/// A continuation of a packet being reassembled: record id, fragment
/// range, and whether the chunk ends with it.
type Part = (u64, usize, usize, bool);

impl TraceBuffer {
    /// A buffer of `size` bytes.
    pub fn new(size: usize, policy: FillPolicy) -> Result<TraceBuffer, TraceBufferError> {
        if size == 0 {
            return Err(TraceBufferError::Empty);
        }
        Ok(TraceBuffer {
            data: vec![0; size],
            policy,
            write_pos: 0,
            records: VecDeque::new(),
            first_id: 0,
            sequences: Vec::new(),
            index: HashMap::default(),
            stats: BufferStats {
                buffer_size: size as u64,
                ..BufferStats::default()
            },
            writer_stats: WriterStatsMap::new(),
            scan: 0,
            pass: 1,
            parts: Vec::new(),
        })
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    /// The fill policy.
    pub fn policy(&self) -> FillPolicy {
        self.policy
    }

    /// The counters.
    pub fn stats(&self) -> &BufferStats {
        &self.stats
    }

    /// Chunk-fill histograms per writer sequence (of chunks read to the end).
    pub fn writer_stats(&self) -> &WriterStatsMap {
        &self.writer_stats
    }

    /// Bytes of payload stored and not read yet.
    pub fn unread_bytes(&self) -> usize {
        self.records
            .iter()
            .filter(|r| !r.consumed)
            .map(|r| r.len)
            .sum()
    }

    /// Copies a chunk payload in.
    pub fn copy_chunk(&mut self, meta: &ChunkMeta, payload: &[u8]) -> CopyOutcome {
        self.copy_chunk_with(meta, payload.len(), |dst| dst.copy_from_slice(payload))
    }

    /// Copies a chunk payload of `len` bytes in: `fill` writes it straight
    /// into its place in the ring (the caller copies out of shared memory
    /// there, so the payload is copied once).
    pub fn copy_chunk_with(
        &mut self,
        meta: &ChunkMeta,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> CopyOutcome {
        let mut flags = meta.flags;
        let mut num_fragments = meta.num_fragments;
        if !meta.complete {
            // The last fragment of a scraped chunk may still be growing: it is
            // read only from the complete copy, so neither continuation nor
            // patching applies to this one.
            flags = ChunkFlags::from_bits(
                flags.bits()
                    & !(ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK.bits()
                        | ChunkFlags::CHUNK_NEEDS_PATCHING.bits()),
            );
            num_fragments = num_fragments.saturating_sub(1);
        }
        let s = self.sequence_index(meta.sequence);
        let seq = &self.sequences[s];
        // A copy of a chunk already stored and not fully read: a re-commit.
        if let Some(id) = seq.find(meta.chunk_id) {
            return self.rewrite(id, meta, flags, num_fragments, len, fill);
        }
        if seq
            .last_consumed
            .is_some_and(|last| !precedes(last, meta.chunk_id))
        {
            // At or before a chunk already read: a replay, or too late.
            self.stats.chunks_committed_out_of_order += 1;
            self.stats.chunks_discarded += 1;
            return CopyOutcome::Refused;
        }
        if len > self.data.len() {
            self.stats.chunks_discarded += 1;
            self.stats.abi_violations += 1;
            return CopyOutcome::Refused;
        }
        let Some(offset) = self.make_room(len) else {
            self.stats.chunks_discarded += 1;
            return CopyOutcome::Refused;
        };
        fill(&mut self.data[offset..offset + len]);
        self.write_pos = offset + len;
        let id = self.first_id + self.records.len() as u64;
        self.records.push_back(Record {
            offset,
            len,
            seq: s as u32,
            chunk_id: meta.chunk_id,
            num_fragments,
            flags,
            complete: meta.complete,
            fragments_read: 0,
            read_pos: 0,
            consumed: false,
        });
        let seq = &mut self.sequences[s];
        let at = seq
            .chunks
            .iter()
            .rposition(|&(c, _)| precedes(c, meta.chunk_id))
            .map_or(0, |i| i + 1);
        if at != seq.chunks.len() {
            self.stats.chunks_committed_out_of_order += 1;
        }
        seq.chunks.insert(at, (meta.chunk_id, id));
        self.stats.chunks_written += 1;
        self.stats.bytes_written += len as u64;
        CopyOutcome::Stored
    }

    /// The index of `key`'s sequence, made on first use.
    fn sequence_index(&mut self, key: SequenceKey) -> usize {
        let next = self.sequences.len();
        let s = *self.index.entry(key).or_insert(next as u32) as usize;
        if s == next {
            self.sequences.push(Sequence {
                key,
                chunks: VecDeque::new(),
                last_consumed: None,
                pending_loss: 0,
                stalled_in: 0,
            });
        }
        s
    }

    /// Replaces the stored copy `id` of a chunk with a new one (a scraped
    /// chunk followed by its commit): same size, no fewer fragments, no
    /// flag removed; the read progress is kept.
    fn rewrite(
        &mut self,
        id: u64,
        meta: &ChunkMeta,
        flags: ChunkFlags,
        num_fragments: u16,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> CopyOutcome {
        let Some(rec) = self.record_mut(id) else {
            return CopyOutcome::Refused;
        };
        let keeps_flags = flags.bits() & rec.flags.bits() == rec.flags.bits();
        if rec.len != len || num_fragments < rec.num_fragments || !keeps_flags {
            self.stats.abi_violations += 1;
            self.stats.chunks_discarded += 1;
            return CopyOutcome::Refused;
        }
        // Nothing new: a copy scraped once the producer had completed the
        // chunk, then the producer's own commit of it (the commit was on its
        // way when the service scraped, as happens when a flush or a stop
        // meets a busy producer). Not a violation; nothing to copy.
        if num_fragments == rec.num_fragments
            && flags == rec.flags
            && (rec.complete || !meta.complete)
        {
            return CopyOutcome::Unchanged;
        }
        // A complete copy never changes.
        if rec.complete {
            self.stats.abi_violations += 1;
            self.stats.chunks_discarded += 1;
            return CopyOutcome::Refused;
        }
        rec.num_fragments = num_fragments;
        rec.flags = flags;
        rec.complete = meta.complete;
        let offset = rec.offset;
        fill(&mut self.data[offset..offset + len]);
        self.stats.chunks_rewritten += 1;
        self.stats.chunks_written += 1;
        self.stats.bytes_written += len as u64;
        CopyOutcome::Rewritten
    }

    /// Finds `len` contiguous bytes at the write position, wrapping and
    /// evicting the oldest records as the policy allows. `None`: a discard
    /// buffer would have to overwrite unread data.
    fn make_room(&mut self, len: usize) -> Option<usize> {
        let size = self.data.len();
        let wraps = self.write_pos + len > size;
        let start = if wraps { 0 } else { self.write_pos };
        if self.policy == FillPolicy::Discard {
            // What would be evicted is a run at the front of the queue: the
            // tail of the ring past the write position (on a wrap), then the
            // records starting in the new record's range.
            let tail = |r: &&Record| wraps && r.offset >= self.write_pos;
            let range = |r: &&Record| r.offset >= start && r.offset < start + len;
            let unread_tail = self.records.iter().take_while(tail).any(|r| !r.consumed);
            let unread_range = self
                .records
                .iter()
                .skip_while(tail)
                .take_while(range)
                .any(|r| !r.consumed);
            if unread_tail || unread_range {
                return None;
            }
        }
        if wraps {
            // Everything from the write position to the end goes, including
            // an empty record sitting exactly at the end (offset == size):
            // left at the front of the queue it would stop the eviction of
            // the records the new one overwrites at the start.
            self.evict_from(self.write_pos, size + 1);
            self.stats.padding_bytes_written += (size - self.write_pos) as u64;
            self.stats.write_wrap_count += 1;
            self.write_pos = 0;
        }
        self.evict_from(start, start + len);
        Some(start)
    }

    /// Evicts the oldest records while they start in `begin..end`.
    fn evict_from(&mut self, begin: usize, end: usize) {
        while let Some(front) = self.records.front() {
            if front.offset < begin || front.offset >= end {
                break;
            }
            let Some(rec) = self.records.pop_front() else {
                break;
            };
            let id = self.first_id;
            self.first_id += 1;
            if rec.consumed {
                continue;
            }
            self.stats.chunks_overwritten += 1;
            self.stats.bytes_overwritten += rec.len as u64;
            if let Some(seq) = self.sequences.get_mut(rec.seq as usize) {
                seq.pending_loss |= DataLoss::PRESENT | DataLoss::OVERWRITE;
                seq.remove(id);
                // Reading resumes after the overwritten chunk, so the chunk
                // itself is not reported a second time as a gap.
                if seq
                    .last_consumed
                    .is_none_or(|last| precedes(last, rec.chunk_id))
                {
                    seq.last_consumed = Some(rec.chunk_id);
                }
            }
        }
        if self.scan < self.first_id {
            self.scan = self.first_id;
        }
    }

    fn record(&self, id: u64) -> Option<&Record> {
        self.records
            .get(usize::try_from(id.checked_sub(self.first_id)?).ok()?)
    }

    fn record_mut(&mut self, id: u64) -> Option<&mut Record> {
        let i = usize::try_from(id.checked_sub(self.first_id)?).ok()?;
        self.records.get_mut(i)
    }

    /// Applies 4-byte patches (`offset` from the payload start) to a stored
    /// chunk of `sequence`: only a chunk still in the buffer, not yet read,
    /// and only the producer's own (the key carries the trusted producer
    /// id). Without `has_more`, the chunk no longer waits for patches.
    /// Returns whether the patches were applied; a batch stops at the first
    /// out-of-range offset (earlier patches stay applied).
    pub fn try_patch(
        &mut self,
        sequence: SequenceKey,
        chunk_id: u32,
        patches: &[(u32, [u8; 4])],
        has_more: bool,
    ) -> bool {
        let id = self
            .index
            .get(&sequence)
            .and_then(|&s| self.sequences[s as usize].find(chunk_id));
        let Some(rec) = id.and_then(|id| self.record(id)) else {
            self.stats.patches_failed += 1;
            return false;
        };
        let (offset, len) = (rec.offset, rec.len);
        for &(at, bytes) in patches {
            let at = at as usize;
            if at.checked_add(4).is_none_or(|end| end > len) {
                self.stats.patches_failed += 1;
                return false;
            }
            self.data[offset + at..offset + at + 4].copy_from_slice(&bytes);
            self.stats.patches_succeeded += 1;
        }
        if !has_more {
            if let Some(rec) = id.and_then(|id| self.record_mut(id)) {
                rec.flags = ChunkFlags::from_bits(
                    rec.flags.bits() & !ChunkFlags::CHUNK_NEEDS_PATCHING.bits(),
                );
            }
        }
        true
    }

    /// Starts a read pass: the next reads start again from the oldest data.
    pub fn begin_read(&mut self) {
        self.scan = self.first_id;
        self.pass += 1;
    }

    /// Appends the next readable packet to `out` and says whose it is, or
    /// returns `None` when nothing more can be read in this pass.
    pub fn read_next_packet(&mut self, out: &mut Vec<u8>) -> Option<PacketInfo> {
        loop {
            let s = loop {
                let rec = self.record(self.scan)?;
                let s = rec.seq as usize;
                if rec.consumed || self.sequences[s].stalled_in == self.pass {
                    self.scan += 1;
                    continue;
                }
                break s;
            };
            match self.read_sequence(s, out) {
                Some(info) => return Some(info),
                None => self.sequences[s].stalled_in = self.pass,
            }
        }
    }

    /// Reads the next packet of sequence `s`, or `None` if it has none
    /// readable now.
    fn read_sequence(&mut self, s: usize, out: &mut Vec<u8>) -> Option<PacketInfo> {
        loop {
            let &(chunk_id, id) = self.sequences[s].chunks.front()?;
            let rec = *self.record(id)?;
            if rec.fragments_read == 0 && rec.read_pos == 0 {
                self.note_gap(s, chunk_id);
            }
            if rec.flags.contains(ChunkFlags::CHUNK_NEEDS_PATCHING) {
                return None;
            }
            if rec.fragments_read >= rec.num_fragments {
                if !rec.complete {
                    // A scraped copy: the rest comes with the real commit.
                    return None;
                }
                self.consume_front(s, id);
                continue;
            }
            let payload = &self.data[rec.offset..rec.offset + rec.len];
            let (start, end) = match fragment_at(payload, rec.read_pos) {
                Ok(range) => range,
                Err(e) => {
                    self.corrupt(s, e);
                    self.consume_front(s, id);
                    continue;
                }
            };
            let index = rec.fragments_read;
            let is_last = index + 1 == rec.num_fragments;
            if index == 0
                && rec
                    .flags
                    .contains(ChunkFlags::FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK)
            {
                // Its head was in a chunk that is gone or was never read.
                self.lose(s, DataLoss::ORPHAN_CONTINUATION);
                self.advance(id, end);
                continue;
            }
            if is_last
                && rec
                    .flags
                    .contains(ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK)
            {
                match self.reassemble(s, id, start..end, out) {
                    Reassembly::Done => return Some(self.packet_info(s)),
                    Reassembly::Wait => return None,
                    Reassembly::Lost(reason) => {
                        self.lose(s, reason);
                        self.advance(id, end);
                        continue;
                    }
                }
            }
            self.advance(id, end);
            if start == end {
                continue; // an empty fragment
            }
            out.extend_from_slice(&self.data[rec.offset + start..rec.offset + end]);
            return Some(self.packet_info(s));
        }
    }

    /// Completes the packet whose first part is `head` (in record `id`) from
    /// the following chunks of sequence `s`.
    fn reassemble(
        &mut self,
        s: usize,
        id: u64,
        head: core::ops::Range<usize>,
        out: &mut Vec<u8>,
    ) -> Reassembly {
        let mut parts = core::mem::take(&mut self.parts);
        parts.clear();
        let result = self.find_parts(s, &mut parts);
        if let Reassembly::Done = result {
            self.join_parts(s, id, head, &parts, out);
        }
        self.parts = parts;
        result
    }

    /// Collects into `parts` the continuations of the packet that ends the
    /// first unread chunk of sequence `s`, up to the chunk that ends it.
    fn find_parts(&self, s: usize, parts: &mut Vec<Part>) -> Reassembly {
        let seq = &self.sequences[s];
        let mut expect = seq.chunks.front().map_or(0, |c| c.0.wrapping_add(1));
        for &(chunk_id, next) in seq.chunks.iter().skip(1) {
            if chunk_id != expect {
                return Reassembly::Lost(DataLoss::REASSEMBLY_GAP);
            }
            let Some(rec) = self.record(next) else {
                return Reassembly::Wait;
            };
            if !rec.complete || rec.flags.contains(ChunkFlags::CHUNK_NEEDS_PATCHING) {
                return Reassembly::Wait;
            }
            if !rec
                .flags
                .contains(ChunkFlags::FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK)
                || rec.num_fragments == 0
            {
                return Reassembly::Lost(DataLoss::REASSEMBLY_BROKEN_CHAIN);
            }
            let payload = &self.data[rec.offset..rec.offset + rec.len];
            let (start, end) = match fragment_at(payload, 0) {
                Ok(range) => range,
                // The writer gave up on the packet (counted when that
                // fragment itself is read).
                Err(FragmentError::DroppedPacket { .. }) => {
                    return Reassembly::Lost(DataLoss::WRITER_ABORT);
                }
                Err(_) => return Reassembly::Lost(DataLoss::CHUNK_CORRUPTED),
            };
            let passes_through = rec.num_fragments == 1
                && rec
                    .flags
                    .contains(ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK);
            parts.push((next, start, end, rec.num_fragments == 1));
            if !passes_through {
                return Reassembly::Done;
            }
            expect = expect.wrapping_add(1);
        }
        Reassembly::Wait
    }

    /// Appends the packet made of `head` (in record `id`) and `parts` to
    /// `out`, and marks those fragments read.
    fn join_parts(
        &mut self,
        s: usize,
        id: u64,
        head: core::ops::Range<usize>,
        parts: &[Part],
        out: &mut Vec<u8>,
    ) {
        if let Some(rec) = self.record(id) {
            let base = rec.offset;
            out.extend_from_slice(&self.data[base + head.start..base + head.end]);
        }
        for &(next, start, end, _) in parts {
            if let Some(rec) = self.record(next) {
                let o = rec.offset;
                out.extend_from_slice(&self.data[o + start..o + end]);
            }
        }
        self.advance(id, head.end);
        self.consume_front(s, id);
        for &(next, _, end, whole) in parts {
            self.advance(next, end);
            if whole {
                self.consume_front(s, next);
            }
        }
    }

    /// Marks the fragment ending at `end` of record `id` as read.
    fn advance(&mut self, id: u64, end: usize) {
        if let Some(rec) = self.record_mut(id) {
            rec.fragments_read = rec.fragments_read.saturating_add(1);
            rec.read_pos = end;
        }
    }

    /// Record `id` (the first unread chunk of sequence `s`) is read to the
    /// end.
    fn consume_front(&mut self, s: usize, id: u64) {
        let mut fill = None;
        if let Some(rec) = self.record_mut(id) {
            if !rec.consumed {
                rec.consumed = true;
                fill = Some((rec.len, rec.read_pos, rec.chunk_id));
            }
        }
        let Some((len, used, chunk_id)) = fill else {
            return;
        };
        self.stats.chunks_read += 1;
        self.stats.bytes_read += len as u64;
        let seq = &mut self.sequences[s];
        self.writer_stats
            .entry((seq.key.producer, seq.key.writer))
            .or_default()
            .add(used as u64);
        seq.remove(id);
        seq.last_consumed = Some(chunk_id);
    }

    /// Records a gap if `chunk_id` does not follow the last chunk read. The
    /// first chunk read of a sequence follows nothing: as Perfetto's buffer
    /// does, its first packet is flagged (without a reason bit), so a reader
    /// never assumes it holds the sequence from its start.
    fn note_gap(&mut self, s: usize, chunk_id: u32) {
        let seq = &mut self.sequences[s];
        let loss = match seq.last_consumed {
            Some(last) if ChunkId(last).next() != ChunkId(chunk_id) => {
                DataLoss::PRESENT | DataLoss::READ_GAP
            }
            None => DataLoss::PRESENT,
            _ => return,
        };
        seq.pending_loss |= loss;
        // Report it once.
        seq.last_consumed = Some(ChunkId(chunk_id).prev().0);
    }

    fn corrupt(&mut self, s: usize, e: FragmentError) {
        if matches!(e, FragmentError::DroppedPacket { .. }) {
            self.stats.trace_writer_packet_loss += 1;
            self.lose(s, DataLoss::WRITER_ABORT);
        } else {
            self.stats.abi_violations += 1;
            self.lose(s, DataLoss::CHUNK_CORRUPTED);
        }
    }

    fn lose(&mut self, s: usize, reason: u32) {
        self.sequences[s].pending_loss |= DataLoss::PRESENT | reason;
    }

    /// The packet just read of sequence `s`, with the losses reported
    /// since its previous one.
    fn packet_info(&mut self, s: usize) -> PacketInfo {
        let seq = &mut self.sequences[s];
        PacketInfo {
            sequence: seq.key,
            loss: DataLoss(core::mem::take(&mut seq.pending_loss)),
        }
    }
}

/// How reassembling a packet across chunks went.
enum Reassembly {
    /// The packet was appended to the output.
    Done,
    /// A chunk it needs has not arrived (or awaits patches): try later.
    Wait,
    /// It cannot be completed; the reason bit.
    Lost(u32),
}

#[cfg(test)]
mod tests;
