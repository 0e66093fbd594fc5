//! Iterators over repeated fields: packed payloads (varint, fixed32, fixed64)
//! and unpacked occurrences of one field id. Packed varint iteration keeps a
//! sticky error that callers check after the loop.

use crate::decoder::{Field, FieldValue};
use crate::decoder_slots::parse_at;
use crate::error::DecodeError;
use crate::fast_read::{read_bytes, read_varint};
use crate::varint::decode_varint;
use crate::wire::MAX_FIELD_ID;

/// Varints of a packed payload. Stops at the first malformed varint and
/// remembers the error.
#[derive(Debug, Clone)]
pub struct PackedVarints<'a> {
    buf: &'a [u8],
    error: Option<DecodeError>,
}

impl<'a> PackedVarints<'a> {
    #[inline]
    /// Iterates `payload`.
    pub fn new(payload: &'a [u8]) -> Self {
        PackedVarints {
            buf: payload,
            error: None,
        }
    }

    #[inline]
    /// The error that ended iteration early, if any.
    pub fn error(&self) -> Option<DecodeError> {
        self.error
    }
}

impl Iterator for PackedVarints<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.buf.is_empty() {
            return None;
        }
        match decode_varint(self.buf) {
            Ok((v, n)) => {
                self.buf = &self.buf[n..];
                Some(v)
            }
            Err(e) => {
                self.error = Some(e);
                self.buf = &[];
                None
            }
        }
    }
}

macro_rules! packed_fixed {
    ($name:ident, $ty:ty, $n:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone)]
        pub struct $name<'a> {
            chunks: core::slice::ChunksExact<'a, u8>,
        }

        impl<'a> $name<'a> {
            #[inline]
            /// Iterates `payload`; fails unless its length is a multiple of the element size.
            pub fn new(payload: &'a [u8]) -> Result<Self, DecodeError> {
                if payload.len() % $n != 0 {
                    return Err(DecodeError::PackedLength {
                        len: payload.len(),
                        elem: $n,
                    });
                }
                Ok($name {
                    chunks: payload.chunks_exact($n),
                })
            }
        }

        impl Iterator for $name<'_> {
            type Item = $ty;

            #[inline]
            fn next(&mut self) -> Option<$ty> {
                let c = self.chunks.next()?;
                let mut b = [0u8; $n];
                b.copy_from_slice(c);
                Some(<$ty>::from_le_bytes(b))
            }

            fn size_hint(&self) -> (usize, Option<usize>) {
                self.chunks.size_hint()
            }
        }

        impl ExactSizeIterator for $name<'_> {}
    };
}

packed_fixed!(
    PackedFixed32,
    u32,
    4,
    "Little-endian 4-byte elements of a packed payload."
);
packed_fixed!(
    PackedFixed64,
    u64,
    8,
    "Little-endian 8-byte elements of a packed payload."
);

/// Every occurrence of one field id, in arrival order, from a message's bytes.
///
/// Small (a slice, an offset, the number) and never passed by reference to
/// an out-of-line call, so that a loop over an iterator a generated decoder
/// hands out stays in registers: an absent or used-up field costs one
/// inline compare; the rest is one call by value per element, which reads
/// an occurrence with the fast readers and anything else through the
/// generic reader (which also reports malformed bytes).
#[derive(Debug, Clone)]
pub struct RepeatedFields<'a> {
    buf: &'a [u8],
    pos: usize,
    id: u32,
    groups: bool,
    error: Option<DecodeError>,
}

impl<'a> RepeatedFields<'a> {
    #[inline]
    /// Occurrences of `id` in `buf` at or after offset `start`.
    pub fn new(buf: &'a [u8], start: usize, id: u32) -> Self {
        RepeatedFields {
            buf,
            pos: start.min(buf.len()),
            id,
            groups: false,
            error: None,
        }
    }

    #[inline]
    /// This iterator, stepping over proto2 groups instead of stopping at
    /// them (see [`Decoder::accept_groups`](crate::Decoder::accept_groups)).
    pub fn accept_groups(mut self) -> Self {
        self.groups = true;
        self
    }

    #[inline]
    /// An iterator that yields nothing.
    pub fn empty() -> Self {
        Self::new(&[], 0, 0)
    }

    #[inline]
    /// The error that ended iteration early, if any.
    pub fn error(&self) -> Option<DecodeError> {
        self.error
    }
}

/// What [`advance`] found.
enum Step<'a> {
    /// An occurrence, and the offset after it.
    Found(Field<'a>, usize),
    /// No further occurrence.
    End,
    /// Malformed bytes.
    Failed(DecodeError),
}

/// The next occurrence of `id` at or after `pos` of `buf` (`pos` is before
/// its end). The common case first: the next field is an occurrence (a
/// generated decoder's extent starts at the first one) and its value is
/// well formed, read with the fast readers; anything they decline goes to
/// the generic reader, which checks every field's tag and reports
/// malformed bytes. Out of line and by value, so the iterator calling it
/// need not live in memory.
#[inline(never)]
fn advance(buf: &[u8], mut pos: usize, id: u32, groups: bool) -> Step<'_> {
    if let Some((tag, after)) = read_varint(buf, pos) {
        if tag >> 3 == u64::from(id) && (1..=MAX_FIELD_ID).contains(&id) {
            let read = match tag & 7 {
                0 => read_varint(buf, after).map(|(v, n)| (FieldValue::Varint(v), n)),
                2 => read_bytes(buf, after).map(|(v, n)| (FieldValue::Bytes(v), n)),
                _ => None,
            };
            if let Some((value, next)) = read {
                return Step::Found(Field { id, value }, next);
            }
        }
    }
    while pos < buf.len() {
        match parse_at(buf, pos, groups) {
            Ok((f, next)) if f.id == id => return Step::Found(f, next),
            Ok((_, next)) => pos = next,
            Err(e) => return Step::Failed(e),
        }
    }
    Step::End
}

impl<'a> Iterator for RepeatedFields<'a> {
    type Item = Field<'a>;

    #[inline(always)]
    fn next(&mut self) -> Option<Field<'a>> {
        // An absent or used-up field costs one compare (generated decoders
        // hand out many such iterators).
        if self.pos >= self.buf.len() {
            return None;
        }
        match advance(self.buf, self.pos, self.id, self.groups) {
            Step::Found(f, next) => {
                self.pos = next;
                Some(f)
            }
            Step::End => {
                self.pos = self.buf.len();
                None
            }
            Step::Failed(e) => {
                self.error = Some(e);
                self.pos = self.buf.len();
                None
            }
        }
    }
}
