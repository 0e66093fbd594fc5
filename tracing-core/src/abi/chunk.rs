//! [`Chunk`]: an exclusively owned chunk inside the shared memory buffer.
//!
//! Holding a `Chunk` means owning it in the ABI sense: a producer got it with
//! `try_acquire_chunk_for_writing` (state BeingWritten) or the service got it
//! with `try_acquire_chunk_for_reading` (state BeingRead). Giving it back
//! consumes the value. Header fields are atomics because a scraping service may
//! read them while the producer still writes; the producer stores ids relaxed
//! and the `packets` field with release, the reader loads it with acquire.
//!
//! A `Chunk<'a>` borrows the [`SharedMemoryAbi`](crate::abi::SharedMemoryAbi)
//! it came from, so it cannot outlive the mapping. The payload is read only
//! by copying it with atomic loads ([`Chunk::copy_payload`]): the peer may
//! still be writing it.

use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU16, AtomicU32, Ordering};

use crate::abi::atomic_view::{atomic_u16, atomic_u32};
use crate::abi::chunk_header::{
    CHUNK_HEADER_SIZE, ChunkFlags, ChunkHeader, MAX_PACKET_COUNT, Packets,
};
use crate::abi::shared_copy::copy_from_shared;

/// An owned chunk of the shared memory buffer, valid while the mapping it
/// borrows (`'a`) is.
///
/// ```
/// # use std::sync::Arc;
/// # use zerotrace_core::abi::{ChunkHeader, PageLayout};
/// # use zerotrace_core::producer::{ArbiterConfig, ChannelCommitSink, SharedMemoryArbiter};
/// # use zerotrace_core::shm::HeapShm;
/// let region = Arc::new(HeapShm::new(4096).unwrap());
/// let (sink, _rx) = ChannelCommitSink::new();
/// let arbiter =
///     SharedMemoryArbiter::new(region, 4096, Arc::new(sink), ArbiterConfig::default()).unwrap();
/// arbiter.abi().try_partition_page(0, PageLayout::Div1).unwrap();
/// let mut chunk = arbiter.abi().try_acquire_chunk_for_writing(0, 0, &ChunkHeader::default()).unwrap();
/// assert!(chunk.write_payload(0, &[1]));
/// ```
///
/// The chunk cannot outlive the arbiter that keeps its memory mapped:
///
/// ```compile_fail
/// # use std::sync::Arc;
/// # use zerotrace_core::abi::{ChunkHeader, PageLayout};
/// # use zerotrace_core::producer::{ArbiterConfig, ChannelCommitSink, SharedMemoryArbiter};
/// # use zerotrace_core::shm::HeapShm;
/// let region = Arc::new(HeapShm::new(4096).unwrap());
/// let (sink, _rx) = ChannelCommitSink::new();
/// let arbiter =
///     SharedMemoryArbiter::new(region, 4096, Arc::new(sink), ArbiterConfig::default()).unwrap();
/// arbiter.abi().try_partition_page(0, PageLayout::Div1).unwrap();
/// let mut chunk = arbiter.abi().try_acquire_chunk_for_writing(0, 0, &ChunkHeader::default()).unwrap();
/// drop(arbiter); // error: `arbiter` is still borrowed by `chunk`
/// chunk.write_payload(0, &[1]);
/// ```
#[derive(Debug)]
pub struct Chunk<'a> {
    begin: NonNull<u8>,
    size: usize,
    page: usize,
    index: usize,
    mapping: PhantomData<&'a ()>,
}

// SAFETY: a `Chunk` is a unique ownership token for a range of shared memory;
// moving it to another thread moves that ownership. It is not `Sync`.
unsafe impl Send for Chunk<'_> {}

impl<'a> Chunk<'a> {
    /// # Safety
    /// `begin..begin+size` must be a 4-byte aligned chunk (size ≥ 8) inside a
    /// mapping that outlives `'a`, owned by the caller per the ABI states.
    pub(crate) unsafe fn new(
        begin: NonNull<u8>,
        size: usize,
        page: usize,
        index: usize,
    ) -> Chunk<'a> {
        Chunk {
            begin,
            size,
            page,
            index,
            mapping: PhantomData,
        }
    }

    /// The same chunk with its borrow of the mapping erased, for a holder
    /// that keeps the mapping alive by other means (an `Arc`).
    ///
    /// # Safety
    /// The caller must keep the mapping alive, and stop using the chunk,
    /// before the mapping is unmapped.
    pub(crate) unsafe fn detach(self) -> Chunk<'static> {
        Chunk {
            begin: self.begin,
            size: self.size,
            page: self.page,
            index: self.index,
            mapping: PhantomData,
        }
    }

    #[inline(always)]
    fn chunk_id_field(&self) -> &AtomicU32 {
        // SAFETY: offset 0 of a 4-aligned chunk inside the live mapping (see `new`);
        // header fields are only accessed atomically by both sides.
        unsafe { atomic_u32(self.begin.as_ptr()) }
    }

    #[inline(always)]
    fn writer_id_field(&self) -> &AtomicU16 {
        // SAFETY: offset 4 of the chunk, 2-aligned, inside the chunk (size ≥ 8).
        unsafe { atomic_u16(self.begin.as_ptr().add(4)) }
    }

    #[inline(always)]
    fn packets_field(&self) -> &AtomicU16 {
        // SAFETY: offset 6 of the chunk, 2-aligned, inside the chunk (size ≥ 8).
        unsafe { atomic_u16(self.begin.as_ptr().add(6)) }
    }

    /// Reads the header (ids relaxed, `packets` acquire).
    pub fn header(&self) -> ChunkHeader {
        let packets = Packets::from_raw(self.packets_field().load(Ordering::Acquire));
        ChunkHeader {
            chunk_id: self.chunk_id_field().load(Ordering::Relaxed),
            writer_id: self.writer_id_field().load(Ordering::Relaxed),
            packets,
        }
    }

    /// Writes the header: ids relaxed, then `packets` with release so a reader
    /// that sees the packets sees the ids too.
    pub fn set_header(&mut self, h: &ChunkHeader) {
        self.writer_id_field().store(h.writer_id, Ordering::Relaxed);
        self.chunk_id_field().store(h.chunk_id, Ordering::Relaxed);
        self.packets_field()
            .store(h.packets.to_raw(), Ordering::Release);
    }

    /// The `packets` field.
    pub fn packets(&self) -> Packets {
        Packets::from_raw(self.packets_field().load(Ordering::Relaxed))
    }

    /// The chunk id.
    pub fn chunk_id(&self) -> u32 {
        self.chunk_id_field().load(Ordering::Relaxed)
    }

    /// The writer id.
    pub fn writer_id(&self) -> u16 {
        self.writer_id_field().load(Ordering::Relaxed)
    }

    /// Adds one to the packet count (saturating at 1023) and returns the new
    /// count. Only the owner writes the field, so load + store is enough.
    #[inline]
    pub fn increment_packet_count(&mut self) -> u16 {
        let mut p = Packets::from_raw(self.packets_field().load(Ordering::Relaxed));
        if p.count < MAX_PACKET_COUNT {
            p.count += 1;
        }
        self.packets_field().store(p.to_raw(), Ordering::Release);
        p.count
    }

    /// Overwrites the `packets` field (release).
    pub fn set_packets(&mut self, packets: Packets) {
        self.packets_field()
            .store(packets.to_raw(), Ordering::Release);
    }

    /// Sets `flags` in the header.
    pub fn set_flags(&mut self, flags: ChunkFlags) {
        let mut p = Packets::from_raw(self.packets_field().load(Ordering::Relaxed));
        p.flags = p.flags.union(flags);
        self.packets_field().store(p.to_raw(), Ordering::Release);
    }

    /// Clears `flags` in the header.
    pub fn clear_flags(&mut self, flags: ChunkFlags) {
        let mut p = Packets::from_raw(self.packets_field().load(Ordering::Relaxed));
        p.flags = p.flags.without(flags);
        self.packets_field().store(p.to_raw(), Ordering::Release);
    }

    /// Zeroes the header (ids relaxed, `packets` release).
    pub(crate) fn clear_header(&mut self) {
        self.set_header(&ChunkHeader::default());
    }

    /// First byte of the chunk (its header).
    pub fn begin(&self) -> *mut u8 {
        self.begin.as_ptr()
    }

    /// Size of the chunk, header included.
    pub fn size(&self) -> usize {
        self.size
    }

    /// First byte after the 8-byte header.
    pub fn payload_begin(&self) -> *mut u8 {
        // SAFETY: the chunk is at least 8 bytes long (see `new`).
        unsafe { self.begin.as_ptr().add(CHUNK_HEADER_SIZE) }
    }

    /// Bytes after the header.
    pub fn payload_size(&self) -> usize {
        self.size - CHUNK_HEADER_SIZE
    }

    /// One past the last byte of the chunk.
    pub fn end(&self) -> *mut u8 {
        // SAFETY: `begin + size` is the end of the chunk's range (see `new`).
        unsafe { self.begin.as_ptr().add(self.size) }
    }

    /// Index of the page holding the chunk.
    pub fn page_index(&self) -> usize {
        self.page
    }

    /// Index of the chunk within its page (0..14).
    pub fn chunk_index(&self) -> usize {
        self.index
    }

    /// Offset of `ptr` from the payload start if `ptr..ptr+len` lies in the payload.
    pub fn payload_offset_of(&self, ptr: *const u8, len: usize) -> Option<usize> {
        let p = ptr as usize;
        let start = self.payload_begin() as usize;
        let end = self.end() as usize;
        (p >= start && p.checked_add(len)? <= end).then(|| p - start)
    }

    /// Overwrites `bytes.len()` payload bytes at `offset` (a producer applying a
    /// patch to a chunk it still owns). Returns false if out of range.
    pub fn write_payload(&mut self, offset: usize, bytes: &[u8]) -> bool {
        if offset
            .checked_add(bytes.len())
            .is_none_or(|end| end > self.payload_size())
        {
            return false;
        }
        // SAFETY: `offset..offset+len` is inside the payload (checked above) of
        // a chunk this value owns.
        unsafe {
            core::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.payload_begin().add(offset),
                bytes.len(),
            )
        };
        true
    }

    /// Copies the payload (the bytes after the header) into `out`, replacing
    /// its content. A service copies before parsing, so a producer that keeps
    /// writing cannot change bytes between validation and use; the copy reads
    /// each byte once, atomically.
    pub fn copy_payload(&self, out: &mut Vec<u8>) {
        out.clear();
        out.resize(self.payload_size(), 0);
        // SAFETY: the payload range lies in the mapping, alive for `'a` (see
        // `new`); the peer writes it only through raw pointers of its own
        // process, never through references of ours.
        unsafe { copy_from_shared(self.payload_begin(), out) };
    }
}
