//! The commit path: what the service does with a producer's `CommitData`.
//!
//! The core reads a producer's shared memory only through a [`ProducerSmb`]
//! it is given (the driver maps the memfd; tests and fuzzers pass a heap
//! buffer they can rewrite at will). For every chunk to move it validates the
//! page and chunk index, takes the chunk for reading, copies its payload once
//! with atomic loads straight into the target trace buffer, and frees it;
//! then it applies the patches. Every identity comes from the caller (the
//! trusted producer id of the connection), never from the producer's bytes,
//! and a chunk or patch for a buffer the producer was not granted is
//! discarded and counted.

use std::sync::Arc;

use crate::abi::{
    AbiError, CHUNK_HEADER_SIZE, ChunkHeader, ChunkState, SharedMemoryAbi, copy_from_shared,
};
use crate::protocol::{BufferId, CommitDataRequest, WriterId};
use crate::service::trace_buffer::{ChunkMeta, CopyOutcome, SequenceKey, TraceBuffer};
use crate::shm::SharedMemoryRegion;

/// A producer's shared memory buffer as the service core sees it.
#[derive(Debug)]
pub struct ProducerSmb {
    abi: SharedMemoryAbi,
    /// Keeps the memory behind `abi` mapped.
    _region: Arc<dyn SharedMemoryRegion>,
}

impl ProducerSmb {
    /// Views `region` as pages of `page_size`.
    ///
    /// # Safety
    /// No other code of this process may access the region's page and chunk
    /// headers other than atomically, nor view it with another page size,
    /// while this value lives; and no thread of this process may write a
    /// chunk through this mapping while [`scrape`] copies it (the producer's
    /// own process is outside these rules: its writes are what the atomic
    /// copies tolerate).
    ///
    /// A mapping of a producer's memfd made for the service satisfies this,
    /// also when the producer lives in this process (the in-process
    /// backend): the producer writes through its own mapping of the memfd,
    /// a distinct allocation to the compiler, exactly as another process's
    /// mapping is; only the service's atomic loads touch this one. A heap
    /// region shared with an in-process arbiter satisfies it only while that
    /// arbiter's writers are idle during a scrape.
    pub unsafe fn new(
        region: Arc<dyn SharedMemoryRegion>,
        page_size: usize,
    ) -> Result<ProducerSmb, AbiError> {
        // SAFETY: `_region` keeps the memory mapped for as long as `abi`
        // lives; the header access rule is the caller's contract.
        let abi = unsafe { SharedMemoryAbi::new(region.as_ptr(), region.size(), page_size) }?;
        Ok(ProducerSmb {
            abi,
            _region: region,
        })
    }

    #[cfg(test)]
    /// The page and chunk view.
    pub fn abi(&self) -> &SharedMemoryAbi {
        &self.abi
    }
}

/// Counters of the commit path (they go into `TraceStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Chunks discarded: unknown or ungranted buffer, bad page or state.
    pub chunks_discarded: u64,
    /// Patch groups discarded: unknown or ungranted buffer, bad writer id.
    pub patches_discarded: u64,
}

/// Largest inline chunk (`ChunksToMove.data`, SMB emulation) accepted.
pub const MAX_INLINE_CHUNK: usize = 65536;

/// Finds the trace buffer a producer's chunk goes to, applying the grants:
/// `None` when the producer was not granted that buffer, or the writer was
/// registered for another one.
pub trait BufferResolver {
    /// The buffer for a chunk or patch of `writer` naming `target_buffer`.
    fn for_commit(&mut self, target_buffer: BufferId, writer: u16) -> Option<&mut TraceBuffer>;
    /// The buffer `writer` is registered for (scraping has no target id).
    fn for_scrape(&mut self, writer: u16) -> Option<&mut TraceBuffer>;
}

#[cfg(test)]
/// A [`BufferResolver`] over a slice of buffers and two index functions.
pub struct SliceResolver<'a, C, S> {
    /// The buffers.
    pub buffers: &'a mut [TraceBuffer],
    /// Target buffer id and writer id to an index, for commits and patches.
    pub commit: C,
    /// Writer id to an index, for scrapes.
    pub scrape: S,
}

#[cfg(test)]
impl<C, S> BufferResolver for SliceResolver<'_, C, S>
where
    C: Fn(BufferId, u16) -> Option<usize>,
    S: Fn(u16) -> Option<usize>,
{
    fn for_commit(&mut self, target_buffer: BufferId, writer: u16) -> Option<&mut TraceBuffer> {
        (self.commit)(target_buffer, writer).and_then(|i| self.buffers.get_mut(i))
    }

    fn for_scrape(&mut self, writer: u16) -> Option<&mut TraceBuffer> {
        (self.scrape)(writer).and_then(|i| self.buffers.get_mut(i))
    }
}

/// Applies `req` from producer `producer`: moves its chunks out of `smb`
/// (or takes them inline, for SMB emulation) and applies its patches.
pub fn commit_data(
    req: &CommitDataRequest,
    producer: u16,
    smb: Option<&ProducerSmb>,
    buffers: &mut dyn BufferResolver,
    stats: &mut CommitStats,
) {
    for mv in &req.chunks_to_move {
        let ok = match (&mv.data, smb) {
            (Some(data), _) => move_inline_chunk(
                data,
                !mv.chunk_incomplete,
                BufferId::from_wire(mv.target_buffer),
                producer,
                buffers,
            ),
            (None, Some(smb)) => move_chunk(
                smb,
                mv.page as usize,
                mv.chunk as usize,
                BufferId::from_wire(mv.target_buffer),
                producer,
                buffers,
            ),
            (None, None) => false,
        };
        if !ok {
            stats.chunks_discarded += 1;
        }
    }
    for group in &req.chunks_to_patch {
        let writer = WriterId::from_wire(group.writer_id);
        let target = match (writer, BufferId::from_wire(group.target_buffer)) {
            (Some(writer), Some(buffer)) if group.patches.len() <= 1024 => buffers
                .for_commit(buffer, writer.get())
                .map(|target| (writer, target)),
            _ => None,
        };
        let Some((writer, target)) = target else {
            stats.patches_discarded += 1;
            continue;
        };
        let patches: Vec<(u32, [u8; 4])> =
            group.patches.iter().map(|p| (p.offset, p.data)).collect();
        let sequence = SequenceKey {
            producer,
            writer: writer.get(),
        };
        target.try_patch(sequence, group.chunk_id, &patches, group.has_more_patches);
    }
}

/// The buffer's view of a chunk of `producer` with `header`.
fn chunk_meta(producer: u16, header: &ChunkHeader, complete: bool) -> ChunkMeta {
    ChunkMeta {
        sequence: SequenceKey {
            producer,
            writer: header.writer_id,
        },
        chunk_id: header.chunk_id,
        num_fragments: header.packets.count,
        flags: header.packets.flags,
        complete,
    }
}

/// Takes one chunk sent inline (header and payload) into its buffer.
fn move_inline_chunk(
    data: &[u8],
    complete: bool,
    target_buffer: Option<BufferId>,
    producer: u16,
    buffers: &mut dyn BufferResolver,
) -> bool {
    if data.len() > MAX_INLINE_CHUNK || data.len() < CHUNK_HEADER_SIZE {
        return false;
    }
    let mut head = [0u8; CHUNK_HEADER_SIZE];
    head.copy_from_slice(&data[..CHUNK_HEADER_SIZE]);
    let header = ChunkHeader::from_bytes(head);
    let Some(target) = target_buffer.and_then(|b| buffers.for_commit(b, header.writer_id)) else {
        return false;
    };
    target.copy_chunk(
        &chunk_meta(producer, &header, complete),
        &data[CHUNK_HEADER_SIZE..],
    ) != CopyOutcome::Refused
}

/// Moves one complete chunk out of shared memory into its buffer and frees
/// it. A chunk for a buffer the producer may not write is freed unread.
fn move_chunk(
    smb: &ProducerSmb,
    page: usize,
    index: usize,
    target_buffer: Option<BufferId>,
    producer: u16,
    buffers: &mut dyn BufferResolver,
) -> bool {
    let Ok(chunk) = smb.abi.try_acquire_chunk_for_reading(page, index) else {
        return false;
    };
    let header = chunk.header();
    let stored = match target_buffer.and_then(|b| buffers.for_commit(b, header.writer_id)) {
        Some(target) => {
            let meta = chunk_meta(producer, &header, true);
            let src = chunk.payload_begin();
            let outcome = target.copy_chunk_with(&meta, chunk.payload_size(), |dst| {
                // SAFETY: the payload lies in the live mapping and this
                // process holds the chunk (being read); only the producer's
                // process may write it.
                unsafe { copy_from_shared(src, dst) }
            });
            outcome != CopyOutcome::Refused
        }
        None => false,
    };
    smb.abi.release_chunk_as_free(chunk).is_ok() && stored
}

/// Copies every chunk of `smb` that a writer of `producer` still holds or
/// has completed but not committed (a flush or stop, or the producer going
/// away), without changing its state: complete chunks as complete, chunks
/// being written as scraped (their last fragment may still grow).
/// `buffers` names the buffer each writer id is registered for, if any.
pub fn scrape(smb: &ProducerSmb, producer: u16, buffers: &mut dyn BufferResolver) -> usize {
    let abi = &smb.abi;
    let mut copied = 0;
    let mut payload = Vec::new();
    for page in 0..abi.num_pages() {
        let Ok(word) = abi.page_header(page) else {
            continue;
        };
        let Ok(layout) = word.layout() else {
            continue;
        };
        for index in 0..layout.num_chunks() {
            let complete = match word.chunk_state(index) {
                ChunkState::Complete => true,
                ChunkState::BeingWritten => false,
                _ => continue,
            };
            // SAFETY: `ProducerSmb::new`'s contract: no thread of this
            // process writes a chunk through this mapping during a scrape.
            let Some(header) = (unsafe { abi.peek_chunk(page, index, &mut payload) }) else {
                continue;
            };
            let Some(target) = buffers.for_scrape(header.writer_id) else {
                continue;
            };
            let meta = chunk_meta(producer, &header, complete);
            if target.copy_chunk(&meta, &payload) != CopyOutcome::Refused {
                copied += 1;
            }
        }
    }
    copied
}

#[cfg(test)]
mod tests;
