//! The scalar debug annotation values a small packet carries (see
//! `crate::producer::small_packet`): how many bytes each takes at most, and
//! its `DebugAnnotation` value field written as the generated writer
//! writes it, so that a known point's begin with simple annotations is one
//! small packet, byte for byte the general path's.

use protozero::varint::{MAX_VARINT_LEN, varint_len};

use super::debug_value::DebugValue;
use crate::producer::small_packet::SmallPacket;

/// Longest string value a small packet carries (longer ones take the
/// general path).
pub(super) const MAX_SMALL_STRING: usize = 64;

/// The most bytes `v`'s field takes in a `DebugAnnotation` (tag included)
/// if it is a scalar a small packet writes; `None` for the others.
#[inline]
pub(super) fn small_value_len(v: &DebugValue<'_>) -> Option<usize> {
    match v {
        DebugValue::Int(_) | DebugValue::Uint(_) | DebugValue::Pointer(_) => {
            Some(1 + MAX_VARINT_LEN)
        }
        DebugValue::Bool(_) => Some(2),
        DebugValue::Double(_) => Some(9),
        DebugValue::Str(s) if s.len() <= MAX_SMALL_STRING => Some(2 + s.len()),
        _ => None,
    }
}

/// Exactly how many bytes `v`'s field takes in a `DebugAnnotation` (tag
/// included) if it is a scalar a small packet writes; `None` for the
/// others.
#[inline]
pub(super) fn small_value_size(v: &DebugValue<'_>) -> Option<usize> {
    match v {
        DebugValue::Int(x) => Some(1 + varint_len(*x as u64)),
        DebugValue::Uint(x) | DebugValue::Pointer(x) => Some(1 + varint_len(*x)),
        DebugValue::Bool(_) => Some(2),
        DebugValue::Double(_) => Some(9),
        // A 1-byte length: MAX_SMALL_STRING is below 128.
        DebugValue::Str(s) if s.len() <= MAX_SMALL_STRING => Some(2 + s.len()),
        _ => None,
    }
}

/// Writes the value field of a scalar `v` ([`small_value_len`] is `Some`)
/// as the generated `DebugAnnotation` writer does.
#[inline(always)]
pub(super) fn put_small_value(p: &mut SmallPacket<'_>, v: &DebugValue<'_>) {
    use zerotrace_protos::protos::DebugAnnotation as D;
    const fn tag(id: u32, wire: u32) -> u8 {
        (id << 3 | wire) as u8
    }
    match *v {
        DebugValue::Int(x) => {
            p.put([tag(D::FIELD_INT_VALUE, 0)]);
            p.put_varint(x as u64);
        }
        DebugValue::Uint(x) => {
            p.put([tag(D::FIELD_UINT_VALUE, 0)]);
            p.put_varint(x);
        }
        DebugValue::Pointer(x) => {
            p.put([tag(D::FIELD_POINTER_VALUE, 0)]);
            p.put_varint(x);
        }
        DebugValue::Bool(x) => p.put([tag(D::FIELD_BOOL_VALUE, 0), u8::from(x)]),
        DebugValue::Double(x) => {
            p.put([tag(D::FIELD_DOUBLE_VALUE, 1)]);
            p.put(x.to_bits().to_le_bytes());
        }
        DebugValue::Str(s) => {
            p.put([tag(D::FIELD_STRING_VALUE, 2)]);
            p.put_varint(s.len() as u64);
            p.put_slice(s.as_bytes());
        }
        // Not small: the caller checked.
        DebugValue::Dict(_) | DebugValue::Array(_) => {}
    }
}
