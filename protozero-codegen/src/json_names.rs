//! Two proto2 fields with one JSON name: `protoc` warns when one of the
//! two names is a default one (derived from the field's name) and refuses
//! only two clashing custom `json_name`s; protox 0.10 refuses them all.
//!
//! The lowering (`lowering.rs`) lists each message's fields; here the
//! fields whose default JSON name clashes with another field's JSON name
//! are picked, and given a `json_name` of their own in the text protox
//! reads, one no field can have (it has spaces). Once protox has compiled
//! the file, those fields get back the default JSON name `protoc` records
//! ([`restore`]). Two clashing custom names are left alone: protox then
//! refuses them, as `protoc` does.
//!
//! Proto3 and editions files are not lowered this way: `protoc` refuses
//! their clashes as protox does.

use std::collections::HashMap;

use protobuf::descriptor::{DescriptorProto, FileDescriptorProto};

use crate::lowering::Lowered;
use crate::parse::default_json_name;

/// One field of a proto2 message, as the lowering read it.
#[derive(Debug, Clone)]
pub(crate) struct JsonField {
    /// The field's name (a group's, lower-cased, as its field is named).
    pub name: String,
    /// Its `json_name` option, quotes removed, if it has one.
    pub custom: Option<String>,
    /// Where a `json_name` option can be added: a byte offset of the
    /// original text, and whether an option list opens there (else one is
    /// to be written).
    pub insert_at: usize,
    /// Whether the field has an option list that opens at `insert_at`.
    pub in_list: bool,
}

/// The fields among `fields` (one message's) whose default JSON name
/// clashes with another field's JSON name, by index.
pub(crate) fn clashing(fields: &[JsonField]) -> Vec<usize> {
    let names: Vec<String> = fields
        .iter()
        .map(|f| {
            f.custom
                .clone()
                .unwrap_or_else(|| default_json_name(&f.name))
        })
        .collect();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for n in &names {
        *count.entry(n.as_str()).or_default() += 1;
    }
    fields
        .iter()
        .zip(&names)
        .enumerate()
        .filter(|(_, (f, n))| f.custom.is_none() && count.get(n.as_str()).copied() > Some(1))
        .map(|(i, _)| i)
        .collect()
}

/// The `json_name` the `index`-th clashing field of a message is given in
/// the text protox reads.
pub(crate) fn stand_in(index: usize) -> String {
    format!("zerotrace lowered json name {index}")
}

/// The text to insert at `field.insert_at` to give it the stand-in name.
pub(crate) fn option_text(field: &JsonField, index: usize) -> String {
    let name = stand_in(index);
    if field.in_list {
        format!("json_name = \"{name}\", ")
    } else {
        format!(" [json_name = \"{name}\"]")
    }
}

/// Gives the fields that were given a stand-in JSON name their default
/// one back, as `protoc` records it.
pub(crate) fn restore(files: &mut [FileDescriptorProto], lowered: &HashMap<String, Lowered>) {
    for f in files.iter_mut() {
        let Some(l) = lowered.get(f.name()) else {
            continue;
        };
        for (path, field) in &l.json_stand_ins {
            if let Some(m) = message_at(&mut f.message_type, path) {
                for x in m.field.iter_mut().filter(|x| x.name() == field) {
                    x.json_name = Some(default_json_name(field));
                }
            }
        }
    }
}

/// The message at `path` (names from the file's top) among `messages`.
fn message_at<'m>(
    messages: &'m mut [DescriptorProto],
    path: &[String],
) -> Option<&'m mut DescriptorProto> {
    let (first, rest) = path.split_first()?;
    let m = messages.iter_mut().find(|m| m.name() == first)?;
    if rest.is_empty() {
        Some(m)
    } else {
        message_at(&mut m.nested_type, rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, custom: Option<&str>) -> JsonField {
        JsonField {
            name: name.to_owned(),
            custom: custom.map(str::to_owned),
            insert_at: 0,
            in_list: false,
        }
    }

    #[test]
    fn only_default_names_in_a_clash_are_picked() {
        let fields = [
            field("foo_bar", None),
            field("fooBar", None),
            field("a", Some("b")),
            field("b", None),
            field("c", Some("q")),
            field("d", Some("q")),
            field("alone", None),
        ];
        assert_eq!(clashing(&fields), [0, 1, 3]);
    }

    #[test]
    fn stand_ins_are_no_field_names() {
        assert!(stand_in(3).contains(' '));
        assert_eq!(
            option_text(&field("x", None), 1),
            " [json_name = \"zerotrace lowered json name 1\"]"
        );
    }
}
