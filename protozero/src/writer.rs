//! [`Writer`]: a [`StreamWriter`] paired with the delegate it owns, the usual
//! way to encode one message into a heap buffer or a fixed slice.

use alloc::vec::Vec;

use crate::delegate::Delegate;
use crate::error::WriteError;
use crate::heap_buffer::HeapBuffer;
use crate::message::Message;
use crate::null_buffer::NullBuffer;
use crate::slice_buffer::SliceBuffer;
use crate::stream_writer::StreamWriter;

/// A stream writer that owns its delegate.
#[derive(Debug)]
pub struct Writer<D: Delegate> {
    stream: StreamWriter,
    delegate: D,
}

/// Encodes into growable heap slices.
pub type HeapWriter = Writer<HeapBuffer>;
/// Encodes into one caller-provided slice.
pub type SliceWriter<'a> = Writer<SliceBuffer<'a>>;
/// Encodes into nothing.
pub type NullWriter = Writer<NullBuffer>;

impl<D: Delegate> Writer<D> {
    /// A writer over `delegate`.
    #[inline(always)]
    pub fn with_delegate(delegate: D) -> Self {
        Writer {
            stream: StreamWriter::new(),
            delegate,
        }
    }

    /// The root message (no length prefix). Several roots in a row append to
    /// the same stream.
    #[inline]
    pub fn root(&mut self) -> Message<'_> {
        // SAFETY: this stream only ever receives slices from `self.delegate`,
        // which it owns; `clear`/`reset` paths reset the stream as well.
        unsafe { Message::new_root(&mut self.stream, &mut self.delegate) }
    }

    /// Total bytes written.
    #[inline]
    pub fn written(&self) -> usize {
        self.stream.written()
    }

    /// The first error, if any.
    pub fn error(&self) -> Option<WriteError> {
        self.stream.error()
    }

    /// The delegate.
    pub fn delegate(&self) -> &D {
        &self.delegate
    }

    /// The stream writer, for inspection (cursor, open slots, bytes written).
    /// Only shared access is lent out: a stream holds raw pointers into the
    /// delegate's memory, so it must never be moved away from its delegate.
    pub fn stream(&self) -> &StreamWriter {
        &self.stream
    }

    /// Turns 1-byte length compaction of small nested messages on or off (see
    /// [`StreamWriter::set_compaction`]).
    pub fn set_compaction(&mut self, on: bool) {
        self.stream.set_compaction(on);
    }

    /// Chooses speculative (short-slot) or move-based compaction (see
    /// [`StreamWriter::set_speculative_compaction`]).
    pub fn set_speculative_compaction(&mut self, on: bool) {
        self.stream.set_speculative_compaction(on);
    }
}

impl Default for HeapWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl HeapWriter {
    /// A heap writer with default slice sizes.
    pub fn new() -> Self {
        Self::with_delegate(HeapBuffer::new())
    }

    /// Copies the output so far into a `Vec`.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.written());
        self.delegate.stitch_into(self.stream.cursor(), &mut out);
        out
    }

    /// Finishes and returns the encoded bytes.
    pub fn finish(self) -> Result<Vec<u8>, WriteError> {
        match self.stream.error() {
            Some(e) => Err(e),
            None => Ok(self.to_vec()),
        }
    }

    /// Clears the output but keeps the allocations for reuse (writing
    /// resumes in the first slice, with no slow path).
    pub fn clear(&mut self) {
        self.stream.reset();
        if let Some(slice) = self.delegate.clear_reusing_first() {
            // SAFETY: the slice belongs to this writer's own delegate, which
            // handed it out as its current slice, exactly as `next_slice`
            // would have.
            unsafe { self.stream.set_slice(slice) };
        }
    }
}

impl<'a> SliceWriter<'a> {
    /// A writer into `buf`. The bytes of `buf` past the encoded length that
    /// [`SliceWriter::finish`] reports may be overwritten with scratch.
    #[inline(always)]
    pub fn new(buf: &'a mut [u8]) -> Self {
        // Take the only slice up front so the first append skips the slow
        // path, and build the writer in place (it is a few hundred bytes; a
        // build-then-return would copy it on every message).
        let mut delegate = SliceBuffer::new(buf);
        let slice = delegate.take_slice();
        Writer {
            stream: StreamWriter::with_slice(slice),
            delegate,
        }
    }

    /// Finishes and returns the written prefix of the buffer.
    #[inline(always)]
    pub fn finish(self) -> Result<&'a mut [u8], WriteError> {
        if let Some(e) = self.stream.error() {
            return Err(e);
        }
        let n = self.stream.written();
        Ok(&mut self.delegate.into_inner()[..n])
    }
}

impl Default for NullWriter {
    fn default() -> Self {
        Self::with_delegate(NullBuffer::new())
    }
}

impl NullWriter {
    /// A writer that discards its output.
    pub fn new() -> Self {
        Self::default()
    }
}
