//! protox interprets options with an older `descriptor.proto`, in which
//! `FeatureSet.utf8_validation`'s `NONE` was 1; it is 3 now (1 is
//! reserved). The raised descriptors of an editions file get `NONE`
//! renumbered in every `features` they set, so they are what `protoc`
//! writes.

use protobuf::UnknownFields;
use protobuf::UnknownValueRef;
use protobuf::descriptor::{DescriptorProto, FileDescriptorProto};

use crate::features::{
    ENUM_FEATURES, FIELD_FEATURES, FILE_FEATURES, MESSAGE_FEATURES, ONEOF_FEATURES,
};

/// `FeatureSet.utf8_validation`, and the number `NONE` had in the older
/// `descriptor.proto` protox interprets options with (1) and has now (3;
/// 1 is reserved).
const UTF8_VALIDATION: u64 = 4;
const OLD_NONE: u64 = 1;
const NONE: u64 = 3;

/// Re-numbers `utf8_validation = NONE` in every `features` of `f`.
pub(crate) fn utf8_none_in_file(f: &mut FileDescriptorProto) {
    fn options<O: protobuf::Message>(o: &mut protobuf::MessageField<O>, field: u32) {
        if let Some(o) = o.as_mut() {
            utf8_none(o.mut_special_fields().mut_unknown_fields(), field);
        }
    }
    fn message(m: &mut DescriptorProto) {
        options(&mut m.options, MESSAGE_FEATURES);
        for f in m.field.iter_mut().chain(m.extension.iter_mut()) {
            options(&mut f.options, FIELD_FEATURES);
        }
        for o in &mut m.oneof_decl {
            options(&mut o.options, ONEOF_FEATURES);
        }
        for e in &mut m.enum_type {
            options(&mut e.options, ENUM_FEATURES);
        }
        for n in &mut m.nested_type {
            message(n);
        }
    }
    options(&mut f.options, FILE_FEATURES);
    for m in &mut f.message_type {
        message(m);
    }
    for x in &mut f.extension {
        options(&mut x.options, FIELD_FEATURES);
    }
    for e in &mut f.enum_type {
        options(&mut e.options, ENUM_FEATURES);
    }
}

/// Rewrites field `field` (a serialized `FeatureSet`) of `unknown`.
fn utf8_none(unknown: &mut UnknownFields, field: u32) {
    let Some(UnknownValueRef::LengthDelimited(bytes)) = unknown.get(field) else {
        return;
    };
    let mut bytes = bytes.to_vec();
    let mut changed = false;
    let mut i = 0;
    // Field by field; anything malformed ends the walk.
    while let Some((tag, after_tag)) = read_varint(&bytes, i) {
        match tag & 7 {
            0 => {
                let Some((value, next)) = read_varint(&bytes, after_tag) else {
                    break;
                };
                if tag >> 3 == UTF8_VALIDATION && value == OLD_NONE && next == after_tag + 1 {
                    bytes[after_tag] = NONE as u8;
                    changed = true;
                }
                i = next;
            }
            2 => {
                let Some((len, start)) = read_varint(&bytes, after_tag) else {
                    break;
                };
                match usize::try_from(len).ok().and_then(|l| start.checked_add(l)) {
                    Some(end) if end <= bytes.len() => i = end,
                    _ => break,
                }
            }
            1 => i = after_tag + 8,
            5 => i = after_tag + 4,
            _ => break,
        }
    }
    if changed {
        unknown.remove(field);
        unknown.add_length_delimited(field, bytes);
    }
}

/// The varint at `at` of `bytes` and the offset after it.
fn read_varint(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, b) in bytes.get(at..)?.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, at + i + 1));
        }
    }
    None
}
