//! Reading packed repeated payloads: one length-delimited field holding many
//! varints, fixed32s or fixed64s. Packed varint iteration keeps a sticky
//! error that callers check after the loop.

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
