//! `__intrinsic_strip_hex(name, min_digits)`: a name with its numbers and
//! hex numbers replaced by `<num>`, so that names which differ only by an
//! id, address or count aggregate together (the Android modules'
//! `android_standardize_slice_name` and thread-name grouping use it).
//!
//! The rule, upstream's: a run of hex digits is a candidate where it
//! follows `0x`/`0X`, a character that is not a letter or digit, or the
//! start of the text, or where it starts with a decimal digit; a candidate
//! is replaced when it holds a decimal digit (after `0x`, always) and is at
//! least `min_digits` long. Letters inside words are never taken as hex.
//! Bytes outside ASCII are neither letters nor digits.

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};

/// The error a call fails with.
fn fail(message: &str) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(message.into())
}

/// `text` with its number runs replaced (see the file's doc).
pub(crate) fn strip_hex(text: &[u8], min_digits: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        // Whether the run that starts at `i` (after the byte kept here, if
        // any) is replaced even without a decimal digit.
        let mut always = false;
        if (b == b'x' || b == b'X') && i > 0 && text[i - 1] == b'0' {
            out.push(b);
            i += 1;
            always = true;
        } else if !b.is_ascii_alphanumeric() {
            out.push(b);
            i += 1;
        } else if !(b.is_ascii_digit() || (i == 0 && b.is_ascii_hexdigit())) {
            // A letter inside a word: kept, and no run starts after it.
            out.push(b);
            i += 1;
            continue;
        }
        let start = i;
        let mut has_digit = always;
        while i < text.len() && text[i].is_ascii_hexdigit() {
            has_digit |= text[i].is_ascii_digit();
            i += 1;
        }
        if has_digit && i - start >= min_digits {
            out.extend_from_slice(b"<num>");
        } else {
            out.extend_from_slice(&text[start..i]);
        }
    }
    out
}

/// Registers `__intrinsic_strip_hex` on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "__intrinsic_strip_hex",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx: &Context<'_>| -> rusqlite::Result<Value> {
            let text = match ctx.get_raw(0) {
                ValueRef::Text(t) => t,
                ValueRef::Null => return Ok(Value::Null),
                _ => return Err(fail("__intrinsic_strip_hex: first argument must be string")),
            };
            let min = match ctx.get_raw(1) {
                ValueRef::Integer(v) => v,
                ValueRef::Null => return Ok(Value::Null),
                _ => {
                    return Err(fail(
                        "__intrinsic_strip_hex: second argument must be integer",
                    ));
                }
            };
            let min = usize::try_from(min)
                .map_err(|_| fail("__intrinsic_strip_hex: min_repeated_digits must be positive"))?;
            let out = strip_hex(text, min);
            Ok(Value::Text(String::from_utf8_lossy(&out).into_owned()))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str, min: usize) -> String {
        String::from_utf8(strip_hex(text.as_bytes(), min)).unwrap()
    }

    #[test]
    fn numbers_and_hex_runs_become_num_but_words_stay() {
        assert_eq!(s("Thread 1234", 2), "Thread <num>");
        assert_eq!(s("Thread 7", 2), "Thread 7");
        assert_eq!(s("Thread 7", 1), "Thread <num>");
        // After 0x: always, even without a decimal digit.
        assert_eq!(s("at 0xdeadbeef", 2), "at 0x<num>");
        // A hex word without a digit is a word.
        assert_eq!(s("face cafe", 1), "face cafe");
        // A run starting the text or after a separator, with a digit.
        assert_eq!(s("abc123-def", 2), "<num>-def");
        assert_eq!(s("id=ab12cd", 2), "id=<num>");
        // Letters inside a word are kept; digits after them are a run.
        assert_eq!(s("worker12", 2), "worker<num>");
        assert_eq!(s("gab12", 2), "gab<num>");
        assert_eq!(s("binder:1234_5", 2), "binder:<num>_5");
        // Bytes outside ASCII separate runs and are kept whole.
        assert_eq!(s("é12é", 2), "é<num>é");
        assert_eq!(s("", 2), "");
    }
}
