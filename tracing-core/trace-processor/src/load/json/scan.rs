//! The JSON of Chrome's trace format, read as Perfetto reads it: leniently
//! (trailing commas pass, an unknown escape is dropped), one value at a
//! time over bytes that may end anywhere, so that the streaming reader can
//! tell "the value goes on in the next chunk" from "this is not JSON".
//! Objects and arrays nested in a value are not built: they are handed
//! back as their raw bytes and read again only by who needs them (args,
//! `id2`), so an event costs no tree.

use std::borrow::Cow;

/// One JSON value; objects and arrays as their bytes (brackets included).
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number written without fraction or exponent that fits an i64.
    Int(i64),
    /// Any other number.
    Float(f64),
    /// A string, unescaped.
    Str(Cow<'a, str>),
    /// An object's bytes, `{` to `}`.
    Object(&'a [u8]),
    /// An array's bytes, `[` to `]`.
    Array(&'a [u8]),
}

impl<'a> Value<'a> {
    /// The string, when the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Why a value could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanError {
    /// The bytes end inside the value: more may follow.
    Incomplete,
    /// The bytes are not JSON here.
    Invalid(String),
}

/// A read: the value and the position just past it.
pub type Scanned<'a, T> = Result<(T, usize), ScanError>;

fn invalid<T>(msg: impl Into<String>) -> Result<T, ScanError> {
    Err(ScanError::Invalid(msg.into()))
}

/// Whether `b` is JSON whitespace.
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first position at or after `pos` that is not whitespace.
pub fn skip_space(buf: &[u8], mut pos: usize) -> usize {
    while buf.get(pos).copied().is_some_and(is_space) {
        pos += 1;
    }
    pos
}

/// The end (just past the closing quote) of the string opening at `pos`,
/// and whether it holds a backslash.
fn string_end(buf: &[u8], pos: usize) -> Scanned<'static, bool> {
    if buf.get(pos) != Some(&b'"') {
        return invalid("expected '\"'");
    }
    let mut i = pos + 1;
    let mut escapes = false;
    loop {
        let rel = memchr2(b'"', b'\\', buf.get(i..).unwrap_or(&[])).ok_or(ScanError::Incomplete)?;
        i += rel;
        if buf.get(i) == Some(&b'\\') {
            escapes = true;
            // The escaped byte, whatever it is, is skipped.
            i += 2;
            if i > buf.len() {
                return Err(ScanError::Incomplete);
            }
            continue;
        }
        return Ok((escapes, i + 1));
    }
}

/// The first of two bytes in `hay`, looked for eight bytes at a time (a
/// word's bytes equal to either become its zero bytes, found by the
/// borrow trick; the lowest is exact).
fn memchr2(a: u8, b: u8, hay: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let (ra, rb) = (LO * u64::from(a), LO * u64::from(b));
    let mut words = hay.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(w);
        let w = u64::from_le_bytes(bytes);
        let (x, y) = (w ^ ra, w ^ rb);
        let zeros = (x.wrapping_sub(LO) & !x & HI) | (y.wrapping_sub(LO) & !y & HI);
        if zeros != 0 {
            return Some(at + (zeros.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&c| c == a || c == b)
        .map(|i| at + i)
}

/// Unescapes a string's contents (between its quotes); valid UTF-8 (the
/// rule) becomes the string without a second copy.
fn unescape(raw: &[u8]) -> Result<String, ScanError> {
    Ok(match String::from_utf8(unescape_bytes(raw)?) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// A string's contents with its escapes replaced (the bytes not yet
/// checked to be UTF-8).
fn unescape_bytes(raw: &[u8]) -> Result<Vec<u8>, ScanError> {
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut i = 0;
    loop {
        // The bytes up to the next backslash, copied at once.
        let rest = raw.get(i..).unwrap_or(&[]);
        let run = memchr2(b'\\', b'\\', rest).unwrap_or(rest.len());
        out.extend_from_slice(rest.get(..run).unwrap_or(&[]));
        i += run + 1;
        if i > raw.len() {
            break;
        }
        let Some(&e) = raw.get(i) else { break };
        i += 1;
        match e {
            b'"' | b'\\' | b'/' => out.push(e),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'u' => {
                let hex = raw
                    .get(i..i + 4)
                    .ok_or_else(|| ScanError::Invalid("short \\u escape".to_owned()))?;
                i += 4;
                let hex = std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .ok_or_else(|| ScanError::Invalid("bad \\u escape".to_owned()))?;
                // Surrogates (halves of a pair) are refused, as upstream does.
                let ch = char::from_u32(hex)
                    .ok_or_else(|| ScanError::Invalid("surrogate in \\u escape".to_owned()))?;
                let mut b = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
            }
            // Any other escaped byte is dropped.
            _ => {}
        }
    }
    Ok(out)
}

/// The string opening at `pos` as bytes, unescaped but not checked to be
/// UTF-8 (a key compared with known names, or looked up by its bytes,
/// needs no check; `String::from_utf8_lossy` of them is what [`string`]
/// gives).
pub fn string_bytes(buf: &[u8], pos: usize) -> Scanned<'_, Cow<'_, [u8]>> {
    let (escapes, end) = string_end(buf, pos)?;
    let raw = buf.get(pos + 1..end - 1).unwrap_or(&[]);
    let s = if escapes {
        Cow::Owned(unescape_bytes(raw)?)
    } else {
        Cow::Borrowed(raw)
    };
    Ok((s, end))
}

/// The string opening at `pos`, unescaped.
pub fn string(buf: &[u8], pos: usize) -> Scanned<'_, Cow<'_, str>> {
    let (escapes, end) = string_end(buf, pos)?;
    let raw = buf.get(pos + 1..end - 1).unwrap_or(&[]);
    let s = if escapes {
        Cow::Owned(unescape(raw)?)
    } else {
        // Valid UTF-8 (nearly always) is borrowed after the fast check.
        match std::str::from_utf8(raw) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(raw),
        }
    };
    Ok((s, end))
}

/// The end (just past the closing bracket) of the object or array opening
/// at `pos`; strings inside are skipped whole.
pub fn block_end(buf: &[u8], pos: usize) -> Scanned<'static, ()> {
    let (open, close) = match buf.get(pos) {
        Some(b'{') => (b'{', b'}'),
        Some(b'[') => (b'[', b']'),
        _ => return invalid("expected '{' or '['"),
    };
    let mut depth: u32 = 0;
    let mut i = pos;
    while let Some(&c) = buf.get(i) {
        if c == b'"' {
            i = string_end(buf, i)?.1;
            continue;
        }
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Ok(((), i + 1));
            }
        }
        i += 1;
    }
    Err(ScanError::Incomplete)
}

/// The end of an object whose bytes arrive in pieces, found without
/// reading its start again for each piece (a large event pushed a byte
/// at a time is scanned once): the scan's state between pieces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockScan {
    /// Bytes of the object scanned so far.
    i: usize,
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl BlockScan {
    /// Whether nothing was scanned yet.
    pub fn is_fresh(&self) -> bool {
        self.i == 0
    }

    /// Goes on over `block` (the object's bytes from its `{`, as many as
    /// have arrived); the object's length once its closing `}` is seen.
    pub fn advance(&mut self, block: &[u8]) -> Option<usize> {
        while let Some(&c) = block.get(self.i) {
            self.i += 1;
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if c == b'\\' {
                    self.escaped = true;
                } else if c == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match c {
                b'"' => self.in_string = true,
                b'{' => self.depth += 1,
                b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(self.i);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// A number's text as upstream reads it: an integer when written as one
/// and within i64, else a double built from its parts. The value is
/// gathered as the digits are scanned when that gives the very number
/// [`parse_number`] makes of the text (an integer of up to 19 digits; a
/// fraction without exponent, of at most 15 integral and 18 fractional
/// digits); the rest are read again from their text.
fn number(buf: &[u8], pos: usize) -> Scanned<'static, Value<'static>> {
    let rest = buf.get(pos..).unwrap_or(&[]);
    let neg = rest.first() == Some(&b'-');
    let mut i = usize::from(neg);
    // Up to 19 digits fit a u64 whatever they are.
    let mut magnitude: u64 = 0;
    let int_start = i;
    match rest.get(i) {
        Some(b'0') => {
            i += 1;
            if rest.get(i).is_some_and(u8::is_ascii_digit) {
                return invalid("leading zero in number");
            }
        }
        Some(b'1'..=b'9') => {
            while let Some(&c) = rest.get(i) {
                let d = c.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                magnitude = magnitude.wrapping_mul(10).wrapping_add(u64::from(d));
                i += 1;
            }
        }
        Some(_) => return invalid("expected a digit"),
        None => return Err(ScanError::Incomplete),
    }
    let int_digits = i - int_start;
    let mut int_like = true;
    // The fraction's digits as an integer and their count.
    let mut frac: u64 = 0;
    let mut frac_digits = 0usize;
    let mut exponent = false;
    if rest.get(i) == Some(&b'.') {
        int_like = false;
        i += 1;
        while let Some(&c) = rest.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            frac = frac.wrapping_mul(10).wrapping_add(u64::from(d));
            frac_digits += 1;
            i += 1;
        }
        if frac_digits == 0 && i < rest.len() {
            return invalid("expected a digit after '.'");
        }
    }
    if matches!(rest.get(i), Some(b'e' | b'E')) {
        int_like = false;
        exponent = true;
        i += 1;
        if matches!(rest.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let s = i;
        while rest.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == s && i < rest.len() {
            return invalid("expected a digit after 'e'");
        }
    }
    // A number ending the bytes may go on in the next chunk.
    if i >= rest.len() {
        return Err(ScanError::Incomplete);
    }
    let end = pos + i;
    if int_like && int_digits <= 19 {
        let int = if !neg {
            i64::try_from(magnitude).ok()
        } else if magnitude <= 1 << 63 {
            Some((magnitude as i64).wrapping_neg())
        } else {
            None
        };
        if let Some(v) = int {
            return Ok((Value::Int(v), end));
        }
    }
    if !int_like && !exponent && int_digits <= 15 && frac_digits <= 18 {
        // What `parse_number` computes: the integral part (exact below
        // 2^53) plus the fraction's digits over their power of ten.
        let divisor = 10u64.pow(frac_digits as u32);
        let out = magnitude as f64 + frac as f64 / divisor as f64;
        return Ok((Value::Float(if neg { -out } else { out }), end));
    }
    let text = std::str::from_utf8(rest.get(..i).unwrap_or(&[])).unwrap_or("");
    Ok((parse_number(text, int_like)?, end))
}

/// A number from its text (already checked to be one).
pub fn parse_number(text: &str, int_like: bool) -> Result<Value<'static>, ScanError> {
    if int_like {
        if let Ok(v) = text.parse::<i64>() {
            return Ok(Value::Int(v));
        }
    }
    let (neg, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(p) => (&rest[..p], Some(&rest[p + 1..])),
        None => (rest, None),
    };
    let (int_part, frac) = match mantissa.find('.') {
        Some(p) => (&mantissa[..p], &mantissa[p + 1..]),
        None => (mantissa, ""),
    };
    let mut int_v: f64 = 0.0;
    for d in int_part.bytes() {
        int_v = int_v * 10.0 + f64::from(d - b'0');
    }
    let mut frac_v: i64 = 0;
    let mut divisor: u64 = 1;
    for d in frac.bytes() {
        frac_v = frac_v.wrapping_mul(10).wrapping_add(i64::from(d - b'0'));
        divisor = divisor.wrapping_mul(10);
    }
    let mut out = int_v + frac_v as f64 / divisor as f64;
    if let Some(e) = exp {
        let (eneg, digits) = match e.as_bytes().first() {
            Some(b'-') => (true, &e[1..]),
            Some(b'+') => (false, &e[1..]),
            _ => (false, e),
        };
        let mut ev: i64 = 0;
        for d in digits.bytes() {
            ev = ev.saturating_mul(10).saturating_add(i64::from(d - b'0'));
        }
        let p = 10f64.powf(ev as f64);
        if eneg {
            out /= p;
        } else if ev > 0 {
            out *= p;
        }
    }
    if !out.is_finite() {
        return invalid(format!("number out of range: {text}"));
    }
    Ok(Value::Float(if neg { -out } else { out }))
}

/// The value starting at `pos` (no whitespace before it).
pub fn value(buf: &[u8], pos: usize) -> Scanned<'_, Value<'_>> {
    let word = |w: &[u8], v: Value<'static>| -> Scanned<'static, Value<'static>> {
        match buf.get(pos..pos + w.len()) {
            None if buf.len() - pos < w.len() && w.starts_with(&buf[pos..]) => {
                Err(ScanError::Incomplete)
            }
            Some(s) if s == w => Ok((v, pos + w.len())),
            _ => invalid("unexpected token"),
        }
    };
    match buf.get(pos) {
        None => Err(ScanError::Incomplete),
        Some(b'{') => {
            let (_, end) = block_end(buf, pos)?;
            Ok((Value::Object(&buf[pos..end]), end))
        }
        Some(b'[') => {
            let (_, end) = block_end(buf, pos)?;
            Ok((Value::Array(&buf[pos..end]), end))
        }
        Some(b'"') => {
            let (s, end) = string(buf, pos)?;
            Ok((Value::Str(s), end))
        }
        Some(b't') => word(b"true", Value::Bool(true)),
        Some(b'f') => word(b"false", Value::Bool(false)),
        Some(b'n') => word(b"null", Value::Null),
        Some(_) => number(buf, pos),
    }
}

/// Reads the fields of one object, in order, without descending into
/// nested objects and arrays; a comma before the closing brace passes.
#[derive(Debug)]
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> Fields<'a> {
    /// The fields of the object opening at `pos` (whitespace may precede).
    pub fn new(buf: &'a [u8], pos: usize) -> Result<Self, ScanError> {
        let pos = skip_space(buf, pos);
        match buf.get(pos) {
            Some(b'{') => Ok(Fields {
                buf,
                pos: pos + 1,
                done: false,
            }),
            Some(_) => invalid("expected '{'"),
            None => Err(ScanError::Incomplete),
        }
    }

    /// Where the reading is: past the closing brace once the last field
    /// was read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The next field, or None at the closing brace.
    #[allow(clippy::type_complexity)]
    pub fn next_field(&mut self) -> Result<Option<(Cow<'a, str>, Value<'a>)>, ScanError> {
        self.next_with(string)
    }

    /// The next field, its key read by `key`.
    fn next_with<K>(
        &mut self,
        key: fn(&'a [u8], usize) -> Scanned<'a, K>,
    ) -> Result<Option<(K, Value<'a>)>, ScanError> {
        let Some(k) = self.key_with(key)? else {
            return Ok(None);
        };
        let (v, next) = value(self.buf, self.pos)?;
        self.after_value(next)?;
        Ok(Some((k, v)))
    }

    /// The next field's key as `K` (None at the closing brace), the
    /// reading left at its value: the caller reads the value from
    /// [`Fields::position`] and goes on with [`Fields::after_value`].
    /// `plain` matches the key by its raw bytes from its opening quote
    /// (and says where its string ends), so that a key written plainly is
    /// never built; any other key is read and unescaped, then given to
    /// `named`.
    pub fn next_key_as<K>(
        &mut self,
        plain: impl Fn(&'a [u8], usize) -> Option<(K, usize)>,
        named: impl Fn(&[u8]) -> K,
    ) -> Result<Option<K>, ScanError> {
        if self.done {
            return Ok(None);
        }
        let buf = self.buf;
        let mut pos = skip_space(buf, self.pos);
        match buf.get(pos) {
            None => return Err(ScanError::Incomplete),
            Some(b'}') => {
                self.pos = pos + 1;
                self.done = true;
                return Ok(None);
            }
            Some(b'"') => {}
            Some(_) => return invalid("expected a key"),
        }
        let (k, next) = match plain(buf, pos) {
            Some(k) => k,
            None => {
                let (bytes, next) = string_bytes(buf, pos)?;
                (named(&bytes), next)
            }
        };
        pos = next;
        if buf.get(pos) != Some(&b':') {
            pos = skip_space(buf, pos);
            match buf.get(pos) {
                None => return Err(ScanError::Incomplete),
                Some(b':') => {}
                Some(_) => return invalid("expected ':'"),
            }
        }
        self.pos = skip_space(buf, pos + 1);
        Ok(Some(k))
    }

    /// The value read by the caller ended at `end`: steps over the comma
    /// or up to the closing brace.
    pub fn after_value(&mut self, end: usize) -> Result<(), ScanError> {
        let mut pos = skip_space(self.buf, end);
        match self.buf.get(pos) {
            None => return Err(ScanError::Incomplete),
            Some(b',') => pos += 1,
            Some(b'}') => {}
            Some(_) => return invalid("expected ',' or '}'"),
        }
        self.pos = pos;
        Ok(())
    }

    /// The next key and colon, the reading left at the value's start.
    fn key_with<K>(
        &mut self,
        key: fn(&'a [u8], usize) -> Scanned<'a, K>,
    ) -> Result<Option<K>, ScanError> {
        if self.done {
            return Ok(None);
        }
        let buf = self.buf;
        let mut pos = skip_space(buf, self.pos);
        match buf.get(pos) {
            None => return Err(ScanError::Incomplete),
            Some(b'}') => {
                self.pos = pos + 1;
                self.done = true;
                return Ok(None);
            }
            Some(b'"') => {}
            Some(_) => return invalid("expected a key"),
        }
        let (k, next) = key(buf, pos)?;
        pos = skip_space(buf, next);
        match buf.get(pos) {
            None => return Err(ScanError::Incomplete),
            Some(b':') => {}
            Some(_) => return invalid("expected ':'"),
        }
        self.pos = skip_space(buf, pos + 1);
        Ok(Some(k))
    }
}

/// Reads the elements of one array, in order; a trailing comma passes.
#[derive(Debug)]
pub struct Elements<'a> {
    buf: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> Elements<'a> {
    /// The elements of the array opening at `pos`.
    pub fn new(buf: &'a [u8], pos: usize) -> Result<Self, ScanError> {
        let pos = skip_space(buf, pos);
        match buf.get(pos) {
            Some(b'[') => Ok(Elements {
                buf,
                pos: pos + 1,
                done: false,
            }),
            Some(_) => invalid("expected '['"),
            None => Err(ScanError::Incomplete),
        }
    }

    /// The next element, or None at the closing bracket.
    pub fn next_element(&mut self) -> Result<Option<Value<'a>>, ScanError> {
        if self.done {
            return Ok(None);
        }
        let buf = self.buf;
        let pos = skip_space(buf, self.pos);
        match buf.get(pos) {
            None => return Err(ScanError::Incomplete),
            Some(b']') => {
                self.pos = pos + 1;
                self.done = true;
                return Ok(None);
            }
            Some(_) => {}
        }
        let (v, next) = value(buf, pos)?;
        let mut pos = skip_space(buf, next);
        match buf.get(pos) {
            None => return Err(ScanError::Incomplete),
            Some(b',') => pos += 1,
            Some(b']') => {}
            Some(_) => return invalid("expected ',' or ']'"),
        }
        self.pos = pos;
        Ok(Some(v))
    }
}

#[cfg(test)]
mod tests;
