//! The aggregates of each group, with exactly SQLite's answers:
//! `COUNT(*)`, `COUNT` (non-NULL cells), `SUM` and `AVG` (SQLite's integer
//! sum, switching to its Kahan-Babuska-Neumaier double sum at the first
//! double; `SUM` of no values NULL, `AVG` always a double), `MIN` and `MAX`
//! (NULLs skipped, the first of equal values kept, text by its bytes). A
//! sum that SQLite might find overflowing 64 bits is not computed here
//! ([`Overflow`]): SQLite then answers, with its error.
//!
//! The pass is column by column: the rows ([`super::select`]), then each
//! row's group ([`super::groups`]), then each aggregate over its column,
//! each a plain loop ([`super::read::scan`]). The rows are taken in row
//! order whenever the answer could depend on it (doubles summed, or kept
//! as an extreme), as SQLite's scan of the table takes them.

use std::cmp::Ordering;

use super::groups::assign;
use super::read::{Reader, V, scan};
use super::result_table::{Rows, Val};
use super::select;
use super::shape::AggFn;
use super::source::StoredCond;
use crate::column_store::strings::StringPool;
use crate::column_store::table::Table;

/// A sum SQLite could find overflowing: let SQLite answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overflow;

/// One aggregate over a stored column (none for `COUNT(*)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Agg {
    /// The function.
    pub func: AggFn,
    /// The column.
    pub col: Option<usize>,
}

/// SQLite's running sum (`SUM` and `AVG`).
#[derive(Debug, Clone, Copy, Default)]
struct Sum {
    cnt: i64,
    isum: i64,
    approx: bool,
    ovrfl: bool,
    rsum: f64,
    rerr: f64,
    /// The sum of magnitudes of the integers: below 2^63, no order of the
    /// rows overflows.
    mag: u128,
}

const BIG: i64 = 4_503_599_627_370_496;

impl Sum {
    fn kbn(&mut self, r: f64) {
        let s = self.rsum;
        let t = s + r;
        if s.abs() > r.abs() {
            self.rerr += (s - t) + r;
        } else {
            self.rerr += (r - t) + s;
        }
        self.rsum = t;
    }

    fn kbn_int(&mut self, v: i64) {
        if v <= -BIG || v >= BIG {
            let small = v % 16384;
            self.kbn((v - small) as f64);
            self.kbn(small as f64);
        } else {
            self.kbn(v as f64);
        }
    }

    fn init(&mut self, v: i64) {
        if v <= -BIG || v >= BIG {
            let small = v % 16384;
            self.rsum = (v - small) as f64;
            self.rerr = small as f64;
        } else {
            self.rsum = v as f64;
            self.rerr = 0.0;
        }
    }

    fn step(&mut self, v: V) {
        match v {
            V::Int(x) => {
                self.cnt += 1;
                self.mag += u128::from(x.unsigned_abs());
                if !self.approx {
                    match self.isum.checked_add(x) {
                        Some(s) => self.isum = s,
                        None => {
                            self.ovrfl = true;
                            self.init(self.isum);
                            self.approx = true;
                            self.kbn_int(x);
                        }
                    }
                } else {
                    self.kbn_int(x);
                }
            }
            V::Real(x) => {
                self.cnt += 1;
                if !self.approx {
                    self.init(self.isum);
                    self.approx = true;
                } else {
                    self.ovrfl = false;
                }
                self.kbn(x);
            }
            V::Null | V::Str(_) => {}
        }
    }

    fn total(&self) -> f64 {
        if self.rerr.is_finite() {
            self.rsum + self.rerr
        } else {
            self.rsum
        }
    }

    fn sum(&self) -> Result<Val, Overflow> {
        if self.cnt == 0 {
            return Ok(Val::Null);
        }
        if self.ovrfl || self.mag > i64::MAX as u128 {
            return Err(Overflow);
        }
        Ok(if self.approx {
            Val::Real(self.total())
        } else {
            Val::Int(self.isum)
        })
    }

    fn avg(&self) -> Val {
        if self.cnt == 0 {
            return Val::Null;
        }
        let r = if self.approx {
            self.total()
        } else {
            self.isum as f64
        };
        Val::Real(r / self.cnt as f64)
    }
}

/// What the pass needs of the table.
pub(crate) struct Spec<'a> {
    /// The table.
    pub table: &'a Table,
    /// Conditions every row must meet.
    pub filters: &'a [StoredCond],
    /// The key columns (empty: one group, even of no rows).
    pub keys: &'a [usize],
    /// The aggregates.
    pub aggs: &'a [Agg],
}

/// Computes the groups: per group its keys then its aggregates.
pub(crate) fn compute(spec: &Spec<'_>) -> Result<Rows, Overflow> {
    let table = spec.table;
    let strings = &*table.strings;
    let ordered = spec.aggs.iter().any(|a| {
        !matches!(a.func, AggFn::Count | AggFn::CountStar)
            && a.col.is_some_and(|c| Reader::of(table, c).is_real())
    });
    let sel = select::rows(table, spec.filters, ordered);
    let keys: Vec<Reader<'_>> = spec.keys.iter().map(|c| Reader::of(table, *c)).collect();
    let groups = assign(&sel, &keys, strings);
    let n = groups.firsts.len();
    let ids = &groups.ids;
    let group = |pos: usize| -> usize {
        if ids.is_empty() {
            0
        } else {
            ids.get(pos).map_or(usize::MAX, |g| *g as usize)
        }
    };
    let mut columns: Vec<Vec<Val>> = Vec::with_capacity(spec.aggs.len());
    for a in spec.aggs {
        let reader = a.col.map_or(Reader::Missing, |c| Reader::of(table, c));
        let column = match a.func {
            AggFn::CountStar => {
                let mut counts = vec![0i64; n];
                if ids.is_empty() {
                    if let Some(c) = counts.first_mut() {
                        *c = sel.len() as i64;
                    }
                } else {
                    for g in ids {
                        if let Some(c) = counts.get_mut(*g as usize) {
                            *c += 1;
                        }
                    }
                }
                counts.into_iter().map(Val::Int).collect()
            }
            AggFn::Count => {
                let mut counts = vec![0i64; n];
                scan(&reader, &sel, |pos, _, v| {
                    if v != V::Null {
                        if let Some(c) = counts.get_mut(group(pos)) {
                            *c += 1;
                        }
                    }
                });
                counts.into_iter().map(Val::Int).collect()
            }
            AggFn::Sum | AggFn::Avg => {
                let mut sums = vec![Sum::default(); n];
                scan(&reader, &sel, |pos, _, v| {
                    if let Some(s) = sums.get_mut(group(pos)) {
                        s.step(v);
                    }
                });
                let mut out = Vec::with_capacity(n);
                for s in &sums {
                    out.push(if a.func == AggFn::Avg {
                        s.avg()
                    } else {
                        s.sum()?
                    });
                }
                out
            }
            AggFn::Min | AggFn::Max => {
                let want = if a.func == AggFn::Max {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                let mut best: Vec<V> = vec![V::Null; n];
                scan(&reader, &sel, |pos, _, v| {
                    if v == V::Null {
                        return;
                    }
                    if let Some(b) = best.get_mut(group(pos)) {
                        if *b == V::Null || compare(v, *b, strings) == want {
                            *b = v;
                        }
                    }
                });
                best.into_iter().map(|v| value(v, strings)).collect()
            }
        };
        columns.push(column);
    }
    let mut out = Vec::with_capacity(n);
    for (g, first) in groups.firsts.iter().enumerate() {
        let mut row: Vec<Val> = keys
            .iter()
            .map(|k| {
                if *first == usize::MAX {
                    Val::Null
                } else {
                    value(k.get(*first), strings)
                }
            })
            .collect();
        for c in &columns {
            row.push(c.get(g).cloned().unwrap_or(Val::Null));
        }
        out.push(row);
    }
    Ok(out)
}

/// A cell as a result's value.
fn value(v: V, strings: &StringPool) -> Val {
    match v {
        V::Null => Val::Null,
        V::Int(x) => Val::Int(x),
        V::Real(x) => Val::Real(x),
        V::Str(s) => strings
            .get(s)
            .map_or(Val::Null, |s| Val::Text(s.to_owned())),
    }
}

/// Two non-NULL values of one column, as SQLite's BINARY comparison.
fn compare(a: V, b: V, strings: &StringPool) -> Ordering {
    match (a, b) {
        (V::Int(x), V::Int(y)) => x.cmp(&y),
        (V::Real(x), V::Real(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (V::Str(x), V::Str(y)) if x == y => Ordering::Equal,
        (V::Str(x), V::Str(y)) => strings
            .get(x)
            .unwrap_or("")
            .as_bytes()
            .cmp(strings.get(y).unwrap_or("").as_bytes()),
        _ => Ordering::Equal,
    }
}
