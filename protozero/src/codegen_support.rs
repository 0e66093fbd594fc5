//! Small runtime vocabulary that generated code (from `protozero-codegen`) is
//! written against, so the generated files depend on nothing but this crate.
//!
//! * [`ProtoEnum`]: what generated Rust enums implement. A decoder may meet
//!   a number the schema does not list; generated decoders read such a
//!   number as `None` from the typed accessor and keep it for the `_raw` one.
//!   [`EnumValue`] (a known variant or the bare number) is for code that
//!   wants both in one value.
//! * [`MessageWriter`] / [`MessageDecoder`]: what every generated writer and
//!   decoder can do, for code that is generic over message types.
//! * [`kinds`]: one marker type per protobuf scalar type, telling the typed
//!   repeated iterators how a wire value becomes a Rust value (`int32` and
//!   `sint32` are both `i32` in Rust but differ on the wire).

use crate::decoder::FieldValue;
use crate::error::DecodeError;
use crate::message::Message;
use crate::wire::WireType;

/// A generated protobuf enum: a closed Rust enum over the values the schema names.
pub trait ProtoEnum: Copy + Sized + 'static {
    /// The variant with this number, if the schema names one.
    fn from_i32(value: i32) -> Option<Self>;
    /// The number on the wire.
    fn as_i32(self) -> i32;
    /// The value's name as written in the `.proto` file.
    fn as_str_name(self) -> &'static str;
}

/// An enum value read off the wire: a known variant, or the number itself
/// when the schema (at least the version compiled in) does not name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EnumValue<E> {
    /// A value the schema names.
    Known(E),
    /// A number the schema does not name, kept so it can be re-emitted.
    Unknown(i32),
}

impl<E: ProtoEnum> EnumValue<E> {
    /// Classifies a raw number.
    #[inline]
    pub fn from_i32(value: i32) -> Self {
        match E::from_i32(value) {
            Some(e) => EnumValue::Known(e),
            None => EnumValue::Unknown(value),
        }
    }

    /// The number on the wire, known or not.
    #[inline]
    pub fn raw(self) -> i32 {
        match self {
            EnumValue::Known(e) => e.as_i32(),
            EnumValue::Unknown(v) => v,
        }
    }

    /// The known variant, or `None` for a number the schema does not name.
    #[inline]
    pub fn known(self) -> Option<E> {
        match self {
            EnumValue::Known(e) => Some(e),
            EnumValue::Unknown(_) => None,
        }
    }
}

impl<E: ProtoEnum> From<E> for EnumValue<E> {
    fn from(e: E) -> Self {
        EnumValue::Known(e)
    }
}

/// A generated writer: a typed face over one open [`Message`].
pub trait MessageWriter<'w>: Sized {
    /// Fully qualified protobuf name, e.g. `perfetto.protos.TracePacket`.
    const FULL_NAME: &'static str;
    /// Wraps an open message (a root from a writer, or a nested message).
    fn from_message(msg: Message<'w>) -> Self;
    /// The underlying message, for fields the schema does not know.
    fn message(&mut self) -> &mut Message<'w>;
}

/// A generated decoder: a typed, zero-copy view over one message's bytes.
pub trait MessageDecoder<'a>: Sized {
    /// Fully qualified protobuf name, e.g. `perfetto.protos.TracePacket`.
    const FULL_NAME: &'static str;
    /// Parses `buf` (never fails; see [`MessageDecoder::decode_error`]).
    fn decode(buf: &'a [u8]) -> Self;
    /// Why parsing stopped before the end of the buffer, if it did.
    fn decode_error(&self) -> Option<DecodeError>;

    /// Parses `buf` strictly, as prost does: malformed bytes are an error
    /// rather than where reading stops, and generated decoders (whose
    /// `try_new` this is) also refuse a declared field of this message with
    /// a wire type its type cannot have or a string that is not UTF-8.
    /// Nested messages are checked when they are read in turn. The default
    /// refuses what [`MessageDecoder::decode_error`] reports.
    fn try_decode(buf: &'a [u8]) -> Result<Self, DecodeError> {
        let d = Self::decode(buf);
        match d.decode_error() {
            Some(e) => Err(e),
            None => Ok(d),
        }
    }
}

/// How a repeated scalar's elements are laid out inside a packed payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackedLayout {
    /// Back-to-back varints.
    Varint,
    /// 4-byte little-endian elements.
    Fixed32,
    /// 8-byte little-endian elements.
    Fixed64,
}

impl PackedLayout {
    /// The wire type an unpacked element of this layout carries.
    pub const fn wire_type(self) -> WireType {
        match self {
            PackedLayout::Varint => WireType::Varint,
            PackedLayout::Fixed32 => WireType::Fixed32,
            PackedLayout::Fixed64 => WireType::Fixed64,
        }
    }
}

/// A protobuf scalar type: how one wire value converts to its Rust value.
pub trait ScalarKind {
    /// The Rust type handed to callers.
    type Value: Copy;
    /// Element layout when the field is packed.
    const LAYOUT: PackedLayout;
    /// Converts a wire value; `None` when the wire type does not match.
    fn from_value(value: FieldValue<'_>) -> Option<Self::Value>;
}

/// Marker types, one per protobuf scalar type, implementing [`ScalarKind`].
pub mod kinds {
    use core::marker::PhantomData;

    use super::{EnumValue, PackedLayout, ProtoEnum, ScalarKind};
    use crate::decoder::FieldValue;
    use crate::varint::{unzigzag32, unzigzag64};

    macro_rules! scalar_kind {
        ($(#[$doc:meta])* $name:ident, $ty:ty, $layout:ident, |$v:ident| $conv:expr) => {
            $(#[$doc])*
            #[derive(Debug, Clone, Copy)]
            pub struct $name;

            impl ScalarKind for $name {
                type Value = $ty;
                const LAYOUT: PackedLayout = PackedLayout::$layout;
                #[inline]
                fn from_value(value: FieldValue<'_>) -> Option<$ty> {
                    match value {
                        FieldValue::$layout($v) => Some($conv),
                        _ => None,
                    }
                }
            }
        };
    }

    scalar_kind!(/// `int32` (varint, sign-extended).
        Int32, i32, Varint, |v| v as i32);
    scalar_kind!(/// `int64`.
        Int64, i64, Varint, |v| v as i64);
    scalar_kind!(/// `uint32` (upper bits truncated).
        Uint32, u32, Varint, |v| v as u32);
    scalar_kind!(/// `uint64`.
        Uint64, u64, Varint, |v| v);
    scalar_kind!(/// `sint32` (zigzag).
        Sint32, i32, Varint, |v| unzigzag32(v as u32));
    scalar_kind!(/// `sint64` (zigzag).
        Sint64, i64, Varint, |v| unzigzag64(v));
    scalar_kind!(/// `bool` (any non-zero varint is true).
        Bool, bool, Varint, |v| v != 0);
    scalar_kind!(/// `fixed32`.
        Fixed32, u32, Fixed32, |v| v);
    scalar_kind!(/// `sfixed32`.
        Sfixed32, i32, Fixed32, |v| v as i32);
    scalar_kind!(/// `float`.
        Float, f32, Fixed32, |v| f32::from_bits(v));
    scalar_kind!(/// `fixed64`.
        Fixed64, u64, Fixed64, |v| v);
    scalar_kind!(/// `sfixed64`.
        Sfixed64, i64, Fixed64, |v| v as i64);
    scalar_kind!(/// `double`.
        Double, f64, Fixed64, |v| f64::from_bits(v));

    /// A protobuf enum `E` (varint), as [`EnumValue`]s: unknown numbers are
    /// kept. (Generated decoders use [`RepeatedEnums`](crate::RepeatedEnums) and
    /// [`Int32`] instead.)
    #[derive(Debug, Clone, Copy)]
    pub struct Enum<E>(PhantomData<E>);

    impl<E: ProtoEnum> ScalarKind for Enum<E> {
        type Value = EnumValue<E>;
        const LAYOUT: PackedLayout = PackedLayout::Varint;
        #[inline]
        fn from_value(value: FieldValue<'_>) -> Option<EnumValue<E>> {
            match value {
                FieldValue::Varint(v) => Some(EnumValue::from_i32(v as i32)),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Color {
        Red = 1,
    }

    impl ProtoEnum for Color {
        fn from_i32(value: i32) -> Option<Self> {
            (value == 1).then_some(Color::Red)
        }
        fn as_i32(self) -> i32 {
            self as i32
        }
        fn as_str_name(self) -> &'static str {
            "RED"
        }
    }

    #[test]
    fn enum_value_keeps_unknown_numbers() {
        assert_eq!(
            EnumValue::<Color>::from_i32(1),
            EnumValue::Known(Color::Red)
        );
        let unknown = EnumValue::<Color>::from_i32(-7);
        assert_eq!(unknown, EnumValue::Unknown(-7));
        assert_eq!(unknown.raw(), -7);
        assert_eq!(unknown.known(), None);
        assert_eq!(EnumValue::from(Color::Red).raw(), 1);
    }

    #[test]
    fn scalar_kinds_convert_and_reject_wrong_wire_types() {
        use kinds::*;
        assert_eq!(Sint32::from_value(FieldValue::Varint(3)), Some(-2));
        assert_eq!(Int32::from_value(FieldValue::Varint(u64::MAX)), Some(-1));
        assert_eq!(
            Double::from_value(FieldValue::Fixed64(1.5f64.to_bits())),
            Some(1.5)
        );
        assert_eq!(Uint64::from_value(FieldValue::Fixed64(1)), None);
        assert_eq!(
            Enum::<Color>::from_value(FieldValue::Varint(9)),
            Some(EnumValue::Unknown(9))
        );
    }
}
