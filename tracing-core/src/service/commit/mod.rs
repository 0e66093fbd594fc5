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

use crate::abi::{AbiError, ChunkState, SharedMemoryAbi, copy_from_shared};
use crate::producer::CommitDataRequest;
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
    /// chunk while [`scrape`] copies it (the producer's own process is
    /// outside these rules: its writes are what the atomic copies tolerate).
    /// A mapping of a producer's memfd satisfies this; so does a heap region
    /// shared with an in-process arbiter of the same page size whose writers
    /// are idle during a scrape.
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

/// Largest writer id a patch may name.
const MAX_WRITER_ID: u32 = 32767;

/// Applies `req` from producer `producer`: moves its chunks out of `smb` and
/// applies its patches. `resolve` maps a target buffer id to an index into
/// `buffers`, or `None` when this producer was not granted that buffer.
pub fn commit_data(
    req: &CommitDataRequest,
    producer: u16,
    smb: &ProducerSmb,
    buffers: &mut [TraceBuffer],
    resolve: impl Fn(u32) -> Option<usize>,
    stats: &mut CommitStats,
) {
    for mv in &req.chunks_to_move {
        let Some(target) = resolve(mv.target_buffer).and_then(|i| buffers.get_mut(i)) else {
            stats.chunks_discarded += 1;
            continue;
        };
        if move_chunk(smb, mv.page as usize, mv.chunk as usize, producer, target).is_err() {
            stats.chunks_discarded += 1;
        }
    }
    for group in &req.chunks_to_patch {
        let target = resolve(group.target_buffer).and_then(|i| buffers.get_mut(i));
        let valid_writer = (1..=MAX_WRITER_ID).contains(&group.writer_id);
        let (Some(target), true) = (target, valid_writer) else {
            stats.patches_discarded += 1;
            continue;
        };
        let patches: Vec<(u32, [u8; 4])> =
            group.patches.iter().map(|p| (p.offset, p.data)).collect();
        let sequence = SequenceKey {
            producer,
            writer: group.writer_id as u16,
        };
        target.try_patch(sequence, group.chunk_id, &patches, group.has_more_patches);
    }
}

/// Moves one complete chunk into `target` and frees it.
fn move_chunk(
    smb: &ProducerSmb,
    page: usize,
    index: usize,
    producer: u16,
    target: &mut TraceBuffer,
) -> Result<CopyOutcome, AbiError> {
    let chunk = smb.abi.try_acquire_chunk_for_reading(page, index)?;
    let header = chunk.header();
    let meta = ChunkMeta {
        sequence: SequenceKey {
            producer,
            writer: header.writer_id,
        },
        chunk_id: header.chunk_id,
        num_fragments: header.packets.count,
        flags: header.packets.flags,
        complete: true,
    };
    let src = chunk.payload_begin();
    let outcome = target.copy_chunk_with(&meta, chunk.payload_size(), |dst| {
        // SAFETY: the payload lies in the live mapping and this process holds
        // the chunk (being read); only the producer's process may write it.
        unsafe { copy_from_shared(src, dst) }
    });
    smb.abi.release_chunk_as_free(chunk)?;
    Ok(outcome)
}

/// Copies every chunk of `smb` that a writer of `producer` still holds or
/// has completed but not committed (a flush or stop, or the producer going
/// away), without changing its state: complete chunks as complete, chunks
/// being written as scraped (their last fragment may still grow).
/// `buffer_of` gives the index into `buffers` of the buffer a writer id is
/// registered for, if any.
pub fn scrape(
    smb: &ProducerSmb,
    producer: u16,
    buffers: &mut [TraceBuffer],
    buffer_of: impl Fn(u16) -> Option<usize>,
) -> usize {
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
            let Some(header) = abi.peek_chunk(page, index, &mut payload) else {
                continue;
            };
            let Some(target) = buffer_of(header.writer_id).and_then(|i| buffers.get_mut(i)) else {
                continue;
            };
            let meta = ChunkMeta {
                sequence: SequenceKey {
                    producer,
                    writer: header.writer_id,
                },
                chunk_id: header.chunk_id,
                num_fragments: header.packets.count,
                flags: header.packets.flags,
                complete,
            };
            if target.copy_chunk(&meta, &payload) != CopyOutcome::Refused {
                copied += 1;
            }
        }
    }
    copied
}

#[cfg(test)]
mod tests;
