//! PerfettoSQL's own statements (`INCLUDE PERFETTO MODULE`, `CREATE
//! PERFETTO TABLE|VIEW|FUNCTION|MACRO|INDEX`) are not implemented: a
//! statement SQLite refuses is looked at word by word (after blanks and
//! comments, as SQLite's tokenizer skips them), and when it opens with
//! one of those keyword runs, the error says that PerfettoSQL is not
//! supported yet instead of SQLite's bare syntax error. The text is never
//! rewritten or filtered: this only names what SQLite already refused.

/// What the statement at the start of `sql` is, when it is PerfettoSQL;
/// the message to answer it with.
pub(crate) fn unsupported(sql: &str) -> Option<String> {
    let mut words = Words { rest: sql };
    let first = words.next()?;
    let second = words.next()?;
    if first.eq_ignore_ascii_case("include") && second.eq_ignore_ascii_case("perfetto") {
        if !words.next()?.eq_ignore_ascii_case("module") {
            return None;
        }
        let module = words.module().unwrap_or("?");
        return Some(format!(
            "INCLUDE PERFETTO MODULE is not supported yet: PerfettoSQL's standard \
             library is not implemented (module {module})"
        ));
    }
    if first.eq_ignore_ascii_case("create") {
        // `CREATE OR REPLACE PERFETTO ...`.
        let mut kind = second;
        if kind.eq_ignore_ascii_case("or") {
            if !words.next()?.eq_ignore_ascii_case("replace") {
                return None;
            }
            kind = words.next()?;
        }
        if !kind.eq_ignore_ascii_case("perfetto") {
            return None;
        }
        let what = words.next()?;
        let known = ["table", "view", "function", "macro", "index"];
        if !known.iter().any(|k| what.eq_ignore_ascii_case(k)) {
            return None;
        }
        let what = what.to_ascii_uppercase();
        return Some(format!(
            "CREATE PERFETTO {what} is not supported yet: PerfettoSQL's statements are \
             not implemented (use CREATE {what} where SQLite has one)"
        ));
    }
    None
}

/// The bare words of a statement, blanks and comments skipped.
struct Words<'a> {
    rest: &'a str,
}

impl<'a> Words<'a> {
    /// Skips blanks, `-- …` line comments and `/* … */` block comments.
    fn skip_blanks(&mut self) {
        loop {
            self.rest = self.rest.trim_start();
            if let Some(r) = self.rest.strip_prefix("--") {
                self.rest = r.find('\n').map_or("", |i| r.get(i..).unwrap_or_default());
            } else if let Some(r) = self.rest.strip_prefix("/*") {
                self.rest = r
                    .find("*/")
                    .map_or("", |i| r.get(i + 2..).unwrap_or_default());
            } else {
                return;
            }
        }
    }

    /// The next word (letters, digits, `_`), None at anything else.
    fn next(&mut self) -> Option<&'a str> {
        self.skip_blanks();
        let end = self
            .rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (word, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(word)
    }

    /// A module's name: everything up to a blank, `;` or comment.
    fn module(&mut self) -> Option<&'a str> {
        self.skip_blanks();
        let end = self
            .rest
            .find(|c: char| c.is_whitespace() || c == ';' || c == '-' || c == '/')
            .unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        self.rest.get(..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfetto_statements_are_named() {
        let m = unsupported("  -- hi\n include /* x */ PERFETTO module android.startup.startups;")
            .unwrap();
        assert!(m.contains("(module android.startup.startups)"), "{m}");
        assert!(
            m.starts_with("INCLUDE PERFETTO MODULE is not supported yet"),
            "{m}"
        );
        for sql in [
            "CREATE PERFETTO TABLE t AS SELECT 1",
            "create or replace perfetto function f() returns int as select 1",
            "CREATE PERFETTO MACRO m(x Expr) RETURNS Expr AS $x",
            "CREATE PERFETTO VIEW v AS SELECT 1",
            "CREATE PERFETTO INDEX i ON t(a)",
        ] {
            let m = unsupported(sql).unwrap();
            assert!(m.contains("is not supported yet"), "{sql}: {m}");
        }
        for sql in [
            "SELECT 1",
            "CREATE TABLE perfetto(a)",
            "CREATE PERFETTO",
            "CREATE PERFETTO THING x",
            "INCLUDE MODULE x",
            "'INCLUDE' PERFETTO MODULE x",
            "",
        ] {
            assert_eq!(unsupported(sql), None, "{sql}");
        }
    }
}
