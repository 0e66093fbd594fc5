//! The `.proto` lexer the lowering reads statements with: words, numbers,
//! quoted strings and single punctuation characters, with their byte
//! ranges; comments and white space left out.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An identifier or keyword.
    Word,
    /// A number.
    Number,
    /// A quoted string.
    Str,
    /// One character of punctuation.
    Punct,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Token {
    /// What it is.
    pub(crate) kind: Kind,
    /// Its first byte in the source.
    pub(crate) start: usize,
    /// One past its last byte.
    pub(crate) end: usize,
}

/// The tokens of `src`, comments and white space left out. Lexing stops at
/// an unterminated string or comment (protox reports it).
pub(crate) fn lex(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            match src[i + 2..].find("*/") {
                Some(end) => i += 2 + end + 2,
                None => break,
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token {
                kind: Kind::Word,
                start,
                end: i,
            });
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < b.len() {
                let d = b[i];
                let exponent_sign = (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E');
                if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Token {
                kind: Kind::Number,
                start,
                end: i,
            });
        } else if c == b'"' || c == b'\'' {
            i += 1;
            loop {
                match b.get(i) {
                    None | Some(b'\n') => return out,
                    Some(b'\\') => i += 2,
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            out.push(Token {
                kind: Kind::Str,
                start,
                end: i.min(b.len()),
            });
        } else {
            // One character; a multi-byte one stays whole.
            i += src[i..].chars().next().map_or(1, char::len_utf8);
            out.push(Token {
                kind: Kind::Punct,
                start,
                end: i,
            });
        }
    }
    out
}
