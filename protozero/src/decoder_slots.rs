//! What a generated decoder keeps from its one pass over a message.
//!
//! A generated `FooDecoder::new` reads the message's fields once, front to
//! back, and hands each to a generated `match` on its number: a singular
//! field's value goes to a slot of its own (an `Option` of the raw wire value,
//! the last occurrence winning), a repeated field records where its first and
//! last occurrences are ([`Occurrences`]), and the members of a oneof share
//! one [`OneofSlot`] (the member seen last wins, as protobuf's parsers have
//! it). Nothing is allocated and only the fields the schema declares take
//! room, so making a decoder costs the scan and a few stores, and an accessor
//! is a load and a conversion. The functions here pick the raw value of the
//! wire type a slot expects; any other wire type reads as absent.

use crate::decoder::{Field, FieldValue, parse_at};
use crate::repeated::RepeatedFields;

/// The raw varint of a wire-type-0 value.
#[inline(always)]
pub fn varint(v: FieldValue<'_>) -> Option<u64> {
    match v {
        FieldValue::Varint(x) => Some(x),
        _ => None,
    }
}

/// The raw bits of a wire-type-5 value.
#[inline(always)]
pub fn fixed32(v: FieldValue<'_>) -> Option<u32> {
    match v {
        FieldValue::Fixed32(x) => Some(x),
        _ => None,
    }
}

/// The raw bits of a wire-type-1 value.
#[inline(always)]
pub fn fixed64(v: FieldValue<'_>) -> Option<u64> {
    match v {
        FieldValue::Fixed64(x) => Some(x),
        _ => None,
    }
}

/// The payload of a length-delimited value.
#[inline(always)]
pub fn bytes(v: FieldValue<'_>) -> Option<&[u8]> {
    match v {
        FieldValue::Bytes(b) => Some(b),
        _ => None,
    }
}

/// The contents of a group.
#[inline(always)]
pub fn group(v: FieldValue<'_>) -> Option<&[u8]> {
    match v {
        FieldValue::Group(b) => Some(b),
        _ => None,
    }
}

/// Where the occurrences of one repeated field lie in a message: from the
/// first one's tag to the end of the last one. Iterating them scans only
/// that range.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Occurrences {
    first: usize,
    end: usize,
}

impl Occurrences {
    /// No occurrence.
    pub const NONE: Occurrences = Occurrences { first: 0, end: 0 };

    /// Records an occurrence spanning `start..end` (its tag to its end).
    #[inline(always)]
    pub fn add(&mut self, start: usize, end: usize) {
        if self.end == 0 {
            self.first = start;
        }
        self.end = end;
    }

    /// Whether the field occurs at all.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.end == 0
    }

    /// The occurrences of field `id` in `buf` (the message these offsets
    /// were taken from).
    #[inline]
    pub fn fields<'a>(&self, buf: &'a [u8], id: u32) -> RepeatedFields<'a> {
        if self.end == 0 {
            return RepeatedFields::empty();
        }
        RepeatedFields::new(buf.get(..self.end).unwrap_or(&[]), self.first, id)
    }

    /// [`Occurrences::fields`] for a message whose fields may be groups.
    #[inline]
    pub fn fields_with_groups<'a>(&self, buf: &'a [u8], id: u32) -> RepeatedFields<'a> {
        self.fields(buf, id).accept_groups()
    }
}

/// The member of a oneof seen last: its tag (number and wire type, 0 when
/// none was seen) and raw value, a payload or a number as the wire type
/// has it. Keeping the whole tag lets a typed accessor ask "is member N set
/// with the wire type its type has" with one compare ([`OneofSlot::bytes_if`]
/// and its siblings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OneofSlot<'a> {
    tag: u32,
    bytes: &'a [u8],
    bits: u64,
}

impl<'a> OneofSlot<'a> {
    /// No member seen.
    pub const NONE: OneofSlot<'static> = OneofSlot {
        tag: 0,
        bytes: &[],
        bits: 0,
    };

    /// The slot after member `f` was read.
    #[inline(always)]
    pub fn new(f: Field<'a>) -> Self {
        Self::of(f.id, f.value)
    }

    /// The slot after member `id` was read with `value` (the fast path's
    /// [`OneofSlot::new`]). `id` is a valid field number (at most 2^29 − 1),
    /// so the tag fits in 32 bits.
    #[inline(always)]
    pub fn of(id: u32, value: FieldValue<'a>) -> Self {
        let (wire_type, bytes, bits) = match value {
            FieldValue::Varint(v) => (0, &[][..], v),
            FieldValue::Fixed64(v) => (1, &[][..], v),
            FieldValue::Bytes(b) => (2, b, 0),
            FieldValue::Group(b) => (3, b, 0),
            FieldValue::Fixed32(v) => (5, &[][..], u64::from(v)),
        };
        OneofSlot {
            tag: id << 3 | wire_type,
            bytes,
            bits,
        }
    }

    /// The number of the member seen last (0 when none was).
    #[inline(always)]
    pub fn id(&self) -> u32 {
        self.tag >> 3
    }

    /// The raw value of member `id`, if it is the one seen last.
    #[inline(always)]
    pub fn get(&self, id: u32) -> Option<FieldValue<'a>> {
        if self.id() == id && self.tag != 0 {
            Some(self.value())
        } else {
            None
        }
    }

    /// The raw value of the member seen last (a varint 0 when none was).
    #[inline(always)]
    pub fn value(&self) -> FieldValue<'a> {
        match self.tag & 7 {
            1 => FieldValue::Fixed64(self.bits),
            2 => FieldValue::Bytes(self.bytes),
            3 => FieldValue::Group(self.bytes),
            5 => FieldValue::Fixed32(self.bits as u32),
            _ => FieldValue::Varint(self.bits),
        }
    }

    /// Whether the member seen last was written with `tag` (a nonzero tag:
    /// its number and wire type).
    #[inline(always)]
    pub fn is(&self, tag: u32) -> bool {
        self.tag == tag
    }

    /// The payload (or group contents) of the member seen last, if it was
    /// written with `tag`, whose wire type is 2 (or 3).
    #[inline(always)]
    pub fn bytes_if(&self, tag: u32) -> Option<&'a [u8]> {
        if self.tag == tag {
            Some(self.bytes)
        } else {
            None
        }
    }

    /// The varint or fixed64 value of the member seen last, if it was
    /// written with `tag`, whose wire type is 0 (or 1).
    #[inline(always)]
    pub fn u64_if(&self, tag: u32) -> Option<u64> {
        if self.tag == tag {
            Some(self.bits)
        } else {
            None
        }
    }

    /// The fixed32 value of the member seen last, if it was written with
    /// `tag`, whose wire type is 5.
    #[inline(always)]
    pub fn u32_if(&self, tag: u32) -> Option<u32> {
        if self.tag == tag {
            Some(self.bits as u32)
        } else {
            None
        }
    }
}

/// Oneof `slot` as protoc's C++ leaves it when some occurrences of its
/// members do not count (a closed enum member's number the enum does not
/// name is an unknown field, which leaves the oneof as it was): `slot`
/// itself when its member counts, else the last counting occurrence of any
/// of `members` in `buf`, found anew (a rare path). `counts` tells whether an
/// occurrence (member number, raw value) counts.
pub fn recount_oneof<'a>(
    buf: &'a [u8],
    groups: bool,
    slot: OneofSlot<'a>,
    members: &[u32],
    counts: impl Fn(u32, FieldValue<'a>) -> bool,
) -> OneofSlot<'a> {
    if slot.tag == 0 || counts(slot.id(), slot.value()) {
        return slot;
    }
    let mut last = OneofSlot::NONE;
    let mut pos = 0;
    while pos < buf.len() {
        let Ok((f, next)) = parse_at(buf, pos, groups) else {
            break;
        };
        if members.contains(&f.id) && counts(f.id, f.value) {
            last = OneofSlot::new(f);
        }
        pos = next;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_bound_the_scan() {
        // 1: 5, 2: 6, 1: 7, 2: 8
        let buf = [0x08, 5, 0x10, 6, 0x08, 7, 0x10, 8];
        let mut o = Occurrences::NONE;
        assert!(o.is_empty());
        assert_eq!(o.fields(&buf, 1).count(), 0);
        o.add(0, 2);
        o.add(4, 6);
        assert!(!o.is_empty());
        let v: Vec<u64> = o.fields(&buf, 1).map(|f| f.as_u64().unwrap()).collect();
        assert_eq!(v, [5, 7]);
        // Offsets past the buffer (a caller mixing messages) cannot panic.
        let mut wrong = Occurrences::NONE;
        wrong.add(100, 200);
        assert_eq!(wrong.fields(&buf, 1).count(), 0);
    }

    #[test]
    fn oneof_slot_answers_for_the_last_member_only() {
        let s = OneofSlot::new(Field {
            id: 3,
            value: FieldValue::Varint(9),
        });
        assert_eq!(s.get(3), Some(FieldValue::Varint(9)));
        assert_eq!(s.get(4), None);
        assert_eq!(OneofSlot::NONE.get(1), None);
        assert_eq!(OneofSlot::NONE.id(), 0);
        assert_eq!(OneofSlot::NONE.get(0), None);
        assert_eq!(s.u64_if(3 << 3), Some(9));
        assert!(s.is(3 << 3));
        assert_eq!(s.u64_if(3 << 3 | 2), None);
        assert_eq!(s.bytes_if(3 << 3 | 2), None);
        let b = OneofSlot::of(4, FieldValue::Bytes(b"ab"));
        assert_eq!(b.bytes_if(4 << 3 | 2), Some(&b"ab"[..]));
        assert_eq!(b.get(4), Some(FieldValue::Bytes(b"ab")));
        let g = OneofSlot::of(5, FieldValue::Group(b"g"));
        assert_eq!(g.bytes_if(5 << 3 | 2), None);
        assert_eq!(g.bytes_if(5 << 3 | 3), Some(&b"g"[..]));
        assert_eq!(g.value(), FieldValue::Group(b"g"));
        let f = OneofSlot::of(6, FieldValue::Fixed32(7));
        assert_eq!(f.u32_if(6 << 3 | 5), Some(7));
        assert_eq!(f.value(), FieldValue::Fixed32(7));
        let d = OneofSlot::of(7, FieldValue::Fixed64(8));
        assert_eq!(d.u64_if(7 << 3 | 1), Some(8));
        assert_eq!(d.value(), FieldValue::Fixed64(8));
        assert_eq!(varint(FieldValue::Fixed32(1)), None);
        assert_eq!(bytes(FieldValue::Bytes(b"x")), Some(&b"x"[..]));
        assert_eq!(group(FieldValue::Bytes(b"x")), None);
    }
}
