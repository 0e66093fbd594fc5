//! PerfettoSQL macros: `CREATE PERFETTO MACRO` keeps a body of tokens,
//! and every `name!(arg, …)` in a statement is replaced, before SQLite
//! sees the statement, by that body with each `$param` replaced by the
//! argument's tokens. Arguments are expanded first, then the result is
//! expanded again, so macros nest and call one another; a chain of
//! expansions deeper than [`MAX_DEPTH`] (a macro that expands to itself)
//! or a text longer than [`MAX_EXPANDED`] is an error, never a hang, a
//! stack overflow or memory without bound.

use std::collections::HashMap;

use super::error::PerfettoSqlError;
use super::intrinsic_macros;
use super::tokens::{Kind, Tok, tokenize};

/// How deep expansions may nest.
pub(crate) const MAX_DEPTH: usize = 64;

/// How long an expanded text may grow (a macro that doubles its argument,
/// nested, would otherwise grow without bound).
pub(crate) const MAX_EXPANDED: usize = 8 << 20;

/// One macro.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Macro {
    /// Its parameters' names, in order.
    pub params: Vec<String>,
    /// Its body's text.
    pub body: String,
}

/// The macros defined so far, by name.
#[derive(Debug, Default)]
pub(crate) struct Macros {
    by_name: HashMap<String, Macro>,
}

/// An error and the byte of the expanded text it points at.
pub(crate) type ExpandError = (PerfettoSqlError, usize);

impl Macros {
    /// Defines macro `name`; an existing one is an error unless `replace`.
    pub(crate) fn define(
        &mut self,
        name: &str,
        m: Macro,
        replace: bool,
    ) -> Result<(), PerfettoSqlError> {
        if !replace && self.by_name.contains_key(name) {
            return Err(PerfettoSqlError::MacroExists {
                name: name.to_owned(),
            });
        }
        self.by_name.insert(name.to_owned(), m);
        Ok(())
    }

    /// `text` with every macro call expanded; None when it has none. An
    /// error points at the call (the outermost one, for an error inside
    /// an expansion) in `text`.
    pub(crate) fn expand(&self, text: &str) -> Result<Option<String>, ExpandError> {
        self.expand_depth(text, 0)
    }

    fn expand_depth(&self, text: &str, depth: usize) -> Result<Option<String>, ExpandError> {
        let toks = tokenize(text).map_err(|e| (e, 0))?;
        let mut out = String::new();
        // Copied up to here.
        let mut copied = 0;
        let mut i = 0;
        let mut expanded = false;
        while let Some(t) = toks.get(i) {
            let is_call = t.kind == Kind::Word
                && toks
                    .get(i + 1)
                    .is_some_and(|b| b.kind == Kind::Bang && b.start == t.end)
                && next_non_blank(&toks, i + 2)
                    .is_some_and(|j| toks.get(j).is_some_and(|p| p.kind == Kind::Lp));
            if !is_call {
                i += 1;
                continue;
            }
            let name = t.text(text);
            let at = t.start;
            // An intrinsic macro (`intrinsic_macros.rs`) is None here.
            let m = if intrinsic_macros::is_intrinsic(name) {
                None
            } else {
                Some(self.by_name.get(name).ok_or((
                    PerfettoSqlError::UnknownMacro {
                        name: name.to_owned(),
                    },
                    at,
                ))?)
            };
            if depth >= MAX_DEPTH {
                return Err((
                    PerfettoSqlError::MacroDepth {
                        name: name.to_owned(),
                        limit: MAX_DEPTH,
                    },
                    at,
                ));
            }
            let lp = next_non_blank(&toks, i + 2).unwrap_or(i + 2);
            let (args, close) = call_args(text, &toks, lp).ok_or((
                PerfettoSqlError::MacroUnclosed {
                    name: name.to_owned(),
                },
                at,
            ))?;
            if let Some(m) = m
                && args.len() != m.params.len()
            {
                return Err((
                    PerfettoSqlError::MacroArity {
                        name: name.to_owned(),
                        expected: m.params.len(),
                        given: args.len(),
                    },
                    at,
                ));
            }
            let mut values = Vec::with_capacity(args.len());
            for a in args {
                let v = self
                    .expand_depth(a, depth + 1)
                    .map_err(|(e, _)| (e, at))?
                    .unwrap_or_else(|| a.to_owned());
                values.push(v);
            }
            let body = match m {
                Some(m) => substitute(&m.body, &m.params, &values),
                None => intrinsic_macros::expand(name, &values).unwrap_or_else(|| {
                    Err(PerfettoSqlError::UnknownMacro {
                        name: name.to_owned(),
                    })
                }),
            }
            .map_err(|e| (e, at))?;
            if body.len() > MAX_EXPANDED {
                return Err((
                    PerfettoSqlError::MacroTooLong {
                        name: name.to_owned(),
                        limit: MAX_EXPANDED,
                    },
                    at,
                ));
            }
            let body = self
                .expand_depth(&body, depth + 1)
                .map_err(|(e, _)| (e, at))?
                .unwrap_or(body);
            out.push_str(text.get(copied..at).unwrap_or_default());
            if out.len().saturating_add(body.len()) > MAX_EXPANDED {
                return Err((
                    PerfettoSqlError::MacroTooLong {
                        name: name.to_owned(),
                        limit: MAX_EXPANDED,
                    },
                    at,
                ));
            }
            out.push_str(&body);
            copied = close;
            expanded = true;
            i = toks
                .iter()
                .position(|t| t.start >= close)
                .unwrap_or(toks.len());
        }
        if !expanded {
            return Ok(None);
        }
        out.push_str(text.get(copied..).unwrap_or_default());
        Ok(Some(out))
    }
}

/// The index of the first token from `i` on that is not blank.
fn next_non_blank(toks: &[Tok], i: usize) -> Option<usize> {
    (i..toks.len()).find(|&j| toks.get(j).is_some_and(|t| !t.is_blank()))
}

/// The arguments of the call whose `(` is token `lp` (each trimmed of
/// blanks; none for `()`), and the byte just past its `)`.
fn call_args<'a>(text: &'a str, toks: &[Tok], lp: usize) -> Option<(Vec<&'a str>, usize)> {
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut arg_start = toks.get(lp)?.end;
    for t in toks.get(lp + 1..)? {
        match t.kind {
            Kind::Lp => depth += 1,
            Kind::Rp if depth > 0 => depth -= 1,
            Kind::Comma | Kind::Rp if depth == 0 => {
                let a = text.get(arg_start..t.start)?.trim();
                if t.kind == Kind::Rp {
                    if !(a.is_empty() && args.is_empty()) {
                        args.push(a);
                    }
                    return Some((args, t.end));
                }
                args.push(a);
                arg_start = t.end;
            }
            _ => {}
        }
    }
    None
}

/// `body` with each `$param` token replaced by its value.
fn substitute(
    body: &str,
    params: &[String],
    values: &[String],
) -> Result<String, PerfettoSqlError> {
    let toks = tokenize(body)?;
    let mut out = String::with_capacity(body.len());
    for t in &toks {
        let text = t.text(body);
        let value = (t.kind == Kind::Variable)
            .then(|| text.strip_prefix('$'))
            .flatten()
            .and_then(|n| params.iter().position(|p| p == n))
            .and_then(|i| values.get(i));
        out.push_str(value.map_or(text, String::as_str));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn macros(defs: &[(&str, &[&str], &str)]) -> Macros {
        let mut m = Macros::default();
        for (name, params, body) in defs {
            m.define(
                name,
                Macro {
                    params: params.iter().map(|s| s.to_string()).collect(),
                    body: body.to_string(),
                },
                false,
            )
            .unwrap();
        }
        m
    }

    #[test]
    fn calls_expand_with_arguments_nested_and_inside_bodies() {
        let m = macros(&[
            ("sub", &["a", "b"], "$a - $b"),
            ("twice", &["x"], "(sub!($x, 0) + $x)"),
            ("tab", &["t"], "(SELECT * FROM $t)"),
        ]);
        assert_eq!(m.expand("SELECT 1").unwrap(), None);
        assert_eq!(
            m.expand("SELECT sub!(f(1, 2), (3)) AS r").unwrap().unwrap(),
            "SELECT f(1, 2) - (3) AS r"
        );
        assert_eq!(
            m.expand("SELECT twice!(sub!(5, 1)) FROM tab!(slice)")
                .unwrap()
                .unwrap(),
            "SELECT (5 - 1 - 0 + 5 - 1) FROM (SELECT * FROM slice)"
        );
        // A `!` in a string, or `!=`, is no call; `$b` of no parameter stays.
        assert_eq!(m.expand("SELECT 'x!(1)', 1 != 2").unwrap(), None);
        let m = macros(&[("k", &[], "$other")]);
        assert_eq!(m.expand("k!()").unwrap().unwrap(), "$other");
    }

    #[test]
    fn bad_calls_are_errors_at_the_outermost_call() {
        let m = macros(&[
            ("one", &["a"], "$a"),
            ("loop", &[], "loop!()"),
            ("bad", &[], "nope!()"),
        ]);
        let (e, at) = m.expand("SELECT one!(1, 2)").unwrap_err();
        assert_eq!(e.to_string(), "macro 'one' takes 1 arguments, 2 given");
        assert_eq!(at, 7);
        let (e, at) = m.expand("SELECT 1, loop!()").unwrap_err();
        assert!(matches!(e, PerfettoSqlError::MacroDepth { .. }), "{e}");
        assert_eq!(at, 10);
        let (e, at) = m.expand("SELECT  bad!()").unwrap_err();
        assert_eq!(e.to_string(), "macro 'nope' does not exist");
        assert_eq!(at, 8);
        // A macro doubling its argument, nested: an error, not gigabytes.
        let mut d = macros(&[("dbl", &["x"], "$x || $x")]);
        d.define(
            "deep",
            Macro {
                params: vec![],
                body: format!("{}'ab'{}", "dbl!(".repeat(40), ")".repeat(40)),
            },
            false,
        )
        .unwrap();
        let (e, at) = d.expand("SELECT 0, deep!()").unwrap_err();
        assert!(matches!(e, PerfettoSqlError::MacroTooLong { .. }), "{e}");
        assert_eq!(at, 10);
        let (e, _) = m.expand("SELECT one!(1").unwrap_err();
        assert!(matches!(e, PerfettoSqlError::MacroUnclosed { .. }));
        let mut m = m;
        assert!(
            m.define(
                "one",
                Macro {
                    params: vec![],
                    body: "2".into()
                },
                false
            )
            .is_err()
        );
        m.define(
            "one",
            Macro {
                params: vec![],
                body: "2".into(),
            },
            true,
        )
        .unwrap();
        assert_eq!(m.expand("one!()").unwrap().unwrap(), "2");
    }
}
