//! How one field value is appended to a [`Message`]: the [`ProtoEncode`] trait
//! that scalars, strings, bytes, derived enums and derived messages implement,
//! [`ProtoPacked`] for the element types a packed field may hold, and the
//! helpers derived code calls for repeated fields. Everything writes in place;
//! nothing here allocates.

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;

use super::encoding::Plain;
use crate::message::Message;
use crate::wire::WireType;

/// A value that can be written as one protobuf field with encoding `E`
/// (a marker from [`super::encoding`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written as a protobuf field with encoding `{E}`",
    label = "not a protozero field type for this encoding",
    note = "derive `ProtoWrite` on your message or enum type, or use u32, u64, i32, i64, bool, f32, f64, a string or bytes",
    note = "`#[proto(sint)]` applies to i32/i64 only; `#[proto(fixed)]` to u32/u64/i32/i64",
    note = "a oneof enum is used as `#[proto(oneof)] field: Option<E>`, without a tag"
)]
pub trait ProtoEncode<E = Plain> {
    /// Wire type of one (unpacked) value.
    const WIRE_TYPE: WireType;

    /// Whether a plain (non-`Option`) field holding this value is omitted,
    /// as proto3 does for zero, `false`, empty and the first enum value.
    /// Messages are never omitted.
    fn is_default(&self) -> bool;

    /// Appends `self` as field `id` of `msg`.
    fn encode_field(&self, msg: &mut Message<'_>, id: u32);
}

/// A numeric, `bool` or enum value that a packed repeated field can hold.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an element of a packed field with encoding `{E}`",
    label = "only numbers, bool and enums can be packed",
    note = "remove `packed`, or use a numeric, bool or derived enum element type"
)]
pub trait ProtoPacked<E = Plain>: ProtoEncode<E> {
    /// The value as it goes into the packed payload: the varint to encode for
    /// [`WireType::Varint`], or the little-endian bits (low 32 for
    /// [`WireType::Fixed32`]) for fixed-width types.
    fn to_packed_raw(&self) -> u64;
}

impl<E, T: ProtoEncode<E> + ?Sized> ProtoEncode<E> for &T {
    const WIRE_TYPE: WireType = T::WIRE_TYPE;

    #[inline]
    fn is_default(&self) -> bool {
        T::is_default(self)
    }

    #[inline]
    fn encode_field(&self, msg: &mut Message<'_>, id: u32) {
        T::encode_field(self, msg, id)
    }
}

impl<E, T: ProtoPacked<E> + ?Sized> ProtoPacked<E> for &T {
    #[inline]
    fn to_packed_raw(&self) -> u64 {
        T::to_packed_raw(self)
    }
}

impl<E, T: ProtoEncode<E> + ?Sized> ProtoEncode<E> for Box<T> {
    const WIRE_TYPE: WireType = T::WIRE_TYPE;

    #[inline]
    fn is_default(&self) -> bool {
        T::is_default(self)
    }

    #[inline]
    fn encode_field(&self, msg: &mut Message<'_>, id: u32) {
        T::encode_field(self, msg, id)
    }
}

impl<E, T: ProtoEncode<E> + ToOwned + ?Sized> ProtoEncode<E> for Cow<'_, T> {
    const WIRE_TYPE: WireType = T::WIRE_TYPE;

    #[inline]
    fn is_default(&self) -> bool {
        T::is_default(self)
    }

    #[inline]
    fn encode_field(&self, msg: &mut Message<'_>, id: u32) {
        T::encode_field(self, msg, id)
    }
}

/// Writes every element of `values` as its own occurrence of field `id`
/// (an unpacked repeated field; also how strings, bytes and messages repeat).
#[inline]
pub fn write_repeated<'x, E, T, I>(msg: &mut Message<'_>, id: u32, values: I)
where
    T: ProtoEncode<E> + ?Sized + 'x,
    I: IntoIterator<Item = &'x T>,
{
    for v in values {
        v.encode_field(msg, id);
    }
}

/// Writes `values` as one packed field `id`; an empty sequence writes nothing.
///
/// Fixed-width elements are counted first (the iterator is cloned) so the
/// length is exact; varints go through a backfilled length slot like a nested
/// message.
pub fn write_packed<'x, E, T, I>(msg: &mut Message<'_>, id: u32, values: I)
where
    T: ProtoPacked<E> + ?Sized + 'x,
    I: IntoIterator<Item = &'x T>,
    I::IntoIter: Clone,
{
    let iter = values.into_iter();
    if iter.clone().next().is_none() {
        return;
    }
    match T::WIRE_TYPE {
        WireType::Fixed32 => {
            msg.append_length_prefix(id, iter.clone().count() * 4);
            for v in iter {
                msg.append_raw_bytes(&(v.to_packed_raw() as u32).to_le_bytes());
            }
        }
        WireType::Fixed64 => {
            msg.append_length_prefix(id, iter.clone().count() * 8);
            for v in iter {
                msg.append_raw_bytes(&v.to_packed_raw().to_le_bytes());
            }
        }
        _ => msg.append_packed_varint(id, iter.map(|v| v.to_packed_raw())),
    }
}
