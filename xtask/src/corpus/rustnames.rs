//! Where protozero-codegen puts a message's decoder and what it calls the
//! decoder's accessors, so the generated round-trip tests can name them.
//!
//! protozero-codegen keeps its naming rules private; this is a small
//! mirror of the rules the tests need (package and message modules, type
//! names, primary accessor names). If the two ever disagree the round-trip
//! test of that corpus fails to compile, so a drift cannot go unnoticed.

use std::collections::HashSet;

use protozero_codegen::model::MessageDef;

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];
/// Methods every generated decoder has, which field accessors must avoid.
const DECODER_RESERVED: &[&str] = &["new", "decode_error", "raw_bytes", "typed_decoder"];

/// `type` → `r#type`, `self` → `self_`, anything else unchanged.
fn escape(name: &str) -> String {
    if NOT_RAW.contains(&name) {
        format!("{name}_")
    } else if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_owned()
    }
}

/// snake_case as the generator spells it (`IPCFrame` → `ipc_frame`).
fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
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
    let tidy = out
        .split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    if tidy.is_empty() { out } else { tidy }
}

fn upper_camel(name: &str) -> String {
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

fn type_name(name: &str) -> String {
    let simple = !name.contains('_') && name.starts_with(|c: char| c.is_ascii_uppercase());
    let n = if simple {
        name.to_owned()
    } else {
        upper_camel(name)
    };
    if n == "Self" { "Self_".to_owned() } else { n }
}

/// Rust path (from the crate root) of the decoder of message `msg`, nested
/// in the messages `outer` (outermost first) of package `package`.
pub fn decoder_path(package: &str, outer: &[&MessageDef], msg: &MessageDef) -> String {
    let mut segs: Vec<String> = package
        .split('.')
        .filter(|s| !s.is_empty())
        .map(|s| escape(&snake(s)))
        .collect();
    segs.extend(outer.iter().map(|m| escape(&snake(&m.name))));
    segs.push(format!("{}Decoder", type_name(&msg.name)));
    segs.join("::")
}

/// The primary accessor of each field of `msg`, in field order (the
/// generator hands these out first, so later derived names never move them).
pub fn accessors(msg: &MessageDef) -> Vec<String> {
    let mut used: HashSet<String> = DECODER_RESERVED.iter().map(|s| s.to_string()).collect();
    msg.fields
        .iter()
        .map(|f| {
            let wanted = escape(&snake(&f.name));
            let base = wanted.strip_prefix("r#").unwrap_or(&wanted).to_owned();
            let mut name = wanted;
            let mut n = 1;
            while used.contains(&name) {
                n += 1;
                name = if n == 2 && !base.ends_with('_') {
                    format!("{base}_")
                } else {
                    format!("{}_{n}", base.trim_end_matches('_'))
                };
            }
            used.insert(name.clone());
            name
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_generator() {
        assert_eq!(snake("IPCFrame"), "ipc_frame");
        assert_eq!(snake("field__name_"), "field_name");
        assert_eq!(escape("type"), "r#type");
        assert_eq!(escape("self"), "self_");
        assert_eq!(type_name("foo_bar"), "FooBar");
        assert_eq!(type_name("HTTPRequest"), "HTTPRequest");
    }
}
