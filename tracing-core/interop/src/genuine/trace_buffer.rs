//! Perfetto's `TraceBufferV1` and `TraceBufferV2` through the C shims of
//! `cpp/service_shim.cc`: create a buffer, hand it chunks as the service's
//! commit path does (`CopyChunkUntrusted`), patch them, and read packets back
//! (`BeginRead`, `ReadNextTracePacket`), each packet's slices copied out.

use core::ptr::NonNull;

/// The C++ object behind a [`GenuineTraceBuffer`].
#[repr(C)]
struct Handle {
    _opaque: [u8; 0],
}

/// What the shim reports about a packet besides its bytes.
#[repr(C)]
#[derive(Default)]
struct RawPacketInfo {
    producer_id: u16,
    writer_id: u16,
    producer_uid: u32,
    loss: u32,
}

// SAFETY: these declarations match the definitions in cpp/service_shim.cc.
unsafe extern "C" {
    fn zt_tb_create(version: u32, size: usize, discard: bool) -> *mut Handle;
    fn zt_tb_destroy(handle: *mut Handle);
    fn zt_tb_copy_chunk(
        handle: *mut Handle,
        producer_id: u16,
        producer_uid: u32,
        writer_id: u16,
        chunk_id: u32,
        num_fragments: u16,
        chunk_flags: u8,
        chunk_complete: bool,
        payload: *const u8,
        len: usize,
    );
    fn zt_tb_try_patch(
        handle: *mut Handle,
        producer_id: u16,
        writer_id: u16,
        chunk_id: u32,
        offsets: *const u32,
        data: *const u8,
        count: usize,
        more_patches_pending: bool,
    ) -> bool;
    fn zt_tb_begin_read(handle: *mut Handle);
    fn zt_tb_read_next(
        handle: *mut Handle,
        dst: *mut u8,
        cap: usize,
        info: *mut RawPacketInfo,
    ) -> i64;
    fn zt_tb_copy_last(handle: *mut Handle, dst: *mut u8) -> bool;
    fn zt_tb_stats(handle: *const Handle, out: *mut u64, count: usize);
}

/// Which of Perfetto's implementations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferVersion {
    /// `TraceBufferV1`, the default in Perfetto's service.
    V1,
    /// `TraceBufferV2`, the 2025 rewrite (`experimental_mode`).
    V2,
}

/// What a full buffer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenuinePolicy {
    /// Overwrite the oldest chunks (`kOverwrite`, RING_BUFFER).
    RingBuffer,
    /// Refuse new chunks (`kDiscard`, DISCARD).
    Discard,
}

/// A chunk as the service hands it to the buffer: the header fields, the
/// trusted producer identity and whether the chunk was complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenuineChunk {
    /// Producer id assigned by the service.
    pub producer_id: u16,
    /// The producer's uid as the service saw it.
    pub producer_uid: u32,
    /// Writer id from the chunk header.
    pub writer_id: u16,
    /// Chunk id from the chunk header.
    pub chunk_id: u32,
    /// Fragment count from the chunk header.
    pub num_fragments: u16,
    /// Chunk flags (bit 0: first packet continues from the previous chunk,
    /// bit 1: last packet continues on the next one, bit 2: needs patching).
    pub flags: u8,
    /// `false` for a chunk scraped while its writer still owned it.
    pub complete: bool,
}

/// Who wrote a packet read back from a [`GenuineTraceBuffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenuinePacket {
    /// Trusted producer id.
    pub producer_id: u16,
    /// Writer id.
    pub writer_id: u16,
    /// Trusted producer uid.
    pub producer_uid: u32,
    /// `previous_packet_on_sequence_dropped`: V1 says 0 or 1, V2 gives
    /// loss-reason bits.
    pub loss: u32,
}

/// One of Perfetto's trace buffers.
#[derive(Debug)]
pub struct GenuineTraceBuffer {
    handle: NonNull<Handle>,
    version: BufferVersion,
}

impl GenuineTraceBuffer {
    /// A buffer of `size` bytes (V2 rounds it up to whole 4 KiB pages), or
    /// `None` if Perfetto could not allocate it.
    pub fn new(
        version: BufferVersion,
        size: usize,
        policy: GenuinePolicy,
    ) -> Option<GenuineTraceBuffer> {
        let v = match version {
            BufferVersion::V1 => 1,
            BufferVersion::V2 => 2,
        };
        // SAFETY: plain values in; the shim returns an owned object or null.
        let raw = unsafe { zt_tb_create(v, size, policy == GenuinePolicy::Discard) };
        NonNull::new(raw).map(|handle| GenuineTraceBuffer { handle, version })
    }

    /// Which implementation this is.
    pub fn version(&self) -> BufferVersion {
        self.version
    }

    /// Copies one chunk payload (the chunk without its 8-byte header) in.
    pub fn copy_chunk(&mut self, chunk: &GenuineChunk, payload: &[u8]) {
        // SAFETY: the handle is live and exclusively borrowed; the buffer
        // reads `payload.len()` bytes from `payload` during the call only.
        unsafe {
            zt_tb_copy_chunk(
                self.handle.as_ptr(),
                chunk.producer_id,
                chunk.producer_uid,
                chunk.writer_id,
                chunk.chunk_id,
                chunk.num_fragments,
                chunk.flags,
                chunk.complete,
                payload.as_ptr(),
                payload.len(),
            )
        }
    }

    /// Applies 4-byte patches (offsets from the payload start) to a stored
    /// chunk; returns whether the chunk was found and patched.
    pub fn try_patch(
        &mut self,
        producer_id: u16,
        writer_id: u16,
        chunk_id: u32,
        patches: &[(u32, [u8; 4])],
        more_pending: bool,
    ) -> bool {
        let offsets: Vec<u32> = patches.iter().map(|p| p.0).collect();
        let data: Vec<u8> = patches.iter().flat_map(|p| p.1).collect();
        // SAFETY: the handle is live and exclusively borrowed; `offsets`
        // holds `patches.len()` entries and `data` four bytes for each.
        unsafe {
            zt_tb_try_patch(
                self.handle.as_ptr(),
                producer_id,
                writer_id,
                chunk_id,
                offsets.as_ptr(),
                data.as_ptr(),
                patches.len(),
                more_pending,
            )
        }
    }

    /// Starts a read pass.
    pub fn begin_read(&mut self) {
        // SAFETY: the handle is live and exclusively borrowed.
        unsafe { zt_tb_begin_read(self.handle.as_ptr()) }
    }

    /// Appends the next packet's bytes to `out` and says whose it is, or
    /// returns `None` when nothing more can be read in this pass.
    pub fn read_next_packet(&mut self, out: &mut Vec<u8>) -> Option<GenuinePacket> {
        // Makes the spare capacity non-empty, so its pointer is a real one.
        out.reserve(1);
        let len = out.len();
        let spare = out.capacity() - len;
        let mut info = RawPacketInfo::default();
        // SAFETY: the handle is live and exclusively borrowed; the shim
        // writes at most `spare` bytes at `out`'s spare capacity, and only
        // when the packet fits in it.
        let size = unsafe {
            zt_tb_read_next(
                self.handle.as_ptr(),
                out.as_mut_ptr().add(len),
                spare,
                &mut info,
            )
        };
        let size = usize::try_from(size).ok()?;
        if size > spare {
            out.reserve(size);
            // SAFETY: as above; `out` now has room for the `size` bytes of
            // the packet the shim still holds.
            let copied =
                unsafe { zt_tb_copy_last(self.handle.as_ptr(), out.as_mut_ptr().add(len)) };
            assert!(copied, "the shim holds the packet it just read");
        }
        // SAFETY: the shim initialized `size` bytes after `len`, within the
        // capacity.
        unsafe { out.set_len(len + size) };
        Some(GenuinePacket {
            producer_id: info.producer_id,
            writer_id: info.writer_id,
            producer_uid: info.producer_uid,
            loss: info.loss,
        })
    }

    /// The buffer's counters, indexed by `BufferStats` field number: entry
    /// `n` is field `n` (`bytes_written` = 1 … `chunks_relocated` = 20);
    /// entry 0 is unused.
    pub fn stats(&self) -> [u64; 21] {
        let mut s = [0u64; 21];
        // SAFETY: the handle is live; the shim writes 20 values.
        unsafe { zt_tb_stats(self.handle.as_ptr(), s[1..].as_mut_ptr(), 20) };
        s
    }
}

impl Drop for GenuineTraceBuffer {
    fn drop(&mut self) {
        // SAFETY: the handle came from zt_tb_create and is destroyed once.
        unsafe { zt_tb_destroy(self.handle.as_ptr()) }
    }
}
