//! Iterators over repeated fields: packed payloads (varint, fixed32, fixed64)
//! and unpacked occurrences of one field id. Packed varint iteration keeps a
//! sticky error that callers check after the loop.

use crate::decoder::{Decoder, Field};
use crate::error::DecodeError;
use crate::varint::decode_varint;

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
#[derive(Debug, Clone)]
pub struct RepeatedFields<'a> {
    decoder: Decoder<'a>,
    id: u32,
    error: Option<DecodeError>,
}

impl<'a> RepeatedFields<'a> {
    #[inline]
    /// Occurrences of `id` in `buf` at or after offset `start`.
    pub fn new(buf: &'a [u8], start: usize, id: u32) -> Self {
        RepeatedFields {
            decoder: Decoder::at(buf, start),
            id,
            error: None,
        }
    }

    #[inline]
    /// This iterator, stepping over proto2 groups instead of stopping at
    /// them (see [`Decoder::accept_groups`]).
    pub fn accept_groups(mut self) -> Self {
        self.decoder = self.decoder.accept_groups();
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

impl<'a> Iterator for RepeatedFields<'a> {
    type Item = Field<'a>;

    #[inline]
    fn next(&mut self) -> Option<Field<'a>> {
        // An absent or used-up field costs one compare (generated decoders
        // hand out many such iterators).
        if self.decoder.remaining().is_empty() {
            return None;
        }
        self.next_present()
    }
}

impl<'a> RepeatedFields<'a> {
    fn next_present(&mut self) -> Option<Field<'a>> {
        loop {
            match self.decoder.read_field()? {
                Ok(f) if f.id == self.id => return Some(f),
                Ok(_) => {}
                Err(e) => {
                    self.error = Some(e);
                    return None;
                }
            }
        }
    }
}
