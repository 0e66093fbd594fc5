//! The options protoc leaves out of the descriptors it writes: those with
//! `retention = RETENTION_SOURCE` (what its `StripSourceRetentionOptions`
//! does), an options message emptied by that included. The pure front end
//! strips protox's descriptors the same way, and re-encodes option values
//! as protoc encodes them (MessageSet extensions as items: `message_sets.rs`).

use std::collections::HashMap;

use protox::prost::Message as _;
use protox::prost_reflect::{
    DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage as _, Value,
};

use crate::error::CodegenError;

/// Options of `descriptor.proto` itself with source retention. protox's
/// built-in copy of `descriptor.proto` comes without its fields' options,
/// so their `retention` cannot be read from it.
const BUILTIN_SOURCE_RETENTION: &[&str] = &[
    "google.protobuf.ExtensionRangeOptions.declaration",
    "google.protobuf.ExtensionRangeOptions.verification",
];

/// `FieldOptions.retention`.
const FIELD_OPTIONS_RETENTION: u32 = 17;
/// `FieldOptions.OptionRetention.RETENTION_SOURCE`.
const RETENTION_SOURCE: i32 = 2;

/// `bytes` (a FileDescriptorSet) as `protoc` would write it: without the
/// options it leaves out of the descriptors it writes (what its
/// `StripSourceRetentionOptions` does), with the options' values
/// encoded as it encodes them, and (if `nan`, when the lowering wrote a
/// stand-in for a `nan` option value) with NaN where it is due.
///
/// The files are read back into a descriptor pool of their own first:
/// protox's pool decides whether a field is packed before it interprets
/// options, so it takes a proto2 `[packed = true]` repeated field for an
/// expanded one and writes custom option values of such fields expanded,
/// where `protoc` packs them. A pool built from the encoded files knows
/// every field's options from the start; re-encoding the set through it
/// packs those values, as it would any other field.
pub(crate) fn as_protoc_writes(
    protox_pool: &DescriptorPool,
    bytes: Vec<u8>,
    nan: bool,
) -> Result<Vec<u8>, CodegenError> {
    const SET: &str = "google.protobuf.FileDescriptorSet";
    let pool = DescriptorPool::decode(bytes.as_slice()).unwrap_or_else(|_| protox_pool.clone());
    // Without descriptor.proto among the files there are no custom options,
    // and the built-in `descriptor.proto` knows the built-in ones.
    let Some(set_type) = pool
        .get_message_by_name(SET)
        .or_else(|| DescriptorPool::global().get_message_by_name(SET))
    else {
        return Ok(bytes);
    };
    let mut set = DynamicMessage::decode(set_type.clone(), bytes.as_slice()).map_err(|e| {
        CodegenError::Parse {
            message: format!("protox's descriptors do not decode: {e}"),
        }
    })?;
    strip_message(&mut set, &mut HashMap::new());
    if nan {
        crate::non_finite::restore_nans(&mut set);
    }
    Ok(crate::message_sets::to_message_set_items(
        &pool,
        &set_type,
        set.encode_to_vec(),
    ))
}

/// Clears every source-retention field of `msg`, recursively; an options
/// message emptied by that is cleared too. Whether anything changed.
fn strip_message(msg: &mut DynamicMessage, retention: &mut HashMap<String, bool>) -> bool {
    let mut changed = false;
    let fields: Vec<_> = msg.fields().map(|(f, _)| f).collect();
    for f in fields {
        if is_source_retention(f.full_name(), || f.options(), retention) {
            msg.clear_field(&f);
            changed = true;
        } else {
            let (c, emptied) = strip_value(msg.get_field_mut(&f), retention);
            changed |= c;
            if emptied {
                msg.clear_field(&f);
            }
        }
    }
    let extensions: Vec<_> = msg.extensions().map(|(x, _)| x).collect();
    for x in extensions {
        if is_source_retention(x.full_name(), || x.options(), retention) {
            msg.clear_extension(&x);
            changed = true;
        } else {
            let (c, emptied) = strip_value(msg.get_extension_mut(&x), retention);
            changed |= c;
            if emptied {
                msg.clear_extension(&x);
            }
        }
    }
    changed
}

/// Strips the messages in one field's value: whether anything changed, and
/// whether the value is an options message that was not empty and now is.
fn strip_value(value: &mut Value, retention: &mut HashMap<String, bool>) -> (bool, bool) {
    match value {
        Value::Message(m) => {
            let options = is_options(&m.descriptor()) && m.encoded_len() > 0;
            let changed = strip_message(m, retention);
            (changed, options && m.encoded_len() == 0)
        }
        Value::List(items) => {
            let mut changed = false;
            for item in items {
                if let Value::Message(m) = item {
                    changed |= strip_message(m, retention);
                }
            }
            (changed, false)
        }
        Value::Map(entries) => {
            let mut changed = false;
            for v in entries.values_mut() {
                if let Value::Message(m) = v {
                    changed |= strip_message(m, retention);
                }
            }
            (changed, false)
        }
        _ => (false, false),
    }
}

/// One of `descriptor.proto`'s `...Options` messages.
fn is_options(m: &MessageDescriptor) -> bool {
    m.parent_file().name() == "google/protobuf/descriptor.proto" && m.name().ends_with("Options")
}

/// Whether the field `full_name` (options `options`) has source retention.
fn is_source_retention(
    full_name: &str,
    options: impl FnOnce() -> DynamicMessage,
    known: &mut HashMap<String, bool>,
) -> bool {
    if let Some(&r) = known.get(full_name) {
        return r;
    }
    let options = options();
    let r = BUILTIN_SOURCE_RETENTION.contains(&full_name)
        || match options.get_field_by_number(FIELD_OPTIONS_RETENTION) {
            Some(v) => v.as_enum_number() == Some(RETENTION_SOURCE),
            // A `FieldOptions` that predates `retention`: the raw field.
            None => options.unknown_fields().any(|u| {
                let mut raw = Vec::new();
                u.encode(&mut raw);
                raw == [0x88, 0x01, 0x02]
            }),
        };
    known.insert(full_name.to_owned(), r);
    r
}
