//! What a name in FROM reads, as the native aggregate needs it: one of the
//! trace's columnar tables, with the name's columns mapped to the table's
//! stored ones and the conditions that pick its rows. A table is itself;
//! a view qualifies when its rows are one table's rows, possibly filtered
//! by conditions on that table's columns and widened by `LEFT JOIN`s that
//! look a row up by another table's id (so no row is doubled or lost), as
//! the public views (`slice`, `sched_slice`, `perf_sample`, ...) are; a
//! view of such a view qualifies too. Its plain columns of the one table
//! are stored; anything it computes or takes from a joined table is not,
//! and a query that aggregates, groups or filters on such a column is left
//! to SQLite.

use std::sync::Arc;

use super::shape::{ColRef, Cond, CondOp, Lit};
use crate::column_store::table::Table;
use crate::sql::Engine;
use crate::sql::perfetto_sql::tokens::{Kind, Tok, tokenize};

/// A condition on a stored column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredCond {
    /// The table's column.
    pub col: usize,
    /// The comparison.
    pub op: CondOp,
    /// The literal (none for the NULL tests).
    pub lit: Option<Lit>,
}

/// A name's rows as one table's.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    /// The table.
    pub table: Arc<Table>,
    /// The name's columns: each name (lower case, None when not known)
    /// and the table's column it is, when stored.
    pub columns: Vec<(Option<String>, Option<usize>)>,
    /// Conditions a row of the table must meet to be a row of the name.
    pub filters: Vec<StoredCond>,
}

impl Source {
    /// The column named `name`: Some(stored) when the name has it (None
    /// inside when computed); None when it has no such column.
    pub fn column(&self, name: &str) -> Option<Option<usize>> {
        self.columns
            .iter()
            .find(|(n, _)| n.as_deref() == Some(name))
            .map(|(_, s)| *s)
    }

    /// Whether a column's name is unknown (a computed column without an
    /// alias), so that any name may be it.
    pub fn has_unknown(&self) -> bool {
        self.columns.iter().any(|(n, _)| n.is_none())
    }

    /// `cond` on this source's column, as a condition on the stored
    /// column, when it can be checked over the columns.
    pub fn stored_cond(&self, c: &Cond) -> Option<StoredCond> {
        let col = self.column(&c.col.name)??;
        pushable(&self.table, col, c.op, c.lit.as_ref())?;
        Some(StoredCond {
            col,
            op: c.op,
            lit: c.lit.clone(),
        })
    }
}

/// Whether `op lit` on `table`'s column `col` is compared over the columns
/// exactly as SQLite compares it: numbers against numeric columns, text
/// against text columns (no affinity conversion either way).
fn pushable(table: &Table, col: usize, op: CondOp, lit: Option<&Lit>) -> Option<()> {
    let text = table.is_text(col);
    let numeric = !text && table.columns.get(col).is_some();
    match (op, lit) {
        (CondOp::IsNull | CondOp::NotNull, None) => Some(()),
        (CondOp::Glob, Some(Lit::Text(_))) if text => Some(()),
        (CondOp::Glob, _) => None,
        (_, Some(Lit::Text(_))) if text => Some(()),
        (_, Some(Lit::Int(_) | Lit::Real(_))) if numeric => Some(()),
        _ => None,
    }
}

/// How deep views of views are followed.
const MAX_DEPTH: usize = 4;

/// What `name` reads, when it is a table or a view of the kind.
pub(crate) fn resolve(engine: &Engine, name: &str) -> Option<Source> {
    resolve_at(engine, name, 0)
}

fn resolve_at(engine: &Engine, name: &str, depth: usize) -> Option<Source> {
    if depth > MAX_DEPTH || shadowed(engine, name) {
        return None;
    }
    if let Some(table) = engine.table(name) {
        let columns = table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (Some(c.name.to_ascii_lowercase()), Some(i)))
            .collect();
        return Some(Source {
            table,
            columns,
            filters: Vec::new(),
        });
    }
    let sql = engine.view_sql(name).ok()??;
    view(engine, &sql, depth)
}

/// Whether a temporary table or view of that name hides the main one.
fn shadowed(engine: &Engine, name: &str) -> bool {
    engine
        .conn
        .query_row(
            "SELECT count(*) FROM sqlite_temp_master WHERE lower(name) = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .map_or(true, |n| n > 0)
}

/// A view's `CREATE VIEW name AS SELECT items FROM t [AS a] (LEFT JOIN u
/// [AS b] ON b.id = x.y)* [WHERE conds]`.
fn view(engine: &Engine, sql: &str, depth: usize) -> Option<Source> {
    let toks: Vec<Tok> = tokenize(sql)
        .ok()?
        .into_iter()
        .filter(|t| !t.is_blank() && t.kind != Kind::Semi)
        .collect();
    let word = |i: usize, w: &str| toks.get(i).is_some_and(|t| t.is_word(sql, w));
    let ident = |i: usize| {
        let t = toks.get(i)?;
        let text = t.text(sql);
        match t.kind {
            Kind::Word => Some(text.to_ascii_lowercase()),
            Kind::Other => text
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .map(|s| s.replace("\"\"", "\"").to_ascii_lowercase()),
            _ => None,
        }
    };
    // CREATE VIEW name AS SELECT
    if !(word(0, "create") && word(1, "view") && word(3, "as") && word(4, "select")) {
        return None;
    }
    let from = depth0_word(&toks, sql, 5, "from")?;
    let n = toks.len();
    let mut i = from + 1;
    let base_name = ident(i)?;
    i += 1;
    let mut base_alias = base_name.clone();
    if word(i, "as") {
        base_alias = ident(i + 1)?;
        i += 2;
    } else if toks.get(i).is_some_and(|t| t.kind == Kind::Word)
        && !word(i, "left")
        && !word(i, "where")
    {
        base_alias = ident(i)?;
        i += 1;
    }
    let base = resolve_at(engine, &base_name, depth + 1)?;
    // LEFT JOIN u [AS b] ON b.id = x.y: a lookup by u's id.
    let mut joined = 0;
    while word(i, "left") {
        i += 1;
        if word(i, "outer") {
            i += 1;
        }
        if !word(i, "join") {
            return None;
        }
        let u = engine.table(&ident(i + 1)?)?;
        i += 2;
        let mut alias = u.name.to_ascii_lowercase();
        if word(i, "as") {
            alias = ident(i + 1)?;
            i += 2;
        }
        if !word(i, "on") {
            return None;
        }
        // `b.id = x.y` or `x.y = b.id`, tokens i+1 ..= i+7.
        let side = |j: usize| Some((ident(j)?, toks.get(j + 1)?.kind == Kind::Dot, ident(j + 2)?));
        let (l, r) = (side(i + 1)?, side(i + 5)?);
        if !l.1 || !r.1 || toks.get(i + 4)?.text(sql) != "=" {
            return None;
        }
        let id = u
            .has_id
            .then(|| u.columns.first().map(|c| c.name.to_ascii_lowercase()))??;
        let by_id = |s: &(String, bool, String)| s.0 == alias && s.2 == id;
        if !(by_id(&l) || by_id(&r)) {
            return None;
        }
        i += 8;
        joined += 1;
    }
    let mut filters = base.filters.clone();
    if word(i, "where") {
        let mut a = i + 1;
        while a < n {
            let b = (a..n).find(|&j| word(j, "and")).unwrap_or(n);
            let cond = view_cond(&toks, sql, a, b)?;
            if cond.col.qual.as_deref().is_some_and(|q| q != base_alias) {
                return None;
            }
            if cond.col.qual.is_none() && joined > 0 {
                return None;
            }
            filters.push(base.stored_cond(&cond)?);
            a = b + 1;
        }
        i = n;
    }
    if i != n {
        return None;
    }
    // The items.
    let mut columns = Vec::new();
    let mut start = 5;
    let mut depth_p = 0usize;
    for j in 5..=from {
        let t = toks.get(j)?;
        match t.kind {
            Kind::Lp => depth_p += 1,
            Kind::Rp => depth_p = depth_p.saturating_sub(1),
            _ => {}
        }
        if (t.kind == Kind::Comma && depth_p == 0) || j == from {
            let item = view_item(&toks, sql, start, j, &base_alias, joined > 0, &base)?;
            columns.extend(item);
            start = j + 1;
        }
    }
    Some(Source {
        table: base.table,
        columns,
        filters,
    })
}

/// The first `w` at depth 0 from token `i`.
fn depth0_word(toks: &[Tok], sql: &str, i: usize, w: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(i) {
        match t.kind {
            Kind::Lp => depth += 1,
            Kind::Rp => depth = depth.checked_sub(1)?,
            _ if depth == 0 && t.is_word(sql, w) => return Some(j),
            _ => {}
        }
    }
    None
}

/// A view's item `a..b`: its column(s).
fn view_item(
    toks: &[Tok],
    sql: &str,
    a: usize,
    b: usize,
    base_alias: &str,
    joined: bool,
    base: &Source,
) -> Option<Vec<(Option<String>, Option<usize>)>> {
    let t = |i: usize| toks.get(i);
    let name_at = |i: usize| -> Option<String> {
        let t = toks.get(i)?;
        let text = t.text(sql);
        match t.kind {
            Kind::Word => Some(text.to_ascii_lowercase()),
            Kind::Other => text
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .map(|s| s.to_ascii_lowercase()),
            _ => None,
        }
    };
    if b == a + 1 && t(a)?.kind == Kind::Star && !joined {
        return Some(base.columns.clone());
    }
    // The alias: `... AS name`.
    let (expr_end, alias) = if b >= a + 3 && t(b - 2)?.is_word(sql, "as") {
        (b - 2, Some(name_at(b - 1)?))
    } else {
        (b, None)
    };
    // A plain column of the base: `col` or `alias.col`.
    let plain = match expr_end - a {
        1 if !joined && t(a)?.kind != Kind::Star => name_at(a),
        3 if t(a + 1)?.kind == Kind::Dot && name_at(a).as_deref() == Some(base_alias) => {
            name_at(a + 2)
        }
        _ => None,
    };
    Some(vec![match plain {
        Some(col) => {
            let stored = base.column(&col).flatten();
            (Some(alias.unwrap_or(col)), stored)
        }
        // Computed, or from a joined table.
        None => {
            let joined_plain = expr_end - a == 3 && t(a + 1)?.kind == Kind::Dot;
            let name = alias.or_else(|| joined_plain.then(|| name_at(a + 2)).flatten());
            (name, None)
        }
    }])
}

/// A view's condition `a..b`: `[q.]col op literal`.
fn view_cond(toks: &[Tok], sql: &str, a: usize, b: usize) -> Option<Cond> {
    let text = |i: usize| toks.get(i).map(|t| t.text(sql).to_owned());
    let (col, j) = if toks.get(a + 1).is_some_and(|t| t.kind == Kind::Dot) {
        (
            ColRef {
                qual: Some(text(a)?.to_ascii_lowercase()),
                name: text(a + 2)?.to_ascii_lowercase(),
            },
            a + 3,
        )
    } else {
        (
            ColRef {
                qual: None,
                name: text(a)?.to_ascii_lowercase(),
            },
            a + 1,
        )
    };
    let sub: String = toks
        .get(j..b)?
        .iter()
        .map(|t| format!("{} ", t.text(sql)))
        .collect();
    let q = super::shape::parse(&format!("SELECT 1 FROM x WHERE c {sub}"))?;
    let c = q.conds.into_iter().next()?;
    Some(Cond { col, ..c })
}
