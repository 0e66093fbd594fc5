//! [`ProtoEncode`] / [`ProtoPacked`] / [`ProtoDecode`] for the types protobuf
//! has built in: the numeric scalars under each encoding marker, `bool`,
//! floats, strings and bytes (borrowed and owned).

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::encoding::{Fixed, Plain, Sint};
use super::field_decode::ProtoDecode;
use super::field_encode::{ProtoEncode, ProtoPacked};
use super::read_error::ReadError;
use crate::decoder::Field;
use crate::message::Message;
use crate::varint::{unzigzag32, unzigzag64, zigzag32, zigzag64};
use crate::wire::WireType;

/// Reads the raw value of a numeric field of wire type `wire` (fixed-width
/// values widened to `u64`).
#[inline]
fn raw_of(field: &Field<'_>, wire: WireType) -> Result<u64, ReadError> {
    Ok(match wire {
        WireType::Fixed32 => u64::from(field.as_fixed32()?),
        WireType::Fixed64 => field.as_fixed64()?,
        _ => field.as_varint()?,
    })
}

macro_rules! scalar {
    ($ty:ty, $marker:ty, $wire:ident, $append:ident,
     to_raw: |$v:ident| $to_raw:expr,
     from_raw: |$r:ident| $from_raw:expr,
     is_default: |$d:ident| $is_default:expr) => {
        impl ProtoEncode<$marker> for $ty {
            const WIRE_TYPE: WireType = WireType::$wire;

            #[inline(always)]
            fn is_default(&self) -> bool {
                let $d = *self;
                $is_default
            }

            #[inline(always)]
            fn encode_field(&self, msg: &mut Message<'_>, id: u32) {
                msg.$append(id, *self);
            }
        }

        impl ProtoPacked<$marker> for $ty {
            #[inline(always)]
            fn to_packed_raw(&self) -> u64 {
                let $v = *self;
                $to_raw
            }
        }

        impl<'a> ProtoDecode<'a, $marker> for $ty {
            const WIRE_TYPE: WireType = WireType::$wire;
            const PACKABLE: bool = true;

            #[inline]
            fn default_value() -> Self {
                <$ty>::default()
            }

            #[inline]
            fn decode_value(field: &Field<'a>, _depth: u32) -> Result<Option<Self>, ReadError> {
                let $r = raw_of(field, WireType::$wire)?;
                Ok(Some($from_raw))
            }

            #[inline(always)]
            fn from_packed_raw($r: u64) -> Option<Self> {
                Some($from_raw)
            }
        }
    };
}

// Plain varints. int32 sign-extends negatives to 64 bits; 32-bit targets
// truncate on decode, as protobuf specifies.
scalar!(u32, Plain, Varint, append_uint32,
    to_raw: |v| u64::from(v), from_raw: |r| r as u32, is_default: |d| d == 0);
scalar!(u64, Plain, Varint, append_uint64,
    to_raw: |v| v, from_raw: |r| r, is_default: |d| d == 0);
scalar!(i32, Plain, Varint, append_int32,
    to_raw: |v| i64::from(v) as u64, from_raw: |r| r as i32, is_default: |d| d == 0);
scalar!(i64, Plain, Varint, append_int64,
    to_raw: |v| v as u64, from_raw: |r| r as i64, is_default: |d| d == 0);
scalar!(bool, Plain, Varint, append_bool,
    to_raw: |v| u64::from(v), from_raw: |r| r != 0, is_default: |d| !d);
// Floats: only +0.0 is the default; -0.0 is written (its bits are not zero).
scalar!(f32, Plain, Fixed32, append_float,
    to_raw: |v| u64::from(v.to_bits()), from_raw: |r| f32::from_bits(r as u32),
    is_default: |d| d.to_bits() == 0);
scalar!(f64, Plain, Fixed64, append_double,
    to_raw: |v| v.to_bits(), from_raw: |r| f64::from_bits(r),
    is_default: |d| d.to_bits() == 0);

// Zigzag.
scalar!(i32, Sint, Varint, append_sint32,
    to_raw: |v| u64::from(zigzag32(v)), from_raw: |r| unzigzag32(r as u32),
    is_default: |d| d == 0);
scalar!(i64, Sint, Varint, append_sint64,
    to_raw: |v| zigzag64(v), from_raw: |r| unzigzag64(r), is_default: |d| d == 0);

// Fixed width.
scalar!(u32, Fixed, Fixed32, append_fixed32,
    to_raw: |v| u64::from(v), from_raw: |r| r as u32, is_default: |d| d == 0);
scalar!(u64, Fixed, Fixed64, append_fixed64,
    to_raw: |v| v, from_raw: |r| r, is_default: |d| d == 0);
scalar!(i32, Fixed, Fixed32, append_sfixed32,
    to_raw: |v| u64::from(v as u32), from_raw: |r| r as u32 as i32, is_default: |d| d == 0);
scalar!(i64, Fixed, Fixed64, append_sfixed64,
    to_raw: |v| v as u64, from_raw: |r| r as i64, is_default: |d| d == 0);

macro_rules! length_delimited_encode {
    ($ty:ty, $append:ident, |$s:ident| $arg:expr) => {
        impl ProtoEncode<Plain> for $ty {
            const WIRE_TYPE: WireType = WireType::LengthDelimited;

            #[inline(always)]
            fn is_default(&self) -> bool {
                self.is_empty()
            }

            #[inline(always)]
            fn encode_field(&self, msg: &mut Message<'_>, id: u32) {
                let $s = self;
                msg.$append(id, $arg);
            }
        }
    };
}

length_delimited_encode!(str, append_string, |s| s);
length_delimited_encode!(String, append_string, |s| s.as_str());
length_delimited_encode!([u8], append_bytes, |s| s);
length_delimited_encode!(Vec<u8>, append_bytes, |s| s.as_slice());

impl<const N: usize> ProtoEncode<Plain> for [u8; N] {
    const WIRE_TYPE: WireType = WireType::LengthDelimited;

    #[inline(always)]
    fn is_default(&self) -> bool {
        N == 0
    }

    #[inline(always)]
    fn encode_field(&self, msg: &mut Message<'_>, id: u32) {
        msg.append_bytes(id, self);
    }
}

macro_rules! length_delimited_decode {
    ($ty:ty, |$f:ident| $get:expr) => {
        impl<'a> ProtoDecode<'a, Plain> for $ty {
            const WIRE_TYPE: WireType = WireType::LengthDelimited;

            #[inline]
            fn default_value() -> Self {
                Default::default()
            }

            #[inline]
            fn decode_value($f: &Field<'a>, _depth: u32) -> Result<Option<Self>, ReadError> {
                Ok(Some($get))
            }
        }
    };
}

length_delimited_decode!(&'a str, |f| f.as_str()?);
length_delimited_decode!(&'a [u8], |f| f.as_bytes()?);
length_delimited_decode!(String, |f| String::from(f.as_str()?));
length_delimited_decode!(Vec<u8>, |f| Vec::from(f.as_bytes()?));
length_delimited_decode!(Cow<'a, str>, |f| Cow::Borrowed(f.as_str()?));
length_delimited_decode!(Cow<'a, [u8]>, |f| Cow::Borrowed(f.as_bytes()?));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HeapWriter;
    use crate::decoder::Decoder;

    fn one_field<E, T: ProtoEncode<E> + ?Sized>(v: &T) -> Vec<u8> {
        let mut w = HeapWriter::new();
        v.encode_field(&mut w.root(), 1);
        w.finish().unwrap()
    }

    fn back<'a, E, T: ProtoDecode<'a, E>>(bytes: &'a [u8]) -> T {
        let f = Decoder::new(bytes).next().unwrap().unwrap();
        T::decode_value(&f, 0).unwrap().unwrap()
    }

    #[test]
    fn encodings_match_protobuf() {
        assert_eq!(one_field::<Plain, _>(&-1i32).len(), 11);
        assert_eq!(one_field::<Sint, _>(&-1i32), [0x08, 0x01]);
        assert_eq!(
            one_field::<Fixed, _>(&-2i32),
            [0x0D, 0xFE, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(one_field::<Plain, _>("hi"), [0x0A, 2, b'h', b'i']);
        assert_eq!(
            back::<Sint, i64>(&one_field::<Sint, _>(&i64::MIN)),
            i64::MIN
        );
        assert_eq!(
            back::<Plain, i32>(&one_field::<Plain, _>(&i32::MIN)),
            i32::MIN
        );
        assert_eq!(
            back::<Fixed, u64>(&one_field::<Fixed, _>(&u64::MAX)),
            u64::MAX
        );
        assert_eq!(back::<Plain, &str>(&[0x0A, 2, b'h', b'i']), "hi");
    }

    #[test]
    fn defaults() {
        assert!(ProtoEncode::<Plain>::is_default(&0.0f64));
        assert!(!ProtoEncode::<Plain>::is_default(&-0.0f64));
        assert!(ProtoEncode::<Plain>::is_default(""));
        assert!(!ProtoEncode::<Plain>::is_default(&true));
    }

    #[test]
    fn wrong_wire_type_is_an_error() {
        let f = Decoder::new(&[0x0A, 0]).next().unwrap().unwrap();
        assert!(<u32 as ProtoDecode<'_, Plain>>::decode_value(&f, 0).is_err());
        let f = Decoder::new(&[0x08, 0xFF, 0x01]).next().unwrap().unwrap();
        assert!(<&str as ProtoDecode<'_, Plain>>::decode_value(&f, 0).is_err());
    }
}
