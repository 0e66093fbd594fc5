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
use prost_reflect::{DynamicMessage, MessageDescriptor};

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

mod checker;
mod scan;
#[cfg(test)]
mod tests;

use checker::*;
use scan::*;
