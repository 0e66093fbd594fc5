//! Aggregates over the columns (issue 62, item 5). SQLite aggregates a
//! virtual table row by row, each cell fetched through `xColumn`; a query
//! that only counts, sums, averages or takes the extremes of one table's
//! stored columns, grouped by its columns, is instead computed here in one
//! pass over the columns, and SQLite is handed the small result in the
//! table's place:
//!
//! ```sql
//! SELECT utid, thread.name, SUM(s.dur) AS cpu FROM sched_slice AS s
//!   JOIN thread USING (utid) WHERE s.dur > 0 GROUP BY utid ORDER BY cpu DESC
//! -- becomes
//! SELECT utid, thread.name, "__zt_agg_0" AS cpu FROM
//!   (SELECT CAST(c0 AS BIGINT) AS "utid", c1 AS "__zt_agg_0"
//!    FROM __intrinsic_aggregate_result WHERE handle = 7) AS "s"
//!   JOIN thread USING (utid) GROUP BY utid ORDER BY cpu DESC
//! ```
//!
//! The rule, for any table: the query is one `SELECT` ([`shape`]) from one
//! table or view whose rows are one columnar table's ([`source`]),
//! optionally joined to another by that other's id (so each group meets at
//! most one row of it, and joining the groups gives what joining the rows
//! and grouping gives); its WHERE is conditions of a stored column against
//! a literal; it groups by stored columns (and the joined table's
//! columns, when the join's key is among the groups); its aggregates are
//! `COUNT(*)`, `COUNT`, `SUM`, `AVG`, `MIN`, `MAX` of stored columns; and
//! every other name it uses is a group's column, the joined table's, or an
//! output's alias. The GROUP BY, HAVING, ORDER BY and LIMIT stay in the
//! query and SQLite runs them over the groups (one row each), so the order
//! of the rows, ties and all, is SQLite's. A group key keeps its column's
//! type through `CAST`, so comparisons see the same affinity. Anything else,
//! or a rewrite whose column names would differ from the query's, or a sum
//! that could overflow, runs in SQLite as written ([`compute`]).
//!
//! `ZEROTRACE_NATIVE_AGGREGATES=0` turns the rewrite off (to measure
//! before and after on one build).

mod compute;
mod groups;
mod read;
pub(crate) mod result_table;
mod select;
mod shape;
mod source;
#[cfg(test)]
mod tests;

use std::sync::OnceLock;

use compute::{Agg, Spec};
use result_table::{Handle, MAX_COLUMNS};
use shape::{AggFn, ColRef, JoinOn, Query};
use source::Source;

use super::Engine;

pub(crate) use result_table::register;

/// A query rewritten over a computed result, and the result (kept until
/// this is dropped).
#[derive(Debug)]
pub(crate) struct Rewritten {
    /// The SQL to run instead.
    pub sql: String,
    _handle: Handle,
}

/// Whether the rewrite is on (`ZEROTRACE_NATIVE_AGGREGATES` not `0`).
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("ZEROTRACE_NATIVE_AGGREGATES").map_or(true, |v| v != "0"))
}

/// Longest query text looked at.
const MAX_TEXT: usize = 16 * 1024;

/// `sql` (one statement) with its aggregates computed over the columns,
/// when it is of the kind the module's doc describes.
pub(crate) fn rewrite(engine: &Engine, sql: &str) -> Option<Rewritten> {
    let head = sql.trim_start().get(..6)?;
    if !enabled() || sql.len() > MAX_TEXT || !head.eq_ignore_ascii_case("select") {
        return None;
    }
    let q = shape::parse(sql)?;
    if q.aggs.is_empty() {
        return None;
    }
    let plan = Plan::new(engine, &q)?;
    // The rewrite must name its columns as the query does.
    let names = |text: &str| -> Option<Vec<String>> {
        let stmt = engine.conn.prepare(text).ok()?;
        Some(stmt.column_names().iter().map(|s| s.to_string()).collect())
    };
    let original = names(sql)?;
    if names(&plan.sql(sql, &q, -1, &original))? != original {
        return None;
    }
    let rows = compute::compute(&Spec {
        table: &plan.fact.table,
        filters: &plan.filters,
        keys: &plan.key_cols,
        aggs: &plan.aggs,
    })
    .ok()?;
    let handle = Handle::store(rows);
    Some(Rewritten {
        sql: plan.sql(sql, &q, handle.id(), &original),
        _handle: handle,
    })
}

/// What a name of the query is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Side {
    /// A column of the aggregated table (its name).
    Fact(String),
    /// A column of the joined table.
    Dim,
    /// Neither: perhaps an output's alias.
    Other,
}

/// The query's meaning over the sources.
struct Plan {
    fact: Source,
    filters: Vec<source::StoredCond>,
    /// The group keys: names, and their stored columns.
    key_names: Vec<String>,
    key_cols: Vec<usize>,
    /// The distinct aggregates, and for each call of the query its index.
    aggs: Vec<Agg>,
    call_agg: Vec<usize>,
}

impl Plan {
    fn new(engine: &Engine, q: &Query) -> Option<Plan> {
        let fact = source::resolve(engine, &q.fact.name)?;
        let fq = q.fact.qualifier().to_owned();
        let dim = match &q.join {
            Some(j) => Some(source::resolve(engine, &j.table.name)?),
            None => None,
        };
        let dq = q.join.as_ref().map(|j| j.table.qualifier().to_owned());
        if dq.as_deref() == Some(fq.as_str()) {
            return None;
        }
        // The join: the aggregated table's column, and the joined table's,
        // which must be its id.
        let mut using = None;
        let mut join_cols = None;
        if let (Some(j), Some(d)) = (&q.join, &dim) {
            let (f, dc) = match &j.on {
                JoinOn::Using(c) => {
                    using = Some(c.clone());
                    (c.clone(), c.clone())
                }
                JoinOn::On(x, y) => {
                    let side = |r: &ColRef| r.qual.clone();
                    if side(x).as_deref() == Some(&fq) && side(y) == dq {
                        (x.name.clone(), y.name.clone())
                    } else if side(y).as_deref() == Some(&fq) && side(x) == dq {
                        (y.name.clone(), x.name.clone())
                    } else {
                        return None;
                    }
                }
            };
            fact.column(&f)??;
            if !(d.table.has_id && d.column(&dc)?? == 0) {
                return None;
            }
            join_cols = Some((f, dc));
        }
        let side = |r: &ColRef| -> Option<Side> {
            match r.qual.as_deref() {
                Some(qual) if qual == fq => {
                    fact.column(&r.name)?;
                    Some(Side::Fact(r.name.clone()))
                }
                Some(qual) if Some(qual) == dq.as_deref() => Some(Side::Dim),
                Some(_) => None,
                None => {
                    if using.as_deref() == Some(r.name.as_str()) {
                        return Some(Side::Fact(r.name.clone()));
                    }
                    let in_fact = fact.column(&r.name).is_some();
                    let in_dim = dim
                        .as_ref()
                        .is_some_and(|d| d.column(&r.name).is_some() || d.has_unknown());
                    match (in_fact, in_dim) {
                        (true, false) => Some(Side::Fact(r.name.clone())),
                        (false, true) => Some(Side::Dim),
                        (false, false) if !fact.has_unknown() => Some(Side::Other),
                        _ => None,
                    }
                }
            }
        };
        // The keys.
        let mut key_names: Vec<String> = Vec::new();
        let mut key_cols = Vec::new();
        let add_key = |names: &mut Vec<String>, cols: &mut Vec<usize>, name: &str| -> Option<()> {
            if !names.iter().any(|k| k == name) {
                cols.push(fact.column(name)??);
                names.push(name.to_owned());
            }
            Some(())
        };
        match &q.group_by {
            None => {
                if q.join.is_some() || q.having {
                    return None;
                }
            }
            Some(cols) => {
                let mut by_dim_id = false;
                for c in cols {
                    match side(c)? {
                        Side::Fact(name) => add_key(&mut key_names, &mut key_cols, &name)?,
                        Side::Dim => {
                            by_dim_id |= join_cols.as_ref().is_some_and(|(_, d)| *d == c.name);
                        }
                        Side::Other => return None,
                    }
                }
                if let (Some((f, _)), Some(j)) = (&join_cols, &q.join) {
                    let grouped = key_names.iter().any(|k| k == f);
                    if !grouped && (j.left || !by_dim_id) {
                        return None;
                    }
                    add_key(&mut key_names, &mut key_cols, f)?;
                }
            }
        }
        // The aggregates.
        let mut aggs: Vec<Agg> = Vec::new();
        let mut call_agg = Vec::new();
        for call in &q.aggs {
            let col = match &call.arg {
                None => None,
                Some(r) => match side(r)? {
                    Side::Fact(name) => Some(fact.column(&name)??),
                    _ => return None,
                },
            };
            if matches!(call.func, AggFn::Sum | AggFn::Avg)
                && col.is_some_and(|c| fact.table.is_text(c))
            {
                return None;
            }
            let agg = Agg {
                func: call.func,
                col,
            };
            let i = aggs.iter().position(|a| *a == agg).unwrap_or_else(|| {
                aggs.push(agg);
                aggs.len() - 1
            });
            call_agg.push(i);
        }
        if key_names.len() + aggs.len() > MAX_COLUMNS {
            return None;
        }
        // Every other name: a key, the joined table's, or an alias.
        let aliases: Vec<&str> = q.items.iter().filter_map(|i| i.alias.as_deref()).collect();
        for r in &q.refs {
            match side(r)? {
                Side::Fact(name) if key_names.contains(&name) => {}
                Side::Dim => {}
                Side::Other if aliases.contains(&r.name.as_str()) => {}
                _ => return None,
            }
        }
        // The conditions.
        let mut filters = fact.filters.clone();
        for c in &q.conds {
            if !matches!(side(&c.col)?, Side::Fact(_)) {
                return None;
            }
            filters.push(fact.stored_cond(c)?);
        }
        Some(Plan {
            fact,
            filters,
            key_names,
            key_cols,
            aggs,
            call_agg,
        })
    }

    /// The rewritten text, reading result `handle`; items without an
    /// alias that held an aggregate are named `names` says.
    fn sql(&self, sql: &str, q: &Query, handle: i64, names: &[String]) -> String {
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let mut cols = Vec::new();
        for (i, (name, col)) in self.key_names.iter().zip(&self.key_cols).enumerate() {
            let ty = self
                .fact
                .table
                .columns
                .get(*col)
                .map_or("BLOB", |c| c.sql_type);
            cols.push(format!("CAST(c{i} AS {ty}) AS {}", quote(name)));
        }
        let k = self.key_names.len();
        for j in 0..self.aggs.len() {
            cols.push(format!("c{} AS \"__zt_agg_{j}\"", k + j));
        }
        let sub = format!(
            "(SELECT {} FROM {} WHERE handle = {handle}) AS {}",
            cols.join(", "),
            result_table::NAME,
            quote(q.fact.qualifier())
        );
        // Edits: (start, end, text), applied in order.
        let mut edits: Vec<(usize, usize, String)> = vec![(q.fact.span.0, q.fact.span.1, sub)];
        if let Some((a, b)) = q.where_span {
            edits.push((a, b, String::new()));
        }
        for (call, j) in q.aggs.iter().zip(&self.call_agg) {
            edits.push((call.span.0, call.span.1, format!("\"__zt_agg_{j}\"")));
        }
        for (item, name) in q.items.iter().zip(names) {
            let holds = q
                .aggs
                .iter()
                .any(|c| c.span.0 >= item.span.0 && c.span.1 <= item.span.1);
            if item.alias.is_none() && holds {
                edits.push((item.span.1, item.span.1, format!(" AS {}", quote(name))));
            }
        }
        edits.sort_by_key(|e| (e.0, e.1));
        let mut out = String::with_capacity(sql.len() + 256);
        let mut at = 0;
        for (a, b, text) in edits {
            out.push_str(sql.get(at..a).unwrap_or(""));
            out.push_str(&text);
            at = b.max(at);
        }
        out.push_str(sql.get(at..q.end).unwrap_or(""));
        out
    }
}
