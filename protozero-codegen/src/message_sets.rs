//! protoc writes an extension of a message whose options set
//! `message_set_wire_format` as a MessageSet item (a group numbered 1
//! holding the type id, field 2, and the message, field 3), in option
//! values too; prost-reflect, which re-encodes protox's option values,
//! writes it as an ordinary field. [`to_message_set_items`] rewrites the
//! encoded descriptors where such a message occurs, as protoc writes them.

use protox::prost_reflect::{DescriptorPool, Kind, MessageDescriptor};

/// `set` (an encoded message of type `ty`, the whole FileDescriptorSet),
/// with every extension of a message-set message inside it written as a
/// MessageSet item. Unchanged if no message of `pool` is a message set, or
/// if the bytes do not parse (protox wrote them: they do).
pub(crate) fn to_message_set_items(
    pool: &DescriptorPool,
    ty: &MessageDescriptor,
    set: Vec<u8>,
) -> Vec<u8> {
    if !pool.all_messages().any(|m| is_message_set(&m)) {
        return set;
    }
    let mut out = Vec::with_capacity(set.len());
    match reencode(&set, ty, &mut out, 0) {
        Some(()) => out,
        None => set,
    }
}

/// Whether `m` sets `message_set_wire_format`.
fn is_message_set(m: &MessageDescriptor) -> bool {
    m.descriptor_proto()
        .options
        .as_ref()
        .and_then(|o| o.message_set_wire_format)
        .unwrap_or(false)
}

/// Nesting bound: descriptors nest far less deep than this.
const MAX_DEPTH: usize = 100;

fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let c = *b.get(*at)?;
        *at += 1;
        v |= u64::from(c & 0x7f) << shift;
        if c < 0x80 {
            return Some(v);
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Moves `at` past a value of wire type `wire` (not a group); `None` for
/// a group's or an invalid wire type, or a truncated value.
fn skip_value(b: &[u8], at: &mut usize, wire: u64) -> Option<()> {
    match wire {
        0 => {
            varint(b, at)?;
        }
        1 => *at = at.checked_add(8)?,
        5 => *at = at.checked_add(4)?,
        2 => {
            let len = usize::try_from(varint(b, at)?).ok()?;
            *at = at.checked_add(len)?;
        }
        _ => return None,
    }
    (*at <= b.len()).then_some(())
}

/// The end of the group that starts at `at` (just after its start tag,
/// numbered `number`): the offset of its end tag and the offset after it.
fn group_end(b: &[u8], mut at: usize, number: u64) -> Option<(usize, usize)> {
    let mut open = vec![number];
    loop {
        let start = at;
        let tag = varint(b, &mut at)?;
        match tag & 7 {
            wire @ (0 | 1 | 2 | 5) => skip_value(b, &mut at, wire)?,
            3 => open.push(tag >> 3),
            4 => {
                if open.pop()? != tag >> 3 {
                    return None;
                }
                if open.is_empty() {
                    return Some((start, at));
                }
            }
            _ => return None,
        }
        if at > b.len() {
            return None;
        }
    }
}

/// Re-encodes `b` (a message of type `ty`) into `out`.
fn reencode(b: &[u8], ty: &MessageDescriptor, out: &mut Vec<u8>, depth: usize) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    let message_set = is_message_set(ty);
    let mut at = 0;
    while at < b.len() {
        let start = at;
        let tag = varint(b, &mut at)?;
        let number = u32::try_from(tag >> 3).ok()?;
        // The message type of a field of this number, and whether it is an
        // extension.
        let (field_type, extension) = match ty.get_field(number) {
            Some(f) => (f.kind(), false),
            None => match ty.get_extension(number) {
                Some(x) => (x.kind(), true),
                None => (Kind::Bool, false),
            },
        };
        let nested = match field_type {
            Kind::Message(m) => Some(m),
            _ => None,
        };
        match (tag & 7, nested) {
            (2, Some(m)) => {
                let len = usize::try_from(varint(b, &mut at)?).ok()?;
                let payload = b.get(at..at.checked_add(len)?)?;
                at += len;
                let mut inner = Vec::with_capacity(payload.len());
                reencode(payload, &m, &mut inner, depth + 1)?;
                if message_set && extension {
                    put_varint(out, (1 << 3) | 3);
                    put_varint(out, 2 << 3);
                    put_varint(out, u64::from(number));
                    put_varint(out, (3 << 3) | 2);
                    put_varint(out, inner.len() as u64);
                    out.extend_from_slice(&inner);
                    put_varint(out, (1 << 3) | 4);
                } else {
                    put_varint(out, tag);
                    put_varint(out, inner.len() as u64);
                    out.extend_from_slice(&inner);
                }
            }
            (3, Some(m)) => {
                let (end_tag, after) = group_end(b, at, tag >> 3)?;
                put_varint(out, tag);
                reencode(&b[at..end_tag], &m, out, depth + 1)?;
                out.extend_from_slice(&b[end_tag..after]);
                at = after;
            }
            (3, None) => {
                let (_, after) = group_end(b, at, tag >> 3)?;
                out.extend_from_slice(&b[start..after]);
                at = after;
            }
            (wire, _) => {
                skip_value(b, &mut at, wire)?;
                out.extend_from_slice(b.get(start..at)?);
            }
        }
    }
    Some(())
}
