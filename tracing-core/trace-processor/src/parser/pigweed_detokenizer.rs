//! Pigweed's tokenized strings, detokenized as upstream's pixel modem
//! importer detokenizes them.
//!
//! A token database (Pigweed's binary format: a 16-byte header, the
//! `TOKENS` magic, version 0, the entry count and a reserved word, then one
//! `{token, date_removed}` pair of little-endian words per entry and a
//! table of NUL-terminated format strings in the same order) maps each
//! live token (never removed) to a printf-style format string. A tokenized message is its token (4
//! bytes, little-endian) followed by its arguments: each integer (and
//! each `*` width or precision) a zigzag varint, each float 4 bytes.
//! Each argument is printed by its conversion, with its flags, width and
//! precision, as C's `snprintf` prints it into a 32-byte buffer (a longer
//! number is an error, as there); an argument the message lacks prints as
//! `<ERROR>`. A token the database lacks detokenizes to the text `Token
//! not found`.

use std::collections::HashMap;

/// Why a database or a message could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DetokenizeError {
    /// The database is shorter than its header.
    #[error("Truncated Pigweed database (no header)")]
    NoHeader,
    /// The database does not start with the magic.
    #[error("Pigweed database has wrong magic")]
    WrongMagic,
    /// The entries run past the end.
    #[error("Truncated Pigweed database (no string table)")]
    NoStringTable,
    /// A string has no terminating NUL.
    #[error("Truncated Pigweed database (string table not terminated)")]
    Unterminated,
    /// A message shorter than its token.
    #[error("Truncated Pigweed payload")]
    TruncatedPayload,
    /// A varint argument is cut short.
    #[error("Truncated Pigweed varint")]
    TruncatedVarint,
    /// A float argument is cut short.
    #[error("Truncated Pigweed float")]
    TruncatedFloat,
    /// A number prints longer than the buffer.
    #[error("Exceeded buffer size for number")]
    TooLong,
}

/// The largest width or precision printed: any output longer than the
/// 31 characters a conversion may print is an error anyway, so a larger
/// one (a hostile `%999999999d`) is not allocated.
const MAX_AMOUNT: u64 = 1 << 10;

/// What a conversion reads and how it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    SignedInt,
    Unsigned32,
    Unsigned64,
    Pointer,
    Char,
    Float,
}

/// A width or precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Amount {
    None,
    Given(i64),
    Star,
}

/// One conversion of a format string.
#[derive(Debug, Clone)]
struct Arg {
    kind: Kind,
    flags: String,
    width: Amount,
    precision: Amount,
    conversion: u8,
    begin: usize,
    end: usize,
}

/// A format string and its conversions.
#[derive(Debug, Clone)]
pub struct FormatString {
    template: String,
    args: Vec<Arg>,
}

/// A detokenized argument's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue {
    /// A signed integer (`%d`, `%i`, `%c`).
    Int(i64),
    /// An unsigned integer (`%u`, `%x`, `%o`, `%p`).
    Uint(u64),
    /// A float.
    Real(f64),
}

/// A detokenized message.
#[derive(Debug, Clone)]
pub struct Detokenized {
    /// The token.
    pub token: u32,
    format: FormatString,
    /// The arguments read, in order.
    pub args: Vec<ArgValue>,
    printed: Vec<String>,
}

/// A token database (empty: every token is unknown).
#[derive(Debug, Clone, Default)]
pub struct Detokenizer {
    tokens: HashMap<u32, FormatString>,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl Detokenizer {
    /// The database's live tokens.
    pub fn new(db: &[u8]) -> Result<Self, DetokenizeError> {
        const HEADER: usize = 16;
        if db.len() < HEADER {
            return Err(DetokenizeError::NoHeader);
        }
        if &db[..8] != b"TOKENS\0\0" {
            return Err(DetokenizeError::WrongMagic);
        }
        let count = u32_at(db, 8).unwrap_or(0) as usize;
        let mut entry = HEADER;
        let mut string = count
            .checked_mul(8)
            .and_then(|n| n.checked_add(HEADER))
            .filter(|&s| s <= db.len())
            .ok_or(DetokenizeError::NoStringTable)?;
        let mut tokens = HashMap::new();
        for _ in 0..count {
            let token = u32_at(db, entry).unwrap_or(0);
            let removed = u32_at(db, entry + 4).unwrap_or(0);
            let rest = db.get(string..).unwrap_or_default();
            let len = rest
                .iter()
                .position(|&b| b == 0)
                .ok_or(DetokenizeError::Unterminated)?;
            if removed == u32::MAX {
                let text = String::from_utf8_lossy(&rest[..len]).into_owned();
                tokens.insert(token, FormatString::parse(text));
            }
            entry += 8;
            string += len + 1;
        }
        Ok(Detokenizer { tokens })
    }

    /// A message's token, format and arguments.
    pub fn detokenize(&self, message: &[u8]) -> Result<Detokenized, DetokenizeError> {
        let token = u32_at(message, 0).ok_or(DetokenizeError::TruncatedPayload)?;
        let Some(format) = self.tokens.get(&token) else {
            return Ok(Detokenized {
                token,
                format: FormatString::parse("Token not found".to_owned()),
                args: Vec::new(),
                printed: Vec::new(),
            });
        };
        let mut rest = &message[4..];
        let mut args = Vec::new();
        let mut printed = Vec::new();
        let read_varint = |rest: &mut &[u8]| -> Result<i64, DetokenizeError> {
            let (raw, n) = protozero::varint::decode_varint(rest)
                .map_err(|_| DetokenizeError::TruncatedVarint)?;
            *rest = &rest[n..];
            Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
        };
        for arg in &format.args {
            let mut spec = Spec::of(arg);
            if arg.width == Amount::Star {
                let w = read_varint(&mut rest)?;
                spec.left |= w < 0;
                spec.width = w.unsigned_abs().min(MAX_AMOUNT) as usize;
            }
            if arg.precision == Amount::Star {
                let p = read_varint(&mut rest)?;
                spec.precision = (p >= 0).then_some(p.min(MAX_AMOUNT as i64) as usize);
            }
            let text = if arg.kind == Kind::Float {
                let b = rest.get(..4).ok_or(DetokenizeError::TruncatedFloat)?;
                let v = f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                rest = &rest[4..];
                args.push(ArgValue::Real(v));
                spec.float(v)
            } else {
                let v = read_varint(&mut rest)?;
                match arg.kind {
                    Kind::SignedInt => {
                        args.push(ArgValue::Int(v));
                        spec.signed(v)
                    }
                    Kind::Char => {
                        args.push(ArgValue::Int(v));
                        spec.pad(String::from(char::from(v as u8)), "", false)
                    }
                    _ => {
                        let mut u = v as u64;
                        if arg.kind == Kind::Unsigned32 {
                            u &= 0xffff_ffff;
                        }
                        args.push(ArgValue::Uint(u));
                        if arg.kind == Kind::Pointer {
                            spec.pointer(u)
                        } else {
                            spec.unsigned(u)
                        }
                    }
                }
            };
            // snprintf into 32 bytes keeps 31 characters.
            if text.len() >= 31 {
                return Err(DetokenizeError::TooLong);
            }
            printed.push(text);
            if rest.is_empty() {
                break;
            }
        }
        Ok(Detokenized {
            token,
            format: format.clone(),
            args,
            printed,
        })
    }
}

/// The byte at `i`, or NUL past the end (as C reads a string).
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

impl FormatString {
    /// A format string's conversions.
    fn parse(template: String) -> Self {
        let s = template.as_bytes();
        let mut args = Vec::new();
        let mut i = 0;
        while i < s.len() {
            if s[i] != b'%' {
                i += 1;
                continue;
            }
            let begin = i;
            i += 1;
            let flags_start = i;
            while matches!(at(s, i), b'-' | b'+' | b'#' | b' ' | b'0') {
                i += 1;
            }
            let flags = String::from_utf8_lossy(&s[flags_start..i.min(s.len())]).into_owned();
            let amount = |i: &mut usize| -> Amount {
                if at(s, *i) == b'*' {
                    *i += 1;
                    return Amount::Star;
                }
                let start = *i;
                if matches!(at(s, *i), b'-' | b'+') {
                    *i += 1;
                }
                let digits = *i;
                while at(s, *i).is_ascii_digit() {
                    *i += 1;
                }
                if *i == digits {
                    return Amount::None;
                }
                let text = String::from_utf8_lossy(&s[start..*i]);
                Amount::Given(text.parse().unwrap_or(i64::MAX))
            };
            let width = amount(&mut i);
            let mut precision = Amount::None;
            if at(s, i) == b'.' {
                i += 1;
                precision = match amount(&mut i) {
                    // `%.f`: a precision of zero.
                    Amount::None => Amount::Given(0),
                    a => a,
                };
            }
            let (l0, l1) = (at(s, i), at(s, i + 1));
            let length = if l0 == l1 && (l0 == b'l' || l0 == b'h') {
                [l0, l1]
            } else if b"hljztL".contains(&l0) && l0 != 0 {
                [l0, 0]
            } else {
                [0, 0]
            };
            i += usize::from(length[0] != 0) + usize::from(length[1] != 0);
            let conversion = at(s, i);
            let kind = match conversion {
                b'd' | b'i' => Some(Kind::SignedInt),
                b'c' => Some(Kind::Char),
                b'p' => Some(Kind::Pointer),
                b'o' | b'x' | b'X' | b'u' => Some(if length[0] == b'j' || length[1] == b'l' {
                    Kind::Unsigned64
                } else {
                    Kind::Unsigned32
                }),
                b'f' | b'F' | b'e' | b'E' | b'a' | b'A' | b'g' | b'G' => Some(Kind::Float),
                _ => None,
            };
            if let Some(kind) = kind {
                args.push(Arg {
                    kind,
                    flags: flags.clone(),
                    width,
                    precision,
                    conversion,
                    begin,
                    end: i + 1,
                });
            }
            i += 1;
        }
        FormatString { template, args }
    }
}

impl Detokenized {
    /// The format string.
    pub fn template(&self) -> &str {
        &self.format.template
    }

    /// The message: the format string with each conversion replaced by its
    /// printed argument (`<ERROR>` for one the message lacked).
    pub fn format(&self) -> String {
        let t = &self.format.template;
        let args = &self.format.args;
        let Some(first) = args.first() else {
            return t.clone();
        };
        let piece = |a: usize, b: usize| t.get(a.min(t.len())..b.min(t.len())).unwrap_or("");
        let mut out = piece(0, first.begin).to_owned();
        for (i, arg) in args.iter().enumerate() {
            out.push_str(self.printed.get(i).map_or("<ERROR>", String::as_str));
            let next = args.get(i + 1).map_or(t.len(), |n| n.begin);
            out.push_str(piece(arg.end, next));
        }
        out
    }
}

/// One conversion's printing options, as `snprintf` takes them.
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    conversion: u8,
}

impl Spec {
    fn of(arg: &Arg) -> Self {
        let has = |c| arg.flags.contains(c);
        let mut spec = Spec {
            left: has('-'),
            plus: has('+'),
            space: has(' '),
            alt: has('#'),
            zero: has('0'),
            width: 0,
            precision: None,
            conversion: arg.conversion,
        };
        if let Amount::Given(w) = arg.width {
            spec.left |= w < 0;
            spec.width = w.unsigned_abs().min(MAX_AMOUNT) as usize;
        }
        if let Amount::Given(p) = arg.precision {
            spec.precision = (p >= 0).then_some(p.min(MAX_AMOUNT as i64) as usize);
        }
        spec
    }

    /// `body` after `prefix` (a sign, `0x`), padded to the width: spaces,
    /// or zeros between prefix and body when `zeros`.
    fn pad(&self, body: String, prefix: &str, zeros: bool) -> String {
        let len = prefix.len() + body.len();
        if len >= self.width {
            return format!("{prefix}{body}");
        }
        let fill = self.width - len;
        if self.left {
            format!("{prefix}{body}{}", " ".repeat(fill))
        } else if zeros && self.zero {
            format!("{prefix}{}{body}", "0".repeat(fill))
        } else {
            format!("{}{prefix}{body}", " ".repeat(fill))
        }
    }

    fn sign(&self, negative: bool) -> &'static str {
        if negative {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }

    /// Digits with the precision's minimum count (none for a zero with a
    /// zero precision).
    fn digits(&self, digits: String, zero: bool) -> String {
        match self.precision {
            Some(0) if zero => String::new(),
            Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
            _ => digits,
        }
    }

    fn signed(&self, v: i64) -> String {
        let digits = self.digits(v.unsigned_abs().to_string(), v == 0);
        self.pad(digits, self.sign(v < 0), self.precision.is_none())
    }

    fn unsigned(&self, v: u64) -> String {
        let (digits, prefix) = match self.conversion {
            b'o' => {
                let mut d = self.digits(format!("{v:o}"), v == 0);
                if self.alt && !d.starts_with('0') {
                    d.insert(0, '0');
                }
                (d, "")
            }
            b'x' => (
                self.digits(format!("{v:x}"), v == 0),
                if self.alt && v != 0 { "0x" } else { "" },
            ),
            b'X' => (
                self.digits(format!("{v:X}"), v == 0),
                if self.alt && v != 0 { "0X" } else { "" },
            ),
            _ => (self.digits(v.to_string(), v == 0), ""),
        };
        self.pad(digits, prefix, self.precision.is_none())
    }

    fn pointer(&self, v: u64) -> String {
        if v == 0 {
            return self.pad("(nil)".to_owned(), "", false);
        }
        let digits = self.digits(format!("{v:x}"), false);
        self.pad(digits, if self.plus { "+0x" } else { "0x" }, false)
    }

    fn float(&self, v: f64) -> String {
        let upper = self.conversion.is_ascii_uppercase();
        let sign = self.sign(v.is_sign_negative());
        if !v.is_finite() {
            let text = match (v.is_nan(), upper) {
                (true, false) => "nan",
                (true, true) => "NAN",
                (false, false) => "inf",
                (false, true) => "INF",
            };
            return self.pad(text.to_owned(), sign, false);
        }
        let a = v.abs();
        let body = match self.conversion.to_ascii_lowercase() {
            b'f' => self.fixed(a, self.precision.unwrap_or(6)),
            b'e' => self.exponent(a, self.precision.unwrap_or(6)),
            b'g' => self.general(a),
            _ => return self.hex_float(a, sign, upper),
        };
        let body = if upper {
            body.to_ascii_uppercase()
        } else {
            body
        };
        self.pad(body, sign, true)
    }

    fn fixed(&self, a: f64, precision: usize) -> String {
        let mut s = format!("{a:.precision$}");
        if self.alt && precision == 0 {
            s.push('.');
        }
        s
    }

    /// `d.ddde±XX`, and the exponent.
    fn exponent_parts(a: f64, precision: usize) -> (String, i32) {
        let s = format!("{a:.precision$e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        (mantissa.to_owned(), exp.parse().unwrap_or(0))
    }

    fn exponent(&self, a: f64, precision: usize) -> String {
        let (mut mantissa, exp) = Self::exponent_parts(a, precision);
        if self.alt && precision == 0 {
            mantissa.push('.');
        }
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
    }

    fn general(&self, a: f64) -> String {
        let p = match self.precision {
            Some(0) => 1,
            Some(p) => p,
            None => 6,
        };
        let (_, x) = Self::exponent_parts(a, p - 1);
        let x = i64::from(x);
        let mut s = if (p as i64) > x && x >= -4 {
            self.fixed(a, (p as i64 - 1 - x) as usize)
        } else {
            self.exponent(a, p - 1)
        };
        if !self.alt {
            let (num, exp) = match s.find('e') {
                Some(i) => (s[..i].to_owned(), s[i..].to_owned()),
                None => (s.clone(), String::new()),
            };
            let num = if num.contains('.') {
                num.trim_end_matches('0').trim_end_matches('.').to_owned()
            } else {
                num
            };
            s = format!("{num}{exp}");
        }
        s
    }

    /// `%a`: the hexadecimal mantissa and the binary exponent.
    fn hex_float(&self, a: f64, sign: &str, upper: bool) -> String {
        let bits = a.to_bits();
        let raw_exp = ((bits >> 52) & 0x7ff) as i64;
        let mut mantissa = bits & ((1u64 << 52) - 1);
        let (mut lead, exp) = match (raw_exp, mantissa) {
            (0, 0) => (0u64, 0i64),
            (0, _) => (0, -1022),
            _ => (1, raw_exp - 1023),
        };
        let mut digits = 13usize;
        if let Some(p) = self.precision.filter(|&p| p < 13) {
            let drop = (13 - p) * 4;
            let half = 1u64 << (drop - 1);
            let rem = mantissa & ((1u64 << drop) - 1);
            mantissa >>= drop;
            if rem > half || (rem == half && mantissa & 1 == 1) {
                mantissa += 1;
                if mantissa >> (p * 4) != 0 {
                    mantissa &= (1u64 << (p * 4)).wrapping_sub(1);
                    lead += 1;
                }
            }
            digits = p;
        }
        let mut hex = if digits == 0 {
            String::new()
        } else {
            format!("{mantissa:0digits$x}")
        };
        if self.precision.is_none() {
            hex = hex.trim_end_matches('0').to_owned();
        } else if let Some(p) = self.precision.filter(|&p| p > 13) {
            hex.push_str(&"0".repeat(p - 13));
        }
        let point = if !hex.is_empty() || self.alt { "." } else { "" };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        let body = format!("{lead}{point}{hex}p{exp_sign}{}", exp.unsigned_abs());
        let prefix = format!("{sign}0x");
        let (body, prefix) = if upper {
            (body.to_ascii_uppercase(), prefix.to_ascii_uppercase())
        } else {
            (body, prefix)
        };
        self.pad(body, &prefix, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn print(format: &str, payload: &[u8]) -> String {
        let mut db = b"TOKENS\0\0\x01\x00\x00\x00\x00\x00\x00\x00".to_vec();
        db.extend_from_slice(&7u32.to_le_bytes());
        db.extend_from_slice(&u32::MAX.to_le_bytes());
        db.extend_from_slice(format.as_bytes());
        db.push(0);
        let d = Detokenizer::new(&db).expect("database");
        let mut msg = 7u32.to_le_bytes().to_vec();
        msg.extend_from_slice(payload);
        d.detokenize(&msg).expect("message").format()
    }

    /// The zigzag varints of `values`.
    fn zz(values: &[i64]) -> Vec<u8> {
        let mut out = Vec::new();
        for &v in values {
            let mut buf = [0u8; 10];
            let n = protozero::varint::encode_varint(((v << 1) ^ (v >> 63)) as u64, &mut buf);
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    #[test]
    fn integers_print_as_snprintf_prints_them() {
        assert_eq!(
            print("a=%d b=%5d c=%-4d|", &zz(&[-3, 42, 7])),
            "a=-3 b=   42 c=7   |"
        );
        assert_eq!(print("%05d %+d %.3d", &zz(&[-42, 5, 7])), "-0042 +5 007");
        assert_eq!(
            print("%x %#X %o %#o", &zz(&[31, 31, 8, 8])),
            "1f 0X1F 10 010"
        );
        assert_eq!(print("%u", &zz(&[-1])), "4294967295");
        assert_eq!(print("%c%c", &zz(&[104, 105])), "hi");
        assert_eq!(print("%*d|%-*d|", &zz(&[4, 1, 3, 2])), "   1|2  |");
    }

    #[test]
    fn floats_print_as_snprintf_prints_them() {
        let f = |v: f32| v.to_le_bytes();
        assert_eq!(print("%f", &f(1.5)), "1.500000");
        assert_eq!(
            print("%.2f|%8.3f", &[f(1.23456), f(-2.5)].concat()),
            "1.23|  -2.500"
        );
        assert_eq!(print("%e", &f(1500.0)), "1.500000e+03");
        assert_eq!(print("%.1E", &f(0.00025)), "2.5E-04");
        assert_eq!(
            print("%g %g %g", &[f(100000.0), f(1e6), f(0.0001)].concat()),
            "100000 1e+06 0.0001"
        );
        assert_eq!(print("%a", &f(1.0)), "0x1p+0");
        assert_eq!(print("%a", &f(-0.75)), "-0x1.8p-1");
    }

    #[test]
    fn a_missing_argument_is_an_error_marker_and_an_unknown_token_is_told() {
        assert_eq!(print("%d and %d", &zz(&[1])), "1 and <ERROR>");
        let d = Detokenizer::default();
        let t = d.detokenize(&9u32.to_le_bytes()).expect("message");
        assert_eq!((t.token, t.format()), (9, "Token not found".to_owned()));
        assert_eq!(
            d.detokenize(&[1, 2]).err(),
            Some(DetokenizeError::TruncatedPayload)
        );
        assert_eq!(
            Detokenizer::new(b"TOKENS").err(),
            Some(DetokenizeError::NoHeader)
        );
        assert_eq!(
            Detokenizer::new(&[0; 16]).err(),
            Some(DetokenizeError::WrongMagic)
        );
    }
}
