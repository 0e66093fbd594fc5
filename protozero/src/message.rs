//! [`Message`]: the append-only field writer every generated writer wraps.
//!
//! Each `append_*` serializes a field immediately. [`Message::begin_nested`]
//! returns a child that mutably borrows its parent, so the parent cannot be
//! written while the child is open:
//!
//! ```compile_fail
//! let mut w = protozero::HeapWriter::new();
//! let mut root = w.root();
//! let mut child = root.begin_nested(1);
//! root.append_uint32(2, 7); // error: `root` is still borrowed by `child`
//! child.append_uint32(1, 1);
//! ```
//!
//! Dropping a child (or calling [`Message::finalize`]) backfills its length.

use crate::delegate::Delegate;
use crate::stream_writer::StreamWriter;
use crate::varint::{zigzag32, zigzag64};
use crate::wire::{MAX_FIELD_ID, WireType, make_tag};

/// An open protobuf message being appended to.
pub struct Message<'w> {
    stream: &'w mut StreamWriter,
    delegate: &'w mut dyn Delegate,
    /// Position in the open-slot stack (1-based); 0 for a root without a length.
    depth: usize,
}

impl core::fmt::Debug for Message<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Message")
            .field("depth", &self.depth)
            .field("written", &self.stream.written())
            .finish()
    }
}

use crate::stream_writer::GROUP_DEPTH_MARK;

#[inline(always)]
fn tag(id: u32, wire_type: WireType) -> u64 {
    u64::from(make_tag(id, wire_type))
}

impl<'w> Message<'w> {
    /// A root message (no length prefix) writing through `stream` and `delegate`.
    /// [`Writer::root`](crate::Writer::root) is the safe way to get one.
    ///
    /// # Safety
    /// `stream` must only ever have been given slices by `delegate` (or be
    /// fresh/reset): its current slice must be valid under `delegate`'s
    /// [`Delegate`] contract, because the message writes into it.
    pub unsafe fn new_root(
        stream: &'w mut StreamWriter,
        delegate: &'w mut dyn Delegate,
    ) -> Message<'w> {
        Message {
            stream,
            delegate,
            depth: 0,
        }
    }

    /// Opens a nested message as field `id`; its length is backfilled when the
    /// returned child is finalized or dropped.
    #[inline(always)]
    pub fn begin_nested(&mut self, id: u32) -> Message<'_> {
        let id = self.check_id(id);
        let depth = self
            .stream
            .begin_nested(self.delegate, make_tag(id, WireType::LengthDelimited));
        Message {
            stream: self.stream,
            delegate: self.delegate,
            depth,
        }
    }

    /// Opens field `id` as a proto2 group (or an editions `DELIMITED`
    /// message): writes a start-group tag now and, when the returned child
    /// is finalized or dropped, the matching end-group tag. No length is
    /// reserved; [`Message::finalize`] of the child returns 0.
    #[inline]
    pub fn begin_group(&mut self, id: u32) -> Message<'_> {
        let id = self.check_id(id);
        self.stream
            .write_varint(self.delegate, tag(id, WireType::StartGroup));
        Message {
            stream: self.stream,
            delegate: self.delegate,
            depth: GROUP_DEPTH_MARK | id as usize,
        }
    }

    /// Closes this message, backfilling its length; returns its payload size.
    pub fn finalize(self) -> usize {
        let mut this = core::mem::ManuallyDrop::new(self);
        this.end()
    }

    /// Backfills the length (the work of both `finalize` and `drop`).
    #[inline(always)]
    fn end(&mut self) -> usize {
        if self.depth == 0 {
            return 0;
        }
        // Group children carry GROUP_DEPTH_MARK in `depth`; the stream writer
        // recognizes it on its slow path, keeping this hot path branch-free.
        self.stream.end_nested(self.delegate, self.depth)
    }

    /// Total bytes the underlying stream has written (for size accounting).
    pub fn written(&self) -> usize {
        self.stream.written()
    }

    /// The stream writer and delegate, for this crate's raw writes.
    pub(crate) fn parts(&mut self) -> (&mut StreamWriter, &mut dyn Delegate) {
        (self.stream, self.delegate)
    }

    #[inline(always)]
    fn check_id(&mut self, id: u32) -> u32 {
        if id == 0 || id > MAX_FIELD_ID {
            self.invalid_id(id)
        } else {
            id
        }
    }

    #[cold]
    fn invalid_id(&mut self, id: u32) -> u32 {
        self.stream
            .set_error(crate::WriteError::InvalidFieldId { id });
        1
    }

    /// Appends a varint field with an already-converted value.
    #[inline(always)]
    pub fn append_varint(&mut self, id: u32, value: u64) {
        let id = self.check_id(id);
        self.stream
            .write_two_varints(self.delegate, tag(id, WireType::Varint), value);
    }

    /// `int32`: negative values are sign-extended to 10 bytes, as protobuf requires.
    #[inline(always)]
    pub fn append_int32(&mut self, id: u32, value: i32) {
        self.append_varint(id, i64::from(value) as u64);
    }

    /// `int64`.
    #[inline(always)]
    pub fn append_int64(&mut self, id: u32, value: i64) {
        self.append_varint(id, value as u64);
    }

    /// `uint32`.
    #[inline(always)]
    pub fn append_uint32(&mut self, id: u32, value: u32) {
        self.append_varint(id, u64::from(value));
    }

    /// `uint64`.
    #[inline(always)]
    pub fn append_uint64(&mut self, id: u32, value: u64) {
        self.append_varint(id, value);
    }

    /// `sint32` (zigzag).
    #[inline(always)]
    pub fn append_sint32(&mut self, id: u32, value: i32) {
        self.append_varint(id, u64::from(zigzag32(value)));
    }

    /// `sint64` (zigzag).
    #[inline(always)]
    pub fn append_sint64(&mut self, id: u32, value: i64) {
        self.append_varint(id, zigzag64(value));
    }

    /// `bool`.
    #[inline(always)]
    pub fn append_bool(&mut self, id: u32, value: bool) {
        self.append_varint(id, u64::from(value));
    }

    /// An enum by its number (negative numbers are sign-extended like `int32`).
    #[inline(always)]
    pub fn append_enum(&mut self, id: u32, value: i32) {
        self.append_int32(id, value);
    }

    /// `fixed32`.
    #[inline(always)]
    pub fn append_fixed32(&mut self, id: u32, value: u32) {
        let id = self.check_id(id);
        self.stream.write_tag_fixed(
            self.delegate,
            make_tag(id, WireType::Fixed32),
            value.to_le_bytes(),
        );
    }

    /// `fixed64`.
    #[inline(always)]
    pub fn append_fixed64(&mut self, id: u32, value: u64) {
        let id = self.check_id(id);
        self.stream.write_tag_fixed(
            self.delegate,
            make_tag(id, WireType::Fixed64),
            value.to_le_bytes(),
        );
    }

    /// `sfixed32`.
    #[inline(always)]
    pub fn append_sfixed32(&mut self, id: u32, value: i32) {
        self.append_fixed32(id, value as u32);
    }

    /// `sfixed64`.
    #[inline(always)]
    pub fn append_sfixed64(&mut self, id: u32, value: i64) {
        self.append_fixed64(id, value as u64);
    }

    /// `float`.
    #[inline(always)]
    pub fn append_float(&mut self, id: u32, value: f32) {
        self.append_fixed32(id, value.to_bits());
    }

    /// `double`.
    #[inline(always)]
    pub fn append_double(&mut self, id: u32, value: f64) {
        self.append_fixed64(id, value.to_bits());
    }

    /// `bytes`: tag, length, payload (which may span slices).
    #[inline(always)]
    pub fn append_bytes(&mut self, id: u32, value: &[u8]) {
        let id = self.check_id(id);
        self.stream.write_two_varints(
            self.delegate,
            tag(id, WireType::LengthDelimited),
            value.len() as u64,
        );
        self.stream.write_bytes(self.delegate, value);
    }

    /// `string`.
    #[inline(always)]
    pub fn append_string(&mut self, id: u32, value: &str) {
        self.append_bytes(id, value.as_bytes());
    }

    /// Writes the tag and length of a length-delimited field whose `len` payload
    /// bytes the caller appends next with [`Message::append_raw_bytes`].
    #[inline(always)]
    pub fn append_length_prefix(&mut self, id: u32, len: usize) {
        let id = self.check_id(id);
        self.stream.write_two_varints(
            self.delegate,
            tag(id, WireType::LengthDelimited),
            len as u64,
        );
    }

    /// A length-delimited field whose payload is gathered from several pieces.
    pub fn append_scattered_bytes(&mut self, id: u32, pieces: &[&[u8]]) {
        let id = self.check_id(id);
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        self.stream.write_two_varints(
            self.delegate,
            tag(id, WireType::LengthDelimited),
            len as u64,
        );
        for p in pieces {
            self.stream.write_bytes(self.delegate, p);
        }
    }

    /// Bytes that are already protobuf-encoded fields (e.g. replayed unknown fields).
    #[inline]
    pub fn append_raw_bytes(&mut self, encoded: &[u8]) {
        self.stream.write_bytes(self.delegate, encoded);
    }

    /// A bare tag with the given wire type (groups use this for start/end markers).
    #[inline]
    pub fn append_tag(&mut self, id: u32, wire_type: WireType) {
        let id = self.check_id(id);
        self.stream.write_varint(self.delegate, tag(id, wire_type));
    }
}

impl Drop for Message<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.end();
    }
}
