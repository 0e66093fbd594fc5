//! The macros PerfettoSQL has built in, which the standard library's
//! modules use to walk a parenthesised list given to a macro (a list of
//! tables, of partition columns): `__intrinsic_stringify!(x)` is `x`'s
//! text as a string literal, and `__intrinsic_token_apply!(m, (a, b))`
//! calls macro `m` on each element (`m!(a), m!(b)`), or on the elements of
//! two lists zipped (`__intrinsic_token_apply!(m, (a, b), (c, d))` is
//! `m!(a, c), m!(b, d)`, as long as the shorter list); `_prefix` puts the
//! separator before the first call too (when there is one) and `_and`
//! joins with ` AND ` instead of `, `. The prelude's casts are built in
//! too: `cast_int!(x)`, `cast_double!(x)` and `cast_string!(x)` are
//! `CAST(x AS INT|DOUBLE|STRING)`, SQLite's casts to those type names.
//! Written for zerotrace from what upstream's documentation and modules
//! say these macros do.

use super::error::PerfettoSqlError;
use super::tokens::{Kind, tokenize};

/// Whether `name` is an intrinsic macro's.
pub(crate) fn is_intrinsic(name: &str) -> bool {
    matches!(
        name,
        "__intrinsic_stringify"
            | "__intrinsic_stringify_ignore_table"
            | "__intrinsic_token_apply"
            | "__intrinsic_token_apply_prefix"
            | "__intrinsic_token_apply_and"
            | "__intrinsic_token_apply_and_prefix"
            | "cast_int"
            | "cast_double"
            | "cast_string"
    )
}

/// The expansion of intrinsic macro `name` called with `args` (each
/// trimmed); None when `name` is no intrinsic macro.
pub(crate) fn expand(name: &str, args: &[String]) -> Option<Result<String, PerfettoSqlError>> {
    let (joiner, prefix) = match name {
        "__intrinsic_stringify" | "__intrinsic_stringify_ignore_table" => {
            return Some(stringify(name, args));
        }
        "__intrinsic_token_apply" => (", ", false),
        "__intrinsic_token_apply_prefix" => (", ", true),
        "__intrinsic_token_apply_and" => (" AND ", false),
        "__intrinsic_token_apply_and_prefix" => (" AND ", true),
        "cast_int" => return Some(cast(name, args, "INT")),
        "cast_double" => return Some(cast(name, args, "DOUBLE")),
        "cast_string" => return Some(cast(name, args, "STRING")),
        _ => return None,
    };
    Some(apply(args, joiner, prefix))
}

/// The error of a call of an intrinsic macro that does not fit its form.
fn malformed(expected: &'static str) -> PerfettoSqlError {
    PerfettoSqlError::Syntax {
        statement: "intrinsic macro",
        expected,
    }
}

/// `'text'`: the argument's text between single quotes, as it is (a quote
/// inside is not doubled, as upstream's expansion leaves it, so `foo''`
/// becomes the literal `foo'`).
fn stringify(name: &str, args: &[String]) -> Result<String, PerfettoSqlError> {
    let [arg] = args else {
        return Err(PerfettoSqlError::MacroArity {
            name: name.to_owned(),
            expected: 1,
            given: args.len(),
        });
    };
    Ok(format!("'{}'", arg.trim()))
}

/// `CAST(x AS ty)` of the one argument `x`.
fn cast(name: &str, args: &[String], ty: &str) -> Result<String, PerfettoSqlError> {
    let [arg] = args else {
        return Err(PerfettoSqlError::MacroArity {
            name: name.to_owned(),
            expected: 1,
            given: args.len(),
        });
    };
    Ok(format!("CAST({} AS {ty})", arg.trim()))
}

/// The calls of `__intrinsic_token_apply` and its variants.
fn apply(args: &[String], joiner: &str, prefix: bool) -> Result<String, PerfettoSqlError> {
    let (mac, xs, ys) = match args {
        [m, xs] => (m, split_list(xs)?, None),
        [m, xs, ys] => (m, split_list(xs)?, Some(split_list(ys)?)),
        _ => {
            return Err(malformed("a macro name and one or two parenthesised lists"));
        }
    };
    let mac = mac.trim();
    let n = ys.as_ref().map_or(xs.len(), |ys| xs.len().min(ys.len()));
    let mut out = String::new();
    for i in 0..n {
        if i > 0 || prefix {
            out.push_str(joiner);
        }
        out.push_str(mac);
        out.push_str("!(");
        out.push_str(xs.get(i).map_or("", String::as_str));
        if let Some(ys) = &ys {
            out.push_str(", ");
            out.push_str(ys.get(i).map_or("", String::as_str));
        }
        out.push(')');
    }
    Ok(out)
}

/// The elements of `(a, b, (c, d))`, split on the commas outside nested
/// parentheses and literals; `()` has none. Anything but one such list
/// (no parentheses, unbalanced ones, an empty element, text after the
/// closing one) is an error.
pub(crate) fn split_list(text: &str) -> Result<Vec<String>, PerfettoSqlError> {
    const EXPECTED: &str = "a parenthesised list '(a, b, …)'";
    let toks = tokenize(text)?;
    let mut toks = toks.iter().filter(|t| !t.is_blank());
    if toks.next().map(|t| t.kind) != Some(Kind::Lp) {
        return Err(malformed(EXPECTED));
    }
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut seg: Option<(usize, usize)> = None;
    for t in toks.by_ref() {
        match t.kind {
            Kind::Rp if depth == 0 => {
                if let Some((s, e)) = seg {
                    out.push(text.get(s..e).unwrap_or_default().to_owned());
                } else if !out.is_empty() {
                    return Err(malformed(EXPECTED));
                }
                return if toks.next().is_some() {
                    Err(malformed(EXPECTED))
                } else {
                    Ok(out)
                };
            }
            Kind::Comma if depth == 0 => {
                let (s, e) = seg.take().ok_or_else(|| malformed(EXPECTED))?;
                out.push(text.get(s..e).unwrap_or_default().to_owned());
                continue;
            }
            Kind::Lp => depth += 1,
            Kind::Rp => depth = depth.saturating_sub(1),
            _ => {}
        }
        seg = Some((seg.map_or(t.start, |s| s.0), t.end));
    }
    Err(malformed(EXPECTED))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &[&str]) -> Result<String, PerfettoSqlError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        expand(name, &args).expect("intrinsic")
    }

    #[test]
    fn lists_split_on_top_level_commas_only() {
        assert_eq!(
            split_list(" (a, (SELECT x, y FROM t), 'p,q', \"c,d\") ").unwrap(),
            ["a", "(SELECT x, y FROM t)", "'p,q'", "\"c,d\""]
        );
        assert!(split_list("()").unwrap().is_empty());
        for bad in ["a, b", "(a,)", "(,a)", "(a", "(a) b", "(a))"] {
            assert!(split_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn apply_calls_the_macro_per_element_joined_and_prefixed() {
        assert_eq!(
            call("__intrinsic_token_apply", &["m", "(a, b)"]).unwrap(),
            "m!(a), m!(b)"
        );
        assert_eq!(
            call(
                "__intrinsic_token_apply_prefix",
                &["m", "(a, b, c)", "(x, y)"]
            )
            .unwrap(),
            ", m!(a, x), m!(b, y)"
        );
        assert_eq!(
            call("__intrinsic_token_apply_and", &["m", "(a, b)", "(x, y)"]).unwrap(),
            "m!(a, x) AND m!(b, y)"
        );
        assert_eq!(
            call("__intrinsic_token_apply_and_prefix", &["m", "(a)"]).unwrap(),
            " AND m!(a)"
        );
        assert_eq!(
            call("__intrinsic_token_apply_prefix", &["m", "()"]).unwrap(),
            ""
        );
        assert_eq!(
            call("__intrinsic_stringify", &["(a, b)"]).unwrap(),
            "'(a, b)'"
        );
        assert_eq!(
            call("__intrinsic_stringify", &["foo''"]).unwrap(),
            "'foo'''"
        );
        assert!(call("__intrinsic_token_apply", &["m"]).is_err());
        assert!(call("__intrinsic_token_apply", &["m", "a"]).is_err());
        assert!(expand("plain", &[]).is_none());
    }

    #[test]
    fn the_preludes_casts_are_sqlite_casts_of_their_argument() {
        assert_eq!(call("cast_int", &["1e14"]).unwrap(), "CAST(1e14 AS INT)");
        assert!(call("cast_double", &["a", "b"]).is_err());
        let tp = crate::TraceProcessor::from_storage(crate::storage::Storage::default())
            .expect("engine");
        let r = tp
            .query("SELECT cast_int!(1e14), cast_int!(2.7), cast_double!(3), cast_string!(12)")
            .expect("query");
        assert_eq!(
            r.rows,
            [[
                crate::Value::Int(100_000_000_000_000),
                crate::Value::Int(2),
                crate::Value::Real(3.0),
                crate::Value::Int(12),
            ]]
        );
    }
}
