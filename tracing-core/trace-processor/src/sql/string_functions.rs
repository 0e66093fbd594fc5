//! The prelude's scalar functions over text and values that SQLite lacks:
//! `hash(...)` (64-bit FNV-1a over its integer and text arguments, as
//! upstream hashes them), `str_split(text, delimiter, field)`,
//! `regexp(pattern, text)` (which SQLite's `text REGEXP pattern` operator
//! calls), `regexp(pattern, text, flags)`, `regexp_extract(text,
//! pattern)` and `regexp_replace_simple(text, pattern, replacement)`. Bad arguments are SQL errors with upstream's wording, never
//! a panic.

use std::sync::Arc;

use regex::{Regex, RegexBuilder};
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Error};

/// FNV-1a's 64-bit offset basis.
pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over `bytes`, continuing from `h` (`hash()`'s rule; the stack
/// ids of `slices/stack_id.rs` hash the same way).
pub(crate) fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// An error SQLite reports for a function call.
fn user_error(msg: String) -> Error {
    Error::UserFunctionError(msg.into())
}

/// `hash(...)`: integers hashed as their 8 little-endian bytes, text as
/// its bytes; NULL, reals and blobs are refused.
fn hash(ctx: &Context<'_>) -> rusqlite::Result<i64> {
    let mut h = FNV_OFFSET;
    for i in 0..ctx.len() {
        h = match ctx.get_raw(i) {
            ValueRef::Integer(v) => fnv(h, &v.to_le_bytes()),
            ValueRef::Text(t) => fnv(h, t),
            _ => return Err(user_error(format!("HASH: arg {i} has unknown type"))),
        };
    }
    Ok(h as i64)
}

/// `str_split(text, delimiter, field)`: the field-th piece (from 0) of
/// text split on delimiter; NULL when text is not text or has fewer
/// pieces.
fn str_split(ctx: &Context<'_>) -> rusqlite::Result<Value> {
    let delimiter = match ctx.get_raw(1) {
        ValueRef::Text(d) if !d.is_empty() => String::from_utf8_lossy(d).into_owned(),
        _ => {
            return Err(user_error(
                "str_split: delimiter must be a non-empty string".into(),
            ));
        }
    };
    let field = match ctx.get_raw(2) {
        ValueRef::Integer(f) if f >= 0 => f,
        _ => {
            return Err(user_error(
                "str_split: field number must be a non-negative integer".into(),
            ));
        }
    };
    let ValueRef::Text(text) = ctx.get_raw(0) else {
        return Ok(Value::Null);
    };
    let text = String::from_utf8_lossy(text);
    Ok(usize::try_from(field)
        .ok()
        .and_then(|f| text.split(delimiter.as_str()).nth(f))
        .map_or(Value::Null, |piece| Value::Text(piece.to_owned())))
}

/// The text of argument `i`, or None for NULL (numbers as SQLite prints
/// them).
fn text_arg(ctx: &Context<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    Ok(match ctx.get_raw(i) {
        ValueRef::Null => None,
        _ => Some(ctx.get::<String>(i)?),
    })
}

/// Compiles `pattern`, keeping it as the call site's auxiliary data so a
/// constant pattern is compiled once per statement.
fn pattern(
    ctx: &Context<'_>,
    arg: usize,
    insensitive: bool,
) -> rusqlite::Result<Option<Arc<(bool, Regex)>>> {
    let Some(text) = text_arg(ctx, arg)? else {
        return Ok(None);
    };
    let slot = std::os::raw::c_int::try_from(arg).unwrap_or(0);
    if let Some(cached) = ctx.get_aux::<(bool, Regex)>(slot)? {
        if cached.0 == insensitive {
            return Ok(Some(cached));
        }
    }
    let re = RegexBuilder::new(&text)
        .case_insensitive(insensitive)
        .build()
        .map_err(|e| user_error(format!("regexp: {e}")))?;
    Ok(Some(ctx.set_aux(slot, (insensitive, re))?))
}

/// `regexp(pattern, text[, flags])`: 1 when pattern matches anywhere in
/// text, 0 when not, NULL when either is NULL.
fn regexp(ctx: &Context<'_>) -> rusqlite::Result<Value> {
    let insensitive = if ctx.len() == 3 {
        let Some(flags) = text_arg(ctx, 2)? else {
            return Ok(Value::Null);
        };
        let mut insensitive = false;
        for c in flags.chars() {
            match c {
                'i' => insensitive = true,
                'c' => insensitive = false,
                other => return Err(user_error(format!("regexp: unknown flag '{other}'"))),
            }
        }
        insensitive
    } else {
        false
    };
    let Some(text) = text_arg(ctx, 1)? else {
        return Ok(Value::Null);
    };
    let Some(re) = pattern(ctx, 0, insensitive)? else {
        return Ok(Value::Null);
    };
    Ok(Value::Integer(i64::from(re.1.is_match(&text))))
}

/// `regexp_extract(text, pattern)`: the first match's one group when it
/// took part, else the whole match; NULL when nothing matches.
fn regexp_extract(ctx: &Context<'_>) -> rusqlite::Result<Value> {
    let Some(text) = text_arg(ctx, 0)? else {
        return Ok(Value::Null);
    };
    let Some(re) = pattern(ctx, 1, false)? else {
        return Ok(Value::Null);
    };
    if re.1.captures_len() > 2 {
        return Err(user_error(
            "REGEXP_EXTRACT: pattern has more than one group.".into(),
        ));
    }
    let Some(caps) = re.1.captures(&text) else {
        return Ok(Value::Null);
    };
    let piece = caps
        .get(1)
        .filter(|g| !g.as_str().is_empty())
        .or_else(|| caps.get(0))
        .map_or("", |m| m.as_str());
    Ok(Value::Text(piece.to_owned()))
}

/// `regexp_replace_simple(text, pattern, replacement)`: every match of
/// pattern replaced by replacement, taken literally; NULL when any is NULL.
fn regexp_replace_simple(ctx: &Context<'_>) -> rusqlite::Result<Value> {
    let (Some(text), Some(replacement)) = (text_arg(ctx, 0)?, text_arg(ctx, 2)?) else {
        return Ok(Value::Null);
    };
    let Some(re) = pattern(ctx, 1, false)? else {
        return Ok(Value::Null);
    };
    Ok(Value::Text(
        re.1.replace_all(&text, regex::NoExpand(&replacement))
            .into_owned(),
    ))
}

/// Registers the functions on `conn`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("hash", -1, flags, hash)?;
    conn.create_scalar_function("str_split", 3, flags, str_split)?;
    conn.create_scalar_function("regexp", 2, flags, regexp)?;
    conn.create_scalar_function("regexp", 3, flags, regexp)?;
    conn.create_scalar_function("regexp_extract", 2, flags, regexp_extract)?;
    conn.create_scalar_function("regexp_replace_simple", 3, flags, regexp_replace_simple)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let c = Connection::open_in_memory().expect("sqlite");
        register(&c).expect("register");
        c
    }

    fn one(c: &Connection, sql: &str) -> rusqlite::Result<Value> {
        c.query_row(sql, [], |r| r.get::<_, Value>(0))
    }

    #[test]
    fn hash_is_fnv1a_over_integers_bytes_and_text() {
        let c = conn();
        // FNV-1a 64 of "a" is the published 0xaf63dc4c8601ec8c.
        assert_eq!(
            one(&c, "SELECT hash('a')").expect("hash"),
            Value::Integer(0xaf63_dc4c_8601_ec8c_u64 as i64)
        );
        assert_eq!(
            one(&c, "SELECT hash()").expect("hash"),
            Value::Integer(FNV_OFFSET as i64)
        );
        let mut h = fnv(FNV_OFFSET, &1i64.to_le_bytes());
        h = fnv(h, b"x");
        assert_eq!(
            one(&c, "SELECT hash(1, 'x')").expect("hash"),
            Value::Integer(h as i64)
        );
        let err = one(&c, "SELECT hash(1, NULL)").expect_err("NULL refused");
        assert!(
            err.to_string().contains("HASH: arg 1 has unknown type"),
            "{err}"
        );
        assert!(one(&c, "SELECT hash(1.5)").is_err());
    }

    #[test]
    fn str_split_picks_a_field_or_null() {
        let c = conn();
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(
            one(&c, "SELECT str_split('a,b,,c', ',', 0)").expect("q"),
            t("a")
        );
        assert_eq!(
            one(&c, "SELECT str_split('a,b,,c', ',', 2)").expect("q"),
            t("")
        );
        assert_eq!(
            one(&c, "SELECT str_split('a::b', '::', 1)").expect("q"),
            t("b")
        );
        assert_eq!(
            one(&c, "SELECT str_split('a,b', ',', 2)").expect("q"),
            Value::Null
        );
        assert_eq!(
            one(&c, "SELECT str_split(NULL, ',', 0)").expect("q"),
            Value::Null
        );
        assert_eq!(
            one(&c, "SELECT str_split(5, ',', 0)").expect("q"),
            Value::Null
        );
        let err = one(&c, "SELECT str_split('a', '', 0)").expect_err("empty delimiter");
        assert!(
            err.to_string().contains("delimiter must be a non-empty"),
            "{err}"
        );
        let err = one(&c, "SELECT str_split('a', ',', -1)").expect_err("negative field");
        assert!(err.to_string().contains("non-negative integer"), "{err}");
    }

    #[test]
    fn regexp_matches_anywhere_and_as_the_operator() {
        let c = conn();
        assert_eq!(
            one(&c, "SELECT regexp('b+', 'abbc')").expect("q"),
            Value::Integer(1)
        );
        assert_eq!(
            one(&c, "SELECT 'abbc' REGEXP '^b'").expect("q"),
            Value::Integer(0)
        );
        assert_eq!(one(&c, "SELECT regexp(NULL, 'a')").expect("q"), Value::Null);
        assert_eq!(one(&c, "SELECT regexp('a', NULL)").expect("q"), Value::Null);
        assert_eq!(
            one(&c, "SELECT regexp('A', 'a', 'i')").expect("q"),
            Value::Integer(1)
        );
        assert_eq!(
            one(&c, "SELECT regexp('A', 'a', 'c')").expect("q"),
            Value::Integer(0)
        );
        let err = one(&c, "SELECT regexp('a', 'a', 'x')").expect_err("bad flag");
        assert!(err.to_string().contains("unknown flag 'x'"), "{err}");
        assert!(one(&c, "SELECT regexp('(', 'a')").is_err());
        // A pattern per row (not one compiled pattern reused wrongly).
        assert_eq!(
            one(
                &c,
                "SELECT group_concat(regexp(p, 'abc'), '') FROM \
                 (SELECT 'a' AS p UNION ALL SELECT 'z' UNION ALL SELECT 'c$')"
            )
            .expect("q"),
            Value::Text("101".into())
        );
    }

    #[test]
    fn regexp_replace_simple_replaces_every_match_literally() {
        let c = conn();
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(
            one(
                &c,
                "SELECT regexp_replace_simple('a1b22c', '[0-9]+', '$1#')"
            )
            .expect("q"),
            t("a$1#b$1#c")
        );
        assert_eq!(
            one(&c, "SELECT regexp_replace_simple('abc', 'x', '-')").expect("q"),
            t("abc")
        );
        assert_eq!(
            one(&c, "SELECT regexp_replace_simple(NULL, 'x', '-')").expect("q"),
            Value::Null
        );
        assert!(one(&c, "SELECT regexp_replace_simple('a', '(', '-')").is_err());
    }

    #[test]
    fn regexp_extract_takes_the_group_or_the_match() {
        let c = conn();
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(
            one(&c, "SELECT regexp_extract('pid=42', 'pid=(\\d+)')").expect("q"),
            t("42")
        );
        assert_eq!(
            one(&c, "SELECT regexp_extract('pid=42', '\\d+')").expect("q"),
            t("42")
        );
        assert_eq!(
            one(&c, "SELECT regexp_extract('abc', 'x')").expect("q"),
            Value::Null
        );
        assert_eq!(
            one(&c, "SELECT regexp_extract(NULL, 'x')").expect("q"),
            Value::Null
        );
        assert!(one(&c, "SELECT regexp_extract('ab', '(a)(b)')").is_err());
    }
}
