//! How one field occurrence is turned back into a Rust value: the
//! [`ProtoDecode`] trait and the merge helpers derived `ProtoRead` code calls
//! for `Option` and repeated fields, plus the packed-payload walker they share
//! with the lazy [`super::Repeated`] view.

use alloc::boxed::Box;

use super::encoding::Plain;
use super::read_error::ReadError;
use crate::decoder::{Field, FieldValue};
use crate::error::DecodeError;
use crate::varint::decode_varint;
use crate::wire::WireType;

/// A value that can be decoded from one field occurrence with encoding `E`,
/// borrowing from the input for `'a` where it can.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be decoded from a protobuf field with encoding `{E}`",
    label = "not a decodable protozero field type",
    note = "derive `ProtoRead` on your message or enum type, or use u32, u64, i32, i64, bool, f32, f64, &'a str, &'a [u8], String or Vec<u8>",
    note = "a oneof enum is used as `#[proto(oneof)] field: Option<E>`, without a tag"
)]
pub trait ProtoDecode<'a, E = Plain>: Sized {
    /// Wire type of one (unpacked) value.
    const WIRE_TYPE: WireType;

    /// Whether a repeated field of this type may arrive packed (numbers,
    /// `bool`, enums).
    const PACKABLE: bool = false;

    /// The value an absent field has.
    fn default_value() -> Self;

    /// Decodes one occurrence. `Ok(None)` means "treat as an unknown field"
    /// (an enum number the Rust enum has no variant for). `depth` is the
    /// nesting depth of the message that holds the field.
    fn decode_value(field: &Field<'a>, depth: u32) -> Result<Option<Self>, ReadError>;

    /// Applies another occurrence to an existing value: scalars are replaced
    /// (last one wins), messages merge.
    #[inline]
    fn merge_value(&mut self, field: &Field<'a>, depth: u32) -> Result<(), ReadError> {
        if let Some(v) = Self::decode_value(field, depth)? {
            *self = v;
        }
        Ok(())
    }

    /// Converts one element of a packed payload (see
    /// [`super::ProtoPacked::to_packed_raw`]); `None` for unknown enum numbers
    /// and for types that are not [`ProtoDecode::PACKABLE`].
    #[inline]
    fn from_packed_raw(_raw: u64) -> Option<Self> {
        None
    }
}

impl<'a, E, T: ProtoDecode<'a, E>> ProtoDecode<'a, E> for Box<T> {
    const WIRE_TYPE: WireType = T::WIRE_TYPE;
    const PACKABLE: bool = T::PACKABLE;

    fn default_value() -> Self {
        Box::new(T::default_value())
    }

    fn decode_value(field: &Field<'a>, depth: u32) -> Result<Option<Self>, ReadError> {
        Ok(T::decode_value(field, depth)?.map(Box::new))
    }

    fn merge_value(&mut self, field: &Field<'a>, depth: u32) -> Result<(), ReadError> {
        T::merge_value(self, field, depth)
    }

    fn from_packed_raw(raw: u64) -> Option<Self> {
        T::from_packed_raw(raw).map(Box::new)
    }
}

/// Applies an occurrence to an `Option` field: the first occurrence sets it,
/// later ones merge into it.
#[inline]
pub fn merge_option<'a, E, T>(
    slot: &mut Option<T>,
    field: &Field<'a>,
    depth: u32,
) -> Result<(), ReadError>
where
    T: ProtoDecode<'a, E>,
{
    match slot {
        Some(v) => v.merge_value(field, depth),
        None => {
            *slot = T::decode_value(field, depth)?;
            Ok(())
        }
    }
}

/// Appends an occurrence of a repeated field to `out`: a packed payload
/// appends all its elements, any other occurrence appends one value.
#[inline]
pub fn merge_repeated<'a, E, T, C>(
    out: &mut C,
    field: &Field<'a>,
    depth: u32,
) -> Result<(), ReadError>
where
    T: ProtoDecode<'a, E>,
    C: Extend<T>,
{
    if let Some(payload) = packed_payload::<E, T>(field) {
        let mut elems = PackedRaw::new(payload, T::WIRE_TYPE)?;
        for raw in &mut elems {
            out.extend(T::from_packed_raw(raw?));
        }
        return Ok(());
    }
    out.extend(T::decode_value(field, depth)?);
    Ok(())
}

/// The payload of `field` when it is a packed occurrence of a packable `T`.
#[inline]
fn packed_payload<'a, E, T: ProtoDecode<'a, E>>(field: &Field<'a>) -> Option<&'a [u8]> {
    match field.value {
        FieldValue::Bytes(b) if T::PACKABLE => Some(b),
        _ => None,
    }
}

/// Checks that an occurrence of a repeated field of `T` has a wire type `T`
/// accepts (its own, or length-delimited if packable).
pub(super) fn check_repeated_wire_type<'a, E, T: ProtoDecode<'a, E>>(
    field: &Field<'a>,
) -> Result<(), DecodeError> {
    let found = field.wire_type();
    if found == T::WIRE_TYPE || (T::PACKABLE && found == WireType::LengthDelimited) {
        Ok(())
    } else {
        Err(DecodeError::WrongWireType {
            id: field.id,
            expected: T::WIRE_TYPE as u8,
            found: found as u8,
        })
    }
}

/// Raw elements of a packed payload (varints, or little-endian 4/8-byte
/// values widened to `u64`). Yields one error and stops on malformed input.
#[derive(Debug, Clone)]
pub(super) struct PackedRaw<'a> {
    buf: &'a [u8],
    wire: WireType,
}

impl<'a> PackedRaw<'a> {
    /// Walks `payload` as elements of wire type `wire`; fixed-width payloads
    /// must be a whole number of elements.
    pub(super) fn new(payload: &'a [u8], wire: WireType) -> Result<Self, DecodeError> {
        let elem = match wire {
            WireType::Fixed32 => 4,
            WireType::Fixed64 => 8,
            _ => 1,
        };
        if payload.len() % elem != 0 {
            return Err(DecodeError::PackedLength {
                len: payload.len(),
                elem,
            });
        }
        Ok(PackedRaw { buf: payload, wire })
    }

    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.buf.split_first_chunk::<N>()?;
        self.buf = rest;
        Some(*head)
    }
}

impl Iterator for PackedRaw<'_> {
    type Item = Result<u64, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() {
            return None;
        }
        match self.wire {
            WireType::Fixed32 => self
                .take::<4>()
                .map(|b| Ok(u64::from(u32::from_le_bytes(b)))),
            WireType::Fixed64 => self.take::<8>().map(|b| Ok(u64::from_le_bytes(b))),
            _ => match decode_varint(self.buf) {
                Ok((v, n)) => {
                    self.buf = self.buf.get(n..).unwrap_or_default();
                    Some(Ok(v))
                }
                Err(e) => {
                    self.buf = &[];
                    Some(Err(e))
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn packed_raw_varints_and_errors() {
        let got: Vec<_> = PackedRaw::new(&[1, 0x96, 0x01], WireType::Varint)
            .unwrap()
            .collect();
        assert_eq!(got, [Ok(1), Ok(150)]);
        let got: Vec<_> = PackedRaw::new(&[1, 0x96], WireType::Varint)
            .unwrap()
            .collect();
        assert_eq!(got, [Ok(1), Err(DecodeError::TruncatedVarint)]);
    }

    #[test]
    fn packed_raw_fixed_lengths() {
        let got: Vec<_> = PackedRaw::new(&[1, 0, 0, 0, 2, 0, 0, 0], WireType::Fixed32)
            .unwrap()
            .collect();
        assert_eq!(got, [Ok(1), Ok(2)]);
        assert_eq!(
            PackedRaw::new(&[1, 0, 0], WireType::Fixed32).err(),
            Some(DecodeError::PackedLength { len: 3, elem: 4 })
        );
    }
}
