//! [`TraceWriter`]: serializes trace packets straight into shared memory chunks.
//!
//! The writer is a `protozero::StreamWriter` whose delegate ([`WriterCore`]) owns
//! the current chunk. A packet is one or more fragments, each preceded by a
//! size header the writer reserves itself (4 bytes, compacted to 1 byte for a
//! packet under 127 bytes that stayed in one chunk). When a chunk fills up
//! mid-packet, the delegate takes the next chunk first, closes the fragment in
//! the old one (flag LastPacketContinuesOnNextChunk), turns every open length
//! slot left in it into a patch (flag ChunkNeedsPatching), returns it, and
//! opens a continuation fragment in the new one (flag
//! FirstPacketContinuesFromPrevChunk). Packet counts follow Perfetto: counted
//! when a packet starts, inflated by one when it ends (so a scraping service
//! treats it as complete), with a `00` empty fragment written if the chunk is
//! returned while inflated. With the buffer exhausted under a dropping policy
//! the writer writes into a private garbage chunk, marks the abandoned packet
//! with the `FF FF FF 7F` sentinel, and flags `previous_packet_dropped` on the
//! first packet that makes it again.

use std::sync::Arc;

use protozero::varint::redundant_varint4;
use protozero::{
    Delegate, Message, OpenSlots, OwnedSlice, PatchId, Slice, SlotLocation, StreamWriter,
    WriteError,
};

use zerotrace_protos::protos::TracePacket;

use crate::abi::chunk_reader::{PACKET_HEADER_SIZE, PACKET_SIZE_DROP_PACKET};
use crate::abi::{Chunk, ChunkFlags, ChunkHeader, MAX_PACKET_COUNT, Packets};
use crate::producer::arbiter::SharedMemoryArbiter;
use crate::producer::buffer_exhausted_policy::BufferExhaustedPolicy;
use crate::producer::commit_sink::FlushCallback;
use crate::producer::patch_list::{DISCARDED_PATCH, PatchList};
use crate::producer::small_packet::{SMALL_PACKET_SLACK, SmallPacket};
use crate::producer::trace_packet::TracePacketHandle;
use crate::protocol::ChunkId;

/// A writer stops adding packets to a chunk at this count, keeping one for the
/// inflated count.
pub const MAX_PACKETS_PER_CHUNK: u16 = MAX_PACKET_COUNT - 1;
/// A new packet takes a new chunk when fewer bytes than this are left (a
/// fragment header plus a minimal packet).
pub const MIN_BYTES_FOR_NEW_PACKET: usize = PACKET_HEADER_SIZE + 8;
/// A new packet starts in a new chunk when fewer bytes are left than the
/// last packet took plus this much, so that a run of packets of one size
/// (a trace point's) rarely straddles two chunks: a straddling packet costs
/// its fragment headers, the widening of its 1-byte length prefixes and
/// patches for the lengths left behind. At most [`MAX_PACKET_ROOM`] bytes
/// of a chunk go unused so.
pub const PACKET_ROOM_SLACK: usize = 32;
/// Most room a new packet asks for in the current chunk (larger packets
/// straddle chunks as before).
pub const MAX_PACKET_ROOM: usize = 256;
/// Size of the private chunk written to while dropping.
pub const GARBAGE_CHUNK_SIZE: usize = 1024;
/// `DATA_LOSS_PRESENT | DATA_LOSS_SMB_FULL`, set after an SMB-full drop.
pub const DATA_LOSS_SMB_FULL: u32 = 257;
/// Largest fragment length the root compaction turns into one byte (< 127).
const MAX_COMPACT_ROOT: usize = 126;

/// A per-thread writer of trace packets into the shared memory buffer.
///
/// `Send` (a writer may move to another thread) but not `Sync`: each thread owns
/// its own writer.
///
/// ```compile_fail
/// fn assert_sync<T: Sync>() {}
/// assert_sync::<zerotrace_core::producer::TraceWriter>();
/// ```
#[derive(Debug)]
pub struct TraceWriter {
    pub(crate) stream: StreamWriter,
    pub(crate) core: WriterCore,
}

/// The delegate half of a [`TraceWriter`]: chunk ownership and packet state.
pub struct WriterCore {
    arbiter: Arc<SharedMemoryArbiter>,
    writer_id: u16,
    target_buffer: u16,
    policy: BufferExhaustedPolicy,
    cur_chunk: Option<Chunk<'static>>,
    next_chunk_id: ChunkId,
    /// Where the size of the current fragment goes (null: none pending).
    fragment_header: *mut u8,
    /// First byte of the current fragment's data.
    fragment_start: *mut u8,
    fragmenting_packet: bool,
    packet_count_inflated: bool,
    reached_max_packets: bool,
    retry_new_chunk_after_packet: bool,
    drop_packets: bool,
    drop_count: u64,
    abandoned_packets: u64,
    first_packet_on_sequence: bool,
    /// The next packet may take the fast path: a chunk with its count
    /// already inflated for it, and none of the unusual states (drop mode,
    /// max packets, a retry, the first packet, patches pending, a packet
    /// left open) that the slow path handles.
    fast_next: bool,
    /// The open packet started on the fast path.
    fast_open: bool,
    /// Bytes a new packet wants left in the current chunk (see
    /// [`PACKET_ROOM_SLACK`]): the last whole packet's size plus slack.
    packet_room: usize,
    patch_list: PatchList,
    /// Private scratch memory written to while dropping; handed out from one
    /// raw pointer (see `protozero::OwnedSlice`), any number of times.
    garbage: OwnedSlice,
}

impl core::fmt::Debug for WriterCore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WriterCore")
            .field("writer_id", &self.writer_id)
            .field("target_buffer", &self.target_buffer)
            .field("next_chunk_id", &self.next_chunk_id)
            .field("drop_packets", &self.drop_packets)
            .finish_non_exhaustive()
    }
}

// SAFETY: the raw pointers point into the chunk this writer owns or into its
// own garbage buffer; both move with the writer. Nothing is shared with other
// threads except through the arbiter (which is `Sync`).
unsafe impl Send for WriterCore {}

impl TraceWriter {
    pub(crate) fn new(
        arbiter: Arc<SharedMemoryArbiter>,
        writer_id: u16,
        target_buffer: u16,
        policy: BufferExhaustedPolicy,
    ) -> TraceWriter {
        TraceWriter {
            stream: StreamWriter::new(),
            core: WriterCore {
                arbiter,
                writer_id,
                target_buffer,
                policy,
                cur_chunk: None,
                next_chunk_id: ChunkId(0),
                fragment_header: core::ptr::null_mut(),
                fragment_start: core::ptr::null_mut(),
                fragmenting_packet: false,
                packet_count_inflated: false,
                reached_max_packets: false,
                retry_new_chunk_after_packet: false,
                drop_packets: false,
                drop_count: 0,
                abandoned_packets: 0,
                first_packet_on_sequence: true,
                fast_next: false,
                fast_open: false,
                packet_room: MIN_BYTES_FOR_NEW_PACKET,
                patch_list: PatchList::new(),
                garbage: OwnedSlice::new(GARBAGE_CHUNK_SIZE, 0),
            },
        }
    }

    /// The writer id (1..=32767), which the service uses as the sequence id.
    pub fn writer_id(&self) -> u16 {
        self.core.writer_id
    }

    /// The service buffer this writer's chunks go to.
    pub fn target_buffer(&self) -> u16 {
        self.core.target_buffer
    }

    /// How many times the writer entered drop mode (a lower bound on lost packets).
    pub fn drop_count(&self) -> u64 {
        self.core.drop_count
    }

    /// Packets abandoned because the encoder hit an error (e.g. an invalid field id).
    pub fn abandoned_packets(&self) -> u64 {
        self.core.abandoned_packets
    }

    /// Whether packets currently go to the garbage chunk.
    pub fn is_dropping(&self) -> bool {
        self.core.drop_packets
    }

    /// Turns 1-byte length compaction on or off (nested messages and the root
    /// fragment header).
    pub fn set_compaction(&mut self, on: bool) {
        self.stream.set_compaction(on);
        self.core.fast_next = false;
    }

    /// Starts a packet. It is finished (fragment size written, packet count
    /// updated) when the returned handle is dropped.
    ///
    /// The common case is one check: the previous packet ended normally in a
    /// chunk with room, and it already counted this packet (the inflated
    /// count). Everything else — a new chunk, drop mode, patches to send,
    /// the first packet, a leaked handle — is the out-of-line slow path.
    #[inline]
    pub fn new_trace_packet(&mut self) -> TracePacketHandle<'_> {
        if self.core.fast_next && self.stream.remaining() >= self.core.packet_room {
            // SAFETY: the current slice was handed out by `core`, this
            // stream's delegate, and is still owned by it.
            if let Some(p) = unsafe { self.stream.begin_root_short(MAX_COMPACT_ROOT) } {
                let TraceWriter { stream, core } = self;
                core.fast_next = false;
                core.fast_open = true;
                core.fragmenting_packet = true;
                // The count already includes this packet.
                core.packet_count_inflated = false;
                core.fragment_header = p;
                core.fragment_start = p.wrapping_add(PACKET_HEADER_SIZE);
                return TracePacketHandle::new(stream, core);
            }
        }
        self.new_trace_packet_slow()
    }

    /// Room for a whole packet of at most `max_payload` bytes (at most
    /// 126), written field by field as encoded bytes and finished by
    /// [`SmallPacket::commit`]: when the writer is on its fast path and the
    /// chunk has room to spare; `None` otherwise, and the caller writes the
    /// same fields through [`TraceWriter::new_trace_packet`], which gives
    /// the same bytes.
    #[inline]
    pub(crate) fn small_packet(&mut self, max_payload: usize) -> Option<SmallPacket<'_>> {
        let room = (max_payload + SMALL_PACKET_SLACK).max(self.core.packet_room);
        if self.core.fast_next
            && max_payload <= MAX_COMPACT_ROOT
            && self.stream.remaining() > room
            && self.stream.compacts_with_short_slots()
        {
            let TraceWriter { stream, core } = self;
            // SAFETY: the current slice was handed out by `core`; more than
            // `1 + max_payload + SMALL_PACKET_SLACK` bytes are left under
            // the limit, and on the fast path no slot or prefix is open.
            return Some(unsafe { SmallPacket::new(stream, core, max_payload) });
        }
        None
    }

    /// [`TraceWriter::new_trace_packet`] for every case but the common one.
    #[cold]
    #[inline(never)]
    fn new_trace_packet_slow(&mut self) -> TracePacketHandle<'_> {
        let TraceWriter { stream, core } = self;
        core.fast_open = false;
        if core.fragmenting_packet {
            // The previous packet's handle was leaked (`mem::forget`), so it
            // was never finished: finish (or abandon) it now.
            core.finish_leaked_packet(stream);
        }
        let was_dropping = core.drop_packets;
        if stream.remaining() < core.packet_room
            || core.reached_max_packets
            || core.retry_new_chunk_after_packet
        {
            let used_end = stream.cursor();
            // SAFETY: no slot is open (a leaked packet was finished above,
            // which discards its slots), so nothing is widened; the current
            // slice belongs to `core` either way.
            let open = unsafe { stream.open_slots() };
            let slice = core.get_new_buffer(used_end, open);
            // SAFETY: the slice comes from `core`, this stream's delegate, under
            // the same contract as a `next_slice` result.
            unsafe { stream.set_slice(slice) };
        }
        if core.patch_list.front_is_ready() {
            core.send_patches();
        }
        // A whole packet below 127 bytes gets a 1-byte header. It is reserved
        // speculatively (the stream widens it to 4 bytes, moving the packet,
        // if the packet outgrows it or leaves the chunk), so the common small
        // packet is never moved to compact its header.
        // SAFETY: the current slice was handed out by `core`, this stream's
        // delegate, and is still owned by it.
        if let Some(p) = unsafe { stream.begin_root_short(MAX_COMPACT_ROOT) } {
            core.fragment_header = p;
            // Where the payload starts once the header is 4 bytes wide, the
            // only form in which `fragment_start` is read.
            core.fragment_start = p.wrapping_add(PACKET_HEADER_SIZE);
        } else {
            // SAFETY: `core` is the delegate whose slices this stream writes into.
            let header = match unsafe { stream.reserve_slot(core) } {
                SlotLocation::Memory(p) => {
                    // SAFETY: `reserve_slot` returned 4 writable bytes at `p`.
                    unsafe { core::ptr::write_bytes(p, 0, PACKET_HEADER_SIZE) };
                    p
                }
                _ => core::ptr::null_mut(),
            };
            core.fragment_header = header;
            core.fragment_start = stream.cursor();
        }
        core.fragmenting_packet = true;
        let mut mark_loss = false;
        if !core.drop_packets {
            if let Some(chunk) = core.cur_chunk.as_mut() {
                let count = if core.packet_count_inflated {
                    core.packet_count_inflated = false;
                    chunk.packets().count
                } else {
                    chunk.increment_packet_count()
                };
                core.reached_max_packets = count >= MAX_PACKETS_PER_CHUNK;
            }
            mark_loss = was_dropping;
        }
        let first = core.first_packet_on_sequence;
        core.first_packet_on_sequence = false;
        // Set last: finishing a leaked packet above may have allowed it.
        core.fast_next = false;
        let mut handle = TracePacketHandle::new(stream, core);
        if mark_loss || first {
            let mut packet = TracePacket::from_message(handle.root());
            if mark_loss {
                packet.set_previous_packet_dropped(DATA_LOSS_SMB_FULL);
            }
            if first {
                packet.set_first_packet_on_sequence(true);
            }
        }
        handle
    }

    /// Writes one packet through the generated `TracePacket` writer and
    /// finishes it: the usual way to write a packet.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zerotrace_core::producer::*;
    /// # use zerotrace_core::shm::HeapShm;
    /// # let region = Arc::new(HeapShm::new(16 * 1024).unwrap());
    /// # let (sink, _rx) = ChannelCommitSink::new();
    /// # let arbiter =
    /// #     SharedMemoryArbiter::new(region, 4096, Arc::new(sink), ArbiterConfig::default()).unwrap();
    /// let mut writer = arbiter.create_trace_writer(1, BufferExhaustedPolicy::Drop).unwrap();
    /// writer.packet(|p| {
    ///     p.set_timestamp(1_000);
    ///     p.begin_track_event().set_name("my slice");
    /// });
    /// ```
    pub fn packet<R>(&mut self, f: impl FnOnce(&mut TracePacket<'_>) -> R) -> R {
        let mut handle = self.new_trace_packet();
        f(&mut handle.packet())
    }

    /// Writes one packet with `f`, field by field through the untyped
    /// `protozero::Message`, and finishes it.
    pub fn write_packet<R>(&mut self, f: impl FnOnce(&mut Message<'_>) -> R) -> R {
        let mut handle = self.new_trace_packet();
        let mut root = handle.root();
        f(&mut root)
    }

    /// Returns the current chunk (even if partly empty) and sends everything
    /// pending to the service; `callback` runs when the service acked. A
    /// request is always sent, so the callback always fires.
    pub fn flush(&mut self, callback: Option<FlushCallback>) {
        let TraceWriter { stream, core } = self;
        if core.fragmenting_packet {
            core.finish_leaked_packet(stream);
        }
        core.finalize_fragment_if_required(stream);
        if core.cur_chunk.is_some() {
            core.return_completed_chunk(stream.cursor());
        }
        core.fast_next = false;
        core.arbiter.flush_pending_commit_data_requests(callback);
        stream.reset();
    }
}

impl Drop for TraceWriter {
    fn drop(&mut self) {
        if self.core.cur_chunk.is_some() {
            self.flush(None);
        }
        self.core.arbiter.release_writer_id(self.core.writer_id);
    }
}

impl WriterCore {
    /// Writes the pending fragment size, compacted when possible.
    fn finalize_fragment_if_required(&mut self, stream: &mut StreamWriter) {
        let header = core::mem::replace(&mut self.fragment_header, core::ptr::null_mut());
        if header.is_null() {
            return;
        }
        if stream.root_short() == Some(header) {
            // Still the speculative 1-byte header: the whole packet is in
            // this chunk and below 127 bytes.
            // SAFETY: the prefix lies in the current slice, which `self`
            // (this stream's delegate) handed out and still owns.
            unsafe { stream.end_root_short() };
            return;
        }
        let size = (stream.cursor() as usize).checked_sub(self.fragment_start as usize);
        let bytes = match size {
            Some(size)
                if size <= MAX_COMPACT_ROOT
                    // SAFETY: the current slice was handed out by `self`,
                    // this stream's delegate, and is still owned by it.
                    && unsafe { stream.try_compact(header, size, MAX_COMPACT_ROOT) } =>
            {
                return;
            }
            Some(size) if size < PACKET_SIZE_DROP_PACKET as usize => redundant_varint4(size as u32),
            _ => redundant_varint4(PACKET_SIZE_DROP_PACKET),
        };
        // SAFETY: `header` is a 4-byte fragment header inside the chunk (or the
        // garbage buffer) this writer still owns.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), header, PACKET_HEADER_SIZE) };
    }

    /// Ends the packet started by `new_trace_packet` (called by the handle).
    /// A packet that started on the fast path and stayed whole in its chunk
    /// under 127 bytes gets its 1-byte size and inflates the count for the
    /// next one here; anything else goes through the slow path.
    #[inline]
    pub(crate) fn finish_trace_packet(&mut self, stream: &mut StreamWriter) {
        if self.fast_open
            && stream.error().is_none()
            && stream.open_slot_count() == 0
            && stream.root_short() == Some(self.fragment_header)
        {
            self.fast_open = false;
            self.fragmenting_packet = false;
            // The whole packet, its 1-byte header included.
            let size = (stream.cursor() as usize).wrapping_sub(self.fragment_header as usize);
            self.packet_room = size
                .saturating_add(PACKET_ROOM_SLACK)
                .clamp(MIN_BYTES_FOR_NEW_PACKET, MAX_PACKET_ROOM);
            self.fragment_header = core::ptr::null_mut();
            // SAFETY: the prefix lies in the current slice, which `self`
            // (this stream's delegate) handed out and still owns.
            unsafe { stream.end_root_short() };
            if stream.remaining() >= 1
                && let Some(chunk) = self.cur_chunk.as_mut()
            {
                // Nothing else changed during the packet: a chunk change
                // would have widened the 1-byte prefix.
                self.packet_count_inflated = true;
                self.fast_next = chunk.increment_packet_count() < MAX_PACKETS_PER_CHUNK;
                return;
            }
            self.after_packet(stream);
            return;
        }
        self.finish_trace_packet_slow(stream);
    }

    /// Counts the `total` bytes (size byte included) a [`SmallPacket`]
    /// wrote at the cursor as a finished packet, as
    /// [`WriterCore::finish_trace_packet`] finishes one on its fast path:
    /// the count already held it, so it is inflated for the next one.
    /// `false` if nothing was counted (the room check failed).
    #[inline(always)]
    pub(crate) fn finish_small_packet(&mut self, stream: &mut StreamWriter, total: usize) -> bool {
        // SAFETY: `SmallPacket` wrote the `total` bytes at the cursor, in
        // the slice this delegate handed out.
        if !unsafe { stream.advance(total) } {
            return false;
        }
        self.packet_room = total
            .saturating_add(PACKET_ROOM_SLACK)
            .clamp(MIN_BYTES_FOR_NEW_PACKET, MAX_PACKET_ROOM);
        match self.cur_chunk.as_mut() {
            // Room for more is left (the room check asked for slack).
            Some(chunk) => {
                self.packet_count_inflated = true;
                self.fast_next = chunk.increment_packet_count() < MAX_PACKETS_PER_CHUNK;
            }
            // Not on the fast path (which has a chunk): the general rule.
            None => self.after_packet(stream),
        }
        true
    }

    /// [`WriterCore::finish_trace_packet`] for every case but the common one.
    #[cold]
    #[inline(never)]
    fn finish_trace_packet_slow(&mut self, stream: &mut StreamWriter) {
        self.fast_open = false;
        if stream.error().is_some() || stream.open_slot_count() != 0 {
            // An encoder error, or a child message leaked with `mem::forget`
            // (its length will never be written): the packet is malformed.
            self.abandon_failed_packet(stream);
            return;
        }
        self.finalize_fragment_if_required(stream);
        self.fragmenting_packet = false;
        self.after_packet(stream);
    }

    /// After a packet's size is written: return a full chunk or inflate the
    /// count for the next packet, send patches that are ready, and decide
    /// whether the next packet may take the fast path.
    fn after_packet(&mut self, stream: &mut StreamWriter) {
        if self.cur_chunk.is_some() && !self.packet_count_inflated {
            if stream.remaining() < 1 {
                self.return_completed_chunk(stream.cursor());
                // SAFETY: an empty slice is never written through.
                unsafe { stream.set_slice(Slice::empty()) };
            } else if let Some(chunk) = self.cur_chunk.as_mut() {
                self.packet_count_inflated = true;
                chunk.increment_packet_count();
            }
        }
        if self.patch_list.front_is_ready() {
            self.send_patches();
        }
        self.fast_next = self.cur_chunk.is_some()
            && self.packet_count_inflated
            && !self.reached_max_packets
            && !self.retry_new_chunk_after_packet
            && !self.drop_packets
            && !self.first_packet_on_sequence
            && !self.fragmenting_packet
            && self.patch_list.is_empty()
            && stream.error().is_none()
            && stream.open_slot_count() == 0
            && stream.root_short().is_none();
    }

    /// Finishes a packet whose handle was leaked, at the start of the next.
    #[cold]
    #[inline(never)]
    fn finish_leaked_packet(&mut self, stream: &mut StreamWriter) {
        self.finish_trace_packet(stream);
    }

    /// The encoder failed mid-packet, or a child writer was leaked (the
    /// output is incomplete): mark the fragment as abandoned, fill the
    /// patches of lengths that will never be known (so later patches are not
    /// held back), give the chunk back and start afresh. Only this packet is
    /// lost.
    #[cold]
    fn abandon_failed_packet(&mut self, stream: &mut StreamWriter) {
        self.abandoned_packets += 1;
        stream.discard_open_slots(self);
        let header = core::mem::replace(&mut self.fragment_header, core::ptr::null_mut());
        if let Some(chunk) = self.cur_chunk.as_ref() {
            if chunk
                .payload_offset_of(header, PACKET_HEADER_SIZE)
                .is_some()
            {
                let bytes = redundant_varint4(PACKET_SIZE_DROP_PACKET);
                // SAFETY: checked just above to lie in the owned chunk's payload.
                unsafe {
                    core::ptr::copy_nonoverlapping(bytes.as_ptr(), header, PACKET_HEADER_SIZE)
                };
            }
        }
        self.fragmenting_packet = false;
        self.packet_count_inflated = false;
        if self.cur_chunk.is_some() {
            self.return_completed_chunk(core::ptr::null_mut());
        }
        stream.reset();
    }

    fn send_patches(&mut self) {
        self.arbiter
            .send_patches(self.writer_id, self.target_buffer, &mut self.patch_list);
    }

    /// Hands the current chunk to the arbiter; `used_end` is where the writer
    /// stopped (an inflated count gets its `00` empty fragment there).
    fn return_completed_chunk(&mut self, used_end: *mut u8) {
        let Some(mut chunk) = self.cur_chunk.take() else {
            return;
        };
        if core::mem::take(&mut self.packet_count_inflated) {
            if chunk.payload_offset_of(used_end, 1).is_some() {
                // SAFETY: `used_end` lies in the payload of the chunk we own.
                unsafe { *used_end = 0 };
            } else {
                // No room for the empty fragment: make the count truthful instead.
                let p = chunk.packets();
                chunk.set_packets(Packets {
                    count: p.count.saturating_sub(1),
                    flags: p.flags,
                });
            }
        }
        self.arbiter
            .return_completed_chunk(chunk, self.target_buffer, &mut self.patch_list);
    }

    fn garbage_slice(&mut self) -> Slice {
        self.fragment_start = self.garbage.as_ptr();
        self.garbage.slice()
    }

    /// The next memory to write into: a fresh chunk, or the garbage chunk when
    /// dropping. See the module docs for the fragmentation protocol.
    fn get_new_buffer(&mut self, used_end: *mut u8, open: &mut OpenSlots) -> Slice {
        if self.fragmenting_packet && self.drop_packets {
            // Part of this packet is already lost: keep wrapping in the garbage
            // chunk and retry a real chunk at the next packet.
            self.retry_new_chunk_after_packet = true;
            self.fragment_header = core::ptr::null_mut();
            // The garbage memory is handed out again from its start: a length
            // reserved in it would land on the new bytes, so it is dropped.
            for slot in open.iter_mut() {
                if slot
                    .memory_ptr()
                    .is_some_and(|p| self.garbage.offset_of(p).is_some())
                {
                    slot.redirect_to_patch(DISCARDED_PATCH);
                }
            }
            return self.garbage_slice();
        }
        let packets = if self.fragmenting_packet {
            Packets {
                count: 1,
                flags: ChunkFlags::FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK,
            }
        } else {
            Packets::default()
        };
        let header = ChunkHeader {
            chunk_id: self.next_chunk_id.0,
            writer_id: self.writer_id,
            packets,
        };
        let policy = match self.policy {
            BufferExhaustedPolicy::StallThenDrop if self.drop_packets => {
                BufferExhaustedPolicy::Drop
            }
            p => p,
        };
        let Some(new_chunk) = self.arbiter.get_new_chunk(&header, policy) else {
            return self.enter_drop_mode(used_end, open);
        };
        if self.fragmenting_packet {
            self.close_fragment_for_continuation(used_end, open);
        }
        if self.cur_chunk.is_some() {
            self.return_completed_chunk(used_end);
        }
        self.drop_packets = false;
        self.reached_max_packets = false;
        self.retry_new_chunk_after_packet = false;
        self.next_chunk_id = self.next_chunk_id.next();
        self.packet_count_inflated = false;
        self.fragment_header = core::ptr::null_mut();
        let mut begin = new_chunk.payload_begin();
        let end = new_chunk.end();
        if self.fragmenting_packet {
            // SAFETY: the payload of a fresh chunk has far more than 4 bytes.
            unsafe {
                core::ptr::write_bytes(begin, 0, PACKET_HEADER_SIZE);
                self.fragment_header = begin;
                begin = begin.add(PACKET_HEADER_SIZE);
            }
            self.fragment_start = begin;
        }
        self.cur_chunk = Some(new_chunk);
        // SAFETY: `begin..end` is inside the chunk we just acquired.
        unsafe { Slice::from_raw_parts(begin, end as usize - begin as usize) }
    }

    /// The old chunk's last fragment continues in the next chunk: write its
    /// partial size, set the flag, and move open length slots to patches.
    fn close_fragment_for_continuation(&mut self, used_end: *mut u8, open: &mut OpenSlots) {
        let Some(chunk) = self.cur_chunk.as_mut() else {
            return;
        };
        let partial = (used_end as usize).saturating_sub(self.fragment_start as usize);
        chunk.set_flags(ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK);
        if chunk
            .payload_offset_of(self.fragment_header, PACKET_HEADER_SIZE)
            .is_some()
        {
            let bytes = redundant_varint4(partial as u32);
            // SAFETY: the header lies in the payload of the chunk we own.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    self.fragment_header,
                    PACKET_HEADER_SIZE,
                )
            };
        }
        let chunk_id = chunk.chunk_id();
        let mut needs_patching = false;
        for slot in open.iter_mut() {
            let Some(p) = slot.memory_ptr() else { continue };
            if let Some(offset) = chunk.payload_offset_of(p, PACKET_HEADER_SIZE) {
                let id = self.patch_list.push(chunk_id, offset as u16);
                slot.redirect_to_patch(id);
                needs_patching = true;
            }
        }
        if needs_patching {
            chunk.set_flags(ChunkFlags::CHUNK_NEEDS_PATCHING);
        }
    }

    /// No chunk is available: abandon the packet in progress (if any) and
    /// switch to the garbage chunk.
    #[cold]
    fn enter_drop_mode(&mut self, used_end: *mut u8, open: &mut OpenSlots) -> Slice {
        if self.fragmenting_packet {
            if let Some(chunk) = self.cur_chunk.as_ref() {
                if chunk
                    .payload_offset_of(self.fragment_header, PACKET_HEADER_SIZE)
                    .is_some()
                {
                    let bytes = redundant_varint4(PACKET_SIZE_DROP_PACKET);
                    // SAFETY: the header lies in the payload of the chunk we own.
                    unsafe {
                        core::ptr::copy_nonoverlapping(
                            bytes.as_ptr(),
                            self.fragment_header,
                            PACKET_HEADER_SIZE,
                        )
                    };
                }
                for slot in open.iter_mut() {
                    if slot
                        .memory_ptr()
                        .is_some_and(|p| chunk.payload_offset_of(p, PACKET_HEADER_SIZE).is_some())
                    {
                        slot.redirect_to_patch(DISCARDED_PATCH);
                    }
                }
            }
        }
        if self.cur_chunk.is_some() {
            self.return_completed_chunk(used_end);
        }
        if !self.drop_packets {
            self.drop_count += 1;
        }
        self.drop_packets = true;
        self.packet_count_inflated = false;
        self.reached_max_packets = false;
        self.retry_new_chunk_after_packet = false;
        self.fragment_header = core::ptr::null_mut();
        self.garbage_slice()
    }
}

// SAFETY: every slice handed out is either inside the chunk this writer
// acquired (owned until returned; before returning it, every open slot lying
// in it is redirected to a patch) or inside the writer's own garbage buffer,
// which lives as long as the writer. Slots left in the garbage buffer stay
// writable for the same reason.
unsafe impl Delegate for WriterCore {
    fn next_slice(
        &mut self,
        used_end: *mut u8,
        open: &mut OpenSlots,
        _min_len: usize,
    ) -> Result<Slice, WriteError> {
        Ok(self.get_new_buffer(used_end, open))
    }

    fn fill_patch(&mut self, id: PatchId, bytes: [u8; 4]) {
        self.patch_list.fill(id, bytes);
    }
}
