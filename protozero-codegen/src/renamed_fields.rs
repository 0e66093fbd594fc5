//! A proto3 field renamed for protox (`json_names.rs`: its name equals
//! another field's once lower-cased without underscores, which protoc
//! allows) can be named by an option value: a key of an aggregate value
//! (`{ FooBar: 1 }`) or a step of an option path (`(opt).FooBar = 1`),
//! in its own file or another. protox then knows no such field and refuses
//! the option, without saying which key it means. So when protox refuses an
//! option, the keys in that option that are the original name of a renamed
//! field are respelled with the stand-in name (made of the original name
//! alone, so the key's message need not be known) and the files compiled
//! again; a key that meant some other message's field of the same name
//! then fails again, and protox's error stands.

use std::collections::{HashMap, HashSet};

use std::path::PathBuf;

use miette::Diagnostic;

use crate::json_names::stand_in_field_name;
use crate::lowered::Lowered;
use crate::proto_tokens::{Kind, lex};

/// The original names of every field renamed for protox in `lowered`.
pub(crate) fn renamed_names(lowered: &HashMap<String, Lowered>) -> HashSet<String> {
    lowered
        .values()
        .flat_map(|l| &l.json_stand_ins)
        .filter(|s| s.read_as != s.name)
        .map(|s| s.name.clone())
        .collect()
}

/// A rewrite of a place in a file: its byte offset in the original text,
/// its length, the text to write there (a respelled key, a qualified name).
pub(crate) type Respelling = (usize, usize, String);

/// protox's refusals of options (the first error and those related to
/// it, in the first one's file) as keys to respell: `(file, keys)`, the
/// keys not in `done` already. `None` if there is none.
pub(crate) fn respellings(
    e: &protox::Error,
    includes: &[PathBuf],
    lowered: &HashMap<String, Lowered>,
    done: &[Respelling],
) -> Option<(String, Vec<Respelling>)> {
    let renamed = renamed_names(lowered);
    if renamed.is_empty() {
        return None;
    }
    let file = e.file()?.to_owned();
    let text = crate::original_text::source_text(includes, &file)?;
    let lowering = lowered.get(&file);
    let mut keys = Vec::new();
    let mut one = |d: &dyn Diagnostic| {
        if !is_option_error(&d.to_string()) {
            return;
        }
        let Some(at) = d.labels().and_then(|mut l| l.next()).map(|l| l.offset()) else {
            return;
        };
        let at = lowering.map_or(at, |l| l.original_offset(at));
        for k in keys_in_option(&text, at, &renamed) {
            if !done.contains(&k) && !keys.contains(&k) {
                keys.push(k);
            }
        }
    };
    one(e);
    for r in e.related().into_iter().flatten() {
        one(r);
    }
    (!keys.is_empty()).then_some((file, keys))
}

/// Whether protox's error `message` is about an option's value or path.
pub(crate) fn is_option_error(message: &str) -> bool {
    message.contains("for option") || message.contains("option field")
}

/// In `text` (a file's original text), the keys naming a field of
/// `renamed` in the option that starts at or around byte `at` (up to its
/// `;`, or the `]` or `,` ending a field's option): each key's offset, its
/// length and its stand-in name.
pub(crate) fn keys_in_option(text: &str, at: usize, renamed: &HashSet<String>) -> Vec<Respelling> {
    let toks = lex(text);
    let word = |i: usize| {
        toks.get(i)
            .filter(|t| t.kind == Kind::Word)
            .map(|t| &text[t.start..t.end])
    };
    let punct = |i: usize, p: &str| {
        toks.get(i)
            .is_some_and(|t| t.kind == Kind::Punct && &text[t.start..t.end] == p)
    };
    let Some(first) = toks.iter().position(|t| t.end > at) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // Depth inside the option's value: braces and angle brackets of
    // aggregates, square brackets of lists and extension names.
    let mut depth = 0usize;
    // Parentheses of the option's name (`(pkg.ext)`): an extension.
    let mut parens = 0usize;
    let mut in_value = false;
    let mut extension_name = false;
    for (i, &t) in toks.iter().enumerate().skip(first) {
        if t.kind == Kind::Punct {
            match &text[t.start..t.end] {
                ";" if depth == 0 => break,
                "]" | "," if depth == 0 && in_value => break,
                "=" if depth == 0 => in_value = true,
                "(" if !in_value => parens += 1,
                ")" if !in_value => parens = parens.saturating_sub(1),
                "{" | "<" => depth += 1,
                "}" | ">" => depth = depth.saturating_sub(1),
                // `[pkg.ext]` as a key names an extension, not a field.
                "[" if depth > 0 => extension_name = !punct(i - 1, ":"),
                "]" if depth > 0 => extension_name = false,
                _ => {}
            }
            continue;
        }
        let Some(w) = word(i).filter(|w| renamed.contains(*w)) else {
            continue;
        };
        let key = if in_value {
            // An aggregate's key: before `:`, `{` or `<`.
            depth > 0
                && !extension_name
                && (punct(i + 1, ":") || punct(i + 1, "{") || punct(i + 1, "<"))
        } else {
            // A step of the option's path: after `).` or `x.`.
            parens == 0
                && i >= 2
                && punct(i - 1, ".")
                && (punct(i - 2, ")") || word(i - 2).is_some())
        };
        if key {
            out.push((t.start, t.end - t.start, stand_in_field_name(w)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str, at: usize) -> Vec<String> {
        let renamed: HashSet<String> = ["FooBar", "XY"].iter().map(|s| s.to_string()).collect();
        keys_in_option(text, at, &renamed)
            .into_iter()
            .map(|(o, l, _)| format!("{}@{o}", &text[o..o + l]))
            .collect()
    }

    #[test]
    fn keys_and_path_steps_are_found_values_and_extensions_are_not() {
        let text = "option (opt) = { FooBar: 1 x: FooBar inner { XY: 3 } l: [{ XY: 5 }] [a.FooBar]: 2 q < XY: 1 > };\noption (opt).FooBar = 5;";
        assert_eq!(keys(text, 0), ["FooBar@17", "XY@45", "XY@59", "XY@86"]);
        let second = text.find("\noption").unwrap() + 1;
        assert_eq!(keys(text, second), ["FooBar@110"]);
    }

    #[test]
    fn a_field_option_ends_at_its_bracket() {
        let text = "int32 a = 1 [(opt) = { FooBar: 1 }, (opt).FooBar = 2];";
        assert!(keys("option (gap.FooBar).XY.FooBar = 1;", 0) == ["XY@20", "FooBar@23"]);
        let at = text.find("(opt)").unwrap();
        assert_eq!(keys(text, at), ["FooBar@23"]);
        assert!(keys("", 0).is_empty());
        assert!(keys("option (opt) = { FooBar", 100).is_empty());
    }
}
