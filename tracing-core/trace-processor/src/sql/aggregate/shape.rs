//! Reading a query's text as the one shape whose aggregates can be computed
//! over the columns: `SELECT items FROM t [AS a] [[LEFT|INNER] JOIN u [AS b]
//! USING (c) | ON a.x = b.y] [WHERE c1 AND c2 ...] [GROUP BY refs] [HAVING
//! ...] [ORDER BY ...] [LIMIT ...]`, on the tokens SQLite's tokenizer makes
//! of it (`perfetto_sql/tokens.rs`). What it records is only what the
//! rewrite needs: the spans to replace, the aggregate calls (`COUNT(*)`,
//! and `COUNT`, `SUM`, `MIN`, `MAX`, `AVG` of one column), the WHERE's
//! conditions (a column against a literal), the GROUP BY's columns, and
//! every other name the items and the clauses after GROUP BY use. Anything
//! else (subqueries, DISTINCT, windows, other functions, parameters, a
//! comma join, several statements) is not this shape: `None`, and SQLite
//! answers the query as it is.

use crate::sql::perfetto_sql::tokens::{Kind, Tok, tokenize};

/// A column reference: an optional qualifier and a name, both in lower
/// case and unquoted (SQLite's names are case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColRef {
    /// The table or alias before the dot.
    pub qual: Option<String>,
    /// The column.
    pub name: String,
}

/// The aggregate functions computed natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum AggFn {
    /// `COUNT(*)`.
    CountStar,
    /// `COUNT(col)`.
    Count,
    /// `SUM(col)`.
    Sum,
    /// `MIN(col)`.
    Min,
    /// `MAX(col)`.
    Max,
    /// `AVG(col)`.
    Avg,
}

/// One aggregate call of the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AggCall {
    /// The function.
    pub func: AggFn,
    /// Its column (None for `COUNT(*)`).
    pub arg: Option<ColRef>,
    /// Its bytes in the query.
    pub span: (usize, usize),
}

/// A literal of a condition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    /// An integer.
    Int(i64),
    /// A double.
    Real(f64),
    /// A string.
    Text(String),
}

/// A comparison of a column with a literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CondOp {
    /// `=` or `==`.
    Eq,
    /// `!=` or `<>`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `GLOB`.
    Glob,
    /// `IS NULL`.
    IsNull,
    /// `IS NOT NULL`.
    NotNull,
}

impl CondOp {
    /// The operator with its sides swapped (`5 < x` is `x > 5`).
    fn flipped(self) -> Option<CondOp> {
        Some(match self {
            CondOp::Lt => CondOp::Gt,
            CondOp::Le => CondOp::Ge,
            CondOp::Gt => CondOp::Lt,
            CondOp::Ge => CondOp::Le,
            CondOp::Eq | CondOp::Ne => self,
            _ => return None,
        })
    }
}

/// One condition of a WHERE (the conditions are ANDed).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cond {
    /// The column.
    pub col: ColRef,
    /// The comparison.
    pub op: CondOp,
    /// The literal (none for the NULL tests).
    pub lit: Option<Lit>,
}

/// A table named in FROM or JOIN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableRef {
    /// Its name.
    pub name: String,
    /// Its alias, if any.
    pub alias: Option<String>,
    /// The name as written (quotes and case kept), what the rewrite names
    /// the result by when there is no alias.
    pub written: String,
    /// The bytes of the name and alias in the query.
    pub span: (usize, usize),
}

impl TableRef {
    /// What the query's columns qualify it by.
    pub fn qualifier(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }
}

/// How the join matches rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JoinOn {
    /// `USING (c)`.
    Using(String),
    /// `ON x = y`.
    On(ColRef, ColRef),
}

/// The joined table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Join {
    /// `LEFT JOIN`.
    pub left: bool,
    /// The table.
    pub table: TableRef,
    /// The match.
    pub on: JoinOn,
}

/// One item of the select list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    /// Its bytes in the query.
    pub span: (usize, usize),
    /// Its alias, if it has one.
    pub alias: Option<String>,
}

/// A query of the shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Query {
    /// The select list.
    pub items: Vec<Item>,
    /// The table aggregated.
    pub fact: TableRef,
    /// The table joined to it, if any.
    pub join: Option<Join>,
    /// The WHERE clause's bytes (keyword included), if any.
    pub where_span: Option<(usize, usize)>,
    /// Its conditions.
    pub conds: Vec<Cond>,
    /// The GROUP BY's columns (None without GROUP BY).
    pub group_by: Option<Vec<ColRef>>,
    /// Whether there is a HAVING.
    pub having: bool,
    /// Every aggregate call, in the items and after GROUP BY.
    pub aggs: Vec<AggCall>,
    /// Every name used outside the aggregate calls in the items, the
    /// GROUP BY and the clauses after it.
    pub refs: Vec<ColRef>,
    /// The end of the statement (before any `;`).
    pub end: usize,
}

/// Words that may stand in an item or a later clause without naming a
/// column.
const KEYWORDS: &[&str] = &[
    "as", "asc", "desc", "and", "or", "not", "null", "is", "in", "like", "glob", "between", "case",
    "when", "then", "else", "end", "collate", "nocase", "binary", "rtrim", "nulls", "first",
    "last", "limit", "offset", "order", "by", "having", "escape", "true", "false", "isnull",
    "notnull",
];

/// Scalar functions that may stand in an item or a later clause.
const SCALARS: &[&str] = &[
    "abs", "coalesce", "ifnull", "iif", "round", "lower", "upper",
];

/// Words that end a table reference's alias.
const FROM_WORDS: &[&str] = &[
    "left",
    "inner",
    "join",
    "cross",
    "natural",
    "on",
    "using",
    "where",
    "group",
    "having",
    "order",
    "limit",
    "outer",
    "full",
    "right",
    "window",
    "union",
    "except",
    "intersect",
];

/// An identifier's name: a bare word in lower case, or a quoted name
/// unquoted.
fn ident(t: &Tok, sql: &str) -> Option<String> {
    let text = t.text(sql);
    match t.kind {
        Kind::Word => Some(text.to_ascii_lowercase()),
        Kind::Other => {
            let (open, close) = match text.as_bytes().first()? {
                b'"' => ('"', '"'),
                b'`' => ('`', '`'),
                b'[' => ('[', ']'),
                _ => return None,
            };
            let inner = text.strip_prefix(open)?.strip_suffix(close)?;
            let unq = if open == '[' {
                inner.to_owned()
            } else {
                inner.replace(&format!("{close}{close}"), &close.to_string())
            };
            Some(unq.to_ascii_lowercase())
        }
        _ => None,
    }
}

/// Recognises `sql` (one statement) as the shape.
pub(crate) fn parse(sql: &str) -> Option<Query> {
    let all = tokenize(sql).ok()?;
    let mut toks: Vec<Tok> = all.into_iter().filter(|t| !t.is_blank()).collect();
    // One statement: a `;` only at the end.
    while toks.last().is_some_and(|t| t.kind == Kind::Semi) {
        toks.pop();
    }
    if toks.iter().any(|t| t.kind == Kind::Semi) {
        return None;
    }
    let end = toks.last()?.end;
    let p = Parser { sql, toks: &toks };
    p.query(end)
}

struct Parser<'a> {
    sql: &'a str,
    toks: &'a [Tok],
}

/// The positions of the clauses' keywords at depth 0.
#[derive(Default)]
struct Clauses {
    from: Option<usize>,
    where_: Option<usize>,
    group: Option<usize>,
    having: Option<usize>,
    order: Option<usize>,
    limit: Option<usize>,
}

impl Parser<'_> {
    fn word(&self, i: usize, w: &str) -> bool {
        self.toks.get(i).is_some_and(|t| t.is_word(self.sql, w))
    }

    fn query(&self, end: usize) -> Option<Query> {
        if !self.word(0, "select") || self.word(1, "distinct") {
            return None;
        }
        let c = self.clauses()?;
        let from = c.from?;
        let n = self.toks.len();
        let items_from = if self.word(1, "all") { 2 } else { 1 };
        let from_end = [c.where_, c.group, c.having, c.order, c.limit]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(n);
        let (fact, join) = self.tables(from + 1, from_end)?;
        let mut aggs = Vec::new();
        let mut refs = Vec::new();
        let mut items = Vec::new();
        for (a, b) in self.split(items_from, from, Kind::Comma) {
            if b <= a {
                return None;
            }
            items.push(self.item(a, b)?);
            self.scan(a, b, &mut aggs, &mut refs)?;
        }
        let mut where_span = None;
        let mut conds = Vec::new();
        if let Some(w) = c.where_ {
            let w_end = [c.group, c.having, c.order, c.limit]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(n);
            for (a, b) in self.split_and(w + 1, w_end)? {
                conds.push(self.cond(a, b)?);
            }
            let last = self.toks.get(w_end.checked_sub(1)?)?;
            where_span = Some((self.toks.get(w)?.start, last.end));
        }
        let mut group_by = None;
        if let Some(g) = c.group {
            if !self.word(g + 1, "by") {
                return None;
            }
            let g_end = [c.having, c.order, c.limit]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(n);
            let mut cols = Vec::new();
            for (a, b) in self.split(g + 2, g_end, Kind::Comma) {
                let (r, next) = self.colref(a)?;
                if next != b {
                    return None;
                }
                cols.push(r);
            }
            if cols.is_empty() {
                return None;
            }
            refs.extend(cols.iter().cloned());
            group_by = Some(cols);
        }
        let tail = [c.having, c.order, c.limit].into_iter().flatten().min();
        if let Some(t) = tail {
            self.scan(t, n, &mut aggs, &mut refs)?;
        }
        Some(Query {
            items,
            fact,
            join,
            where_span,
            conds,
            group_by,
            having: c.having.is_some(),
            aggs,
            refs,
            end,
        })
    }

    /// Finds the clauses, in SQL's order, each at most once.
    fn clauses(&self) -> Option<Clauses> {
        let mut c = Clauses::default();
        let mut depth = 0usize;
        let mut last = 0;
        for (i, t) in self.toks.iter().enumerate() {
            match t.kind {
                Kind::Lp => depth += 1,
                Kind::Rp => depth = depth.checked_sub(1)?,
                Kind::Word if depth == 0 => {
                    let w = t.text(self.sql).to_ascii_lowercase();
                    let (slot, rank) = match w.as_str() {
                        "from" => (&mut c.from, 1),
                        "where" => (&mut c.where_, 2),
                        "group" => (&mut c.group, 3),
                        "having" => (&mut c.having, 4),
                        "order" => (&mut c.order, 5),
                        "limit" => (&mut c.limit, 6),
                        "union" | "except" | "intersect" | "window" | "values" | "with" => {
                            return None;
                        }
                        _ => continue,
                    };
                    if slot.is_some() || rank <= last {
                        return None;
                    }
                    *slot = Some(i);
                    last = rank;
                }
                _ => {}
            }
        }
        (depth == 0).then_some(c)
    }

    /// The ranges of tokens `a..b` between `sep`s at depth 0.
    fn split(&self, a: usize, b: usize, sep: Kind) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut depth = 0usize;
        let mut start = a;
        for i in a..b {
            match self.toks.get(i).map(|t| t.kind) {
                Some(Kind::Lp) => depth += 1,
                Some(Kind::Rp) => depth = depth.saturating_sub(1),
                Some(k) if k == sep && depth == 0 => {
                    out.push((start, i));
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push((start, b));
        out
    }

    /// The ranges between top-level `AND`s (none inside parentheses; a
    /// BETWEEN makes it not the shape).
    fn split_and(&self, a: usize, b: usize) -> Option<Vec<(usize, usize)>> {
        let mut out = Vec::new();
        let mut start = a;
        for i in a..b {
            let t = self.toks.get(i)?;
            if matches!(t.kind, Kind::Lp | Kind::Rp) || t.is_word(self.sql, "between") {
                return None;
            }
            if t.is_word(self.sql, "and") {
                out.push((start, i));
                start = i + 1;
            }
        }
        out.push((start, b));
        Some(out)
    }

    /// A column reference at `i`: `name` or `qual.name`, and the position
    /// after it.
    fn colref(&self, i: usize) -> Option<(ColRef, usize)> {
        let first = ident(self.toks.get(i)?, self.sql)?;
        if self.toks.get(i + 1).is_some_and(|t| t.kind == Kind::Dot) {
            let name = ident(self.toks.get(i + 2)?, self.sql)?;
            if self.toks.get(i + 3).is_some_and(|t| t.kind == Kind::Dot) {
                return None;
            }
            return Some((
                ColRef {
                    qual: Some(first),
                    name,
                },
                i + 3,
            ));
        }
        Some((
            ColRef {
                qual: None,
                name: first,
            },
            i + 1,
        ))
    }

    /// A table reference `name [[AS] alias]` at `i`, ending before `end`.
    fn table_ref(&self, i: usize, end: usize) -> Option<(TableRef, usize)> {
        let t = self.toks.get(i)?;
        let name = ident(t, self.sql)?;
        if FROM_WORDS.contains(&name.as_str()) && t.kind == Kind::Word {
            return None;
        }
        // Not a schema-qualified name, nor a table function.
        if self
            .toks
            .get(i + 1)
            .is_some_and(|t| matches!(t.kind, Kind::Dot | Kind::Lp))
        {
            return None;
        }
        let mut next = i + 1;
        let mut alias = None;
        let mut last = t.end;
        if self.word(next, "as") {
            let a = self.toks.get(next + 1)?;
            alias = Some(ident(a, self.sql)?);
            last = a.end;
            next += 2;
        } else if next < end {
            let a = self.toks.get(next)?;
            if let Some(w) = ident(a, self.sql) {
                if !(a.kind == Kind::Word && FROM_WORDS.contains(&w.as_str())) {
                    alias = Some(w);
                    last = a.end;
                    next += 1;
                }
            }
        }
        Some((
            TableRef {
                name,
                alias,
                written: t.text(self.sql).to_owned(),
                span: (t.start, last),
            },
            next,
        ))
    }

    /// FROM's tokens `a..b`: one table, optionally one join.
    fn tables(&self, a: usize, b: usize) -> Option<(TableRef, Option<Join>)> {
        let (fact, mut i) = self.table_ref(a, b)?;
        if i == b {
            return Some((fact, None));
        }
        let mut left = false;
        if self.word(i, "left") {
            left = true;
            i += 1;
            if self.word(i, "outer") {
                i += 1;
            }
        } else if self.word(i, "inner") {
            i += 1;
        }
        if !self.word(i, "join") {
            return None;
        }
        let (table, mut i) = self.table_ref(i + 1, b)?;
        let on = if self.word(i, "using") {
            if self.toks.get(i + 1)?.kind != Kind::Lp || self.toks.get(i + 3)?.kind != Kind::Rp {
                return None;
            }
            let col = ident(self.toks.get(i + 2)?, self.sql)?;
            i += 4;
            JoinOn::Using(col)
        } else if self.word(i, "on") {
            let (x, j) = self.colref(i + 1)?;
            let eq = self.toks.get(j)?.text(self.sql);
            if eq != "=" && eq != "==" {
                return None;
            }
            let (y, k) = self.colref(j + 1)?;
            i = k;
            JoinOn::On(x, y)
        } else {
            return None;
        };
        (i == b).then_some((fact, Some(Join { left, table, on })))
    }

    /// An item `a..b` and its alias.
    fn item(&self, a: usize, b: usize) -> Option<Item> {
        let first = self.toks.get(a)?;
        let last = self.toks.get(b - 1)?;
        let mut alias = None;
        if b >= a + 3 && self.word(b - 2, "as") {
            alias = Some(ident(last, self.sql)?);
        } else if b >= a + 2 && self.toks.get(b - 2).is_some_and(|t| t.kind == Kind::Rp) {
            // `COUNT(*) n`: a name right after a call is its alias.
            alias = ident(last, self.sql);
        }
        Some(Item {
            span: (first.start, last.end),
            alias,
        })
    }

    /// Finds the aggregate calls and the names in tokens `a..b`; None on
    /// anything outside the shape.
    fn scan(
        &self,
        a: usize,
        b: usize,
        aggs: &mut Vec<AggCall>,
        refs: &mut Vec<ColRef>,
    ) -> Option<()> {
        let mut i = a;
        while i < b {
            let t = self.toks.get(i)?;
            match t.kind {
                Kind::Star | Kind::Variable | Kind::Bang | Kind::Semi => return None,
                Kind::Word if self.toks.get(i + 1).is_some_and(|n| n.kind == Kind::Lp) => {
                    let f = t.text(self.sql).to_ascii_lowercase();
                    let func = match f.as_str() {
                        "count" => AggFn::Count,
                        "sum" => AggFn::Sum,
                        "min" => AggFn::Min,
                        "max" => AggFn::Max,
                        "avg" => AggFn::Avg,
                        _ if SCALARS.contains(&f.as_str()) => {
                            i += 2;
                            continue;
                        }
                        _ => return None,
                    };
                    let (func, arg, close) =
                        if func == AggFn::Count && self.toks.get(i + 2)?.kind == Kind::Star {
                            (AggFn::CountStar, None, i + 3)
                        } else {
                            let (r, j) = self.colref(i + 2)?;
                            (func, Some(r), j)
                        };
                    let rp = self.toks.get(close)?;
                    if rp.kind != Kind::Rp {
                        return None;
                    }
                    aggs.push(AggCall {
                        func,
                        arg,
                        span: (t.start, rp.end),
                    });
                    i = close + 1;
                }
                Kind::Word | Kind::Other if ident(t, self.sql).is_some() => {
                    let (r, j) = self.colref(i)?;
                    let keyword = t.kind == Kind::Word
                        && r.qual.is_none()
                        && KEYWORDS.contains(&r.name.as_str());
                    if !keyword {
                        refs.push(r);
                    }
                    i = j;
                }
                _ => i += 1,
            }
        }
        Some(())
    }

    /// A condition `a..b`: a column against a literal, or a NULL test.
    fn cond(&self, a: usize, b: usize) -> Option<Cond> {
        if let Some((col, j)) = self.colref(a) {
            if self.word(j, "is") && self.word(j + 1, "null") && j + 2 == b {
                return Some(Cond {
                    col,
                    op: CondOp::IsNull,
                    lit: None,
                });
            }
            if self.word(j, "is")
                && self.word(j + 1, "not")
                && self.word(j + 2, "null")
                && j + 3 == b
            {
                return Some(Cond {
                    col,
                    op: CondOp::NotNull,
                    lit: None,
                });
            }
            let op = self.op(j)?;
            let (lit, k) = self.literal(j + 1)?;
            return (k == b).then_some(Cond {
                col,
                op,
                lit: Some(lit),
            });
        }
        let (lit, j) = self.literal(a)?;
        let op = self.op(j)?.flipped()?;
        let (col, k) = self.colref(j + 1)?;
        (k == b).then_some(Cond {
            col,
            op,
            lit: Some(lit),
        })
    }

    fn op(&self, i: usize) -> Option<CondOp> {
        let t = self.toks.get(i)?;
        if t.is_word(self.sql, "glob") {
            return Some(CondOp::Glob);
        }
        Some(match t.text(self.sql) {
            "=" | "==" => CondOp::Eq,
            "!=" | "<>" => CondOp::Ne,
            "<" => CondOp::Lt,
            "<=" => CondOp::Le,
            ">" => CondOp::Gt,
            ">=" => CondOp::Ge,
            _ => return None,
        })
    }

    /// A literal at `i` (a number, possibly negative, or a string) and
    /// the position after it.
    fn literal(&self, i: usize) -> Option<(Lit, usize)> {
        let t = self.toks.get(i)?;
        let text = t.text(self.sql);
        if t.kind != Kind::Other {
            return None;
        }
        if let Some(s) = text.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
            return Some((Lit::Text(s.replace("''", "'")), i + 1));
        }
        if text == "-" {
            let (n, j) = self.literal(i + 1)?;
            return match n {
                Lit::Int(v) => Some((Lit::Int(v.checked_neg()?), j)),
                Lit::Real(v) => Some((Lit::Real(-v), j)),
                Lit::Text(_) => None,
            };
        }
        number(text).map(|l| (l, i + 1))
    }
}

/// A numeric literal as SQLite reads it (decimal only; an integer too big
/// for 64 bits is a double).
fn number(text: &str) -> Option<Lit> {
    let first = text.bytes().next()?;
    if !(first.is_ascii_digit() || first == b'.') || text.contains(['x', 'X', '_']) {
        return None;
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(v) = text.parse::<i64>() {
            return Some(Lit::Int(v));
        }
    }
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(Lit::Real)
}
