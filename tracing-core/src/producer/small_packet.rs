//! [`SmallPacket`]: a whole trace packet of a few dozen bytes written
//! straight into the current chunk, with one room check up front instead of
//! the stream writer's checks per field, its open-slot bookkeeping and the
//! packet handle's finishing checks. TrackEvent's hot packets (a slice end,
//! a known trace point's begin) are mostly constant bytes around a
//! timestamp; this writes them as such. The bytes, the chunk's packet count
//! and the writer's state afterwards are exactly those of
//! [`TraceWriter::new_trace_packet`](crate::producer::TraceWriter::new_trace_packet)
//! writing the same fields on its fast path.

use protozero::StreamWriter;
use protozero::varint::{varint_len, varint_word};

use crate::producer::trace_writer::WriterCore;

/// Bytes a small packet's room check asks for beyond its payload and its
/// 1-byte size: what the general path keeps free while it writes (3 bytes
/// of headroom for each open 1-byte length, and room to open a nested
/// message), so that wherever it would have kept the 1-byte form, this
/// path writes, and nowhere else; and room for an 8-byte word store at the
/// end of the payload, or a copy of constant size (up to this many bytes)
/// of fewer bytes there.
pub(crate) const SMALL_PACKET_SLACK: usize = 32;

/// A packet being written by [`TraceWriter::small_packet`](crate::producer::TraceWriter::small_packet):
/// nothing counts until [`SmallPacket::commit`]; dropped without it, no
/// packet was written.
#[must_use = "a small packet is written only when committed"]
#[derive(Debug)]
pub(crate) struct SmallPacket<'a> {
    stream: &'a mut StreamWriter,
    core: &'a mut WriterCore,
    /// The packet's first byte, its size; the payload follows.
    start: *mut u8,
    /// Payload bytes written so far.
    len: usize,
    /// Most payload bytes (the room asked for, at most 126). A write that
    /// does not fit still counts its bytes (writing none), so `len > max`
    /// says the packet failed and is not committed.
    max: usize,
}

impl<'a> SmallPacket<'a> {
    /// A packet of at most `max` payload bytes at the stream's cursor.
    ///
    /// # Safety
    /// The stream's current slice was handed out by `core` (its delegate)
    /// and has at least `1 + max + SMALL_PACKET_SLACK` bytes left under
    /// its fast-path limit, with no length slot or root prefix open.
    #[inline]
    pub(crate) unsafe fn new(
        stream: &'a mut StreamWriter,
        core: &'a mut WriterCore,
        max: usize,
    ) -> SmallPacket<'a> {
        let start = stream.cursor();
        SmallPacket {
            stream,
            core,
            start,
            len: 0,
            max,
        }
    }

    /// Counts `n` more payload bytes; where they go if they fit in the
    /// payload (and every byte before them did).
    #[inline(always)]
    fn room(&mut self, n: usize) -> Option<*mut u8> {
        let at = self.len;
        // No wrap: every caller bounds `n` by SMALL_PACKET_SLACK or by
        // `max` (at most 126), so `len` would take more than 2^56 writes
        // to pass `usize::MAX`.
        self.len = at + n;
        if self.len > self.max {
            return None;
        }
        // SAFETY: `1 + at + n <= 1 + max` lies in the room `new` was
        // given (with SMALL_PACKET_SLACK more bytes after it).
        Some(unsafe { self.start.add(1 + at) })
    }

    /// Marks the packet failed: nothing more is written (every later
    /// write finds `len` past `max` too), nothing committed.
    #[inline(always)]
    fn fail(&mut self) {
        self.len = self.max + 1;
    }

    /// Appends `bytes` (encoded fields).
    #[inline(always)]
    pub(crate) fn put<const K: usize>(&mut self, bytes: [u8; K]) {
        const { assert!(K <= SMALL_PACKET_SLACK) };
        if let Some(p) = self.room(K) {
            // SAFETY: `K` bytes fit at `p` (see `room`).
            unsafe { p.cast::<[u8; K]>().write_unaligned(bytes) };
        }
    }

    /// Appends `bytes` of a length known only at run time (a string's):
    /// up to 16 bytes as two overlapping moves, longer ones by a copy.
    #[inline(always)]
    pub(crate) fn put_slice(&mut self, bytes: &[u8]) {
        let n = bytes.len();
        if n > self.max {
            self.fail();
            return;
        }
        let Some(p) = self.room(n) else {
            return;
        };
        // SAFETY: `n` bytes fit at `p` (see `room`); each move below
        // writes inside `p..p + n`, and the chunk never overlaps `bytes`.
        unsafe {
            match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
                (Some(head), Some(tail)) if n <= 16 => {
                    p.cast::<[u8; 8]>().write_unaligned(*head);
                    p.add(n - 8).cast::<[u8; 8]>().write_unaligned(*tail);
                }
                _ => match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
                    (Some(head), Some(tail)) if n < 8 => {
                        p.cast::<[u8; 4]>().write_unaligned(*head);
                        p.add(n - 4).cast::<[u8; 4]>().write_unaligned(*tail);
                    }
                    _ if n < 4 => {
                        for (i, b) in bytes.iter().enumerate() {
                            p.add(i).write(*b);
                        }
                    }
                    _ => core::ptr::copy_nonoverlapping(bytes.as_ptr(), p, n),
                },
            }
        }
    }

    /// Reserves the 1-byte length of a nested message whose fields follow;
    /// its place, for [`SmallPacket::close_len`].
    #[inline(always)]
    pub(crate) fn open_len(&mut self) -> usize {
        let at = self.len;
        self.put([0]);
        at
    }

    /// Writes the length of the nested message opened at `at`: the bytes
    /// written since (at most 125: the payload is at most 126 bytes).
    #[inline(always)]
    pub(crate) fn close_len(&mut self, at: usize) {
        match self.len.checked_sub(at + 1) {
            // SAFETY: `at < len <= max`: inside the payload written so far.
            Some(size) if size < 128 && self.len <= self.max => unsafe {
                self.start.add(1 + at).write(size as u8)
            },
            _ => self.fail(),
        }
    }

    /// Appends the first `len` bytes of `bytes` (at most `K`, which is at
    /// most [`SMALL_PACKET_SLACK`]), copying all `K` (a copy of constant
    /// size): the bytes past `len` land past the payload's end, overwritten
    /// by what follows or left in free space.
    #[inline(always)]
    pub(crate) fn put_padded<const K: usize>(&mut self, bytes: &[u8; K], len: usize) {
        const { assert!(K <= SMALL_PACKET_SLACK) };
        if len > K {
            self.fail();
            return;
        }
        if let Some(p) = self.room(len) {
            // SAFETY: `len` bytes fit at `p` (see `room`), so `p` is at
            // most `1 + max` bytes into the room, and `K` bytes from it lie
            // within the SMALL_PACKET_SLACK bytes after that.
            unsafe { p.cast::<[u8; K]>().write_unaligned(*bytes) };
        }
    }

    /// Appends `value` as a varint, stored as the stream writer stores it
    /// (a value of 2^28 or more as one 8-byte word, the bytes past the
    /// varint then overwritten by what follows, or left in free space as
    /// the stream writer leaves them).
    #[inline(always)]
    pub(crate) fn put_varint(&mut self, value: u64) {
        let n = varint_len(value);
        let Some(p) = self.room(n) else {
            return;
        };
        // SAFETY: `n` bytes fit at `p`, and the 8-byte word at most 7 more,
        // within SMALL_PACKET_SLACK.
        unsafe {
            match varint_word(value) {
                Some(word) if value >= 1 << 28 => {
                    p.cast::<[u8; 8]>().write_unaligned(word.to_le_bytes());
                }
                _ => {
                    let mut v = value;
                    let mut q = p;
                    while v >= 0x80 {
                        q.write((v as u8) | 0x80);
                        q = q.add(1);
                        v >>= 7;
                    }
                    q.write(v as u8);
                }
            }
        }
    }

    /// Writes the packet's size and finishes it as the writer's fast path
    /// finishes a packet. `false` (nothing written) if a write did not fit.
    #[inline(always)]
    pub(crate) fn commit(self) -> bool {
        if self.len > self.max {
            return false;
        }
        // SAFETY: the size byte is the first byte of the room, and `len`
        // is at most `max` (at most 126), so it is the 1-byte length.
        unsafe { self.start.write(self.len as u8) };
        self.core.finish_small_packet(self.stream, 1 + self.len)
    }
}
