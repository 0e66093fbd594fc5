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

/// Compile-time check that a message's own field numbers and those of its
/// oneofs are pairwise distinct; derived code evaluates it in a `const`.
pub const fn assert_disjoint_tags(own: &[u32], oneofs: &[&[u32]]) {
    let mut i = 0;
    while i < oneofs.len() {
        let set = oneofs[i];
        let mut j = 0;
        while j < set.len() {
            let tag = set[j];
            if contains(own, tag) {
                panic!(
                    "protozero: a oneof member reuses the field number of a field of this message"
                );
            }
            let mut k = i + 1;
            while k < oneofs.len() {
                if contains(oneofs[k], tag) {
                    panic!("protozero: two oneofs of this message use the same field number");
                }
                k += 1;
            }
            j += 1;
        }
        i += 1;
    }
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
