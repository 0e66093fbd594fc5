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
//! A message (proto2 or proto3) that sets `option
//! deprecated_legacy_json_field_conflicts = true;` is not checked by
//! `protoc` at all: clashes of custom names pass too, for that message alone
//! (not for the messages nested in it). There every clashing field gets a
//! stand-in, a custom name included (its value is replaced), and gets its
//! own JSON name back. Other proto3 messages and editions files are not
//! lowered this way: `protoc` refuses their clashes as protox does.
//!
//! protox also refuses, in proto3, two fields whose names are one name
//! lower-cased without underscores (`foo_bar` and `FooBar`), a rule
//! `protoc` no longer has: it compares JSON names only. All but one field
//! of each such group are renamed in the text protox reads (a map field,
//! whose entry type is named after it, keeps its name) and keep their JSON
//! name by writing it out; [`restore`] gives them their names back. Option
//! values that name a renamed field are respelled when protox refuses them
//! (`renamed_fields.rs`).

use std::collections::HashMap;

use protobuf::descriptor::{DescriptorProto, FileDescriptorProto};

use crate::lowered::Lowered;

/// One field of a proto2 message, as the lowering read it.
#[derive(Debug, Clone)]
pub(crate) struct JsonField {
    /// The field's name (a group's, lower-cased, as its field is named).
    pub name: String,
    /// Where its name is: byte offsets of the original text, start and end.
    pub name_at: (usize, usize),
    /// Whether it is a `map<..>` field.
    pub is_map: bool,
    /// Its `json_name` option, if it has one: the string it stands for
    /// (escapes read, literals concatenated), or where that cannot be
    /// known (see `custom_exact`) the literals as written.
    pub custom: Option<String>,
    /// Where that option's string literals are: byte offsets of the
    /// original text, the first's start and the last's end.
    pub custom_at: Option<(usize, usize)>,
    /// Whether `custom` is the value protoc reads (else the literal has an
    /// escape protoc refuses, or is not UTF-8, and protox will say so).
    pub custom_exact: bool,
    /// Where a `json_name` option can be added: a byte offset of the
    /// original text, and whether an option list opens there (else one is
    /// to be written).
    pub insert_at: usize,
    /// Whether the field has an option list that opens at `insert_at`.
    pub in_list: bool,
}

/// The fields among `fields` (one message's) whose default JSON name
/// clashes with another field's JSON name, by index; with `legacy` (the
/// message sets `deprecated_legacy_json_field_conflicts`), every field whose
/// JSON name, custom or not, clashes. A custom name whose value is not
/// known (an escape protoc refuses) is never picked.
pub(crate) fn clashing(fields: &[JsonField], legacy: bool) -> Vec<usize> {
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
        .filter(|(_, (f, n))| {
            let stand_in = match &f.custom {
                None => true,
                Some(_) => legacy && f.custom_at.is_some() && f.custom_exact,
            };
            stand_in && count.get(n.as_str()).copied() > Some(1)
        })
        .map(|(i, _)| i)
        .collect()
}

/// The proto3 fields among `fields` (one message's) to rename for protox:
/// of each group whose names are one name lower-cased without underscores,
/// all but one (a map field is kept if there is one; more than one map
/// field in a group are left for protox to refuse), by index.
pub(crate) fn camel_case_clashes(fields: &[JsonField]) -> Vec<usize> {
    let key = |f: &JsonField| f.name.replace('_', "").to_ascii_lowercase();
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let first = fields
            .iter()
            .position(|g| key(g) == key(f) && g.is_map)
            .or_else(|| fields.iter().position(|g| key(g) == key(f)));
        if first != Some(i) && !f.is_map {
            out.push(i);
        }
    }
    out
}

/// The name a field named `name` renamed for protox gets in the text
/// protox reads: made of `name` alone (its bytes in hex), so that an option
/// value naming the field can be respelled without knowing its message
/// (`renamed_fields.rs`), and still one name per field once lower-cased
/// without underscores.
pub(crate) fn stand_in_field_name(name: &str) -> String {
    let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{STAND_IN_FIELD_PREFIX}{hex}")
}

/// How every [`stand_in_field_name`] starts.
pub(crate) const STAND_IN_FIELD_PREFIX: &str = "zerotrace_lowered_field_";

/// The `json_name` the `index`-th clashing field of a message is given in
/// the text protox reads.
pub(crate) fn stand_in(index: usize) -> String {
    format!("zerotrace lowered json name {index}")
}

/// The edit that gives `field` the JSON name `name`: where (a byte offset
/// of the original text), how many bytes it replaces, and the new text. A
/// custom name's string literal is replaced, else an option is inserted at
/// `field.insert_at`.
pub(crate) fn json_name_edit(field: &JsonField, name: &str) -> (usize, usize, String) {
    if let (Some(_), Some((start, end))) = (&field.custom, field.custom_at) {
        (start, end - start, format!("\"{name}\""))
    } else if field.in_list {
        (field.insert_at, 0, format!("json_name = \"{name}\", "))
    } else {
        (field.insert_at, 0, format!(" [json_name = \"{name}\"]"))
    }
}

/// The JSON name `protoc` records for `field`: its custom one, else the
/// default one.
pub(crate) fn json_name(field: &JsonField) -> String {
    field
        .custom
        .clone()
        .unwrap_or_else(|| default_json_name(&field.name))
}

/// Gives the fields that were given a stand-in JSON name or name their own
/// ones back (a JSON name custom or default), as `protoc` records them; a
/// renamed proto3 `optional` field's synthetic oneof (`_name`) too.
pub(crate) fn restore(files: &mut [FileDescriptorProto], lowered: &HashMap<String, Lowered>) {
    for f in files.iter_mut() {
        let Some(l) = lowered.get(f.name()) else {
            continue;
        };
        for s in &l.json_stand_ins {
            let Some(m) = message_at(&mut f.message_type, &s.message) else {
                continue;
            };
            for x in m.field.iter_mut().filter(|x| x.name() == s.read_as) {
                x.json_name = Some(s.json_name.clone());
                if s.read_as == s.name {
                    continue;
                }
                x.name = Some(s.name.clone());
                let oneof = x
                    .oneof_index
                    .filter(|_| x.proto3_optional())
                    .and_then(|i| usize::try_from(i).ok())
                    .and_then(|i| m.oneof_decl.get_mut(i));
                if let Some(o) = oneof.filter(|o| o.name() == format!("_{}", s.read_as)) {
                    o.name = Some(format!("_{}", s.name));
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

/// protoc's default `json_name`: underscores dropped, the letter after
/// each one upper-cased.
pub(crate) fn default_json_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, custom: Option<&str>) -> JsonField {
        JsonField {
            name: name.to_owned(),
            custom: custom.map(str::to_owned),
            name_at: (0, name.len()),
            is_map: false,
            custom_at: custom.map(|_| (10, 13)),
            custom_exact: custom.is_some(),
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
        assert_eq!(clashing(&fields, false), [0, 1, 3]);
        assert_eq!(clashing(&fields, true), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn all_but_one_of_a_camel_case_group_are_renamed_maps_kept() {
        let mut map = field("fooBar", None);
        map.is_map = true;
        let fields = [
            field("foo_bar", None),
            map,
            field("FOO_BAR", None),
            field("other", None),
            field("a_b", None),
            field("ab", None),
        ];
        assert_eq!(camel_case_clashes(&fields), [0, 2, 5]);
    }

    #[test]
    fn stand_ins_are_no_field_names() {
        assert!(stand_in(3).contains(' '));
        assert_eq!(
            json_name_edit(&field("x", None), &stand_in(1)),
            (
                0,
                0,
                " [json_name = \"zerotrace lowered json name 1\"]".to_owned()
            )
        );
        assert_eq!(
            json_name_edit(&field("x", Some("q")), &stand_in(2)),
            (10, 3, "\"zerotrace lowered json name 2\"".to_owned())
        );
    }
}
