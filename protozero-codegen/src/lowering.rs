//! What protox cannot parse, rewritten into what it can: a `.proto` file's
//! text is lowered before protox reads it, and what the rewrite changed is
//! kept, so that protox's error positions map back to the original text
//! and the descriptors can be raised back to what `protoc` writes for the
//! original (`editions_raise.rs`).
//!
//! Editions above all. An `edition = "2023"` (or `"2024"`) file is a proto2
//! file with fewer keywords: every singular field of a message or `extend`
//! block gets the `optional` label editions leave implicit, reserved names
//! written as identifiers become strings, the `edition` statement becomes
//! `syntax = "proto2";`, and edition 2024's `export` and `local` (symbol
//! visibility) and `import option` (an import for options only) are
//! blanked out and remembered. Everything else, `features` options above
//! all, is ordinary option syntax that protox interprets against its
//! `descriptor.proto`. Constructs editions forbid (the `optional` and
//! `required` labels, groups) are refused here, where their place is known.
//!
//! In every syntax, four spellings protox 0.10 refuses and `protoc`
//! reads are respelled to ones with the same meaning: a list of extension
//! ranges ending in one number with options (`extensions 1 to 4, 5 [...]`
//! → `extensions 1 to 4, 5 to 5 [...]`), an infinite option value (`= inf`
//! → `= 1e999`), a decimal integer beyond 64 bits, which can only be a
//! floating-point value (`.0` added), and a not-a-number option value
//! (`= nan`, `= -nan`), written as a stand-in number that the descriptors
//! get back as NaN (`non_finite.rs`). In proto2, fields whose default JSON
//! name clashes with another field's (which `protoc` only warns about) get
//! a stand-in `json_name` that the descriptors lose again
//! (`json_names.rs`); so do all clashing fields of a proto2 or proto3
//! message that sets `deprecated_legacy_json_field_conflicts`. proto3
//! fields whose names are one name lower-cased without underscores (which
//! protox refuses and `protoc` does not) are renamed for protox, and get
//! their names back.
//!
//! Only the statement structure is read: comments, strings, option values
//! (aggregates too) and service bodies are skipped token by token. A file
//! this reading does not understand is passed on with the edits made so
//! far, and protox reports what is wrong with it.

use crate::json_names::JsonField;
use crate::lowered::{Edit, Lowered, StandIn};
use crate::proto_tokens::{Kind, Token, lex};
use crate::respell_values::respell_values;

mod json_fields;

/// `FileDescriptorProto.edition` values (`google.protobuf.Edition`).
pub(crate) const EDITION_2023: u64 = 1000;
/// Edition 2024.
pub(crate) const EDITION_2024: u64 = 1001;

/// A construct editions forbid, at a byte offset of the original text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// Byte offset of the construct.
    pub offset: usize,
    /// What is wrong, and what to write instead.
    pub message: String,
}

impl Lowered {
    /// The original offset of `offset` in the rewritten text (an offset
    /// inside an edit's new text maps to the edit's start).
    pub fn original_offset(&self, offset: usize) -> usize {
        let mut delta: isize = 0;
        for &(at, old, new) in &self.edits {
            let new_at = at.saturating_add_signed(delta);
            if offset < new_at {
                break;
            }
            if offset < new_at + new {
                return at;
            }
            delta += new as isize - old as isize;
        }
        offset.saturating_add_signed(-delta)
    }
}

/// Rewrites `source` if it is an editions file or spells something protox
/// does not read; `Ok(None)` if protox reads it as it is.
///
/// `names` are type names to write fully qualified: `(offset, length,
/// name)` in the original text (see `pure.rs` for why); `kept` are the
/// offsets of `inf` and `nan` option values to leave as written (enum
/// values: see `respell_values.rs`).
pub(crate) fn lower(
    source: &str,
    names: &[(usize, usize, String)],
    kept: &[usize],
) -> Result<Option<Lowered>, Refusal> {
    let tokens = lex(source);
    let mut p = Lowering {
        src: source,
        toks: &tokens,
        at: 0,
        out: Lowered {
            text: String::new(),
            edition: None,
            edits: Vec::new(),
            visibility: Vec::new(),
            option_imports: Vec::new(),
            fields: Vec::new(),
            enums: Vec::new(),
            messages: Vec::new(),
            json_stand_ins: Vec::new(),
            nan_stand_in: false,
            respelled_values: Vec::new(),
        },
        scope: Vec::new(),
        pending_visibility: None,
        proto2: !is_proto3(source, &tokens),
        json_fields: Vec::new(),
        legacy_json: Vec::new(),
    };
    let mut edits: Vec<Edit> = names
        .iter()
        .map(|(at, old, new)| Edit {
            at: *at,
            old: *old,
            new: new.clone(),
        })
        .collect();
    // `edition = "2023";` first.
    let edition = match (p.tok(0), p.tok(1), p.tok(2), p.tok(3)) {
        (Some(e), Some(eq), Some(value), Some(semi))
            if p.is_word("edition")
                && p.text(eq) == "="
                && value.kind == Kind::Str
                && p.text(semi) == ";" =>
        {
            Some((e, value, semi))
        }
        _ => None,
    };
    if let Some((e, value, semi)) = edition {
        let year = unquote(p.text(value));
        p.out.edition = Some(match year.as_str() {
            "2023" => EDITION_2023,
            "2024" => EDITION_2024,
            other => {
                return Err(Refusal {
                    offset: value.start,
                    message: format!(
                        "edition \"{other}\" is not one this front end knows (it reads \"2023\" \
                         and \"2024\")"
                    ),
                });
            }
        });
        edits.push(Edit {
            at: e.start,
            old: semi.end - e.start,
            new: "syntax = \"proto2\";".to_owned(),
        });
        p.at = 4;
    }
    if p.out.edition.is_some() {
        p.proto2 = false;
    }
    p.top_level(&mut edits)?;
    p.out.nan_stand_in = respell_values(
        source,
        &tokens,
        kept,
        &mut edits,
        &mut p.out.respelled_values,
    );
    if edits.is_empty() {
        return Ok(None);
    }
    // Apply the edits.
    let mut text = String::with_capacity(source.len() + edits.len() * 9);
    let mut from = 0;
    // Insertions before replacements at one place; an edit overlapping an
    // earlier one is dropped (none should), and none reaches past the end.
    edits.sort_by_key(|e| (e.at, e.old));
    for e in &edits {
        if e.at < from || e.at + e.old > source.len() || !source.is_char_boundary(e.at) {
            continue;
        }
        text.push_str(&source[from..e.at]);
        text.push_str(&e.new);
        from = e.at + e.old;
        p.out.edits.push((e.at, e.old, e.new.len()));
    }
    text.push_str(&source[from..]);
    p.out.text = text;
    Ok(Some(p.out))
}

/// The block a statement is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Message,
    Extend,
    Oneof,
}

struct Lowering<'s, 't> {
    src: &'s str,
    toks: &'t [Token],
    at: usize,
    out: Lowered,
    /// Names of the enclosing messages.
    scope: Vec<String>,
    /// An `export`/`local` waiting for its message or enum.
    pending_visibility: Option<bool>,
    /// Whether this is a proto2 file (its JSON name clashes are lowered).
    proto2: bool,
    /// The fields of the enclosing proto2 and proto3 messages, innermost
    /// last.
    json_fields: Vec<Vec<JsonField>>,
    /// Whether each of them sets `deprecated_legacy_json_field_conflicts`.
    legacy_json: Vec<bool>,
}

impl Lowering<'_, '_> {
    /// Whether this is an editions file.
    fn editions(&self) -> bool {
        self.out.edition.is_some()
    }

    fn tok(&self, ahead: usize) -> Option<Token> {
        self.toks.get(self.at + ahead).copied()
    }

    fn text(&self, t: Token) -> &str {
        &self.src[t.start..t.end]
    }

    fn is_word(&self, w: &str) -> bool {
        self.tok(0)
            .is_some_and(|t| t.kind == Kind::Word && self.text(t) == w)
    }

    fn is_punct(&self, c: &str) -> bool {
        self.tok(0)
            .is_some_and(|t| t.kind == Kind::Punct && self.text(t) == c)
    }

    fn top_level(&mut self, edits: &mut Vec<Edit>) -> Result<(), Refusal> {
        while let Some(t) = self.tok(0) {
            match (t.kind, self.text(t)) {
                (Kind::Word, "message") => self.message(edits)?,
                (Kind::Word, "enum") => self.enum_(edits),
                (Kind::Word, "extend") => self.extend(edits)?,
                (Kind::Word, "export" | "local") if self.editions() => self.visibility(edits),
                (Kind::Word, "import") if self.editions() => {
                    self.at += 1;
                    if self.is_word("option") {
                        if let Some(o) = self.tok(0) {
                            edits.push(Edit {
                                at: o.start,
                                old: o.end - o.start,
                                new: " ".repeat(o.end - o.start),
                            });
                        }
                        if let Some(name) = self.tok(1).filter(|n| n.kind == Kind::Str) {
                            let name = unquote(self.text(name));
                            self.out.option_imports.push(name);
                        }
                    }
                    self.skip_statement();
                }
                (Kind::Punct, ";") => self.at += 1,
                _ => self.skip_statement(),
            }
        }
        Ok(())
    }

    /// `export` or `local` before a message or enum: blanked, remembered.
    fn visibility(&mut self, edits: &mut Vec<Edit>) {
        if let Some(t) = self.tok(0) {
            let next = self.tok(1).map(|n| self.text(n));
            if matches!(next, Some("message" | "enum")) {
                self.pending_visibility = Some(self.text(t) == "export");
                edits.push(Edit {
                    at: t.start,
                    old: t.end - t.start,
                    new: " ".repeat(t.end - t.start),
                });
            }
        }
        self.at += 1;
    }

    fn take_visibility(&mut self, name: &str, is_enum: bool) {
        if let Some(export) = self.pending_visibility.take() {
            let mut path = self.scope.clone();
            path.push(name.to_owned());
            self.out.visibility.push((path, is_enum, export));
        }
    }

    /// `message Name { ... }`.
    fn message(&mut self, edits: &mut Vec<Edit>) -> Result<(), Refusal> {
        let start = self.tok(0).map_or(0, |t| t.start);
        self.at += 1;
        let name = self
            .tok(0)
            .map(|t| self.text(t).to_owned())
            .unwrap_or_default();
        self.take_visibility(&name, false);
        let mut path = self.scope.clone();
        path.push(name.clone());
        self.out.messages.push((path, start));
        self.at += 1;
        if !self.is_punct("{") {
            self.skip_statement();
            return Ok(());
        }
        self.at += 1;
        self.message_body(name, edits)
    }

    /// A message's statements after its `{`, through its `}`: a message's
    /// or a proto2 group's.
    fn message_body(&mut self, name: String, edits: &mut Vec<Edit>) -> Result<(), Refusal> {
        self.scope.push(name);
        let lowered = !self.editions();
        if lowered {
            self.json_fields.push(Vec::new());
            self.legacy_json.push(false);
        }
        let r = self.body(Block::Message, edits);
        if lowered {
            let fields = self.json_fields.pop().unwrap_or_default();
            let legacy = self.legacy_json.pop().unwrap_or_default();
            let stand_in_json = if self.proto2 || legacy {
                crate::json_names::clashing(&fields, legacy)
            } else {
                Vec::new()
            };
            let renamed = if self.proto2 {
                Vec::new()
            } else {
                crate::json_names::camel_case_clashes(&fields)
            };
            for (i, f) in fields.iter().enumerate() {
                let rename = renamed.contains(&i);
                let json_name = crate::json_names::json_name(f);
                // A renamed field keeps its JSON name, written out if it
                // is a default one, for protox to check as protoc does.
                let json = if stand_in_json.contains(&i) {
                    Some(crate::json_names::stand_in(i))
                } else {
                    (rename && f.custom.is_none()).then(|| json_name.clone())
                };
                if json.is_none() && !rename {
                    continue;
                }
                if let Some(json) = json {
                    let (at, old, new) = crate::json_names::json_name_edit(f, &json);
                    edits.push(Edit { at, old, new });
                }
                let read_as = if rename {
                    let new = crate::json_names::stand_in_field_name(&f.name);
                    let (start, end) = f.name_at;
                    edits.push(Edit {
                        at: start,
                        old: end - start,
                        new: new.clone(),
                    });
                    new
                } else {
                    f.name.clone()
                };
                self.out.json_stand_ins.push(StandIn {
                    message: self.scope.clone(),
                    read_as,
                    name: f.name.clone(),
                    json_name,
                });
            }
        }
        self.scope.pop();
        r
    }

    /// `enum Name { ... }`: its place kept, its `reserved` names quoted.
    fn enum_(&mut self, edits: &mut Vec<Edit>) {
        let start = self.tok(0).map_or(0, |t| t.start);
        self.at += 1;
        let name = self
            .tok(0)
            .map(|t| self.text(t).to_owned())
            .unwrap_or_default();
        self.take_visibility(&name, true);
        let mut path = self.scope.clone();
        path.push(name);
        self.out.enums.push((path, start));
        self.at += 1;
        if !self.is_punct("{") {
            self.skip_statement();
            return;
        }
        self.at += 1;
        while let Some(t) = self.tok(0) {
            match (t.kind, self.text(t)) {
                (Kind::Punct, "}") => {
                    self.at += 1;
                    return;
                }
                (Kind::Punct, ";") => self.at += 1,
                (Kind::Word, "reserved") if self.editions() => self.reserved(edits),
                _ => self.skip_statement(),
            }
        }
    }

    /// `extensions ..., N [options];`, a list of ranges whose last is one
    /// number, followed by options, which protox does not parse:
    /// `extensions ..., N to N [options];`, the same ranges.
    fn extensions(&mut self, edits: &mut Vec<Edit>) {
        let mut i = 1;
        while let Some(t) = self.tok(i) {
            let s = self.text(t);
            if s == ";" || s == "{" || s == "}" {
                break;
            }
            if s == "[" {
                let last = i.checked_sub(1).and_then(|j| self.tok(j));
                let before = i.checked_sub(2).and_then(|j| self.tok(j));
                let single = before.is_some_and(|b| matches!(self.text(b), "," | "extensions"));
                if let Some(n) = last.filter(|n| n.kind == Kind::Number && single) {
                    edits.push(Edit {
                        at: n.end,
                        old: 0,
                        new: format!(" to {}", self.text(n)),
                    });
                }
                break;
            }
            i += 1;
        }
        self.skip_statement();
    }

    /// `reserved a, b;`: editions name reserved names as identifiers,
    /// proto2 as strings, so they are quoted.
    fn reserved(&mut self, edits: &mut Vec<Edit>) {
        self.at += 1;
        while let Some(t) = self.tok(0) {
            let s = self.text(t);
            if t.kind == Kind::Punct && (s == ";" || s == "}") {
                break;
            }
            if t.kind == Kind::Word && s != "to" && s != "max" {
                for at in [t.start, t.end] {
                    edits.push(Edit {
                        at,
                        old: 0,
                        new: "\"".to_owned(),
                    });
                }
            }
            self.at += 1;
        }
        self.skip_statement();
    }

    /// `extend Type { fields }`.
    fn extend(&mut self, edits: &mut Vec<Edit>) -> Result<(), Refusal> {
        self.at += 1;
        while self.tok(0).is_some() && !self.is_punct("{") && !self.is_punct(";") {
            self.at += 1;
        }
        if !self.is_punct("{") {
            self.skip_statement();
            return Ok(());
        }
        self.at += 1;
        self.body(Block::Extend, edits)
    }

    /// The statements of a block, through its closing `}`.
    fn body(&mut self, block: Block, edits: &mut Vec<Edit>) -> Result<(), Refusal> {
        while let Some(t) = self.tok(0) {
            let word = self.text(t);
            match (t.kind, word) {
                (Kind::Punct, "}") => {
                    self.at += 1;
                    return Ok(());
                }
                (Kind::Punct, ";") => self.at += 1,
                (Kind::Word, "reserved") if block == Block::Message && self.editions() => {
                    self.reserved(edits);
                }
                (Kind::Word, "extensions") if block == Block::Message => self.extensions(edits),
                (Kind::Word, "option") => {
                    if block == Block::Message && self.is_legacy_json_option() {
                        if let Some(legacy) = self.legacy_json.last_mut() {
                            *legacy = true;
                        }
                    }
                    self.skip_statement();
                }
                (Kind::Word, "reserved" | "extensions") => self.skip_statement(),
                (Kind::Word, "message") if block == Block::Message => self.message(edits)?,
                (Kind::Word, "enum") if block == Block::Message => self.enum_(edits),
                (Kind::Word, "extend") if block == Block::Message => self.extend(edits)?,
                (Kind::Word, "export" | "local")
                    if block == Block::Message
                        && self.editions()
                        && matches!(
                            self.tok(1).map(|n| self.text(n)),
                            Some("message" | "enum")
                        ) =>
                {
                    self.visibility(edits);
                }
                (Kind::Word, "oneof") if block == Block::Message => {
                    self.at += 2;
                    if self.is_punct("{") {
                        self.at += 1;
                        self.body(Block::Oneof, edits)?;
                    } else {
                        self.skip_statement();
                    }
                }
                _ if !self.editions() => {
                    let group = if block == Block::Extend {
                        None
                    } else {
                        // proto3 has no groups (protox says so).
                        self.json_field().filter(|_| self.proto2)
                    };
                    match group {
                        // A group's body: the fields of a message.
                        Some((name, open)) => {
                            self.at = open + 1;
                            self.message_body(name, edits)?;
                        }
                        None => self.field(t.start),
                    }
                }
                (Kind::Word, "optional") => {
                    return Err(Refusal {
                        offset: t.start,
                        message: "label `optional` is not allowed in editions: singular fields \
                                  have explicit presence unless `features.field_presence` says \
                                  otherwise"
                            .to_owned(),
                    });
                }
                (Kind::Word, "required") => {
                    return Err(Refusal {
                        offset: t.start,
                        message: "label `required` is not allowed in editions: write \
                                  `[features.field_presence = LEGACY_REQUIRED]`"
                            .to_owned(),
                    });
                }
                (Kind::Word, "group") => return Err(group_refusal(t.start)),
                (Kind::Word, "repeated") => {
                    if let Some(g) = self.tok(1).filter(|g| self.text(*g) == "group") {
                        return Err(group_refusal(g.start));
                    }
                    self.field(t.start);
                }
                (Kind::Word, "map") if self.tok(1).is_some_and(|n| self.text(n) == "<") => {
                    self.field(t.start);
                }
                _ => {
                    if block != Block::Oneof {
                        edits.push(Edit {
                            at: t.start,
                            old: 0,
                            new: "optional ".to_owned(),
                        });
                    }
                    self.field(t.start);
                }
            }
        }
        Ok(())
    }

    /// Records a field statement starting at `start` and skips it. The
    /// field's name is the token before `=` (for `map<..>` too).
    fn field(&mut self, start: usize) {
        let mut name = String::new();
        let mut i = self.at;
        while let Some(t) = self.toks.get(i) {
            let s = self.text(*t);
            if s == "=" || s == ";" || s == "{" || s == "}" {
                break;
            }
            if t.kind == Kind::Word {
                name = s.to_owned();
            }
            i += 1;
        }
        self.out.fields.push((self.scope.clone(), name, start));
        self.skip_statement();
    }

    /// Skips to the end of a statement: its `;` at nesting depth zero, or a
    /// `{ ... }` block at depth zero not introduced by `=` or `:` (an
    /// option's aggregate value), or just before an unmatched `}`.
    fn skip_statement(&mut self) {
        let start = self.at;
        let mut depth = 0usize;
        let mut prev = "";
        while let Some(t) = self.tok(0) {
            let s = &self.src[t.start..t.end];
            if t.kind == Kind::Punct {
                match s {
                    ";" if depth == 0 => {
                        self.at += 1;
                        return;
                    }
                    "(" | "[" | "<" => depth += 1,
                    ")" | "]" | ">" => depth = depth.saturating_sub(1),
                    "{" => {
                        let block = depth == 0 && prev != "=" && prev != ":";
                        self.skip_braces();
                        if block {
                            return;
                        }
                        prev = "}";
                        continue;
                    }
                    "}" => {
                        // A stray `}` where a statement starts: skipped, so
                        // that every call moves on.
                        if self.at == start {
                            self.at += 1;
                        }
                        return;
                    }
                    _ => {}
                }
            }
            prev = s;
            self.at += 1;
        }
    }

    /// Skips a `{ ... }` group, braces balanced, from its `{`.
    fn skip_braces(&mut self) {
        let mut depth = 0usize;
        while let Some(t) = self.tok(0) {
            self.at += 1;
            if t.kind != Kind::Punct {
                continue;
            }
            match &self.src[t.start..t.end] {
                "{" => depth += 1,
                "}" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

/// Where `name` (a dotted type name, not fully qualified) is written as a
/// whole in `src`, outside comments and strings: byte offsets.
pub(crate) fn type_references(src: &str, name: &str) -> Vec<usize> {
    let toks = lex(src);
    let parts: Vec<&str> = name.split('.').collect();
    let text = |t: &Token| &src[t.start..t.end];
    let mut out = Vec::new();
    for i in 0..toks.len() {
        let matches = parts.iter().enumerate().all(|(k, part)| {
            let word = toks.get(i + 2 * k).is_some_and(|t| text(t) == *part);
            let dot =
                k + 1 == parts.len() || toks.get(i + 2 * k + 1).is_some_and(|t| text(t) == ".");
            word && dot
        });
        let after = toks.get(i + 2 * parts.len() - 1);
        let before_dot = i > 0 && text(&toks[i - 1]) == "." && toks[i - 1].end == toks[i].start;
        let after_dot = after.is_some_and(|t| text(t) == ".");
        if matches && !before_dot && !after_dot {
            out.push(toks[i].start);
        }
    }
    out
}

/// Whether the file says `syntax = "proto3";`.
fn is_proto3(src: &str, toks: &[Token]) -> bool {
    let text = |i: usize| toks.get(i).map(|t| &src[t.start..t.end]);
    text(0) == Some("syntax")
        && text(1) == Some("=")
        && text(2).is_some_and(|v| unquote(v) == "proto3")
}

fn group_refusal(offset: usize) -> Refusal {
    Refusal {
        offset,
        message: "groups are not allowed in editions: declare the message type and give the \
                  field `[features.message_encoding = DELIMITED]`"
            .to_owned(),
    }
}

/// A string literal's contents (escapes are left as written: edition names
/// and file names have none that matter here).
fn unquote(s: &str) -> String {
    s.get(1..s.len().saturating_sub(1))
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
#[path = "lowering_tests.rs"]
mod tests;
