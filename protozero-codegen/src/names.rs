//! Mapping protobuf names onto Rust names: case conversion and escaping of
//! Rust keywords, in one place so every emitter spells a name the same way.
//!
//! Proto field `type` becomes the accessor `r#type()`; names that cannot be raw
//! identifiers (`self`, `super`, `crate`, `Self`) get a trailing underscore.
//!
//! Some names come from text that protobuf does not restrict to identifiers
//! (file names such as `foo_base.client.proto` or `my-api.proto`), and proto
//! identifiers may start with underscores that case conversion drops
//! (`_1a` → `1a`). Every function here therefore turns characters other than
//! ASCII letters, digits and `_` into `_` (a word boundary for the case
//! conversions), and [`escape`] puts `_` before a name that would start with
//! a digit and turns an empty name into `__`. [`is_ident`] checks the
//! result; the emitters' identifier tokens are made through that check
//! (failing with [`CodegenError::InvalidIdent`] instead of panicking).

use std::collections::HashSet;

use crate::error::CodegenError;
use crate::model::MessageDef;
use proc_macro2::{Ident, Span};

/// Keywords (strict and reserved, edition 2024) that need escaping.
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// Keywords that cannot be written as raw identifiers.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// `name` with every character other than an ASCII letter, digit or `_`
/// replaced by `_`: `foo_base.client` → `foo_base_client`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Gives a sanitized name a start an identifier may have: `_` before a
/// leading digit (`1a` → `_1a`), and `__` for an empty name or a lone `_`
/// (which Rust reserves for patterns).
fn fix_start(mut name: String) -> String {
    if name.is_empty() || name == "_" {
        return "__".to_owned();
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// Escapes `name` for use as an identifier: `type` → `r#type`, `self` →
/// `self_`, `1a` → `_1a`, `foo.bar` → `foo_bar`. Already escaped names
/// (`r#type`, `self_`) come back unchanged.
pub fn escape(name: &str) -> String {
    if let Some(raw) = name.strip_prefix("r#") {
        if KEYWORDS.contains(&raw) && !NOT_RAW.contains(&raw) {
            return name.to_owned();
        }
    }
    let name = fix_start(sanitize(name));
    if NOT_RAW.contains(&name.as_str()) {
        format!("{name}_")
    } else if KEYWORDS.contains(&name.as_str()) {
        format!("r#{name}")
    } else {
        name
    }
}

/// A type-like (`UpperCamelCase`) name made safe to use as an identifier:
/// `_` before a leading digit, `__` for an empty name, `Self` → `Self_`.
pub fn type_ident(name: String) -> String {
    let name = fix_start(sanitize(&name));
    if name == "Self" {
        "Self_".to_owned()
    } else {
        name
    }
}

/// A name that cannot be written as a Rust identifier, even raw.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not a valid Rust identifier")]
pub(crate) struct InvalidIdent {
    /// The rejected text.
    pub(crate) name: String,
}

/// Whether `name` is an ASCII identifier that is not a keyword, or the raw
/// form `r#kw` of a keyword that may be written raw.
pub fn is_ident(name: &str) -> bool {
    let (raw, body) = match name.strip_prefix("r#") {
        Some(body) => (true, body),
        None => (false, name),
    };
    let mut chars = body.chars();
    let well_formed = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && body != "_";
    if !well_formed {
        return false;
    }
    if raw {
        !NOT_RAW.contains(&body)
    } else {
        !KEYWORDS.contains(&body)
    }
}

/// An identifier token from an (already escaped) name; fails instead of
/// panicking when the text is not an identifier.
pub(crate) fn ident(name: &str) -> Result<Ident, InvalidIdent> {
    if !is_ident(name) {
        return Err(InvalidIdent {
            name: name.to_owned(),
        });
    }
    Ok(match name.strip_prefix("r#") {
        Some(raw) => Ident::new_raw(raw, Span::call_site()),
        None => Ident::new(name, Span::call_site()),
    })
}

/// [`ident`], failing with a [`CodegenError::InvalidIdent`] that names the
/// `.proto` file being emitted.
pub(crate) fn ident_in(file: &str, name: &str) -> Result<Ident, CodegenError> {
    ident(name).map_err(|e| CodegenError::InvalidIdent {
        file: file.to_owned(),
        name: e.name,
    })
}

/// `snake_case`, splitting at lower→upper changes and before the last capital
/// of an acronym: `IPCFrame` → `ipc_frame`, `trackEvent` → `track_event`.
/// Characters other than ASCII letters, digits and `_` count as `_`.
pub fn snake(name: &str) -> String {
    let chars: Vec<char> = sanitize(name).chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                None | Some('_') => false,
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) => p.is_uppercase() && next.is_some_and(char::is_lowercase),
            };
            if boundary {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    tidy_underscores(&out)
}

/// Collapses runs of `_` and trims them at both ends (`_a__b_` → `a_b`), so
/// names like `field__name` still pass Rust's `snake_case` lint; a name of
/// underscores only stays as it is.
fn tidy_underscores(name: &str) -> String {
    let tidy = name
        .split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    if tidy.is_empty() {
        name.to_owned()
    } else {
        tidy
    }
}

/// `SCREAMING_SNAKE_CASE`.
pub fn screaming(name: &str) -> String {
    snake(name).to_uppercase()
}

/// `UpperCamelCase` from `snake_case` or `SCREAMING_SNAKE` parts; parts that
/// already mix cases keep their inner capitals (`IPCFrame` stays `IPCFrame`).
/// Characters other than ASCII letters, digits and `_` separate parts like
/// `_` (`foo_base.client` → `FooBaseClient`). The result may start with a
/// digit or be empty; see [`type_ident`].
pub fn upper_camel(name: &str) -> String {
    let name = sanitize(name);
    let mut out = String::with_capacity(name.len());
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let all_upper = !part.chars().any(char::is_lowercase);
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            if all_upper {
                out.extend(chars.flat_map(char::to_lowercase));
            } else {
                out.extend(chars);
            }
        }
    }
    out
}

/// Rust type name for a message or enum named `name` in a `.proto` file
/// (always a valid identifier, see [`type_ident`]).
pub fn type_name(name: &str) -> String {
    let name = sanitize(name);
    let simple = !name.contains('_') && name.starts_with(|c: char| c.is_ascii_uppercase());
    let n = if simple { name } else { upper_camel(&name) };
    type_ident(n)
}

/// Name of the `ServiceDescriptor` constant generated for service `name`.
pub fn service_const(name: &str) -> String {
    escape(&screaming(name))
}

/// Methods every generated decoder has, which field accessors must avoid.
pub const DECODER_RESERVED: &[&str] = &[
    "new",
    "try_new",
    "decode_pass",
    "decode_error",
    "raw_bytes",
    "typed_decoder",
];

/// Returns `wanted` (escaped) if `taken` does not hold it, else it with `_`
/// appended, then `_2`, `_3`… (never a double underscore, which Rust's naming
/// lints reject), and records the result in `taken`.
pub fn unique_name(taken: &mut HashSet<String>, wanted: String) -> String {
    let base = wanted.strip_prefix("r#").unwrap_or(&wanted).to_owned();
    let mut name = wanted;
    let mut n = 1;
    while taken.contains(&name) {
        n += 1;
        name = if n == 2 && !base.ends_with('_') {
            format!("{base}_")
        } else {
            format!("{}_{n}", base.trim_end_matches('_'))
        };
    }
    taken.insert(name.clone());
    name
}

/// The main decoder accessor of every field of `msg`, in field order. They
/// are handed out before any derived name (`has_x`, `x_raw`…), so another
/// field's derived name never displaces them.
pub fn primary_decoder_accessors(msg: &MessageDef) -> Vec<String> {
    let mut taken: HashSet<String> = DECODER_RESERVED.iter().map(|s| s.to_string()).collect();
    msg.fields
        .iter()
        .map(|f| unique_name(&mut taken, escape(&snake(&f.name))))
        .collect()
}

/// Module name holding the nested types of message `name`.
pub fn module_name(name: &str) -> String {
    escape(&snake(name))
}

/// Rust name of one enum variant: the enum's own `SCREAMING_` prefix is
/// dropped when what remains still starts with a letter.
pub fn variant_name(enum_name: &str, value: &str, strip: bool) -> String {
    let prefix = format!("{}_", screaming(enum_name));
    let rest = match value.strip_prefix(&prefix) {
        Some(rest) if strip && rest.starts_with(|c: char| c.is_ascii_alphabetic()) => rest,
        _ => value,
    };
    let mut n = upper_camel(rest);
    if n.starts_with(|c: char| c.is_ascii_digit()) || n.is_empty() {
        n.insert(0, 'V');
    }
    if n == "Self" { "Self_".to_owned() } else { n }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases() {
        assert_eq!(snake("IPCFrame"), "ipc_frame");
        assert_eq!(snake("TracePacket"), "trace_packet");
        assert_eq!(snake("trackEvent"), "track_event");
        assert_eq!(snake("already_snake"), "already_snake");
        assert_eq!(snake("V8Foo"), "v8_foo");
        assert_eq!(snake("_field_name3"), "field_name3");
        assert_eq!(snake("field__Name4_"), "field_name4");
        assert_eq!(screaming("ProducerPort"), "PRODUCER_PORT");
        assert_eq!(upper_camel("TYPE_SLICE_BEGIN"), "TypeSliceBegin");
        assert_eq!(upper_camel("bool_value"), "BoolValue");
        assert_eq!(type_name("IPCFrame"), "IPCFrame");
        assert_eq!(type_name("Foo_Bar"), "FooBar");
        assert_eq!(type_name("Self"), "Self_");
    }

    #[test]
    fn keywords() {
        assert_eq!(escape("type"), "r#type");
        assert_eq!(escape("self"), "self_");
        assert_eq!(escape("name"), "name");
        assert_eq!(ident("r#match").unwrap().to_string(), "r#match");
        assert_eq!(module_name("Match"), "r#match");
    }

    #[test]
    fn foreign_text_becomes_identifiers() {
        assert_eq!(sanitize("foo_base.client"), "foo_base_client");
        assert_eq!(upper_camel("foo_base.client"), "FooBaseClient");
        assert_eq!(upper_camel("my-api.v1"), "MyApiV1");
        assert_eq!(snake("my-api.v1"), "my_api_v1");
        assert_eq!(escape("1a"), "_1a");
        assert_eq!(escape(&snake("_1a")), "_1a");
        assert_eq!(escape(""), "__");
        assert_eq!(escape("_"), "__");
        assert_eq!(escape("r#type"), "r#type");
        assert_eq!(escape("self_"), "self_");
        assert_eq!(escape("a-b"), "a_b");
        assert_eq!(type_name("_1a"), "_1a");
        assert_eq!(type_name("_"), "__");
        assert_eq!(type_name("HTTPServer"), "HTTPServer");
        assert_eq!(type_ident("9Lives".to_owned()), "_9Lives");
        assert_eq!(service_const("_1a"), "_1A");
    }

    #[test]
    fn checked_identifiers() {
        for ok in ["a", "_a", "__", "_1a", "r#type", "Self_", "HTTPServer"] {
            assert!(ident(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "_", "1a", "a.b", "a-b", "type", "self", "r#self", "r#_", "r#", "é",
        ] {
            assert_eq!(
                ident(bad),
                Err(InvalidIdent {
                    name: bad.to_owned()
                }),
                "{bad}"
            );
        }
    }

    #[test]
    fn variants() {
        assert_eq!(variant_name("Type", "TYPE_SLICE_BEGIN", true), "SliceBegin");
        assert_eq!(
            variant_name("BuiltinClock", "BUILTIN_CLOCK_BOOTTIME", true),
            "Boottime"
        );
        assert_eq!(variant_name("Type", "TYPE_3D", true), "Type3d");
        assert_eq!(
            variant_name("Type", "TYPE_SLICE_BEGIN", false),
            "TypeSliceBegin"
        );
        assert_eq!(variant_name("E", "SELF", true), "Self_");
    }
}
