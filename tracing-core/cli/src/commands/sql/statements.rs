//! Where SQL statements end in text typed a line at a time: a `;` outside
//! quotes (`'…'`, `"…"`, `` `…` ``, `[…]`) and comments (`-- …` to the end
//! of the line, `/* … */`). The prompt runs each statement once its `;`
//! arrives and keeps the rest for the next line. (`CREATE TRIGGER`'s inner
//! `;` are not told apart from a statement's end, as SQLite's own
//! `sqlite3_complete` would; triggers are no part of a trace's SQL.)

/// Where the scanner is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    /// Inside a quote closed by this character (a doubled one is a quote
    /// closed and reopened, which scans the same).
    Quoted(char),
    LineComment,
    BlockComment,
}

/// Splits `text` into its complete statements, each with its `;`, and
/// the unfinished rest.
pub fn split(text: &str) -> (Vec<&str>, &str) {
    let mut out = Vec::new();
    let mut start = 0;
    let mut state = State::Code;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        state = match state {
            State::Code => match c {
                ';' => {
                    out.push(&text[start..=i]);
                    start = i + 1;
                    State::Code
                }
                '\'' | '"' | '`' => State::Quoted(c),
                '[' => State::Quoted(']'),
                '-' if next == Some('-') => {
                    chars.next();
                    State::LineComment
                }
                '/' if next == Some('*') => {
                    chars.next();
                    State::BlockComment
                }
                _ => State::Code,
            },
            State::Quoted(end) if c == end => State::Code,
            State::LineComment if c == '\n' => State::Code,
            State::BlockComment if c == '*' && next == Some('/') => {
                chars.next();
                State::Code
            }
            s => s,
        };
    }
    (out, &text[start..])
}

/// Whether `sql` holds nothing to run: whitespace, comments and `;` only.
pub fn is_blank(sql: &str) -> bool {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            match r.find("*/") {
                Some(i) => rest = &r[i + 2..],
                None => return true,
            }
        } else {
            return rest.is_empty();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_end_at_semicolons_outside_quotes_and_comments() {
        assert_eq!(
            split("SELECT 1; SELECT 2"),
            (vec!["SELECT 1;"], " SELECT 2")
        );
        assert_eq!(
            split("SELECT ';', \"a;\", `b;`, [c;] -- ;\n/* ; */;x"),
            (vec!["SELECT ';', \"a;\", `b;`, [c;] -- ;\n/* ; */;"], "x")
        );
        assert_eq!(split("SELECT 'it''s;'"), (vec![], "SELECT 'it''s;'"));
        assert_eq!(split("SELECT 'it''s'; "), (vec!["SELECT 'it''s';"], " "));
        assert_eq!(split("SELECT 1 -- ;"), (vec![], "SELECT 1 -- ;"));
        assert_eq!(split("a;b;"), (vec!["a;", "b;"], ""));
        assert_eq!(split("SELECT 'é;"), (vec![], "SELECT 'é;"));
    }

    #[test]
    fn blank_is_whitespace_comments_and_semicolons() {
        assert!(is_blank(" ;\n -- x\n /* y */ ;"));
        assert!(is_blank("/* open"));
        assert!(!is_blank("-- x\nSELECT 1"));
        assert!(!is_blank("/* y */ SELECT 1"));
    }
}
