//! The readers of a generated decoder's fast path.
//!
//! A generated pass first decodes a field's tag and `match`es it whole
//! (number and wire type together, as a hand-written scanner does) against
//! the tags its declared fields are written with, reading the value straight
//! into the field's slot. Anything else (an undeclared field, another wire
//! type, a group, malformed bytes) goes to the generic path
//! (`decoder::parse_at`), which reads it as before and reports errors.
//! So these readers only say "not here" (`None`) and never decide an error:
//! each accepts exactly what `decoder::parse_field` accepts for its wire
//! type, with the same result, and returns the value and the offset after
//! it.

use crate::varint::decode_varint;

/// The varint at `pos` of `buf` (a tag, or a wire-type-0 value).
#[inline(always)]
pub fn read_varint(buf: &[u8], pos: usize) -> Option<(u64, usize)> {
    match buf.get(pos) {
        Some(&b) if b < 0x80 => Some((u64::from(b), pos + 1)),
        Some(_) => decode_varint(buf.get(pos..)?)
            .ok()
            .map(|(v, n)| (v, pos + n)),
        None => None,
    }
}

/// The length-delimited payload whose length varint is at `pos`.
#[inline(always)]
pub fn read_bytes(buf: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let (len, start) = read_varint(buf, pos)?;
    let payload = buf.get(start..)?.get(..usize::try_from(len).ok()?)?;
    Some((payload, start + payload.len()))
}

/// The four little-endian bytes at `pos`.
#[inline(always)]
pub fn read_fixed32(buf: &[u8], pos: usize) -> Option<(u32, usize)> {
    let bytes = buf.get(pos..)?.first_chunk::<4>()?;
    Some((u32::from_le_bytes(*bytes), pos + 4))
}

/// The eight little-endian bytes at `pos`.
#[inline(always)]
pub fn read_fixed64(buf: &[u8], pos: usize) -> Option<(u64, usize)> {
    let bytes = buf.get(pos..)?.first_chunk::<8>()?;
    Some((u64::from_le_bytes(*bytes), pos + 8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoder::{FieldValue, parse_field};

    /// Each reader agrees with `parse_field` on the value after a tag of
    /// its wire type, and declines where `parse_field` fails.
    #[test]
    fn readers_agree_with_parse_field() {
        let cases: [&[u8]; 12] = [
            &[0x08, 5],
            &[0x08, 0x80, 0x01],
            &[0x08, 0x80],
            &[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            &[0x12, 2, b'h', b'i'],
            &[0x12, 3, b'h', b'i'],
            &[0x12, 0xff, 0xff, 0xff, 0xff, 0x0f],
            &[0x1d, 1, 2, 3, 4],
            &[0x1d, 1, 2, 3],
            &[0x21, 1, 2, 3, 4, 5, 6, 7, 8],
            &[0x21, 1, 2, 3, 4, 5, 6, 7],
            &[0x8a, 0x01, 0],
        ];
        for buf in cases {
            let (tag, after) = read_varint(buf, 0).expect("a tag");
            let fast = match tag & 7 {
                0 => read_varint(buf, after).map(|(v, n)| (FieldValue::Varint(v), n)),
                1 => read_fixed64(buf, after).map(|(v, n)| (FieldValue::Fixed64(v), n)),
                2 => read_bytes(buf, after).map(|(v, n)| (FieldValue::Bytes(v), n)),
                _ => read_fixed32(buf, after).map(|(v, n)| (FieldValue::Fixed32(v), n)),
            };
            let slow = parse_field(buf, 0).ok().map(|(f, n)| (f.value, n));
            assert_eq!(fast, slow, "{buf:?}");
        }
        assert_eq!(read_varint(&[], 0), None);
        assert_eq!(read_varint(&[1], 5), None);
    }
}
