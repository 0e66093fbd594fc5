//! Where protozero-codegen puts a message's decoder and what it calls the
//! decoder's accessors, so the generated round-trip tests can name them.
//! Every rule comes from `protozero_codegen::names`, the generator's own.

use protozero_codegen::model::MessageDef;
use protozero_codegen::names::{escape, module_name, primary_decoder_accessors, snake, type_name};

/// Rust path (from the crate root) of the decoder of message `msg`, nested
/// in the messages `outer` (outermost first) of package `package`.
pub fn decoder_path(package: &str, outer: &[&MessageDef], msg: &MessageDef) -> String {
    let mut segs: Vec<String> = package
        .split('.')
        .filter(|s| !s.is_empty())
        .map(|s| escape(&snake(s)))
        .collect();
    segs.extend(outer.iter().map(|m| module_name(&m.name)));
    segs.push(format!("{}Decoder", type_name(&msg.name)));
    segs.join("::")
}

/// The primary accessor of each field of `msg`, in field order.
pub fn accessors(msg: &MessageDef) -> Vec<String> {
    primary_decoder_accessors(msg)
}
