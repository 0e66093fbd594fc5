//! Where each protobuf type lives in the generated Rust module tree, and how
//! to spell a reference to it from another module.
//!
//! Packages become nested modules (`perfetto.protos` → `perfetto::protos`), a
//! message's nested types live in a module named after it in snake case
//! (`TrackEvent.Type` → `track_event::Type`). References are emitted as
//! relative `super::` paths, so the tree works wherever it is mounted (a
//! checked-in `mod generated;` or an `include!` from `OUT_DIR`). This module
//! also rejects schemas where two elements would get the same Rust name.

use std::collections::{BTreeMap, HashMap};

use proc_macro2::TokenStream;
use quote::quote;

use crate::error::CodegenError;
use crate::model::{EnumDef, ExtensionDef, MessageDef, Schema};
use crate::names::{
    escape, ident_in, module_name, service_const, snake, type_ident, type_name, upper_camel,
};

/// Whether a symbol is a message or an enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    /// A message: a writer `X` and a decoder `XDecoder`.
    Message,
    /// An enum.
    Enum,
}

/// A generated type's location.
#[derive(Debug, Clone)]
pub struct Symbol {
    /// Message or enum.
    pub kind: SymbolKind,
    /// Module segments from the root of the generated tree (escaped).
    pub module: Vec<String>,
    /// Rust type name (the writer's, for messages).
    pub ident: String,
    /// A message in the message-set wire format (extensions travel as items).
    pub message_set: bool,
    /// A message's field enum (for visiting its fields in one pass, and
    /// the decoder's `MessageFields` impl that `visit_message` needs):
    /// `XField`, or `XField_` where a type of the schema has that name.
    /// Every message has one, named once every type has its name (empty for
    /// enums).
    pub field_enum: String,
    /// A closed enum (numbers it does not name are not values of its
    /// fields; they are read as unknown fields, as protoc's C++ reads them).
    pub closed: bool,
}

/// Every message and enum of a schema by fully qualified name.
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    map: HashMap<String, Symbol>,
}

/// Module segments for a package.
pub fn package_module(package: &str) -> Vec<String> {
    package
        .split('.')
        .filter(|s| !s.is_empty())
        .map(|s| escape(&snake(s)))
        .collect()
}

/// Whether a message gets a module for its nested enums, messages, oneofs
/// and extension traits.
pub fn has_module(m: &MessageDef) -> bool {
    !m.messages.is_empty()
        || !m.enums.is_empty()
        || !m.oneofs.is_empty()
        || !m.extensions.is_empty()
}

/// Name of the enum generated for oneof `index` of `m` (in `m`'s module):
/// the oneof's name in UpperCamelCase, plus `Oneof` if a nested type has it.
pub fn oneof_enum_name(m: &MessageDef, index: usize) -> String {
    let base = m
        .oneofs
        .get(index)
        .map(|o| upper_camel(&o.name))
        .unwrap_or_default();
    let taken = m
        .messages
        .iter()
        .flat_map(|n| {
            let t = type_name(&n.name);
            [format!("{t}Decoder"), t]
        })
        .chain(m.enums.iter().map(|e| type_name(&e.name)))
        .any(|n| n == base);
    type_ident(if taken || base == "Self" {
        format!("{base}Oneof")
    } else {
        base
    })
}

/// The extension traits of one scope: for each extended message (in order of
/// first appearance), its writer trait name, decoder trait name and the
/// extension fields. `file_stem` prefixes the names at file scope, where
/// several files of one package often extend the same message; it may be
/// any text (`foo_base.client`), which becomes CamelCase (`FooBaseClient`).
pub fn extension_traits<'e>(
    exts: &'e [ExtensionDef],
    file_stem: Option<&str>,
) -> Vec<(String, String, String, Vec<&'e ExtensionDef>)> {
    let mut out: Vec<(String, String, String, Vec<&ExtensionDef>)> = Vec::new();
    for e in exts {
        match out.iter_mut().find(|(x, ..)| *x == e.extendee) {
            Some((.., fields)) => fields.push(e),
            None => {
                let simple = e.extendee.rsplit('.').next().unwrap_or(&e.extendee);
                let base = format!(
                    "{}{}",
                    file_stem.map(upper_camel).unwrap_or_default(),
                    type_name(simple)
                );
                out.push((
                    e.extendee.clone(),
                    type_ident(format!("{base}Ext")),
                    type_ident(format!("{base}DecoderExt")),
                    vec![e],
                ));
            }
        }
    }
    out
}

/// The stem of a `.proto` file name: `google/api/client.proto` → `client`.
pub fn file_stem(name: &str) -> &str {
    let base = name.rsplit('/').next().unwrap_or(name);
    base.strip_suffix(".proto").unwrap_or(base)
}

/// The field enum name of the message whose type is `ident`: `{ident}Field`
/// unless `taken`, then `{ident}Field_` (no `.proto` name becomes a Rust type
/// name ending in `_`, so this one is free), then, should it not be,
/// `{ident}Field2`, `{ident}Field3`… (no `_2`: Rust's naming lint rejects an
/// underscore after a letter).
pub fn free_field_enum_name(ident: &str, taken: impl Fn(&str) -> bool) -> String {
    let base = format!("{ident}Field");
    let mut name = base.clone();
    let mut n = 1u32;
    while taken(&name) {
        name = if n == 1 {
            format!("{base}_")
        } else {
            format!("{base}{n}")
        };
        n += 1;
    }
    name
}

/// One scope's names, for collision checks.
#[derive(Default)]
struct Scope {
    names: BTreeMap<String, String>,
}

struct Builder {
    map: HashMap<String, Symbol>,
    scopes: BTreeMap<Vec<String>, Scope>,
    /// Messages in declaration order (full name), for naming field enums
    /// once every type has its name.
    messages: Vec<String>,
}

impl Builder {
    fn claim(
        &mut self,
        file: &str,
        module: &[String],
        rust_name: String,
        element: String,
    ) -> Result<(), CodegenError> {
        let scope = self.scopes.entry(module.to_vec()).or_default();
        if let Some(first) = scope.names.get(&rust_name) {
            // Package segments are claimed once per file; anything else that
            // comes twice (even under the same proto name) is a duplicate.
            if *first != element || !element.starts_with("package ") {
                return Err(CodegenError::NameCollision {
                    file: file.to_owned(),
                    scope: module.join("::"),
                    rust_name,
                    first: first.clone(),
                    second: element,
                });
            }
            return Ok(());
        }
        scope.names.insert(rust_name, element);
        Ok(())
    }

    fn message(
        &mut self,
        file: &str,
        module: &[String],
        m: &MessageDef,
    ) -> Result<(), CodegenError> {
        let ident = type_name(&m.name);
        let what = format!("message {}", m.full_name);
        self.claim(file, module, ident.clone(), what.clone())?;
        self.claim(file, module, format!("{ident}Decoder"), what.clone())?;
        self.map.insert(
            m.full_name.clone(),
            Symbol {
                kind: SymbolKind::Message,
                module: module.to_vec(),
                ident,
                message_set: m.message_set,
                field_enum: String::new(),
                closed: false,
            },
        );
        self.messages.push(m.full_name.clone());
        if !has_module(m) {
            return Ok(());
        }
        self.claim(file, module, module_name(&m.name), what)?;
        let mut inner = module.to_vec();
        inner.push(module_name(&m.name));
        for (i, o) in m.oneofs.iter().enumerate() {
            let what = format!("oneof {}.{}", m.full_name, o.name);
            self.claim(file, &inner, oneof_enum_name(m, i), what)?;
        }
        for e in &m.enums {
            self.enumeration(file, &inner, e)?;
        }
        for n in &m.messages {
            self.message(file, &inner, n)?;
        }
        self.extensions(file, &inner, &m.extensions, None)
    }

    /// Names each message's field enum: `XField`, or the first free of
    /// `XField_`, `XField2`, `XField3`… where a type holds it (DataFusion's
    /// `Union` next to its message `UnionField`). Every message gets one:
    /// a message without one would have no `MessageFields` impl, and the
    /// `visit_message` of every message reaching it would not compile.
    fn field_enums(&mut self) {
        for full_name in std::mem::take(&mut self.messages) {
            let Some(sym) = self.map.get(&full_name) else {
                continue;
            };
            let scope = self.scopes.entry(sym.module.clone()).or_default();
            let name = free_field_enum_name(&sym.ident, |n| scope.names.contains_key(n));
            scope
                .names
                .insert(name.clone(), format!("field enum of {full_name}"));
            if let Some(sym) = self.map.get_mut(&full_name) {
                sym.field_enum = name;
            }
        }
    }

    fn extensions(
        &mut self,
        file: &str,
        module: &[String],
        exts: &[ExtensionDef],
        stem: Option<&str>,
    ) -> Result<(), CodegenError> {
        for (extendee, w, d, _) in extension_traits(exts, stem) {
            let what = format!("extensions of {extendee} in {file}");
            self.claim(file, module, w, what.clone())?;
            self.claim(file, module, d, what)?;
        }
        Ok(())
    }

    fn enumeration(
        &mut self,
        file: &str,
        module: &[String],
        e: &EnumDef,
    ) -> Result<(), CodegenError> {
        let (name, full_name) = (e.name.as_str(), e.full_name.as_str());
        let ident = type_name(name);
        self.claim(file, module, ident.clone(), format!("enum {full_name}"))?;
        self.map.insert(
            full_name.to_owned(),
            Symbol {
                kind: SymbolKind::Enum,
                module: module.to_vec(),
                ident,
                message_set: false,
                field_enum: String::new(),
                closed: e.closed,
            },
        );
        Ok(())
    }
}

impl Symbols {
    /// Indexes `schema`, failing on Rust name collisions.
    pub fn build(schema: &Schema) -> Result<Symbols, CodegenError> {
        let mut b = Builder {
            map: HashMap::new(),
            scopes: BTreeMap::new(),
            messages: Vec::new(),
        };
        for f in &schema.files {
            let module = package_module(&f.package);
            // Each package segment is a module in its parent.
            for depth in 1..=module.len() {
                let parent = &module[..depth - 1];
                let seg = module[depth - 1].clone();
                let what = format!("package {}", module[..depth].join("."));
                b.claim(&f.name, parent, seg, what)?;
            }
            for e in &f.enums {
                b.enumeration(&f.name, &module, e)?;
            }
            for m in &f.messages {
                b.message(&f.name, &module, m)?;
            }
            for s in &f.services {
                let what = format!("service {}", s.full_name);
                b.claim(&f.name, &module, service_const(&s.name), what)?;
            }
            b.extensions(&f.name, &module, &f.extensions, Some(file_stem(&f.name)))?;
        }
        b.field_enums();
        Ok(Symbols { map: b.map })
    }

    /// Looks up a type referenced by `construct` in `file`.
    pub fn get(
        &self,
        full_name: &str,
        file: &str,
        construct: &str,
    ) -> Result<&Symbol, CodegenError> {
        self.map
            .get(full_name)
            .ok_or_else(|| CodegenError::UnknownType {
                file: file.to_owned(),
                construct: construct.to_owned(),
                type_name: full_name.to_owned(),
            })
    }
}

/// A relative path from module `from` to item `name` in module `to`, or an
/// error naming `file` if a segment is not an identifier.
pub(crate) fn relative_path(
    file: &str,
    from: &[String],
    to: &[String],
    name: &str,
) -> Result<TokenStream, CodegenError> {
    let common = from
        .iter()
        .zip(to.iter())
        .take_while(|(a, b)| a == b)
        .count();
    let supers = (common..from.len()).map(|_| quote!(super::));
    let segs = to[common..]
        .iter()
        .map(|s| ident_in(file, s).map(|id| quote!(#id::)))
        .collect::<Result<Vec<_>, _>>()?;
    let last = ident_in(file, name)?;
    Ok(quote!(#(#supers)* #(#segs)* #last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn relative_paths() {
        let here = v(&["perfetto", "protos"]);
        let nested = v(&["perfetto", "protos", "track_event"]);
        assert_eq!(
            relative_path("t.proto", &here, &here, "TrackEvent")
                .unwrap()
                .to_string(),
            "TrackEvent"
        );
        assert_eq!(
            relative_path("t.proto", &here, &nested, "Type")
                .unwrap()
                .to_string(),
            "track_event :: Type"
        );
        assert_eq!(
            relative_path("t.proto", &nested, &here, "TrackEvent")
                .unwrap()
                .to_string(),
            "super :: TrackEvent"
        );
        let other = v(&["other"]);
        assert_eq!(
            relative_path("t.proto", &nested, &other, "X")
                .unwrap()
                .to_string(),
            "super :: super :: super :: other :: X"
        );
    }

    #[test]
    fn package_segments_are_escaped() {
        assert_eq!(package_module("a.type.Self"), v(&["a", "r#type", "self_"]));
    }

    #[test]
    fn field_enum_names_step_past_taken_ones() {
        let taken = |held: &'static [&'static str]| move |n: &str| held.contains(&n);
        assert_eq!(free_field_enum_name("Union", taken(&[])), "UnionField");
        assert_eq!(
            free_field_enum_name("Union", taken(&["UnionField"])),
            "UnionField_"
        );
        assert_eq!(
            free_field_enum_name("Union", taken(&["UnionField", "UnionField_"])),
            "UnionField2"
        );
        assert_eq!(
            free_field_enum_name(
                "Union",
                taken(&["UnionField", "UnionField_", "UnionField2"])
            ),
            "UnionField3"
        );
    }

    /// Every message gets a field enum, `XField_` where a type is `XField`
    /// (issue 47: without one, a decoder is not `MessageFields` and the
    /// `visit_message` arms that reach it do not compile).
    #[test]
    fn every_message_has_a_field_enum() {
        use crate::model::{ProtoFile, Syntax};
        let msg = |name: &str| MessageDef {
            name: name.to_owned(),
            full_name: format!("p.{name}"),
            fields: Vec::new(),
            oneofs: Vec::new(),
            messages: Vec::new(),
            enums: Vec::new(),
            map_entry: false,
            message_set: false,
            extensions: Vec::new(),
        };
        let schema = Schema {
            files: vec![ProtoFile {
                name: "p.proto".to_owned(),
                package: "p".to_owned(),
                syntax: Syntax::Proto3,
                dependencies: Vec::new(),
                messages: vec![msg("Union"), msg("UnionField")],
                enums: Vec::new(),
                services: Vec::new(),
                extensions: Vec::new(),
            }],
        };
        let symbols = Symbols::build(&schema).unwrap();
        let field_enum = |n: &str| {
            symbols
                .get(n, "p.proto", "test")
                .unwrap()
                .field_enum
                .clone()
        };
        assert_eq!(field_enum("p.Union"), "UnionField_");
        assert_eq!(field_enum("p.UnionField"), "UnionFieldField");
    }
}
