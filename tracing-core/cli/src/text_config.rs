//! Text-format TraceConfigs, parsed over the full upstream schema (every
//! data source config, and the fields newer than v51 that `protos/`
//! declares), with errors in the `perfetto` command's form:
//! `FILE:LINE:COL error: MESSAGE`, the line, and a caret under the column.
//!
//! # Grammar
//!
//! The protobuf text format, as `protoc --encode` reads it:
//!
//! - a message is a sequence of fields; a field is `name: value`, and a
//!   message value may drop the colon: `buffers { size_kb: 1024 }` and
//!   `buffers: { ... }` (or `< ... >`) are the same;
//! - fields may be followed by `,` or `;`;
//! - `# comment` runs to the end of the line;
//! - a repeated field is given once per element, or as a list
//!   `[a, b, c]` (of scalars, enum values or messages; `[]` is empty);
//! - enum values by name (`DISCARD`) or by number (`2`);
//! - strings in `"..."` or `'...'`, adjacent strings concatenated, with C
//!   escapes (`\n`, `\t`, `\\`, `\"`, `\'`, `\x41`, `\101`, `\u00e9`...);
//!   a string may not span lines;
//! - integers in decimal, hex (`0x1F`) or octal (`017`), negative ones with
//!   a `-`; floats with a fraction or an exponent (`-1.5e-3`, `.5`, `2f`),
//!   `inf` and `nan`; booleans `true`/`false`/`t`/`f`/`1`/`0`.
//!
//! # How the text is read
//!
//! prost-reflect's parser builds the message and accepts all of the
//! grammar above. Around it, two passes of ours over the same text (never
//! a rewritten copy, so every position is the user's):
//!
//! 1. `scan` tokenizes it to find what prost-reflect reports poorly: a
//!    string left open (shown at its opening quote, where prost-reflect
//!    gives the end of the line, or no position when the text ends in it),
//!    a decimal number with a leading zero (`09`, which is neither octal
//!    nor decimal), a bracket never closed (shown at the bracket, where
//!    prost-reflect gives no position) and nesting too deep for a
//!    recursive parser.
//! 2. `Checker` walks the tokens against the schema to report, naming the
//!    field: unknown fields (with the closest known name), enum values the
//!    enum does not declare (prost-reflect keeps any number; `protoc`
//!    refuses them, as Perfetto's enums are closed proto2 enums), integers
//!    out of the field's range (as written: `0x1FFFFFFFF`) and values of
//!    the wrong type. With [`UnknownFields::Skip`] it blanks unknown fields
//!    out instead (spaces over the field and its value, newlines kept, so
//!    positions do not move) and returns them as [`SkippedField`]s.
//!
//! The first problem in the text is the one reported.

use std::fmt;

use prost::Message;
use prost_reflect::{
    DynamicMessage, EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor, Syntax,
};

use crate::schema;

/// Nesting (of `{`, `<` and `[`) deeper than this is refused before parsing,
/// as the parsers recurse (Perfetto's configs nest less than ten deep).
pub const MAX_DEPTH: usize = 100;

/// A text config that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column} error: {message}\n{source_line}\n{caret}")]
pub struct TextConfigError {
    /// The file name as given (`-` for stdin).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The offending line.
    pub source_line: String,
    /// Spaces and a `^` under the column.
    pub caret: String,
}

/// Where byte `offset` of `text` is: 1-based line and column (in
/// characters), the line itself and a caret line under the column.
fn locate(text: &str, offset: usize) -> (usize, usize, String, String) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    let source_line = text[line_start..].lines().next().unwrap_or("").to_owned();
    let caret = format!("{}^", " ".repeat(column - 1));
    (line, column, source_line, caret)
}

impl TextConfigError {
    /// The error at byte `offset` of `text`.
    fn at(file: &str, text: &str, offset: usize, message: String) -> TextConfigError {
        let (line, column, source_line, caret) = locate(text, offset);
        TextConfigError {
            file: file.to_owned(),
            line,
            column,
            message,
            source_line,
            caret,
        }
    }
}

/// What to do with a field the schema does not declare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UnknownFields {
    /// Refuse the text (the default).
    #[default]
    Error,
    /// Leave the field (and its value) out and report it as a
    /// [`SkippedField`].
    Skip,
}

/// How [`parse_message_with`] reads a text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// What to do with unknown fields.
    pub unknown_fields: UnknownFields,
}

/// An unknown field left out under [`UnknownFields::Skip`]; displays as a
/// warning in the form of [`TextConfigError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedField {
    /// The file name as given.
    pub file: String,
    /// 1-based line of the field's name.
    pub line: usize,
    /// 1-based column of the field's name.
    pub column: usize,
    /// The field's name as written.
    pub field: String,
    /// The full name of the message it was written in.
    pub message_type: String,
    /// The line of the field's name.
    pub source_line: String,
    /// Spaces and a `^` under the column.
    pub caret: String,
}

impl fmt::Display for SkippedField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{} warning: unknown field '{}' in {} skipped\n{}\n{}",
            self.file,
            self.line,
            self.column,
            self.field,
            self.message_type,
            self.source_line,
            self.caret
        )
    }
}

/// A parsed text message and the unknown fields left out of it.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The message.
    pub message: DynamicMessage,
    /// Unknown fields skipped (always empty under [`UnknownFields::Error`]).
    pub skipped: Vec<SkippedField>,
}

/// Parses `text` (named `file` in errors) as a message of type `desc`;
/// unknown fields are errors.
pub fn parse_message(
    desc: MessageDescriptor,
    file: &str,
    text: &str,
) -> Result<DynamicMessage, TextConfigError> {
    parse_message_with(desc, file, text, ParseOptions::default()).map(|p| p.message)
}

/// Parses `text` (named `file` in errors and warnings) as a message of type
/// `desc`, as `options` say.
pub fn parse_message_with(
    desc: MessageDescriptor,
    file: &str,
    text: &str,
    options: ParseOptions,
) -> Result<Parsed, TextConfigError> {
    let scanned = scan(text);
    if let Some(p) = scanned.too_deep {
        return Err(TextConfigError::at(file, text, p.offset, p.message));
    }
    let mut checker = Checker {
        text,
        tokens: &scanned.tokens,
        pos: 0,
        skip_unknown: options.unknown_fields == UnknownFields::Skip,
        skipped: Vec::new(),
    };
    let checked = match checker.fields(&desc, None) {
        Err(Stop::Found(p)) => Some(p),
        Ok(()) | Err(Stop::GiveUp) => None,
    };
    let blanked = blank(text, checker.skipped.iter().map(|s| s.span.clone()));
    let parsed = DynamicMessage::parse_text_format(desc, &blanked);
    let reflect = parsed
        .as_ref()
        .err()
        .map(|e| reflect_problem(e, &scanned, text));
    // The first problem in the text; on a tie, ours (they say more).
    let first = [scanned.error, checked, reflect]
        .into_iter()
        .flatten()
        .min_by_key(|p| p.offset);
    if let Some(p) = first {
        return Err(TextConfigError::at(file, text, p.offset, p.message));
    }
    let skipped = checker
        .skipped
        .into_iter()
        .map(|s| {
            let (line, column, source_line, caret) = locate(text, s.span.start);
            SkippedField {
                file: file.to_owned(),
                line,
                column,
                field: s.field,
                message_type: s.message_type,
                source_line,
                caret,
            }
        })
        .collect();
    parsed
        .map(|message| Parsed { message, skipped })
        .map_err(|e| TextConfigError::at(file, text, 0, e.to_string()))
}

/// Parses a text TraceConfig and returns its binary encoding.
pub fn parse(file: &str, text: &str) -> Result<Vec<u8>, TextConfigError> {
    Ok(parse_message(schema::trace_config(), file, text)?.encode_to_vec())
}

/// A binary message of type `desc` as text (every field by name).
pub fn to_text(desc: MessageDescriptor, bytes: &[u8]) -> Result<String, prost::DecodeError> {
    let msg = DynamicMessage::decode(desc, bytes)?;
    Ok(msg.to_text_format_with_options(
        &prost_reflect::text_format::FormatOptions::new()
            .pretty(true)
            .skip_unknown_fields(false),
    ))
}

/// A problem at a byte offset of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Problem {
    offset: usize,
    message: String,
}

/// prost-reflect's error as a problem: where its label points, or, for
/// errors at the end of the text (which carry no position), at the bracket
/// left open if there is one, else just after the last token.
fn reflect_problem(
    e: &prost_reflect::text_format::ParseError,
    scanned: &Scan,
    text: &str,
) -> Problem {
    use miette::Diagnostic;
    if let Some(label) = e.labels().and_then(|mut l| l.next()) {
        return Problem {
            offset: label.offset(),
            message: e.to_string(),
        };
    }
    // The end of the text. If the scan stopped early (at a lexical error),
    // its tokens and brackets are incomplete, and the lexical error is the
    // cause: put this one last.
    if scanned.error.is_some() {
        return Problem {
            offset: text.len(),
            message: e.to_string(),
        };
    }
    match scanned.unclosed {
        Some(open) => Problem {
            offset: open,
            message: format!(
                "'{}' is never closed: {e}",
                char::from(text.as_bytes()[open])
            ),
        },
        None => Problem {
            offset: scanned.tokens.last().map_or(0, |t| t.end),
            message: e.to_string(),
        },
    }
}

/// `text` with the bytes of `spans` turned to spaces (newlines kept).
fn blank(
    text: &str,
    spans: impl Iterator<Item = std::ops::Range<usize>>,
) -> std::borrow::Cow<'_, str> {
    let mut bytes: Option<Vec<u8>> = None;
    for span in spans {
        let b = bytes.get_or_insert_with(|| text.as_bytes().to_vec());
        for c in &mut b[span] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    }
    match bytes {
        None => std::borrow::Cow::Borrowed(text),
        // Spans run from a token's start to a token's end, so every
        // character is blanked whole and the bytes stay UTF-8 (the lossy
        // conversion never replaces anything).
        Some(b) => std::borrow::Cow::Owned(String::from_utf8_lossy(&b).into_owned()),
    }
}

// ---------------------------------------------------------------------------
// Tokens

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_]*`.
    Ident,
    /// An integer literal (decimal, `0x` hex or `0` octal), without sign.
    Int,
    /// A float literal, without sign.
    Float,
    /// A quoted string.
    Str,
    /// One of `{}[]<>,:;-./`.
    Punct(u8),
    /// Anything else (prost-reflect refuses it).
    Other,
}

/// A token: its kind and byte span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

/// What [`scan`] found.
#[derive(Debug, Default)]
struct Scan {
    /// The tokens, up to the first lexical error.
    tokens: Vec<Token>,
    /// The first lexical error.
    error: Option<Problem>,
    /// Nesting deeper than [`MAX_DEPTH`] (the text must not be parsed).
    too_deep: Option<Problem>,
    /// The offset of the innermost bracket never closed.
    unclosed: Option<usize>,
}

/// Tokenizes `text` (stopping at the first lexical error).
fn scan(text: &str) -> Scan {
    let b = text.as_bytes();
    let mut out = Scan::default();
    let mut open: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let tok = match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                i += 1;
                continue;
            }
            b'#' => {
                i = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |n| i + n);
                continue;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                Tok::Ident
            }
            c if c.is_ascii_digit()
                || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                match number(b, i) {
                    Ok((end, tok)) => {
                        i = end;
                        tok
                    }
                    Err(p) => {
                        out.error = Some(p);
                        break;
                    }
                }
            }
            q @ (b'"' | b'\'') => {
                let mut j = i + 1;
                loop {
                    match b.get(j) {
                        Some(&c) if c == q => break,
                        Some(b'\\') => j += 2,
                        Some(b'\n') | None => {
                            j = b.len() + 1;
                            break;
                        }
                        Some(_) => j += 1,
                    }
                }
                if j > b.len() || b.get(j) != Some(&q) {
                    out.error = Some(Problem {
                        offset: start,
                        message: "this string is never closed (a string ends on the line it \
                                  starts on)"
                            .to_owned(),
                    });
                    break;
                }
                i = j + 1;
                Tok::Str
            }
            c @ (b'{' | b'<' | b'[') => {
                open.push(i);
                if open.len() > MAX_DEPTH {
                    out.too_deep = Some(Problem {
                        offset: i,
                        message: format!("brackets nested more than {MAX_DEPTH} deep"),
                    });
                    break;
                }
                i += 1;
                Tok::Punct(c)
            }
            c @ (b'}' | b'>' | b']') => {
                open.pop();
                i += 1;
                Tok::Punct(c)
            }
            c @ (b',' | b':' | b';' | b'-' | b'.' | b'/') => {
                i += 1;
                Tok::Punct(c)
            }
            _ => {
                i += text[i..].chars().next().map_or(1, char::len_utf8);
                Tok::Other
            }
        };
        out.tokens.push(Token { tok, start, end: i });
    }
    out.unclosed = open.last().copied();
    out
}

/// The number starting at `b[i]`: where it ends and whether it is an
/// integer or a float (the literal forms prost-reflect's lexer takes).
fn number(b: &[u8], i: usize) -> Result<(usize, Tok), Problem> {
    let digits = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    if b[i] == b'0'
        && matches!(b.get(i + 1), Some(b'x' | b'X'))
        && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        let mut j = i + 2;
        while j < b.len() && b[j].is_ascii_hexdigit() {
            j += 1;
        }
        return Ok((j, Tok::Int));
    }
    let int_end = digits(i);
    let mut j = int_end;
    let mut float = false;
    if b.get(j) == Some(&b'.') {
        float = true;
        j = digits(j + 1);
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let k = if matches!(b.get(j + 1), Some(b'+' | b'-')) {
            j + 2
        } else {
            j + 1
        };
        if b.get(k).is_some_and(u8::is_ascii_digit) {
            float = true;
            j = digits(k);
        }
    }
    let leading_zero = b[i] == b'0' && int_end - i > 1;
    if matches!(b.get(j), Some(b'f' | b'F')) && (float || !leading_zero) {
        float = true;
        j += 1;
    }
    if !float && leading_zero && b[i..int_end].iter().any(|&c| c == b'8' || c == b'9') {
        return Err(Problem {
            offset: i,
            message: format!(
                "'{}' starts with 0, which makes it octal, but has the digit 8 or 9 \
                 (write it without the leading 0)",
                String::from_utf8_lossy(&b[i..int_end])
            ),
        });
    }
    Ok((j, if float { Tok::Float } else { Tok::Int }))
}

/// The value of an unsigned integer literal (`None` if too large).
fn int_value(literal: &str) -> Option<u128> {
    if let Some(hex) = literal
        .strip_prefix("0x")
        .or_else(|| literal.strip_prefix("0X"))
    {
        u128::from_str_radix(hex, 16).ok()
    } else if literal.len() > 1 && literal.starts_with('0') {
        u128::from_str_radix(&literal[1..], 8).ok()
    } else {
        literal.parse().ok()
    }
}

// ---------------------------------------------------------------------------
// The schema walk

/// Why [`Checker`] stopped early.
enum Stop {
    /// A problem it reports.
    Found(Problem),
    /// The tokens do not follow the grammar here (prost-reflect says how).
    GiveUp,
}

/// An unknown field blanked out under [`UnknownFields::Skip`].
struct Skip {
    span: std::ops::Range<usize>,
    field: String,
    message_type: String,
}

/// A field (or extension) the walk is reading a value of.
struct Target {
    name: String,
    kind: Kind,
    /// Repeated or map: takes `[...]` lists.
    repeated: bool,
}

impl Target {
    fn field(f: &FieldDescriptor) -> Target {
        Target {
            name: f.name().to_owned(),
            kind: f.kind(),
            repeated: f.is_list() || f.is_map(),
        }
    }
}

/// Walks the tokens against the schema; see the module documentation.
struct Checker<'a> {
    text: &'a str,
    tokens: &'a [Token],
    pos: usize,
    skip_unknown: bool,
    skipped: Vec<Skip>,
}

impl Checker<'_> {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.pos).copied()
    }

    fn is(&self, c: u8) -> bool {
        self.peek().is_some_and(|t| t.tok == Tok::Punct(c))
    }

    fn eat(&mut self, c: u8) -> bool {
        let yes = self.is(c);
        if yes {
            self.pos += 1;
        }
        yes
    }

    /// The next token, consumed; `GiveUp` at the end of the text.
    fn next(&mut self) -> Result<Token, Stop> {
        let t = self.peek().ok_or(Stop::GiveUp)?;
        self.pos += 1;
        Ok(t)
    }

    fn slice(&self, t: Token) -> &str {
        self.text.get(t.start..t.end).unwrap_or("")
    }

    /// The fields of a `desc` message, up to `closer` (or the end).
    fn fields(&mut self, desc: &MessageDescriptor, closer: Option<u8>) -> Result<(), Stop> {
        loop {
            let Some(t) = self.peek() else {
                return if closer.is_none() {
                    Ok(())
                } else {
                    Err(Stop::GiveUp)
                };
            };
            match t.tok {
                Tok::Punct(c) if Some(c) == closer => {
                    self.pos += 1;
                    return Ok(());
                }
                Tok::Ident => self.field(desc, t)?,
                Tok::Punct(b'[') => self.bracketed_field(desc)?,
                _ => return Err(Stop::GiveUp),
            }
            if !self.eat(b',') {
                self.eat(b';');
            }
        }
    }

    /// `name: value` (the name is the next token).
    fn field(&mut self, desc: &MessageDescriptor, name: Token) -> Result<(), Stop> {
        self.pos += 1;
        let text = self.slice(name);
        if let Some(f) = find_field(desc, text) {
            return self.value(&Target::field(&f));
        }
        if !self.skip_unknown {
            return Err(Stop::Found(Problem {
                offset: name.start,
                message: unknown_field(desc, text),
            }));
        }
        let field = text.to_owned();
        self.skip_value()?;
        if self.is(b',') || self.is(b';') {
            self.pos += 1;
        }
        let end = self.tokens[self.pos - 1].end;
        self.skipped.push(Skip {
            span: name.start..end,
            field,
            message_type: desc.full_name().to_owned(),
        });
        Ok(())
    }

    /// `[ext.name]: value` or `[domain/type.Name] { ... }`.
    fn bracketed_field(&mut self, desc: &MessageDescriptor) -> Result<(), Stop> {
        self.pos += 1;
        let mut name = String::new();
        let mut domain = None;
        loop {
            let t = self.next()?;
            match t.tok {
                Tok::Ident => name.push_str(self.slice(t)),
                Tok::Punct(b'.') => name.push('.'),
                Tok::Punct(b'/') if domain.is_none() => domain = Some(std::mem::take(&mut name)),
                Tok::Punct(b']') => break,
                _ => return Err(Stop::GiveUp),
            }
        }
        match domain {
            None => {
                let ext = desc.get_extension_by_full_name(&name).ok_or(Stop::GiveUp)?;
                self.value(&Target {
                    name: ext.name().to_owned(),
                    kind: ext.kind(),
                    repeated: ext.is_list() || ext.is_map(),
                })
            }
            Some(_) => {
                let inner = desc
                    .parent_pool()
                    .get_message_by_name(&name)
                    .ok_or(Stop::GiveUp)?;
                self.eat(b':');
                self.message_value(&inner)
            }
        }
    }

    /// The value of `target`, after its name: `: value`, `: [values]`, or
    /// a message without the colon.
    fn value(&mut self, target: &Target) -> Result<(), Stop> {
        if !(self.eat(b':') || self.is(b'{') || self.is(b'<')) {
            return Err(Stop::GiveUp);
        }
        if self.is(b'[') {
            let open = self.next()?;
            if !target.repeated {
                return Err(Stop::Found(Problem {
                    offset: open.start,
                    message: format!(
                        "'{}' is not a repeated field: it takes one value, not a list",
                        target.name
                    ),
                }));
            }
            if self.eat(b']') {
                return Ok(());
            }
            loop {
                self.single(target)?;
                if self.eat(b']') {
                    return Ok(());
                }
                if !self.eat(b',') {
                    return Err(Stop::GiveUp);
                }
            }
        }
        self.single(target)
    }

    /// `{ fields }` or `< fields >` of a `desc` message.
    fn message_value(&mut self, desc: &MessageDescriptor) -> Result<(), Stop> {
        let t = self.next()?;
        match t.tok {
            Tok::Punct(b'{') => self.fields(desc, Some(b'}')),
            Tok::Punct(b'<') => self.fields(desc, Some(b'>')),
            _ => Err(Stop::GiveUp),
        }
    }

    /// One value (not a list) of `target`.
    fn single(&mut self, target: &Target) -> Result<(), Stop> {
        let first = self.peek().ok_or(Stop::GiveUp)?;
        let wrong = |what: &str, found: &str| {
            Stop::Found(Problem {
                offset: first.start,
                message: format!(
                    "'{}' ({}) takes {what}, but found '{found}'",
                    target.name,
                    kind_name(&target.kind)
                ),
            })
        };
        match &target.kind {
            Kind::Message(desc) => {
                if self.is(b'{') || self.is(b'<') {
                    self.message_value(desc)
                } else {
                    Err(wrong("a message '{ ... }'", self.slice(first)))
                }
            }
            Kind::String | Kind::Bytes => {
                if first.tok != Tok::Str {
                    return Err(wrong("a quoted string", self.slice(first)));
                }
                while self.peek().is_some_and(|t| t.tok == Tok::Str) {
                    self.pos += 1;
                }
                Ok(())
            }
            Kind::Bool => {
                self.pos += 1;
                let s = self.slice(first);
                let ok = match first.tok {
                    Tok::Ident => matches!(s, "true" | "True" | "t" | "false" | "False" | "f"),
                    Tok::Int => matches!(int_value(s), Some(0 | 1)),
                    _ => false,
                };
                if ok {
                    Ok(())
                } else {
                    Err(wrong("true or false", s))
                }
            }
            Kind::Float | Kind::Double => {
                self.eat(b'-');
                let t = self.next()?;
                let s = self.slice(t);
                let ok = match t.tok {
                    Tok::Float => true,
                    // Decimal only, as in protoc and prost-reflect.
                    Tok::Int => s == "0" || !s.starts_with('0'),
                    Tok::Ident => ["inf", "infinity", "nan"]
                        .iter()
                        .any(|w| s.eq_ignore_ascii_case(w)),
                    _ => false,
                };
                if ok {
                    Ok(())
                } else {
                    Err(Stop::Found(Problem {
                        offset: t.start,
                        message: format!(
                            "'{}' ({}) takes a decimal number, but found '{s}'",
                            target.name,
                            kind_name(&target.kind)
                        ),
                    }))
                }
            }
            Kind::Enum(e) => self.enum_value(target, e),
            int => {
                let (min, max): (i128, i128) = match int {
                    Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                        (i32::MIN.into(), i32::MAX.into())
                    }
                    Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                        (i64::MIN.into(), i64::MAX.into())
                    }
                    Kind::Uint32 | Kind::Fixed32 => (0, u32::MAX.into()),
                    _ => (0, u64::MAX.into()),
                };
                self.integer(target, min, max).map(|_| ())
            }
        }
    }

    /// A `-`? integer of `target` within `min..=max`; its value.
    fn integer(&mut self, target: &Target, min: i128, max: i128) -> Result<i128, Stop> {
        let start = self.peek().ok_or(Stop::GiveUp)?;
        let negative = self.eat(b'-');
        let t = self.next()?;
        if t.tok != Tok::Int {
            return Err(Stop::Found(Problem {
                offset: t.start,
                message: format!(
                    "'{}' ({}) takes an integer, but found '{}'",
                    target.name,
                    kind_name(&target.kind),
                    self.slice(t)
                ),
            }));
        }
        let value = int_value(self.slice(t))
            .and_then(|v| i128::try_from(v).ok())
            .map(|v| if negative { -v } else { v });
        match value {
            Some(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(Stop::Found(Problem {
                offset: start.start,
                message: format!(
                    "{} is out of range for '{}' ({}: {min} to {max})",
                    self.text.get(start.start..t.end).unwrap_or(""),
                    target.name,
                    kind_name(&target.kind)
                ),
            })),
        }
    }

    /// An enum value by name or number.
    fn enum_value(&mut self, target: &Target, e: &EnumDescriptor) -> Result<(), Stop> {
        let t = self.peek().ok_or(Stop::GiveUp)?;
        let unknown = |what: String| {
            Stop::Found(Problem {
                offset: t.start,
                message: format!(
                    "{what} is not a value of {} (the type of '{}'); its values: {}",
                    e.full_name(),
                    target.name,
                    enum_values(e)
                ),
            })
        };
        match t.tok {
            Tok::Ident => {
                self.pos += 1;
                let name = self.slice(t);
                if e.get_value_by_name(name).is_some() {
                    Ok(())
                } else {
                    Err(unknown(format!("'{name}'")))
                }
            }
            Tok::Int | Tok::Punct(b'-') => {
                let number = self.integer(target, i32::MIN.into(), i32::MAX.into())?;
                let closed = e.parent_file().syntax() == Syntax::Proto2;
                let known = i32::try_from(number).is_ok_and(|n| e.get_value(n).is_some());
                if closed && !known {
                    Err(unknown(number.to_string()))
                } else {
                    Ok(())
                }
            }
            _ => Err(Stop::Found(Problem {
                offset: t.start,
                message: format!(
                    "'{}' ({}) takes an enum value name or number, but found '{}'",
                    target.name,
                    e.full_name(),
                    self.slice(t)
                ),
            })),
        }
    }

    /// Skips the value of an unknown field (after its name) without a
    /// schema: `: scalar`, `: "strings"`, or a bracketed value.
    fn skip_value(&mut self) -> Result<(), Stop> {
        let colon = self.eat(b':');
        let t = self.next()?;
        match t.tok {
            Tok::Punct(b'{' | b'<' | b'[') => {
                let mut depth = 1usize;
                while depth > 0 {
                    match self.next()?.tok {
                        Tok::Punct(b'{' | b'<' | b'[') => depth += 1,
                        Tok::Punct(b'}' | b'>' | b']') => depth -= 1,
                        _ => {}
                    }
                }
                Ok(())
            }
            _ if !colon => Err(Stop::GiveUp),
            Tok::Punct(b'-') => match self.next()?.tok {
                Tok::Int | Tok::Float | Tok::Ident => Ok(()),
                _ => Err(Stop::GiveUp),
            },
            Tok::Str => {
                while self.peek().is_some_and(|t| t.tok == Tok::Str) {
                    self.pos += 1;
                }
                Ok(())
            }
            Tok::Int | Tok::Float | Tok::Ident => Ok(()),
            _ => Err(Stop::GiveUp),
        }
    }
}

/// The field `name` of `desc` as prost-reflect finds it (a group also by
/// its type's name).
fn find_field(desc: &MessageDescriptor, name: &str) -> Option<FieldDescriptor> {
    match desc.get_field_by_name(name) {
        Some(f) if !f.is_group() => Some(f),
        _ => desc
            .get_field_by_name(&name.to_ascii_lowercase())
            .filter(|f| f.is_group() && f.kind().as_message().is_some_and(|m| m.name() == name)),
    }
}

/// The message for an unknown field `name` of `desc`, with the closest
/// known name if one is close.
fn unknown_field(desc: &MessageDescriptor, name: &str) -> String {
    let closest = desc
        .fields()
        .map(|f| (edit_distance(name, f.name()), f.name().to_owned()))
        .min();
    match closest {
        Some((d, known)) if d <= 2 && d * 3 <= name.len() => format!(
            "unknown field '{name}' in {} (did you mean '{known}'?)",
            desc.full_name()
        ),
        _ => format!(
            "unknown field '{name}' in {}: neither Perfetto v51's schema nor the newer \
             fields zerotrace declares have it",
            desc.full_name()
        ),
    }
}

/// The values of `e`, as `NAME = n, ...` (the first 12).
fn enum_values(e: &EnumDescriptor) -> String {
    let mut values: Vec<String> = e
        .values()
        .take(12)
        .map(|v| format!("{} = {}", v.name(), v.number()))
        .collect();
    if e.values().len() > 12 {
        values.push(format!("... ({} in all)", e.values().len()));
    }
    values.join(", ")
}

/// The type of a field as the `.proto` spells it.
fn kind_name(kind: &Kind) -> String {
    match kind {
        Kind::Double => "double".into(),
        Kind::Float => "float".into(),
        Kind::Int32 => "int32".into(),
        Kind::Int64 => "int64".into(),
        Kind::Uint32 => "uint32".into(),
        Kind::Uint64 => "uint64".into(),
        Kind::Sint32 => "sint32".into(),
        Kind::Sint64 => "sint64".into(),
        Kind::Fixed32 => "fixed32".into(),
        Kind::Fixed64 => "fixed64".into(),
        Kind::Sfixed32 => "sfixed32".into(),
        Kind::Sfixed64 => "sfixed64".into(),
        Kind::Bool => "bool".into(),
        Kind::String => "string".into(),
        Kind::Bytes => "bytes".into(),
        Kind::Message(m) => m.full_name().to_owned(),
        Kind::Enum(e) => e.full_name().to_owned(),
    }
}

/// The edit distance between `a` and `b` (insertions, deletions,
/// substitutions and swaps of neighbours each count 1).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: distance between a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::Value;

    #[test]
    fn parses_upstream_data_source_configs_and_newer_fields() {
        let text = r#"
            buffers { size_kb: 1024 fill_policy: RING_BUFFER name: "main" }
            data_sources: {
              config {
                name: "linux.ftrace"
                ftrace_config { ftrace_events: ["sched/sched_switch", "power/suspend_resume"] }
              }
            }
            write_flush_mode: WRITE_FLUSH_AUTO
            duration_ms: 0x2710
        "#;
        let bytes = parse("cfg.txt", text).unwrap();
        let back = to_text(schema::trace_config(), &bytes).unwrap();
        assert!(back.contains("sched/sched_switch"), "{back}");
        assert!(back.contains("duration_ms: 10000"), "{back}");
        assert!(back.contains("name: \"main\""), "{back}");
    }

    /// Parses `text` as a TraceConfig (unwrapping: tests only).
    fn config(text: &str) -> DynamicMessage {
        match parse_message(schema::trace_config(), "t.cfg", text) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    /// The value of the field at `path` (names, dot-separated; `name[i]`
    /// picks an element of a repeated field).
    fn get(msg: &DynamicMessage, path: &str) -> Value {
        let mut value = Value::Message(msg.clone());
        for step in path.split('.') {
            let (name, index) = match step.split_once('[') {
                Some((n, i)) => (n, Some(i.trim_end_matches(']').parse::<usize>().unwrap())),
                None => (step, None),
            };
            let Value::Message(m) = value else {
                panic!("{path}: {step} is not in a message")
            };
            let v = m
                .get_field_by_name(name)
                .unwrap_or_else(|| panic!("{path}: no {name}"))
                .into_owned();
            value = match index {
                Some(i) => v.as_list().unwrap()[i].clone(),
                None => v,
            };
        }
        value
    }

    #[test]
    fn message_values_with_and_without_colon_and_angle_brackets() {
        let m = config(
            "buffers { size_kb: 1 }\nbuffers: { size_kb: 2 }\nbuffers < size_kb: 3 >\nbuffers: < size_kb: 4 >",
        );
        for (i, kb) in [1u32, 2, 3, 4].into_iter().enumerate() {
            assert_eq!(get(&m, &format!("buffers[{i}].size_kb")), Value::U32(kb));
        }
    }

    #[test]
    fn enums_by_name_or_number() {
        let m = config("buffers { fill_policy: DISCARD } buffers { fill_policy: 1 }");
        assert_eq!(get(&m, "buffers[0].fill_policy"), Value::EnumNumber(2));
        assert_eq!(get(&m, "buffers[1].fill_policy"), Value::EnumNumber(1));
    }

    #[test]
    fn lists_of_scalars_enums_and_messages() {
        let m = config(
            r#"
            buffers: [{ size_kb: 10 }, { size_kb: 20 fill_policy: DISCARD }]
            data_sources {
              config {
                name: "linux.ftrace"
                ftrace_config {
                  ftrace_events: ["sched/sched_switch", "sched/sched_wakeup"]
                  ftrace_events: "power/cpu_idle"
                  atrace_apps: []
                }
              }
            }
            data_sources {
              config {
                name: "linux.process_stats"
                process_stats_config { quirks: [DISABLE_ON_DEMAND, 1] }
              }
            }
            "#,
        );
        assert_eq!(get(&m, "buffers[1].size_kb"), Value::U32(20));
        assert_eq!(get(&m, "buffers[1].fill_policy"), Value::EnumNumber(2));
        let events = get(&m, "data_sources[0].config.ftrace_config.ftrace_events");
        let events: Vec<_> = events.as_list().unwrap().to_vec();
        assert_eq!(
            events,
            ["sched/sched_switch", "sched/sched_wakeup", "power/cpu_idle"]
                .map(|s| Value::String(s.into()))
        );
        let quirks = get(&m, "data_sources[1].config.process_stats_config.quirks");
        assert_eq!(quirks.as_list().unwrap().len(), 2);
    }

    #[test]
    fn comments_and_separators() {
        let m = config(
            "# leading comment\nduration_ms: 5; # trailing comment\n\
             buffers { size_kb: 1, fill_policy: RING_BUFFER; }, \
             flush_period_ms: 7,\n# last line is a comment without newline",
        );
        assert_eq!(get(&m, "duration_ms"), Value::U32(5));
        assert_eq!(get(&m, "flush_period_ms"), Value::U32(7));
        assert_eq!(get(&m, "buffers[0].fill_policy"), Value::EnumNumber(1));
    }

    #[test]
    fn strings_concatenate_and_unescape() {
        let m = config(
            r#"unique_session_name: "ab" 'cd'
                 "\n\t\\\"\'\x41\101\u00e9"
               bugreport_filename: 'it''s'"#,
        );
        assert_eq!(
            get(&m, "unique_session_name"),
            Value::String("abcd\n\t\\\"'AA\u{e9}".into())
        );
        assert_eq!(get(&m, "bugreport_filename"), Value::String("its".into()));
    }

    #[test]
    fn integers_in_decimal_hex_and_octal() {
        let m = config(
            "duration_ms: 0x7fffffff\nflush_period_ms: 0X1f\nfile_write_period_ms: 017\n\
             max_file_size_bytes: 18446744073709551615 buffers { size_kb: 0 }",
        );
        assert_eq!(get(&m, "duration_ms"), Value::U32(0x7fff_ffff));
        assert_eq!(get(&m, "flush_period_ms"), Value::U32(31));
        assert_eq!(get(&m, "file_write_period_ms"), Value::U32(15));
        assert_eq!(get(&m, "max_file_size_bytes"), Value::U64(u64::MAX));
        assert_eq!(get(&m, "buffers[0].size_kb"), Value::U32(0));
    }

    /// Parses `text` as a `TestConfig.DummyFields`, the message that has a
    /// field of every scalar type.
    fn dummy(text: &str) -> DynamicMessage {
        let desc = schema::pool()
            .get_message_by_name("perfetto.protos.TestConfig.DummyFields")
            .unwrap();
        match parse_message(desc, "d.cfg", text) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn every_scalar_type_with_negative_numbers_and_exponents() {
        let m = dummy(
            r#"
            field_uint32: 4294967295 field_int32: -2147483648
            field_uint64: 0xFFFFFFFFFFFFFFFF field_int64: -9223372036854775808
            field_fixed64: 01777777777777777777777 field_sfixed64: -0x10
            field_fixed32: 0 field_sfixed32: - 7
            field_double: -1.5e-3 field_float: 2.5E+2f
            field_sint64: -077 field_sint32: -1
            field_string: "s" field_bytes: "\x00\xff"
            "#,
        );
        let expect = [
            ("field_uint32", Value::U32(u32::MAX)),
            ("field_int32", Value::I32(i32::MIN)),
            ("field_uint64", Value::U64(u64::MAX)),
            ("field_int64", Value::I64(i64::MIN)),
            ("field_fixed64", Value::U64(u64::MAX)),
            ("field_sfixed64", Value::I64(-16)),
            ("field_fixed32", Value::U32(0)),
            ("field_sfixed32", Value::I32(-7)),
            ("field_double", Value::F64(-1.5e-3)),
            ("field_float", Value::F32(250.0)),
            ("field_sint64", Value::I64(-63)),
            ("field_sint32", Value::I32(-1)),
            ("field_string", Value::String("s".into())),
            ("field_bytes", Value::Bytes(vec![0u8, 0xff].into())),
        ];
        for (name, value) in expect {
            assert_eq!(get(&m, name), value, "{name}");
        }
    }

    #[test]
    fn floats_in_every_spelling() {
        for (text, value) in [
            ("1", 1.0),
            ("-2", -2.0),
            ("3.", 3.0),
            (".5", 0.5),
            ("1e3", 1000.0),
            ("1E-2", 0.01),
            ("-6.25e+1", -62.5),
            ("7f", 7.0),
            ("inf", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ] {
            let m = dummy(&format!("field_double: {text}"));
            assert_eq!(get(&m, "field_double"), Value::F64(value), "{text}");
        }
        let m = dummy("field_double: nan");
        assert!(get(&m, "field_double").as_f64().unwrap().is_nan());
    }

    #[test]
    fn booleans() {
        let desc = schema::trace_config();
        for (text, value) in [
            ("true", true),
            ("True", true),
            ("t", true),
            ("1", true),
            ("false", false),
            ("False", false),
            ("f", false),
            ("0", false),
        ] {
            let m = parse_message(
                desc.clone(),
                "b",
                &format!("enable_extra_guardrails: {text}"),
            )
            .unwrap();
            assert_eq!(
                get(&m, "enable_extra_guardrails"),
                Value::Bool(value),
                "{text}"
            );
        }
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let text = "buffers { size_kb: 1024 }\ndata_sources { config { nmae: \"x\" } }\n";
        let e = parse("my.cfg", text).unwrap_err();
        assert_eq!((e.line, e.column), (2, 25), "{e}");
        let shown = e.to_string();
        assert!(shown.starts_with("my.cfg:2:25 error: "), "{shown}");
        assert!(shown.contains("nmae"), "{shown}");
        assert!(
            shown.ends_with(&format!("\n{}^", " ".repeat(24))),
            "{shown}"
        );
    }

    /// The error for `text` as a TraceConfig: line, column and message.
    fn error(text: &str) -> (usize, usize, String) {
        match parse("e.cfg", text) {
            Ok(_) => panic!("{text:?} parsed"),
            Err(e) => {
                // The display is always the convention's three lines.
                let shown = e.to_string();
                let lines: Vec<&str> = shown.lines().collect();
                assert_eq!(
                    lines[0],
                    format!("e.cfg:{}:{} error: {}", e.line, e.column, e.message)
                );
                assert_eq!(lines[1], text.lines().nth(e.line - 1).unwrap_or(""));
                assert_eq!(lines[2], format!("{}^", " ".repeat(e.column - 1)));
                (e.line, e.column, e.message)
            }
        }
    }

    #[track_caller]
    fn assert_error(text: &str, line: usize, column: usize, needles: &[&str]) {
        let (l, c, message) = error(text);
        assert_eq!((l, c), (line, column), "{text:?}: {message}");
        for n in needles {
            assert!(message.contains(n), "{text:?}: {message:?} lacks {n:?}");
        }
    }

    #[test]
    fn unknown_fields_are_errors_naming_the_field() {
        assert_error(
            "buffers { size_kb: 1 }\nduraton_ms: 3\n",
            2,
            1,
            &[
                "unknown field 'duraton_ms' in perfetto.protos.TraceConfig",
                "'duration_ms'",
            ],
        );
        // A field newer than both v51 and our protos.
        assert_error(
            "duration_ms: 1\n  buffers { size_kb: 1 frobnicate_on_v99: true }",
            2,
            24,
            &[
                "unknown field 'frobnicate_on_v99' in perfetto.protos.TraceConfig.BufferConfig",
                "neither Perfetto v51's schema nor the newer fields zerotrace declares",
            ],
        );
    }

    #[test]
    fn bad_enum_values() {
        assert_error(
            "buffers {\n  fill_policy: RING\n}",
            2,
            16,
            &[
                "'RING' is not a value of perfetto.protos.TraceConfig.BufferConfig.FillPolicy",
                "'fill_policy'",
                "RING_BUFFER = 1",
            ],
        );
        // Perfetto's enums are closed (proto2): numbers must be declared.
        assert_error(
            "buffers { fill_policy: 9 }",
            1,
            24,
            &["9 is not a value of perfetto.protos.TraceConfig.BufferConfig.FillPolicy"],
        );
        assert_error("buffers { fill_policy: -1 }", 1, 24, &["-1 is not a value"]);
        assert_error(
            "buffers { fill_policy: \"DISCARD\" }",
            1,
            24,
            &["takes an enum value name or number, but found '\"DISCARD\"'"],
        );
    }

    #[test]
    fn values_of_the_wrong_type() {
        assert_error(
            "buffers {\n  size_kb: \"big\"\n}",
            2,
            12,
            &["'size_kb' (uint32) takes an integer, but found '\"big\"'"],
        );
        assert_error(
            "duration_ms: 1.5",
            1,
            14,
            &["'duration_ms' (uint32) takes an integer"],
        );
        assert_error(
            "buffers: 5",
            1,
            10,
            &["'buffers' (perfetto.protos.TraceConfig.BufferConfig) takes a message"],
        );
        assert_error(
            "unique_session_name: abc",
            1,
            22,
            &["takes a quoted string, but found 'abc'"],
        );
        assert_error(
            "enable_extra_guardrails: 2",
            1,
            26,
            &["takes true or false"],
        );
        assert_error(
            "duration_ms: [1, 2]",
            1,
            14,
            &["'duration_ms' is not a repeated field"],
        );
        assert_error(
            "data_sources { config { for_testing { dummy_fields { field_double: 0x10 } } } }",
            1,
            68,
            &["'field_double' (double) takes a decimal number, but found '0x10'"],
        );
        // A scalar written like a message.
        assert_error(
            "duration_ms { }",
            1,
            13,
            &["takes an integer, but found '{'"],
        );
    }

    #[test]
    fn integers_out_of_range_as_written() {
        assert_error(
            "buffers { size_kb: 0x1FFFFFFFF }",
            1,
            20,
            &["0x1FFFFFFFF is out of range for 'size_kb' (uint32: 0 to 4294967295)"],
        );
        assert_error(
            "\n\nbuffers { size_kb: -1 }",
            3,
            20,
            &["-1 is out of range for 'size_kb'"],
        );
        assert_error(
            "max_file_size_bytes: 18446744073709551616",
            1,
            22,
            &["out of range", "uint64: 0 to 18446744073709551615"],
        );
        assert_error(
            "data_sources { config { for_testing { dummy_fields {\n  field_int32: -2147483649 } } } }",
            2,
            16,
            &["-2147483649 is out of range for 'field_int32' (int32: -2147483648 to 2147483647)"],
        );
        assert_error(
            "duration_ms: 99999999999999999999999999999999999999999999",
            1,
            14,
            &["is out of range"],
        );
    }

    #[test]
    fn unterminated_strings_point_at_their_quote() {
        assert_error(
            "duration_ms: 1\nunique_session_name: \"abc\nflush_period_ms: 1",
            2,
            22,
            &["this string is never closed"],
        );
        assert_error("unique_session_name: 'abc", 1, 22, &["never closed"]);
        // An escaped quote does not end a string.
        assert_error("unique_session_name: \"a\\\"", 1, 22, &["never closed"]);
    }

    #[test]
    fn unclosed_brackets_point_at_the_bracket() {
        assert_error(
            "buffers {\n  size_kb: 1\n",
            1,
            9,
            &["'{' is never closed", "reached end of input"],
        );
        // The innermost one left open.
        assert_error(
            "data_sources {\n  config {\n    name: \"x\"\n  }\n# end\n",
            1,
            14,
            &["'{' is never closed"],
        );
        assert_error(
            "buffers: [\n  { size_kb: 1 },\n",
            1,
            10,
            &["'[' is never closed"],
        );
        assert_error("buffers < size_kb: 1", 1, 9, &["'<' is never closed"]);
    }

    #[test]
    fn a_missing_value_at_the_end_points_after_the_last_token() {
        assert_error(
            "duration_ms: 1\nflush_period_ms:   \n# trailing comment\n",
            2,
            17,
            &["expected an integer, but reached end of input"],
        );
    }

    #[test]
    fn other_syntax_errors_keep_prost_reflects_positions() {
        assert_error(
            "buffers { size_kb: 1 } }",
            1,
            24,
            &["expected a field name, but found '}'"],
        );
        assert_error(
            "duration_ms: 1 duration_ms: 2",
            1,
            29,
            &["'duration_ms' is already set"],
        );
        // Columns count characters, not bytes.
        assert_error(
            "unique_session_name: \"h\u{e9}llo\" @",
            1,
            30,
            &["invalid token"],
        );
        assert_error(
            "duration_ms: 09",
            1,
            14,
            &["'09' starts with 0, which makes it octal"],
        );
        assert_error("duration_ms 5", 1, 13, &["expected ':'"]);
    }

    #[test]
    fn the_first_problem_in_the_text_wins() {
        // A syntax error before an unknown field.
        assert_error(
            "duration_ms: 1 2\nfrob: 1",
            1,
            16,
            &["expected a field name"],
        );
        // An undeclared enum number (which prost-reflect would take) before
        // a syntax error.
        assert_error("buffers { fill_policy: 9 }\n@", 1, 24, &["not a value"]);
        // A lexical error after an unknown field.
        assert_error(
            "frob: 1\nunique_session_name: \"x",
            1,
            1,
            &["unknown field"],
        );
    }

    #[test]
    fn nesting_is_limited() {
        let deep = "data_sources { ".repeat(MAX_DEPTH + 1);
        let (line, column, message) = error(&deep);
        assert_eq!(line, 1);
        assert_eq!(column, 15 * MAX_DEPTH + 14);
        assert!(message.contains("nested more than 100 deep"), "{message}");
    }

    #[test]
    fn unknown_fields_can_be_skipped() {
        let text = "frob: 1, duration_ms: 5; zork { a: [1, 2] x: \"y\" }\n\
                    buffers { size_kb: 1 nope: - 3; fill_policy: DISCARD }\n\
                    quux: \"a\" 'b' # a comment\n\
                    flush_period_ms: 6\n";
        let options = ParseOptions {
            unknown_fields: UnknownFields::Skip,
        };
        let parsed = parse_message_with(schema::trace_config(), "s.cfg", text, options).unwrap();
        let m = &parsed.message;
        assert_eq!(get(m, "duration_ms"), Value::U32(5));
        assert_eq!(get(m, "buffers[0].size_kb"), Value::U32(1));
        assert_eq!(get(m, "buffers[0].fill_policy"), Value::EnumNumber(2));
        assert_eq!(get(m, "flush_period_ms"), Value::U32(6));
        let at: Vec<_> = parsed
            .skipped
            .iter()
            .map(|s| (s.field.as_str(), s.message_type.as_str(), s.line, s.column))
            .collect();
        assert_eq!(
            at,
            [
                ("frob", "perfetto.protos.TraceConfig", 1, 1),
                ("zork", "perfetto.protos.TraceConfig", 1, 26),
                ("nope", "perfetto.protos.TraceConfig.BufferConfig", 2, 22),
                ("quux", "perfetto.protos.TraceConfig", 3, 1),
            ]
        );
        assert_eq!(
            parsed.skipped[2].to_string(),
            format!(
                "s.cfg:2:22 warning: unknown field 'nope' in \
                 perfetto.protos.TraceConfig.BufferConfig skipped\n{}\n{}^",
                text.lines().nth(1).unwrap(),
                " ".repeat(21)
            )
        );
        // Other errors are still errors, at their place in the text.
        let e = parse_message_with(
            schema::trace_config(),
            "s.cfg",
            "frob { x: 1 }\nduration_ms: x",
            options,
        )
        .unwrap_err();
        assert_eq!((e.line, e.column), (2, 14), "{e}");
        // By default, unknown fields are errors.
        assert!(parse("s.cfg", "frob: 1").is_err());
    }

    #[test]
    fn tokens() {
        let text = "a_1: -0x1F 017 0 1.5 .5e3 2f 1e 'q\\'' # c\n{}[]<>,:;./ \u{e9}";
        let got: Vec<(Tok, &str)> = scan(text)
            .tokens
            .iter()
            .map(|t| (t.tok, &text[t.start..t.end]))
            .collect();
        use Tok::*;
        assert_eq!(
            got,
            [
                (Ident, "a_1"),
                (Punct(b':'), ":"),
                (Punct(b'-'), "-"),
                (Int, "0x1F"),
                (Int, "017"),
                (Int, "0"),
                (Float, "1.5"),
                (Float, ".5e3"),
                (Float, "2f"),
                (Int, "1"),
                (Ident, "e"),
                (Str, "'q\\''"),
                (Punct(b'{'), "{"),
                (Punct(b'}'), "}"),
                (Punct(b'['), "["),
                (Punct(b']'), "]"),
                (Punct(b'<'), "<"),
                (Punct(b'>'), ">"),
                (Punct(b','), ","),
                (Punct(b':'), ":"),
                (Punct(b';'), ";"),
                (Punct(b'.'), "."),
                (Punct(b'/'), "/"),
                (Other, "\u{e9}"),
            ]
        );
        let s = scan("a { b [ c < >");
        assert_eq!(s.unclosed, Some(6));
        assert!(s.error.is_none());
        // 09 is an error, 09.5 and 09e1 are floats.
        assert!(scan("x: 09").error.is_some());
        assert_eq!(scan("x: 09.5 09e1").tokens[2].tok, Float);
        assert_eq!(scan("x: 09.5 09e1").tokens[3].tok, Float);
    }

    #[test]
    fn integer_literals() {
        assert_eq!(int_value("0"), Some(0));
        assert_eq!(int_value("42"), Some(42));
        assert_eq!(int_value("052"), Some(42));
        assert_eq!(int_value("0x2a"), Some(42));
        assert_eq!(int_value("0X2A"), Some(42));
        assert_eq!(int_value("1".repeat(50).as_str()), None);
    }

    #[test]
    fn blanking_keeps_positions() {
        let text = "ab\u{e9} #\u{e9}\ncd\nef";
        let b = blank(text, std::iter::once(2..10));
        assert_eq!(b, "ab      \n d\nef");
        assert_eq!(b.len(), text.len());
        assert_eq!(blank(text, std::iter::empty()), text);
    }

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("nmae", "name"), 1);
        assert_eq!(edit_distance("buffer", "buffers"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
