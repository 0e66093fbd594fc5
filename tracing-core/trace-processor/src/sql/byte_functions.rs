//! The prelude's conversions between text, bytes and integers:
//! `reverse(text)`, `base64_encode(blob)`, `base64_decode(text or blob)`
//! and `unhex(text)` (Perfetto's: hex text, with an optional `0x` and
//! surrounding whitespace, read as a 64-bit integer, where SQLite's own
//! `unhex` returns bytes). NULL gives NULL; a value of the wrong kind or
//! malformed input is an error with upstream's wording.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};

fn error(msg: &str) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(msg.to_owned().into())
}

fn reverse(ctx: &Context<'_>) -> rusqlite::Result<Value> {
    match ctx.get_raw(0) {
        ValueRef::Null => Ok(Value::Null),
        ValueRef::Text(t) => Ok(Value::Text(
            String::from_utf8_lossy(t).chars().rev().collect(),
        )),
        _ => Err(error("REVERSE: argument should be string")),
    }
}

fn base64_encode(ctx: &Context<'_>) -> rusqlite::Result<Value> {
    match ctx.get_raw(0) {
        ValueRef::Null => Ok(Value::Null),
        ValueRef::Blob(b) => Ok(Value::Text(STANDARD.encode(b))),
        _ => Err(error("Base64Encode only supports bytes argument")),
    }
}

fn base64_decode(ctx: &Context<'_>) -> rusqlite::Result<Value> {
    let bytes = match ctx.get_raw(0) {
        ValueRef::Null => return Ok(Value::Null),
        ValueRef::Text(t) | ValueRef::Blob(t) => t,
        _ => return Err(error("BASE64: argument must be string or blob")),
    };
    STANDARD
        .decode(bytes)
        .map(Value::Blob)
        .map_err(|_| error("BASE64: Invalid input"))
}

fn unhex(ctx: &Context<'_>) -> rusqlite::Result<Value> {
    let text = match ctx.get_raw(0) {
        ValueRef::Null => return Ok(Value::Null),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        _ => return Err(error("UNHEX: argument must be text")),
    };
    let trimmed = text.trim_matches([' ', '\t', '\n', '\r', '\x0c', '\x0b']);
    if trimmed.is_empty() {
        return Err(error("UNHEX: input is empty or only whitespace"));
    }
    let digits = trimmed
        .strip_prefix("0x")
        .or_else(|| trimmed.strip_prefix("0X"))
        .unwrap_or(trimmed);
    if digits.is_empty() {
        return Err(error("UNHEX: hex string is empty after prefix"));
    }
    i64::from_str_radix(digits, 16)
        .map(Value::Integer)
        .map_err(|_| error("UNHEX: invalid or out of range hex string"))
}

/// Registers the functions on `conn` (`unhex` replacing SQLite's).
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("reverse", 1, flags, reverse)?;
    conn.create_scalar_function("base64_encode", 1, flags, base64_encode)?;
    conn.create_scalar_function("base64_decode", 1, flags, base64_decode)?;
    conn.create_scalar_function("unhex", 1, flags, unhex)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::{TraceProcessor, Value};

    fn one(tp: &TraceProcessor, sql: &str) -> Result<Value, crate::Error> {
        Ok(tp.query(sql)?.rows.remove(0).remove(0))
    }

    #[test]
    fn text_bytes_and_hex_convert_as_upstream() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(one(&tp, "SELECT reverse('abc')").expect("q"), t("cba"));
        assert_eq!(one(&tp, "SELECT reverse(NULL)").expect("q"), Value::Null);
        assert!(one(&tp, "SELECT reverse(1)").is_err());
        assert_eq!(
            one(&tp, "SELECT base64_encode(x'616263')").expect("q"),
            t("YWJj")
        );
        assert!(one(&tp, "SELECT base64_encode('abc')").is_err());
        assert_eq!(
            one(&tp, "SELECT base64_decode('YWJj')").expect("q"),
            Value::Blob(b"abc".to_vec())
        );
        let e = one(&tp, "SELECT base64_decode('!!')").expect_err("invalid");
        assert!(e.to_string().contains("BASE64: Invalid input"), "{e}");
        assert_eq!(
            one(&tp, "SELECT unhex(' 0xff ')").expect("q"),
            Value::Int(255)
        );
        assert_eq!(
            one(&tp, "SELECT unhex('7fffffffffffffff')").expect("q"),
            Value::Int(i64::MAX)
        );
        assert_eq!(one(&tp, "SELECT unhex(NULL)").expect("q"), Value::Null);
        let e = one(&tp, "SELECT unhex('0x')").expect_err("empty after prefix");
        assert!(e.to_string().contains("empty after prefix"), "{e}");
        assert!(one(&tp, "SELECT unhex('  ')").is_err());
        assert!(one(&tp, "SELECT unhex('xyz')").is_err());
        assert!(one(&tp, "SELECT unhex(12)").is_err());
    }
}
