//! Strict reading: what the `try_` paths of generated code refuse where the
//! lenient ones read on.
//!
//! A generated decoder's `new` and a field enum's `read` never fail: a
//! declared field with a wire type its type cannot have reads as absent (or
//! as `Other`), a string that is not UTF-8 as `None`. prost refuses the whole
//! message in both cases, and so do the strict paths: `FooDecoder::try_new`,
//! `FooField::try_read` and [`crate::MessageDecoder::try_decode`] check every
//! occurrence of every declared field of the message they read against what
//! [`check`] is told here to expect, and report the first that does not fit
//! as a [`DecodeError`] (`WrongWireType` or `InvalidUtf8`). Undeclared fields
//! are unknown fields, accepted as prost accepts them; nested messages are
//! checked when they are read strictly in turn (nothing is read before it
//! is asked for).

use crate::codegen_support::PackedLayout;
use crate::decoder::{Field, FieldValue};
use crate::error::DecodeError;
use crate::wire::WireType;

/// What a declared field's occurrences must be (generated code names one
/// per field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A varint (integers, `bool`, enums).
    Varint,
    /// Four bytes (`fixed32`, `sfixed32`, `float`).
    Fixed32,
    /// Eight bytes (`fixed64`, `sfixed64`, `double`).
    Fixed64,
    /// Length-delimited bytes (`bytes`, a nested message).
    Bytes,
    /// Length-delimited bytes that are UTF-8 (`string`).
    Utf8,
    /// A group (a delimited message field).
    Group,
    /// An element of a repeated scalar laid out as given, or a packed run of
    /// them (protobuf lets a parser meet either).
    Packable(PackedLayout),
}

impl Expect {
    fn wire_type(self) -> WireType {
        match self {
            Expect::Varint => WireType::Varint,
            Expect::Fixed32 => WireType::Fixed32,
            Expect::Fixed64 => WireType::Fixed64,
            Expect::Bytes | Expect::Utf8 => WireType::LengthDelimited,
            Expect::Group => WireType::StartGroup,
            Expect::Packable(layout) => layout.wire_type(),
        }
    }
}

/// `Ok` when occurrence `f` of a declared field is what `expect` says; else
/// `WrongWireType` for another wire type, `InvalidUtf8` for a string that is
/// not UTF-8.
#[inline]
pub fn check(f: &Field<'_>, expect: Expect) -> Result<(), DecodeError> {
    let fits = match (expect, f.value) {
        (Expect::Varint, FieldValue::Varint(_))
        | (Expect::Fixed32, FieldValue::Fixed32(_))
        | (Expect::Fixed64, FieldValue::Fixed64(_))
        | (Expect::Bytes, FieldValue::Bytes(_))
        | (Expect::Group, FieldValue::Group(_))
        | (Expect::Packable(_), FieldValue::Bytes(_))
        | (Expect::Packable(PackedLayout::Varint), FieldValue::Varint(_))
        | (Expect::Packable(PackedLayout::Fixed32), FieldValue::Fixed32(_))
        | (Expect::Packable(PackedLayout::Fixed64), FieldValue::Fixed64(_)) => true,
        (Expect::Utf8, FieldValue::Bytes(b)) => {
            return utf8(f.id, b).map(|_| ());
        }
        _ => false,
    };
    if fits {
        Ok(())
    } else {
        Err(wrong_wire_type(f, expect))
    }
}

/// [`check`] as a decoder's pass uses it: whether `f` fits `expect`; when
/// it does not, the error is put in `error`.
#[inline]
pub fn fits(f: &Field<'_>, expect: Expect, error: &mut Option<DecodeError>) -> bool {
    match check(f, expect) {
        Ok(()) => true,
        Err(e) => {
            *error = Some(e);
            false
        }
    }
}

#[cold]
fn wrong_wire_type(f: &Field<'_>, expect: Expect) -> DecodeError {
    DecodeError::WrongWireType {
        id: f.id,
        expected: expect.wire_type() as u8,
        found: f.wire_type() as u8,
    }
}

/// The string in `bytes`, field `id`'s value, or `InvalidUtf8` for it.
#[inline]
pub fn utf8(id: u32, bytes: &[u8]) -> Result<&str, DecodeError> {
    core::str::from_utf8(bytes).map_err(|_| DecodeError::InvalidUtf8 { id })
}

/// A string field's value as a `try_` accessor returns it: `Ok(None)` when
/// absent, `InvalidUtf8` when present and not UTF-8.
#[inline]
pub fn try_str(id: u32, raw: Option<&[u8]>) -> Result<Option<&str>, DecodeError> {
    raw.map(|b| utf8(id, b)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(id: u32, value: FieldValue<'_>) -> Field<'_> {
        Field { id, value }
    }

    #[test]
    fn wire_types_and_utf8() {
        assert_eq!(
            check(&field(1, FieldValue::Varint(3)), Expect::Varint),
            Ok(())
        );
        assert_eq!(
            check(&field(1, FieldValue::Fixed32(3)), Expect::Varint),
            Err(DecodeError::WrongWireType {
                id: 1,
                expected: 0,
                found: 5
            })
        );
        assert_eq!(
            check(&field(2, FieldValue::Bytes(b"ok")), Expect::Utf8),
            Ok(())
        );
        assert_eq!(
            check(&field(2, FieldValue::Bytes(&[0xff])), Expect::Utf8),
            Err(DecodeError::InvalidUtf8 { id: 2 })
        );
        assert_eq!(
            check(&field(2, FieldValue::Bytes(&[0xff])), Expect::Bytes),
            Ok(())
        );
        let packable = Expect::Packable(PackedLayout::Fixed64);
        assert_eq!(check(&field(3, FieldValue::Fixed64(1)), packable), Ok(()));
        assert_eq!(check(&field(3, FieldValue::Bytes(&[])), packable), Ok(()));
        assert!(check(&field(3, FieldValue::Varint(1)), packable).is_err());
        assert!(check(&field(4, FieldValue::Bytes(&[])), Expect::Group).is_err());
        let mut error = None;
        assert!(fits(
            &field(6, FieldValue::Varint(1)),
            Expect::Varint,
            &mut error
        ));
        assert_eq!(error, None);
        assert!(!fits(
            &field(6, FieldValue::Varint(1)),
            Expect::Bytes,
            &mut error
        ));
        assert!(matches!(
            error,
            Some(DecodeError::WrongWireType { id: 6, .. })
        ));
        assert_eq!(try_str(5, None), Ok(None));
        assert_eq!(try_str(5, Some(b"x")), Ok(Some("x")));
        assert_eq!(
            try_str(5, Some(&[0xc0])),
            Err(DecodeError::InvalidUtf8 { id: 5 })
        );
    }
}
