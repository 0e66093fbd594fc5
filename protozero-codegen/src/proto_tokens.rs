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

/// The bytes a string literal (its quotes included) stands for, its
/// escapes read as protoc's tokenizer reads them: `\a \b \f \n \r \t \v
/// \\ \? \' \"`, up to three octal digits, `\x` with one or two hex
/// digits, `\u` with four and `\U` with eight (a code point, written as
/// UTF-8). `None` for an escape protoc refuses, a surrogate, or a literal
/// without its closing quote.
pub(crate) fn string_value(literal: &str) -> Option<Vec<u8>> {
    let b = literal.as_bytes();
    let quote = *b.first()?;
    if !(quote == b'"' || quote == b'\'') || b.len() < 2 || b[b.len() - 1] != quote {
        return None;
    }
    let body = &b[1..b.len() - 1];
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    let digits = |from: usize, max: usize, radix: u32| -> (u32, usize) {
        let mut value = 0u32;
        let mut n = 0;
        while n < max {
            match body
                .get(from + n)
                .and_then(|&c| char::from(c).to_digit(radix))
            {
                Some(d) => value = value * radix + d,
                None => break,
            }
            n += 1;
        }
        (value, n)
    };
    while i < body.len() {
        let c = body[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let e = *body.get(i + 1)?;
        i += 2;
        match e {
            b'0'..=b'7' => {
                let (v, n) = digits(i - 1, 3, 8);
                // Three octal digits reach 0o777; protoc keeps the low byte.
                out.push((v & 0xff) as u8);
                i += n - 1;
            }
            b'x' | b'X' => {
                let (v, n) = digits(i, 2, 16);
                if n == 0 {
                    return None;
                }
                out.push(v as u8);
                i += n;
            }
            b'u' | b'U' => {
                let len = if e == b'u' { 4 } else { 8 };
                let (v, n) = digits(i, len, 16);
                if n != len {
                    return None;
                }
                let ch = char::from_u32(v)?;
                let mut buf = [0; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                i += n;
            }
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'\\' | b'?' | b'\'' | b'"' => out.push(e),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::string_value;

    #[test]
    fn escapes_read_as_protoc_reads_them() {
        let v = |s: &str| string_value(s).map(|b| String::from_utf8_lossy(&b).into_owned());
        assert_eq!(v(r#""plain""#).as_deref(), Some("plain"));
        assert_eq!(v(r"'single'").as_deref(), Some("single"));
        assert_eq!(
            v(r#""a\x62\143\u0064\U00000065""#).as_deref(),
            Some("abcde")
        );
        assert_eq!(v(r#""\n\t\\\"\'\?""#).as_deref(), Some("\n\t\\\"'?"));
        assert_eq!(v(r#""\u00e9""#).as_deref(), Some("é"));
        assert_eq!(string_value(r#""\0\1""#), Some(vec![0, 1]));
        assert_eq!(string_value(r#""\x4""#), Some(vec![4]));
        assert_eq!(string_value(r#""\q""#), None);
        assert_eq!(string_value(r#""\x""#), None);
        assert_eq!(string_value(r#""\u12""#), None);
        assert_eq!(string_value(r#""\ud800""#), None);
        assert_eq!(string_value(r#""open"#), None);
        assert_eq!(string_value(r#""\"#), None);
        assert_eq!(string_value(""), None);
    }
}
