//! [`Decoder`]: a schema-less, non-allocating, non-recursive field iterator.
//!
//! Every byte is treated as hostile: lengths are checked against what remains,
//! varints are bounded to 10 bytes, field id 0 and wire types 3, 4, 6 and 7 stop
//! iteration with a typed error. Nested messages come back as borrowed byte
//! ranges; decoding them is the caller's choice, so there is no recursion here.
//!
//! Proto2 groups (wire types 3 and 4) are accepted only by a decoder made
//! with [`Decoder::accept_groups`], for schemas that use them: a group comes
//! back as [`FieldValue::Group`], its contents found by an iterative scan for
//! the matching end tag that gives up past [`MAX_GROUP_DEPTH`] nesting levels.

use crate::error::DecodeError;
use crate::packed_read::{PackedFixed32, PackedFixed64, PackedVarints};
use crate::varint::{decode_varint, unzigzag32, unzigzag64};
use crate::wire::{MAX_FIELD_ID, WireType};

/// The value of one field as it sits on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValue<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1 (little-endian already applied).
    Fixed64(u64),
    /// Wire type 2: the payload, borrowed.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
    /// Wire types 3..4: the bytes between a start-group tag and its
    /// matching end-group tag, borrowed (only from group-aware decoders).
    Group(&'a [u8]),
}

/// Deepest nesting of groups a group-aware decoder accepts (the group being
/// read counts as one level); deeper input stops decoding with
/// [`DecodeError::GroupTooDeep`], so a scan costs at most this many passes
/// over the bytes however the groups nest.
pub const MAX_GROUP_DEPTH: usize = 64;

/// One decoded field: its id and borrowed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// Field number (1..=2^29−1).
    pub id: u32,
    /// The value.
    pub value: FieldValue<'a>,
}

impl<'a> Field<'a> {
    /// The wire type of the value.
    pub fn wire_type(&self) -> WireType {
        match self.value {
            FieldValue::Varint(_) => WireType::Varint,
            FieldValue::Fixed64(_) => WireType::Fixed64,
            FieldValue::Bytes(_) => WireType::LengthDelimited,
            FieldValue::Fixed32(_) => WireType::Fixed32,
            FieldValue::Group(_) => WireType::StartGroup,
        }
    }

    #[cold]
    fn wrong(&self, expected: WireType) -> DecodeError {
        DecodeError::WrongWireType {
            id: self.id,
            expected: expected as u8,
            found: self.wire_type() as u8,
        }
    }

    /// The raw varint (wire type 0).
    #[inline]
    pub fn as_varint(&self) -> Result<u64, DecodeError> {
        match self.value {
            FieldValue::Varint(v) => Ok(v),
            _ => Err(self.wrong(WireType::Varint)),
        }
    }

    /// `uint64`.
    #[inline]
    pub fn as_u64(&self) -> Result<u64, DecodeError> {
        self.as_varint()
    }

    /// `uint32` (upper bits truncated, as protobuf does).
    #[inline]
    pub fn as_u32(&self) -> Result<u32, DecodeError> {
        self.as_varint().map(|v| v as u32)
    }

    /// `int64`.
    #[inline]
    pub fn as_i64(&self) -> Result<i64, DecodeError> {
        self.as_varint().map(|v| v as i64)
    }

    /// `int32` (and enums).
    #[inline]
    pub fn as_i32(&self) -> Result<i32, DecodeError> {
        self.as_varint().map(|v| v as i32)
    }

    /// `sint32`.
    #[inline]
    pub fn as_sint32(&self) -> Result<i32, DecodeError> {
        self.as_varint().map(|v| unzigzag32(v as u32))
    }

    /// `sint64`.
    #[inline]
    pub fn as_sint64(&self) -> Result<i64, DecodeError> {
        self.as_varint().map(unzigzag64)
    }

    /// `bool` (any non-zero varint is true).
    #[inline]
    pub fn as_bool(&self) -> Result<bool, DecodeError> {
        self.as_varint().map(|v| v != 0)
    }

    /// `fixed32`.
    #[inline]
    pub fn as_fixed32(&self) -> Result<u32, DecodeError> {
        match self.value {
            FieldValue::Fixed32(v) => Ok(v),
            _ => Err(self.wrong(WireType::Fixed32)),
        }
    }

    /// `sfixed32`.
    #[inline]
    pub fn as_sfixed32(&self) -> Result<i32, DecodeError> {
        self.as_fixed32().map(|v| v as i32)
    }

    /// `float`.
    #[inline]
    pub fn as_f32(&self) -> Result<f32, DecodeError> {
        self.as_fixed32().map(f32::from_bits)
    }

    /// `fixed64`.
    #[inline]
    pub fn as_fixed64(&self) -> Result<u64, DecodeError> {
        match self.value {
            FieldValue::Fixed64(v) => Ok(v),
            _ => Err(self.wrong(WireType::Fixed64)),
        }
    }

    /// `sfixed64`.
    #[inline]
    pub fn as_sfixed64(&self) -> Result<i64, DecodeError> {
        self.as_fixed64().map(|v| v as i64)
    }

    /// `double`.
    #[inline]
    pub fn as_f64(&self) -> Result<f64, DecodeError> {
        self.as_fixed64().map(f64::from_bits)
    }

    /// `bytes`, borrowed.
    #[inline]
    pub fn as_bytes(&self) -> Result<&'a [u8], DecodeError> {
        match self.value {
            FieldValue::Bytes(b) => Ok(b),
            _ => Err(self.wrong(WireType::LengthDelimited)),
        }
    }

    /// `string`, borrowed and checked to be UTF-8.
    #[inline]
    pub fn as_str(&self) -> Result<&'a str, DecodeError> {
        let b = self.as_bytes()?;
        core::str::from_utf8(b).map_err(|_| DecodeError::InvalidUtf8 { id: self.id })
    }

    /// The contents of a group (wire type 3), borrowed.
    #[inline]
    pub fn as_group(&self) -> Result<&'a [u8], DecodeError> {
        match self.value {
            FieldValue::Group(b) => Ok(b),
            _ => Err(self.wrong(WireType::StartGroup)),
        }
    }

    /// A nested message, as a decoder over its bytes.
    #[inline]
    pub fn as_message(&self) -> Result<Decoder<'a>, DecodeError> {
        self.as_bytes().map(Decoder::new)
    }

    /// A packed varint payload.
    pub fn packed_varints(&self) -> Result<PackedVarints<'a>, DecodeError> {
        self.as_bytes().map(PackedVarints::new)
    }

    /// A packed 4-byte payload; fails if its length is not a multiple of 4.
    pub fn packed_fixed32(&self) -> Result<PackedFixed32<'a>, DecodeError> {
        PackedFixed32::new(self.as_bytes()?)
    }

    /// A packed 8-byte payload; fails if its length is not a multiple of 8.
    pub fn packed_fixed64(&self) -> Result<PackedFixed64<'a>, DecodeError> {
        PackedFixed64::new(self.as_bytes()?)
    }
}

/// Iterates the fields of one message; ends at the end of input or after the
/// first error (which it yields once).
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
    groups: bool,
}

impl<'a> Decoder<'a> {
    #[inline]
    /// A decoder over `buf`.
    pub fn new(buf: &'a [u8]) -> Decoder<'a> {
        Decoder {
            buf,
            pos: 0,
            failed: false,
            groups: false,
        }
    }

    #[inline]
    /// This decoder, reading groups as [`FieldValue::Group`] instead of
    /// stopping at them (for schemas with proto2 groups or delimited fields).
    pub fn accept_groups(mut self) -> Decoder<'a> {
        self.groups = true;
        self
    }

    #[inline]
    /// Whether groups are read (see [`Decoder::accept_groups`]).
    pub fn groups_accepted(&self) -> bool {
        self.groups
    }

    #[inline]
    /// A decoder that starts at byte `pos` of `buf` (clamped to its length).
    pub fn at(buf: &'a [u8], pos: usize) -> Decoder<'a> {
        Decoder {
            buf,
            pos: pos.min(buf.len()),
            failed: false,
            groups: false,
        }
    }

    #[inline]
    /// Offset of the next field.
    pub fn offset(&self) -> usize {
        self.pos
    }

    #[inline]
    /// Bytes not yet consumed.
    pub fn remaining(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    #[inline]
    /// The whole buffer.
    pub fn buffer(&self) -> &'a [u8] {
        self.buf
    }

    /// Reads the next field; `None` at the end. On malformed input the cursor
    /// is not advanced and an error is returned (once).
    #[inline]
    pub fn read_field(&mut self) -> Option<Result<Field<'a>, DecodeError>> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let parsed = if self.groups {
            parse_field_or_group(self.buf, self.pos)
        } else {
            parse_field(self.buf, self.pos)
        };
        match parsed {
            Ok((field, next)) => {
                self.pos = next;
                Some(Ok(field))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }

    /// Scans from the start for the last occurrence of `id`, without moving
    /// the cursor. Stops silently at malformed input.
    pub fn find_last(&self, id: u32) -> Option<Field<'a>> {
        let mut from_start = Decoder::new(self.buf);
        from_start.groups = self.groups;
        from_start
            .map_while(Result::ok)
            .filter(|f| f.id == id)
            .last()
    }
}

impl<'a> Iterator for Decoder<'a> {
    type Item = Result<Field<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.read_field()
    }
}

/// Parses the field starting at `pos`; returns it and the offset after it.
#[inline(always)]
pub(crate) fn parse_field(buf: &[u8], pos: usize) -> Result<(Field<'_>, usize), DecodeError> {
    let rest = &buf[pos..];
    let (tag, n) = decode_varint(rest)?;
    let id64 = tag >> 3;
    if id64 == 0 || id64 > u64::from(MAX_FIELD_ID) {
        return Err(DecodeError::InvalidFieldId { id: id64 });
    }
    let id = id64 as u32;
    let rest = &rest[n..];
    let mut next = pos + n;
    let value = match (tag & 7) as u8 {
        0 => {
            let (v, m) = decode_varint(rest)?;
            next += m;
            FieldValue::Varint(v)
        }
        1 => {
            let bytes: [u8; 8] = rest
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .ok_or(DecodeError::TruncatedFixed { id })?;
            next += 8;
            FieldValue::Fixed64(u64::from_le_bytes(bytes))
        }
        2 => {
            let (len, m) = decode_varint(rest)?;
            let body = &rest[m..];
            if len > body.len() as u64 {
                return Err(DecodeError::LengthOutOfBounds {
                    id,
                    len,
                    remaining: body.len(),
                });
            }
            let len = len as usize;
            next += m + len;
            FieldValue::Bytes(&body[..len])
        }
        5 => {
            let bytes: [u8; 4] = rest
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .ok_or(DecodeError::TruncatedFixed { id })?;
            next += 4;
            FieldValue::Fixed32(u32::from_le_bytes(bytes))
        }
        wire_type => return Err(DecodeError::UnsupportedWireType { id, wire_type }),
    };
    Ok((Field { id, value }, next))
}

/// [`parse_field`], plus groups: a start-group tag yields
/// [`FieldValue::Group`] with the bytes up to its matching end-group tag.
#[inline]
pub(crate) fn parse_field_or_group(
    buf: &[u8],
    pos: usize,
) -> Result<(Field<'_>, usize), DecodeError> {
    let (tag, n) = decode_varint(&buf[pos..])?;
    if tag & 7 != WireType::StartGroup as u64 {
        return parse_field(buf, pos);
    }
    let id = group_id(tag)?;
    let start = pos + n;
    let (end, next) = scan_group(buf, start, id)?;
    Ok((
        Field {
            id,
            value: FieldValue::Group(&buf[start..end]),
        },
        next,
    ))
}

/// Reads the field at `pos` of `buf` (a group too, when `groups`): the
/// field and the offset after it. A generated decoder's pass calls this in
/// its loop, so it is inlined there with `groups` a constant.
#[inline(always)]
pub fn parse_at(buf: &[u8], pos: usize, groups: bool) -> Result<(Field<'_>, usize), DecodeError> {
    if groups {
        parse_field_or_group(buf, pos)
    } else {
        parse_field(buf, pos)
    }
}

fn group_id(tag: u64) -> Result<u32, DecodeError> {
    let id = tag >> 3;
    if id == 0 || id > u64::from(MAX_FIELD_ID) {
        return Err(DecodeError::InvalidFieldId { id });
    }
    Ok(id as u32)
}

/// Finds the end-group tag matching group `id` whose contents start at
/// `start`: returns (offset of that tag, offset after it). Iterative, with
/// the open nested groups on a fixed stack of [`MAX_GROUP_DEPTH`] − 1 ids.
fn scan_group(buf: &[u8], start: usize, id: u32) -> Result<(usize, usize), DecodeError> {
    let mut open = [0u32; MAX_GROUP_DEPTH - 1];
    let mut depth = 0usize;
    let mut pos = start;
    loop {
        if pos >= buf.len() {
            return Err(DecodeError::UnterminatedGroup { id });
        }
        let (tag, n) = decode_varint(&buf[pos..])?;
        match (tag & 7) as u8 {
            3 => {
                let inner = group_id(tag)?;
                let slot = open
                    .get_mut(depth)
                    .ok_or(DecodeError::GroupTooDeep { id })?;
                *slot = inner;
                depth += 1;
                pos += n;
            }
            4 => {
                let closing = group_id(tag)?;
                let expected = match depth.checked_sub(1) {
                    Some(d) => open[d],
                    None => id,
                };
                if closing != expected {
                    return Err(DecodeError::UnterminatedGroup { id });
                }
                if depth == 0 {
                    return Ok((pos, pos + n));
                }
                depth -= 1;
                pos += n;
            }
            _ => pos = parse_field(buf, pos)?.1,
        }
    }
}

#[cfg(test)]
mod group_tests {
    use super::*;

    fn groups(buf: &[u8]) -> Vec<Result<Field<'_>, DecodeError>> {
        Decoder::new(buf).accept_groups().collect()
    }

    #[test]
    fn plain_decoders_still_reject_groups() {
        let buf = [0x0B, 0x10, 1, 0x0C];
        assert_eq!(
            Decoder::new(&buf).next(),
            Some(Err(DecodeError::UnsupportedWireType {
                id: 1,
                wire_type: 3
            }))
        );
    }

    #[test]
    fn group_contents_are_borrowed_and_nested_groups_skipped() {
        // 1: group { 2: 1, 3: group { 4: "x" } }, then 5: 7.
        let buf = [0x0B, 0x10, 1, 0x1B, 0x22, 1, b'x', 0x1C, 0x0C, 0x28, 7];
        let fields = groups(&buf);
        assert_eq!(
            fields,
            [
                Ok(Field {
                    id: 1,
                    value: FieldValue::Group(&buf[1..8])
                }),
                Ok(Field {
                    id: 5,
                    value: FieldValue::Varint(7)
                })
            ]
        );
        assert_eq!(fields[0].unwrap().as_group(), Ok(&buf[1..8]));
        assert!(fields[0].unwrap().as_bytes().is_err());
        assert_eq!(fields[0].unwrap().wire_type(), WireType::StartGroup);
    }

    #[test]
    fn unterminated_and_mismatched_groups_are_errors() {
        assert_eq!(
            groups(&[0x0B, 0x10, 1]),
            [Err(DecodeError::UnterminatedGroup { id: 1 })]
        );
        // Closed by the end tag of field 2.
        assert_eq!(
            groups(&[0x0B, 0x14]),
            [Err(DecodeError::UnterminatedGroup { id: 1 })]
        );
        // A stray end tag outside any group.
        assert_eq!(
            groups(&[0x0C]),
            [Err(DecodeError::UnsupportedWireType {
                id: 1,
                wire_type: 4
            })]
        );
        // A malformed field inside the group.
        assert_eq!(
            groups(&[0x0B, 0x12, 5, 0x0C]),
            [Err(DecodeError::LengthOutOfBounds {
                id: 2,
                len: 5,
                remaining: 1
            })]
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let mut ok = vec![0x0B; MAX_GROUP_DEPTH];
        ok.extend(vec![0x0C; MAX_GROUP_DEPTH]);
        assert!(groups(&ok)[0].is_ok());
        let mut deep = vec![0x0B; MAX_GROUP_DEPTH + 1];
        deep.extend(vec![0x0C; MAX_GROUP_DEPTH + 1]);
        assert_eq!(groups(&deep), [Err(DecodeError::GroupTooDeep { id: 1 })]);
    }
}
