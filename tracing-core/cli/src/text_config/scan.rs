//! The tokenizer: finds what the parser reports poorly (strings left open,
//! leading zeros, unclosed brackets, nesting too deep) at the user's positions.

use super::{MAX_DEPTH, Problem};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok {
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
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// What [`scan`] found.
#[derive(Debug, Default)]
pub(super) struct Scan {
    /// The tokens, up to the first lexical error.
    pub(super) tokens: Vec<Token>,
    /// The first lexical error.
    pub(super) error: Option<Problem>,
    /// Nesting deeper than [`MAX_DEPTH`] (the text must not be parsed).
    pub(super) too_deep: Option<Problem>,
    /// The offset of the innermost bracket never closed.
    pub(super) unclosed: Option<usize>,
}

/// Tokenizes `text` (stopping at the first lexical error).
pub(super) fn scan(text: &str) -> Scan {
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
pub(super) fn number(b: &[u8], i: usize) -> Result<(usize, Tok), Problem> {
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
pub(super) fn int_value(literal: &str) -> Option<u128> {
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
