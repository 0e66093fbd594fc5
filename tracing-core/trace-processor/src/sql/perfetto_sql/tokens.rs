//! A query's text as SQLite's tokenizer reads it, and where its statements
//! begin and end. PerfettoSQL is recognised, split and macro-expanded on
//! these tokens, never on words found by scanning characters: a `;` or a
//! `PERFETTO` inside a string, a quoted name or a comment is never taken
//! for syntax.
//!
//! The tokens come from `syntaqlite` (SQLite's own tokenizer, see the
//! module's doc in `mod.rs`); every byte of the text belongs to exactly one
//! token, blanks and comments included, so a token's span is its byte
//! range in the text the user wrote.

use syntaqlite::parse::{TokenType, Tokenizer};

use super::error::PerfettoSqlError;

/// What a token is, as far as PerfettoSQL cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Blanks.
    Space,
    /// A `--` or `/* */` comment.
    Comment,
    /// `;`.
    Semi,
    /// `(`.
    Lp,
    /// `)`.
    Rp,
    /// `,`.
    Comma,
    /// `.`.
    Dot,
    /// `*`.
    Star,
    /// `!`, which only a macro call uses.
    Bang,
    /// A bound parameter: `$name`, `:name`, `@name`, `?`, `?NNN`.
    Variable,
    /// A bare word: a keyword or an unquoted name.
    Word,
    /// Anything else (literals, operators, quoted names).
    Other,
}

/// One token: its kind and byte range in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tok {
    /// Its kind.
    pub kind: Kind,
    /// Byte offset of its first byte.
    pub start: usize,
    /// Byte offset just past it.
    pub end: usize,
}

impl Tok {
    /// Its text in `sql`, the text it was read from.
    pub fn text<'a>(&self, sql: &'a str) -> &'a str {
        sql.get(self.start..self.end).unwrap_or_default()
    }

    /// Whether it is the bare word `word`, in any case.
    pub fn is_word(&self, sql: &str, word: &str) -> bool {
        self.kind == Kind::Word && self.text(sql).eq_ignore_ascii_case(word)
    }

    /// Whether it is a blank or a comment.
    pub fn is_blank(&self) -> bool {
        matches!(self.kind, Kind::Space | Kind::Comment)
    }
}

/// Every token of `sql`, blanks and comments included, in order; together
/// they cover the text exactly.
pub(crate) fn tokenize(sql: &str) -> Result<Vec<Tok>, PerfettoSqlError> {
    if u32::try_from(sql.len()).is_err() {
        return Err(PerfettoSqlError::TooLong { len: sql.len() });
    }
    if let Some(at) = sql.find('\0') {
        return Err(PerfettoSqlError::Unreadable { offset: at });
    }
    // The tokenizer slices the text it is given; a split inside a UTF-8
    // character would panic in the crate. SQLite's character classes make
    // every byte from 0x80 up part of a name, so that cannot happen, but a
    // query is untrusted input: a panic becomes an error here.
    let base = sql.as_ptr() as usize;
    let collected = std::panic::catch_unwind(|| {
        let tokenizer = Tokenizer::new();
        tokenizer
            .tokenize(sql)
            .map(|t| {
                let text = t.text();
                let start = (text.as_ptr() as usize).wrapping_sub(base);
                (t.token_type(), start, start.saturating_add(text.len()))
            })
            .collect::<Vec<_>>()
    })
    .map_err(|_| PerfettoSqlError::Unreadable { offset: 0 })?;
    let mut out = Vec::with_capacity(collected.len());
    let mut pos = 0;
    for (ty, start, end) in collected {
        if start != pos || end > sql.len() || end <= start {
            return Err(PerfettoSqlError::Unreadable { offset: pos });
        }
        let text = sql.get(start..end).unwrap_or_default();
        out.push(Tok {
            kind: kind(ty, text),
            start,
            end,
        });
        pos = end;
    }
    if pos != sql.len() {
        return Err(PerfettoSqlError::Unreadable { offset: pos });
    }
    Ok(out)
}

/// The kind of a token of type `ty` and text `text`.
fn kind(ty: TokenType, text: &str) -> Kind {
    match ty {
        TokenType::Space => Kind::Space,
        TokenType::Comment => Kind::Comment,
        TokenType::Semi => Kind::Semi,
        TokenType::Lp => Kind::Lp,
        TokenType::Rp => Kind::Rp,
        TokenType::Comma => Kind::Comma,
        TokenType::Dot => Kind::Dot,
        TokenType::Star => Kind::Star,
        TokenType::Bang => Kind::Bang,
        TokenType::Variable => Kind::Variable,
        _ if text == "!" => Kind::Bang,
        _ if is_bare_word(text) => Kind::Word,
        _ => Kind::Other,
    }
}

/// Letters, digits and `_`, not starting with a digit.
pub(crate) fn is_bare_word(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One statement of a text: the tokens from its first word to its last
/// token before the `;` that ends it (or the end of the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Statement {
    /// Its tokens, blanks and comments inside it included, none before.
    pub tokens: Vec<Tok>,
    /// Byte offset of its first token.
    pub start: usize,
    /// Byte offset just past its last token (the `;` excluded).
    pub end: usize,
}

impl Statement {
    /// Its tokens that are not blanks or comments.
    pub fn words(&self) -> Vec<Tok> {
        self.tokens
            .iter()
            .copied()
            .filter(|t| !t.is_blank())
            .collect()
    }
}

/// The statements of `tokens` (the tokens of a whole text), in order; a
/// text of blanks, comments and `;` alone has none. As SQLite does, the
/// `;` inside a `CREATE TRIGGER`'s `BEGIN … END` do not end it: only a `;`
/// right after `END` does.
pub(crate) fn statements(sql: &str, tokens: &[Tok]) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut current: Vec<Tok> = Vec::new();
    // The statement's first words, to know a trigger.
    let mut leading: Vec<Tok> = Vec::new();
    let mut last_word: Option<Tok> = None;
    let flush = |current: &mut Vec<Tok>, out: &mut Vec<Statement>| {
        while current.last().is_some_and(Tok::is_blank) {
            current.pop();
        }
        if let (Some(first), Some(last)) = (current.first(), current.last()) {
            out.push(Statement {
                start: first.start,
                end: last.end,
                tokens: std::mem::take(current),
            });
        }
        current.clear();
    };
    for &t in tokens {
        if t.kind == Kind::Semi {
            let in_trigger =
                is_trigger(sql, &leading) && !last_word.is_some_and(|w| w.is_word(sql, "end"));
            if !in_trigger {
                flush(&mut current, &mut out);
                leading.clear();
                last_word = None;
                continue;
            }
        }
        if current.is_empty() && t.is_blank() {
            continue;
        }
        if !t.is_blank() {
            if leading.len() < 3 {
                leading.push(t);
            }
            last_word = Some(t);
        }
        current.push(t);
    }
    flush(&mut current, &mut out);
    out
}

/// Whether a statement opening with `leading` is `CREATE [TEMP] TRIGGER`.
fn is_trigger(sql: &str, leading: &[Tok]) -> bool {
    match leading {
        [create, trigger, ..]
            if create.is_word(sql, "create") && trigger.is_word(sql, "trigger") =>
        {
            true
        }
        [create, temp, trigger]
            if create.is_word(sql, "create")
                && (temp.is_word(sql, "temp") || temp.is_word(sql, "temporary")) =>
        {
            trigger.is_word(sql, "trigger")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(sql: &str) -> Vec<&str> {
        let toks = tokenize(sql).unwrap();
        statements(sql, &toks)
            .iter()
            .map(|s| &sql[s.start..s.end])
            .collect()
    }

    #[test]
    fn tokens_cover_the_text_and_know_perfetto_punctuation() {
        let sql = "SELECT foo!($x, 'a;b') /* c */ -- d\n;";
        let toks = tokenize(sql).unwrap();
        assert_eq!(toks.first().unwrap().start, 0);
        assert_eq!(toks.last().unwrap().end, sql.len());
        let kinds: Vec<Kind> = toks
            .iter()
            .filter(|t| !t.is_blank())
            .map(|t| t.kind)
            .collect();
        assert_eq!(
            kinds,
            [
                Kind::Word,
                Kind::Word,
                Kind::Bang,
                Kind::Lp,
                Kind::Variable,
                Kind::Comma,
                Kind::Other,
                Kind::Rp,
                Kind::Semi
            ]
        );
    }

    #[test]
    fn statements_split_on_semicolons_outside_strings_comments_and_triggers() {
        assert_eq!(
            texts("  -- lead\n SELECT 'a;b' ; ;\n/* x; */ SELECT \"c;\"  "),
            ["SELECT 'a;b'", "SELECT \"c;\""]
        );
        let trigger = "CREATE TEMP TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; SELECT 2; END";
        assert_eq!(
            texts(&format!("{trigger}; SELECT 3")),
            [trigger, "SELECT 3"]
        );
        assert!(texts(" ;; -- only\n").is_empty());
    }

    #[test]
    fn untrusted_text_is_an_error_or_tokens_never_a_panic() {
        assert_eq!(
            tokenize("SELECT 1\0; SELECT 2"),
            Err(PerfettoSqlError::Unreadable { offset: 8 })
        );
        // Every byte value, and multi-byte characters at every place a
        // token could end.
        let mut seed = 0x2545_f491_u32;
        for _ in 0..2000 {
            let mut s = String::new();
            for _ in 0..(seed % 24) {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let c = match seed % 7 {
                    0 => 'é',
                    1 => '€',
                    2 => '😀',
                    _ => char::from_u32(1 + seed % 0x7f).unwrap_or('x'),
                };
                s.push(c);
            }
            if let Ok(toks) = tokenize(&s) {
                let joined: String = toks.iter().map(|t| t.text(&s)).collect();
                assert_eq!(joined, s);
            }
        }
    }
}
