//! Helpers that only derived code calls. They keep the generated code short
//! (and its snapshots readable) and are not a stable API.

use super::read_error::ReadError;
use super::{ProtoRead, ProtoWrite, RECURSION_LIMIT};
use crate::decoder::Field;
use crate::message::Message;

/// Writes `value` as nested message field `id` of `msg`.
#[inline]
pub fn write_message<T: ProtoWrite + ?Sized>(value: &T, msg: &mut Message<'_>, id: u32) {
    let mut child = msg.begin_nested(id);
    value.write_fields(&mut child);
}

/// Decodes a nested message occurrence held by a message at nesting `depth`.
#[inline]
pub fn decode_message<'a, T: ProtoRead<'a>>(
    field: &Field<'a>,
    depth: u32,
) -> Result<Option<T>, ReadError> {
    let mut value = T::empty();
    merge_message(&mut value, field, depth)?;
    Ok(Some(value))
}

/// Merges a further occurrence of a nested message into `value`.
#[inline]
pub fn merge_message<'a, T: ProtoRead<'a>>(
    value: &mut T,
    field: &Field<'a>,
    depth: u32,
) -> Result<(), ReadError> {
    let bytes = field.as_bytes()?;
    if depth >= RECURSION_LIMIT {
        return Err(ReadError::recursion_limit());
    }
    value.merge_fields(bytes, depth + 1)
}

/// Where a oneof's field numbers collide, for the compile-time check derived
/// code evaluates in a `const` (which panics, at the user's field, on a clash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagClash {
    /// All numbers are distinct.
    None,
    /// A member reuses the number of one of the message's own fields.
    WithField,
    /// A member reuses a number of another (earlier) oneof of the message.
    WithOneof,
}

/// Compares a oneof's field numbers with the message's own and with those of
/// the message's earlier oneofs.
pub const fn tag_clash(own: &[u32], earlier: &[&[u32]], oneof: &[u32]) -> TagClash {
    let mut i = 0;
    while i < oneof.len() {
        let tag = oneof[i];
        if contains(own, tag) {
            return TagClash::WithField;
        }
        let mut k = 0;
        while k < earlier.len() {
            if contains(earlier[k], tag) {
                return TagClash::WithOneof;
            }
            k += 1;
        }
        i += 1;
    }
    TagClash::None
}

const fn contains(set: &[u32], tag: u32) -> bool {
    let mut i = 0;
    while i < set.len() {
        if set[i] == tag {
            return true;
        }
        i += 1;
    }
    false
}
