//! Typed iterators over repeated fields, returned by generated decoders.
//!
//! Protobuf lets a parser meet a repeated scalar either packed (one
//! length-delimited payload) or unpacked (one tag per element), whatever the
//! schema says, and even both in one message. [`RepeatedScalars`] accepts
//! either, element by element, without allocating. Strings, bytes and nested
//! messages are never packed, so their iterators just convert each occurrence.
//! [`RepeatedEnums`] reads enum elements like `int32` ones and yields those
//! the Rust enum names, skipping other numbers.
//! Every iterator stops at the first malformed element and remembers why.

use core::marker::PhantomData;

use crate::codegen_support::{MessageDecoder, PackedLayout, ProtoEnum, ScalarKind, kinds};
use crate::decoder::{Field, FieldValue};
use crate::error::DecodeError;
use crate::repeated::RepeatedFields;
use crate::varint::decode_varint;

/// Takes one element laid out as `layout` off the front of a packed run;
/// `truncated` is the error for a fixed-size element cut short.
#[inline]
pub(crate) fn take_packed(
    layout: PackedLayout,
    packed: &mut &[u8],
    truncated: DecodeError,
) -> Result<FieldValue<'static>, DecodeError> {
    match layout {
        PackedLayout::Varint => {
            let (v, n) = decode_varint(packed)?;
            *packed = packed.get(n..).unwrap_or(&[]);
            Ok(FieldValue::Varint(v))
        }
        PackedLayout::Fixed32 => {
            let (b, rest) = packed.split_first_chunk::<4>().ok_or(truncated)?;
            *packed = rest;
            Ok(FieldValue::Fixed32(u32::from_le_bytes(*b)))
        }
        PackedLayout::Fixed64 => {
            let (b, rest) = packed.split_first_chunk::<8>().ok_or(truncated)?;
            *packed = rest;
            Ok(FieldValue::Fixed64(u64::from_le_bytes(*b)))
        }
    }
}

/// [`take_packed`] by value and out of line (packed runs are rarer than
/// the checks for an element that an iterator inlines): the element or the
/// error, and the rest of `packed`.
#[inline(never)]
fn packed_step(
    layout: PackedLayout,
    mut packed: &[u8],
    id: u32,
) -> (Result<FieldValue<'static>, DecodeError>, &[u8]) {
    let value = take_packed(layout, &mut packed, DecodeError::TruncatedFixed { id });
    (value, packed)
}

/// Elements of a repeated scalar field of kind `K`, packed or unpacked.
#[derive(Debug, Clone)]
pub struct RepeatedScalars<'a, K> {
    fields: RepeatedFields<'a>,
    packed: &'a [u8],
    /// Field id of the payload in `packed` (for error reports).
    packed_id: u32,
    error: Option<DecodeError>,
    kind: PhantomData<K>,
}

impl<'a, K: ScalarKind> RepeatedScalars<'a, K> {
    /// Iterates the elements carried by `fields` (occurrences of one field id).
    #[inline]
    pub fn new(fields: RepeatedFields<'a>) -> Self {
        RepeatedScalars {
            fields,
            packed: &[],
            packed_id: 0,
            error: None,
            kind: PhantomData,
        }
    }

    /// The error that ended iteration early, if any (including a malformed
    /// message around the field).
    pub fn error(&self) -> Option<DecodeError> {
        self.error.or_else(|| self.fields.error())
    }

    /// Takes one element off the current packed payload.
    #[inline(always)]
    fn next_packed(&mut self) -> Option<K::Value> {
        let (value, rest) = packed_step(K::LAYOUT, self.packed, self.packed_id);
        self.packed = rest;
        match value {
            Ok(value) => K::from_value(value),
            Err(e) => self.fail(e),
        }
    }

    /// Inlined (not `#[cold]` out of line): a call taking `&mut self`
    /// would keep the iterator in memory on every path.
    #[inline(always)]
    fn fail(&mut self, e: DecodeError) -> Option<K::Value> {
        self.error = Some(e);
        self.packed = &[];
        // Drain the field iterator so iteration ends here.
        self.fields = RepeatedFields::empty();
        None
    }
}

impl<K: ScalarKind> Iterator for RepeatedScalars<'_, K> {
    type Item = K::Value;

    #[inline(always)]
    fn next(&mut self) -> Option<K::Value> {
        loop {
            if !self.packed.is_empty() {
                return self.next_packed();
            }
            let field = self.fields.next()?;
            match field.value {
                FieldValue::Bytes(payload) => {
                    self.packed = payload;
                    self.packed_id = field.id;
                }
                value => match K::from_value(value) {
                    Some(v) => return Some(v),
                    None => {
                        return self.fail(DecodeError::WrongWireType {
                            id: field.id,
                            expected: K::LAYOUT.wire_type() as u8,
                            found: field.wire_type() as u8,
                        });
                    }
                },
            }
        }
    }
}

/// Elements of a repeated enum field, packed or unpacked, as values of the
/// Rust enum `E`. Numbers `E` does not name are skipped, so this may yield
/// fewer items than the field has elements; iterate
/// `RepeatedScalars<'a, kinds::Int32>` over the same fields for every number.
#[derive(Debug, Clone)]
pub struct RepeatedEnums<'a, E> {
    raw: RepeatedScalars<'a, kinds::Int32>,
    kind: PhantomData<fn() -> E>,
}

impl<'a, E: ProtoEnum> RepeatedEnums<'a, E> {
    /// Iterates the elements carried by `fields` (occurrences of one field id).
    #[inline]
    pub fn new(fields: RepeatedFields<'a>) -> Self {
        RepeatedEnums {
            raw: RepeatedScalars::new(fields),
            kind: PhantomData,
        }
    }

    /// The error that ended iteration early, if any (including a malformed
    /// message around the field). Unknown numbers are not errors.
    pub fn error(&self) -> Option<DecodeError> {
        self.raw.error()
    }
}

impl<E: ProtoEnum> Iterator for RepeatedEnums<'_, E> {
    type Item = E;

    #[inline]
    fn next(&mut self) -> Option<E> {
        // Bounded by the elements left: each turn consumes one.
        loop {
            if let Some(e) = E::from_i32(self.raw.next()?) {
                return Some(e);
            }
        }
    }
}

/// Converts each occurrence of a length-delimited field; stops at the first
/// occurrence that does not convert.
#[derive(Debug, Clone)]
struct Converted<'a> {
    fields: RepeatedFields<'a>,
    error: Option<DecodeError>,
}

impl<'a> Converted<'a> {
    #[inline(always)]
    fn next_with<T>(
        &mut self,
        convert: impl FnOnce(&Field<'a>) -> Result<T, DecodeError>,
    ) -> Option<T> {
        let field = self.fields.next()?;
        match convert(&field) {
            Ok(v) => Some(v),
            Err(e) => {
                self.error = Some(e);
                self.fields = RepeatedFields::empty();
                None
            }
        }
    }

    fn error(&self) -> Option<DecodeError> {
        self.error.or_else(|| self.fields.error())
    }
}

macro_rules! length_delimited_iter {
    ($(#[$doc:meta])* $name:ident, $item:ty, $conv:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name<'a> {
            inner: Converted<'a>,
        }

        impl<'a> $name<'a> {
            /// Iterates the occurrences in `fields`.
            #[inline]
            pub fn new(fields: RepeatedFields<'a>) -> Self {
                $name {
                    inner: Converted { fields, error: None },
                }
            }

            /// The error that ended iteration early, if any.
            pub fn error(&self) -> Option<DecodeError> {
                self.inner.error()
            }
        }

        impl<'a> Iterator for $name<'a> {
            type Item = $item;

            #[inline]
            fn next(&mut self) -> Option<$item> {
                self.inner.next_with(|f| f.$conv())
            }
        }
    };
}

length_delimited_iter!(
    /// Occurrences of a repeated `string` field (stops at invalid UTF-8).
    RepeatedStrs, &'a str, as_str
);
length_delimited_iter!(
    /// Occurrences of a repeated `bytes` field.
    RepeatedBytes, &'a [u8], as_bytes
);

/// Occurrences of a repeated message field, each as a generated decoder `D`.
#[derive(Debug, Clone)]
pub struct RepeatedMessages<'a, D> {
    inner: Converted<'a>,
    decoder: PhantomData<D>,
}

impl<'a, D: MessageDecoder<'a>> RepeatedMessages<'a, D> {
    /// Iterates the occurrences in `fields`.
    #[inline]
    pub fn new(fields: RepeatedFields<'a>) -> Self {
        RepeatedMessages {
            inner: Converted {
                fields,
                error: None,
            },
            decoder: PhantomData,
        }
    }

    /// The error that ended iteration early, if any.
    pub fn error(&self) -> Option<DecodeError> {
        self.inner.error()
    }
}

impl<'a, D: MessageDecoder<'a>> Iterator for RepeatedMessages<'a, D> {
    type Item = D;

    #[inline(always)]
    fn next(&mut self) -> Option<D> {
        // The decoder is made straight into the returned value (through a
        // `Result` it was made and then copied, a few hundred bytes).
        let field = self.inner.fields.next()?;
        match field.as_bytes() {
            Ok(b) => Some(D::decode(b)),
            Err(e) => {
                self.inner.error = Some(e);
                self.inner.fields = RepeatedFields::empty();
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen_support::kinds;

    fn fields(buf: &[u8], id: u32) -> RepeatedFields<'_> {
        RepeatedFields::new(buf, 0, id)
    }

    #[test]
    fn scalars_accept_packed_and_unpacked_mixed() {
        // field 1 = 5 (unpacked), field 1 = packed [1, 300], field 2 = 9, field 1 = 7
        let buf = [0x08, 5, 0x0A, 3, 1, 0xAC, 0x02, 0x10, 9, 0x08, 7];
        let got: Vec<u32> = RepeatedScalars::<kinds::Uint32>::new(fields(&buf, 1)).collect();
        assert_eq!(got, [5, 1, 300, 7]);
    }

    #[test]
    fn packed_fixed_truncation_is_reported() {
        // field 1 = packed fixed32 payload of 6 bytes (one element and a half)
        let buf = [0x0A, 6, 1, 0, 0, 0, 2, 0];
        let mut it = RepeatedScalars::<kinds::Fixed32>::new(fields(&buf, 1));
        assert_eq!(it.next(), Some(1));
        assert_eq!(it.next(), None);
        assert_eq!(it.error(), Some(DecodeError::TruncatedFixed { id: 1 }));
        assert_eq!(it.next(), None);
    }

    #[test]
    fn wrong_wire_type_stops_scalars() {
        // field 1 as fixed32 where a varint is expected
        let buf = [0x0D, 1, 0, 0, 0, 0x08, 2];
        let mut it = RepeatedScalars::<kinds::Int64>::new(fields(&buf, 1));
        assert_eq!(it.next(), None);
        assert!(matches!(
            it.error(),
            Some(DecodeError::WrongWireType { id: 1, .. })
        ));
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Color {
        Red = 1,
        Blue = -2,
    }

    impl ProtoEnum for Color {
        fn from_i32(value: i32) -> Option<Self> {
            match value {
                1 => Some(Color::Red),
                -2 => Some(Color::Blue),
                _ => None,
            }
        }
        fn as_i32(self) -> i32 {
            self as i32
        }
        fn as_str_name(self) -> &'static str {
            match self {
                Color::Red => "RED",
                Color::Blue => "BLUE",
            }
        }
    }

    #[test]
    fn enums_skip_unknown_numbers_packed_and_unpacked() {
        // field 1 = 1, field 1 = packed [9, -2, 7], field 1 = 5, field 1 = 1
        let mut buf = vec![0x08, 1, 0x0A, 12, 9];
        buf.extend_from_slice(&[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]);
        buf.extend_from_slice(&[7, 0x08, 5, 0x08, 1]);
        let known: Vec<Color> = RepeatedEnums::new(fields(&buf, 1)).collect();
        assert_eq!(known, [Color::Red, Color::Blue, Color::Red]);
        let raw: Vec<i32> = RepeatedScalars::<kinds::Int32>::new(fields(&buf, 1)).collect();
        assert_eq!(raw, [1, 9, -2, 7, 5, 1]);
    }

    #[test]
    fn enums_stop_at_malformed_elements() {
        // field 1 = 1, then field 1 as fixed32
        let buf = [0x08, 1, 0x0D, 1, 0, 0, 0, 0x08, 1];
        let mut it = RepeatedEnums::<Color>::new(fields(&buf, 1));
        assert_eq!(it.next(), Some(Color::Red));
        assert_eq!(it.next(), None);
        assert!(matches!(
            it.error(),
            Some(DecodeError::WrongWireType { id: 1, .. })
        ));
    }

    #[test]
    fn strs_stop_at_invalid_utf8() {
        let buf = [0x0A, 1, b'a', 0x0A, 1, 0xFF, 0x0A, 1, b'b'];
        let mut it = RepeatedStrs::new(fields(&buf, 1));
        assert_eq!(it.next(), Some("a"));
        assert_eq!(it.next(), None);
        assert_eq!(it.error(), Some(DecodeError::InvalidUtf8 { id: 1 }));
        let raw: Vec<&[u8]> = RepeatedBytes::new(fields(&buf, 1)).collect();
        assert_eq!(raw.len(), 3);
    }
}
