//! The second half of editions for protox: its descriptors of a lowered
//! editions file (see `lowering.rs`) are turned back into what
//! `protoc` writes for the original, and the rules editions add to proto2's
//! are checked, since protox checked the file as proto2.
//!
//! What changes in the descriptors: `syntax` becomes `"editions"` and
//! `edition` is set; edition 2024's `export`/`local` become each message's
//! and enum's `visibility`, and `import option` files move from
//! `dependency` to `option_dependency` (leaving the set, as with `protoc
//! --include_imports`, when nothing else imports them). The labels the
//! lowering added are already what `protoc` writes (`LABEL_OPTIONAL`).
//!
//! What is checked, with the place of the element at fault: where each
//! feature may be set (`field_presence` on fields and files, `enum_type` on
//! enums and files, ...), presence on repeated, oneof, extension and
//! message fields, implicit presence with a default or a closed enum,
//! encodings on fields of the wrong kind, `packed`, the zero first value of
//! an open enum, and JSON name clashes (the checks protox makes only for
//! proto3).

use std::collections::{HashMap, HashSet};

use protobuf::UnknownFields;
use protobuf::UnknownValueRef;
use protobuf::descriptor::FileDescriptorProto;
use protobuf::descriptor::field_descriptor_proto::{Label, Type};
use protobuf::descriptor::{DescriptorProto, EnumDescriptorProto, FieldDescriptorProto};

use crate::features::{
    ENUM_FEATURES, FIELD_FEATURES, FILE_EDITION, FILE_FEATURES, Features, FileSyntax,
    MESSAGE_FEATURES, ONEOF_FEATURES, varint_fields,
};
use crate::lowered::Lowered;
use crate::model::Presence;

/// A rule of editions broken by a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// The file's name.
    pub file: String,
    /// Byte offset of the element in the file's original text.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// `FileDescriptorProto.option_dependency`.
const FILE_OPTION_DEPENDENCY: u32 = 15;
/// `DescriptorProto.visibility`.
const MESSAGE_VISIBILITY: u32 = 11;
/// `EnumDescriptorProto.visibility`.
const ENUM_VISIBILITY: u32 = 6;
/// `SymbolVisibility.VISIBILITY_LOCAL` and `VISIBILITY_EXPORT`.
const VISIBILITY_LOCAL: u64 = 1;
const VISIBILITY_EXPORT: u64 = 2;

/// `FeatureSet` field numbers and names, with the elements each may be
/// set on (besides files, where all may).
const FEATURES: &[(u64, &str, &[Target])] = &[
    (1, "field_presence", &[Target::Field]),
    (2, "enum_type", &[Target::Enum]),
    (3, "repeated_field_encoding", &[Target::Field]),
    (4, "utf8_validation", &[Target::Field]),
    (5, "message_encoding", &[Target::Field]),
    (6, "json_format", &[Target::Message, Target::Enum]),
    (
        7,
        "enforce_naming_style",
        &[Target::Message, Target::Field, Target::Oneof, Target::Enum],
    ),
    (8, "default_symbol_visibility", &[]),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Message,
    Field,
    Oneof,
    Enum,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Message => "a message",
            Target::Field => "a field",
            Target::Oneof => "a oneof",
            Target::Enum => "an enum",
        }
    }
}

/// Raises the lowered files among `files` (by name in `lowered`) and checks
/// them; `inputs` are the names of the files asked for.
pub(crate) fn raise(
    files: &mut Vec<FileDescriptorProto>,
    lowered: &HashMap<String, Lowered>,
    inputs: &[String],
) -> Result<(), Violation> {
    if lowered.values().all(|l| l.edition.is_none()) {
        return Ok(());
    }
    for f in files.iter_mut() {
        if let Some(l) = lowered.get(f.name()).filter(|l| l.edition.is_some()) {
            crate::editions_utf8::utf8_none_in_file(f);
            f.syntax = Some("editions".to_owned());
            f.special_fields
                .mut_unknown_fields()
                .add_varint(FILE_EDITION, l.edition.unwrap_or_default());
        }
    }
    let closed = closed_enums(files);
    for f in files.iter() {
        if let Some(l) = lowered.get(f.name()).filter(|l| l.edition.is_some()) {
            Checker {
                file: f,
                lowered: l,
                closed: &closed,
            }
            .file()?;
        }
    }
    let mut option_imported = HashSet::new();
    for f in files.iter_mut() {
        if let Some(l) = lowered.get(f.name()).filter(|l| l.edition.is_some()) {
            for m in &mut f.message_type {
                map_features_to_entries(m);
            }
            set_visibility(f, l);
            move_option_imports(f, l);
            option_imported.extend(l.option_imports.iter().cloned());
        }
    }
    if !option_imported.is_empty() {
        drop_unimported(files, inputs);
    }
    Ok(())
}

/// Which enums (by full name, with a leading dot) are closed.
fn closed_enums(files: &[FileDescriptorProto]) -> HashMap<String, bool> {
    fn walk_message(
        m: &DescriptorProto,
        scope: &str,
        parent: Features,
        out: &mut HashMap<String, bool>,
    ) {
        let scope = format!("{scope}.{}", m.name());
        let features = parent.overlay(options_unknown(m.options.as_ref()), MESSAGE_FEATURES);
        for e in &m.enum_type {
            walk_enum(e, &scope, features, out);
        }
        for n in &m.nested_type {
            walk_message(n, &scope, features, out);
        }
    }
    fn walk_enum(
        e: &EnumDescriptorProto,
        scope: &str,
        parent: Features,
        out: &mut HashMap<String, bool>,
    ) {
        let features = parent.overlay(options_unknown(e.options.as_ref()), ENUM_FEATURES);
        out.insert(format!("{scope}.{}", e.name()), features.closed_enums);
    }
    let mut out = HashMap::new();
    for f in files {
        let features = file_features(f);
        let scope = if f.package().is_empty() {
            String::new()
        } else {
            format!(".{}", f.package())
        };
        for e in &f.enum_type {
            walk_enum(e, &scope, features, &mut out);
        }
        for m in &f.message_type {
            walk_message(m, &scope, features, &mut out);
        }
    }
    out
}

fn file_features(f: &FileDescriptorProto) -> Features {
    FileSyntax::of(f.syntax(), f.special_fields.unknown_fields())
        .defaults()
        .overlay(options_unknown(f.options.as_ref()), FILE_FEATURES)
}

/// The unknown fields of an options message, if there is one.
fn options_unknown<O: protobuf::Message>(o: Option<&O>) -> Option<&UnknownFields> {
    o.map(|o| o.special_fields().unknown_fields())
}

/// The `(feature number, value)` pairs an element's own options set.
fn own_features(unknown: Option<&UnknownFields>, field: u32) -> Vec<(u64, u64)> {
    match unknown.and_then(|u| u.get(field)) {
        Some(UnknownValueRef::LengthDelimited(bytes)) => varint_fields(bytes),
        _ => Vec::new(),
    }
}

fn own_feature(own: &[(u64, u64)], number: u64) -> Option<u64> {
    own.iter()
        .rev()
        .find(|(n, _)| *n == number)
        .map(|(_, v)| *v)
}

struct Checker<'a> {
    file: &'a FileDescriptorProto,
    lowered: &'a Lowered,
    closed: &'a HashMap<String, bool>,
}

impl Checker<'_> {
    fn violation(&self, offset: usize, message: impl Into<String>) -> Violation {
        Violation {
            file: self.file.name().to_owned(),
            offset,
            message: message.into(),
        }
    }

    fn message_at(&self, path: &[String]) -> usize {
        self.lowered
            .messages
            .iter()
            .find(|(p, _)| p == path)
            .map_or(0, |(_, o)| *o)
    }

    fn enum_at(&self, path: &[String]) -> usize {
        self.lowered
            .enums
            .iter()
            .find(|(p, _)| p == path)
            .map_or(0, |(_, o)| *o)
    }

    fn field_at(&self, scope: &[String], name: &str) -> usize {
        self.lowered
            .fields
            .iter()
            .find(|(p, n, _)| p == scope && n == name)
            .map_or_else(|| self.message_at(scope), |(_, _, o)| *o)
    }

    /// A feature set on an element it does not apply to.
    fn targets(&self, own: &[(u64, u64)], target: Target, at: usize) -> Result<(), Violation> {
        for (number, _) in own {
            if let Some((_, name, targets)) = FEATURES
                .iter()
                .find(|(n, _, _)| n == number)
                .filter(|(_, _, targets)| !targets.contains(&target))
            {
                return Err(self.violation(
                    at,
                    format!(
                        "`features.{name}` cannot be set on {}, only on a file{}",
                        target.name(),
                        targets
                            .iter()
                            .map(|t| format!(" or {}", t.name()))
                            .collect::<String>()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn file(&self) -> Result<(), Violation> {
        let f = self.file;
        let own = own_features(options_unknown(f.options.as_ref()), FILE_FEATURES);
        if own_feature(&own, 1) == Some(3) {
            return Err(self.violation(
                0,
                "`features.field_presence = LEGACY_REQUIRED` cannot be a file's default",
            ));
        }
        let features = file_features(f);
        let json = own_feature(&own, 6).unwrap_or(1);
        for e in &f.enum_type {
            self.enum_(e, &[], features)?;
        }
        for m in &f.message_type {
            self.message(m, &[], features, json)?;
        }
        for x in &f.extension {
            self.field(x, &[], features, true)?;
        }
        Ok(())
    }

    fn enum_(
        &self,
        e: &EnumDescriptorProto,
        scope: &[String],
        parent: Features,
    ) -> Result<(), Violation> {
        let mut path = scope.to_vec();
        path.push(e.name().to_owned());
        let at = self.enum_at(&path);
        let unknown = options_unknown(e.options.as_ref());
        self.targets(&own_features(unknown, ENUM_FEATURES), Target::Enum, at)?;
        let features = parent.overlay(unknown, ENUM_FEATURES);
        if !features.closed_enums && e.value.first().is_some_and(|v| v.number() != 0) {
            return Err(self.violation(
                at,
                format!(
                    "the first value of open enum `{}` must be zero (or make it closed with \
                     `option features.enum_type = CLOSED;`)",
                    e.name()
                ),
            ));
        }
        Ok(())
    }

    fn message(
        &self,
        m: &DescriptorProto,
        scope: &[String],
        parent: Features,
        parent_json: u64,
    ) -> Result<(), Violation> {
        let mut path = scope.to_vec();
        path.push(m.name().to_owned());
        let at = self.message_at(&path);
        let unknown = options_unknown(m.options.as_ref());
        let own = own_features(unknown, MESSAGE_FEATURES);
        self.targets(&own, Target::Message, at)?;
        let features = parent.overlay(unknown, MESSAGE_FEATURES);
        let json = own_feature(&own, 6).unwrap_or(parent_json);
        for o in &m.oneof_decl {
            let own = own_features(options_unknown(o.options.as_ref()), ONEOF_FEATURES);
            self.targets(&own, Target::Oneof, at)?;
        }
        let is_map_entry = m.options.as_ref().is_some_and(|o| o.map_entry());
        for field in &m.field {
            self.field(field, &path, features, false)?;
        }
        for x in &m.extension {
            self.field(x, &path, features, true)?;
        }
        if json == 1 && !is_map_entry {
            self.json_names(m, &path)?;
        }
        for e in &m.enum_type {
            self.enum_(e, &path, features)?;
        }
        for n in &m.nested_type {
            self.message(n, &path, features, json)?;
        }
        Ok(())
    }

    fn field(
        &self,
        f: &FieldDescriptorProto,
        scope: &[String],
        parent: Features,
        extension: bool,
    ) -> Result<(), Violation> {
        let at = self.field_at(scope, f.name());
        let unknown = options_unknown(f.options.as_ref());
        let own = own_features(unknown, FIELD_FEATURES);
        self.targets(&own, Target::Field, at)?;
        let features = parent.overlay(unknown, FIELD_FEATURES);
        let repeated = f.label() == Label::LABEL_REPEATED;
        let in_oneof = f.oneof_index.is_some();
        let is_message = matches!(f.type_(), Type::TYPE_MESSAGE | Type::TYPE_GROUP);
        let is_map = repeated && is_message && self.is_map_field(f, scope);
        let name = f.name();
        if let Some(presence) = own_feature(&own, 1) {
            let wrong = if repeated {
                Some("repeated fields cannot specify `features.field_presence`".to_owned())
            } else if extension && presence == 3 {
                Some("extensions cannot be required".to_owned())
            } else if extension {
                Some("extensions cannot specify `features.field_presence`".to_owned())
            } else if in_oneof {
                Some("oneof members cannot specify `features.field_presence`".to_owned())
            } else if is_message && presence == 2 {
                Some("message fields cannot have implicit presence".to_owned())
            } else {
                None
            };
            if let Some(w) = wrong {
                return Err(self.violation(at, format!("field `{name}`: {w}")));
            }
        }
        let implicit = features.presence == Presence::Implicit
            && !repeated
            && !in_oneof
            && !extension
            && !is_message;
        if implicit && f.default_value.is_some() {
            return Err(self.violation(
                at,
                format!("field `{name}` has implicit presence and so cannot have a default"),
            ));
        }
        if implicit
            && f.type_() == Type::TYPE_ENUM
            && self.closed.get(f.type_name()).copied().unwrap_or(false)
        {
            return Err(self.violation(
                at,
                format!(
                    "field `{name}` has implicit presence, so its enum `{}` must be open",
                    f.type_name().trim_start_matches('.')
                ),
            ));
        }
        if let Some(encoding) = own_feature(&own, 3) {
            let primitive = !matches!(
                f.type_(),
                Type::TYPE_STRING | Type::TYPE_BYTES | Type::TYPE_MESSAGE | Type::TYPE_GROUP
            );
            if !repeated {
                return Err(self.violation(
                    at,
                    format!(
                        "field `{name}`: only repeated fields can specify \
                         `features.repeated_field_encoding`"
                    ),
                ));
            }
            if encoding == 1 && !primitive {
                return Err(self.violation(
                    at,
                    format!("field `{name}`: only repeated scalar fields can be PACKED"),
                ));
            }
        }
        if own_feature(&own, 5).is_some() && (!is_message || is_map) {
            return Err(self.violation(
                at,
                format!(
                    "field `{name}`: only message fields can specify `features.message_encoding`"
                ),
            ));
        }
        if own_feature(&own, 4).is_some()
            && f.type_() != Type::TYPE_STRING
            && !(is_map && self.map_has_string(f, scope))
        {
            return Err(self.violation(
                at,
                format!(
                    "field `{name}`: only string fields can specify `features.utf8_validation`"
                ),
            ));
        }
        if f.options.as_ref().is_some_and(|o| o.packed.is_some()) {
            return Err(self.violation(
                at,
                format!(
                    "field `{name}`: option `packed` is not allowed in editions; write \
                     `features.repeated_field_encoding` instead"
                ),
            ));
        }
        Ok(())
    }

    /// The map entry message a map field refers to, found in this file by
    /// its type name.
    fn entry<'m>(
        &'m self,
        f: &FieldDescriptorProto,
        scope: &[String],
    ) -> Option<&'m DescriptorProto> {
        let entry_name = f.type_name().rsplit('.').next()?;
        let mut messages: &[DescriptorProto] = &self.file.message_type;
        let mut found = None;
        for name in scope {
            found = messages.iter().find(|m| m.name() == name);
            messages = &found?.nested_type;
        }
        let _ = found;
        messages
            .iter()
            .find(|m| m.name() == entry_name && m.options.as_ref().is_some_and(|o| o.map_entry()))
    }

    fn is_map_field(&self, f: &FieldDescriptorProto, scope: &[String]) -> bool {
        self.entry(f, scope).is_some()
    }

    fn map_has_string(&self, f: &FieldDescriptorProto, scope: &[String]) -> bool {
        self.entry(f, scope)
            .is_some_and(|e| e.field.iter().any(|k| k.type_() == Type::TYPE_STRING))
    }

    /// Two fields of `m` whose JSON names are the same.
    fn json_names(&self, m: &DescriptorProto, path: &[String]) -> Result<(), Violation> {
        let mut seen: HashMap<String, &str> = HashMap::new();
        for f in &m.field {
            let json = f
                .json_name
                .clone()
                .unwrap_or_else(|| default_json_name(f.name()));
            if let Some(other) = seen.insert(json.clone(), f.name()) {
                return Err(self.violation(
                    self.field_at(path, f.name()),
                    format!(
                        "the JSON name of field `{}` (\"{json}\") is that of field `{other}`",
                        f.name()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A field's JSON name when it sets none: underscores dropped, each letter
/// after one upper-cased.
fn default_json_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A map field's own `features` apply to its entry's key and value, and
/// are written there, as `protoc` writes them.
fn map_features_to_entries(m: &mut DescriptorProto) {
    let mut copies: Vec<(String, Vec<u8>)> = Vec::new();
    for f in &m.field {
        if f.label() != Label::LABEL_REPEATED || f.type_() != Type::TYPE_MESSAGE {
            continue;
        }
        let Some(UnknownValueRef::LengthDelimited(features)) =
            options_unknown(f.options.as_ref()).and_then(|u| u.get(FIELD_FEATURES))
        else {
            continue;
        };
        if let Some(entry) = f.type_name().rsplit('.').next() {
            copies.push((entry.to_owned(), features.to_vec()));
        }
    }
    for (entry, features) in copies {
        let Some(e) = m
            .nested_type
            .iter_mut()
            .find(|n| n.name() == entry && n.options.as_ref().is_some_and(|o| o.map_entry()))
        else {
            continue;
        };
        for kv in &mut e.field {
            let unknown = kv
                .options
                .mut_or_insert_default()
                .special_fields
                .mut_unknown_fields();
            unknown.remove(FIELD_FEATURES);
            unknown.add_length_delimited(FIELD_FEATURES, features.clone());
        }
    }
    for n in &mut m.nested_type {
        map_features_to_entries(n);
    }
}

/// Sets `visibility` on the messages and enums declared `export`/`local`.
fn set_visibility(f: &mut FileDescriptorProto, l: &Lowered) {
    for (path, is_enum, export) in &l.visibility {
        let value = if *export {
            VISIBILITY_EXPORT
        } else {
            VISIBILITY_LOCAL
        };
        let Some((last, outer)) = path.split_last() else {
            continue;
        };
        let target = if outer.is_empty() {
            if *is_enum {
                f.enum_type
                    .iter_mut()
                    .find(|e| e.name() == last)
                    .map(|e| &mut e.special_fields)
            } else {
                f.message_type
                    .iter_mut()
                    .find(|m| m.name() == last)
                    .map(|m| &mut m.special_fields)
            }
        } else {
            message_mut(&mut f.message_type, outer).and_then(|m| {
                if *is_enum {
                    m.enum_type
                        .iter_mut()
                        .find(|e| e.name() == last)
                        .map(|e| &mut e.special_fields)
                } else {
                    m.nested_type
                        .iter_mut()
                        .find(|n| n.name() == last)
                        .map(|n| &mut n.special_fields)
                }
            })
        };
        if let Some(special) = target {
            let number = if *is_enum {
                ENUM_VISIBILITY
            } else {
                MESSAGE_VISIBILITY
            };
            special.mut_unknown_fields().add_varint(number, value);
        }
    }
}

/// The message at `path` (names from the top) among `messages`.
fn message_mut<'m>(
    messages: &'m mut [DescriptorProto],
    path: &[String],
) -> Option<&'m mut DescriptorProto> {
    let (first, rest) = path.split_first()?;
    let m = messages.iter_mut().find(|m| m.name() == first)?;
    if rest.is_empty() {
        Some(m)
    } else {
        message_mut(&mut m.nested_type, rest)
    }
}

/// Moves `import option` files from `dependency` to `option_dependency`,
/// renumbering the public and weak imports.
fn move_option_imports(f: &mut FileDescriptorProto, l: &Lowered) {
    if l.option_imports.is_empty() {
        return;
    }
    let old = std::mem::take(&mut f.dependency);
    let mut new_index = Vec::with_capacity(old.len());
    for d in old {
        if l.option_imports.contains(&d) {
            new_index.push(None);
        } else {
            new_index.push(i32::try_from(f.dependency.len()).ok());
            f.dependency.push(d);
        }
    }
    let renumber = |v: &mut Vec<i32>| {
        *v = v
            .iter()
            .filter_map(|&i| {
                usize::try_from(i)
                    .ok()
                    .and_then(|i| new_index.get(i).copied().flatten())
            })
            .collect();
    };
    renumber(&mut f.public_dependency);
    renumber(&mut f.weak_dependency);
    for name in &l.option_imports {
        f.special_fields
            .mut_unknown_fields()
            .add_length_delimited(FILE_OPTION_DEPENDENCY, name.as_bytes().to_vec());
    }
}

/// Keeps the inputs and what they import (not counting option imports).
fn drop_unimported(files: &mut Vec<FileDescriptorProto>, inputs: &[String]) {
    let by_name: HashMap<String, Vec<String>> = files
        .iter()
        .map(|f| (f.name().to_owned(), f.dependency.clone()))
        .collect();
    let mut keep: HashSet<String> = HashSet::new();
    let mut stack: Vec<String> = inputs.to_vec();
    while let Some(n) = stack.pop() {
        if keep.insert(n.clone()) {
            if let Some(deps) = by_name.get(&n) {
                stack.extend(deps.iter().cloned());
            }
        }
    }
    files.retain(|f| keep.contains(f.name()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_as_protoc_derives_them() {
        assert_eq!(default_json_name("foo_bar"), "fooBar");
        assert_eq!(default_json_name("foo__bar_"), "fooBar");
        assert_eq!(default_json_name("FooBar"), "FooBar");
        assert_eq!(default_json_name("a_1b"), "a1b");
    }
}
