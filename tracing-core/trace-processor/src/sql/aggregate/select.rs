//! Which rows an aggregate reads: those of the name's and the query's
//! conditions, found as the columnar virtual table finds them (a range of
//! the column the table is sorted by, by binary search; a `GLOB` with a
//! literal prefix, a string `=` or an integer `=` through the column's
//! value order) and then tested one by one, as SQLite tests them: a NULL
//! meets no comparison, numbers compare as numbers (an integer against a
//! double exactly), text by its bytes (the BINARY collation), and `GLOB` by
//! SQLite's own matcher, once per distinct string.

use std::cmp::Ordering;

use super::read::{Reader, Sel, V};
use super::shape::{CondOp, Lit};
use super::source::StoredCond;
use crate::column_store::strings::StrId;
use crate::column_store::table::Table;
use crate::hash::HashMap;

/// The rows meeting every condition: in row order when `ordered` (a
/// double's sum, or which of two equal doubles is kept, depends on it),
/// else in whatever order finds them fastest.
pub(crate) fn rows(table: &Table, filters: &[StoredCond], ordered: bool) -> Sel {
    let (lo, hi) = range(table, filters);
    let cands = candidates(table, filters, ordered);
    // Conditions the range already applies exactly need no test.
    let sorted = table
        .sorted_by
        .filter(|s| table.is_int(*s) && table.columns.get(*s).is_some_and(|c| !c.nullable()));
    let exact = |f: &&super::source::StoredCond| {
        !(Some(f.col) == sorted
            && matches!(f.lit, Some(Lit::Int(_)))
            && matches!(
                f.op,
                CondOp::Eq | CondOp::Lt | CondOp::Le | CondOp::Gt | CondOp::Ge
            ))
    };
    let mut tests: Vec<Test<'_>> = filters
        .iter()
        .filter(exact)
        .map(|f| Test {
            reader: Reader::of(table, f.col),
            op: f.op,
            pattern: match (&f.lit, f.op) {
                (Some(Lit::Text(t)), CondOp::Glob) => std::ffi::CString::new(t.as_str()).ok(),
                _ => None,
            },
            lit: f.lit.clone(),
            memo: HashMap::default(),
            last: None,
        })
        .collect();
    let strings = &*table.strings;
    match (cands, tests.is_empty()) {
        (None, true) => Sel::Range(lo, hi),
        (Some(list), true) => Sel::List(list),
        (None, false) => Sel::List(
            (lo..hi)
                .filter(|r| tests.iter_mut().all(|t| t.pass(*r, strings)))
                .map(|r| r as u32)
                .collect(),
        ),
        (Some(mut list), false) => {
            list.retain(|r| tests.iter_mut().all(|t| t.pass(*r as usize, strings)));
            Sel::List(list)
        }
    }
}

/// SQLite's `GLOB` (its own matcher, so the answer is the same).
fn glob(pattern: &std::ffi::CStr, s: &str) -> bool {
    // A C string ends at its first NUL, as SQLite's comparison of it does.
    let Ok(s) = std::ffi::CString::new(s.split('\0').next().unwrap_or("")) else {
        return false;
    };
    // SAFETY: both are valid NUL-terminated strings that outlive the call;
    // sqlite3_strglob only reads them.
    unsafe { rusqlite::ffi::sqlite3_strglob(pattern.as_ptr(), s.as_ptr()) == 0 }
}

/// An integer against a double, exactly (as SQLite compares them).
fn int_real_cmp(i: i64, r: f64) -> Ordering {
    if r < -9.223_372_036_854_776e18 {
        return Ordering::Greater;
    }
    if r >= 9.223_372_036_854_776e18 {
        return Ordering::Less;
    }
    let t = r.trunc();
    match i.cmp(&(t as i64)) {
        Ordering::Equal => 0.0f64.partial_cmp(&(r - t)).unwrap_or(Ordering::Equal),
        o => o,
    }
}

/// One condition, ready to test.
pub(crate) struct Test<'a> {
    reader: Reader<'a>,
    op: CondOp,
    lit: Option<Lit>,
    pattern: Option<std::ffi::CString>,
    /// Per string id, the answer (strings are tested once each).
    memo: HashMap<StrId, bool>,
    /// The last string id tested, and its answer (rows of one string
    /// often follow each other).
    last: Option<(StrId, bool)>,
}

impl Test<'_> {
    pub(crate) fn pass(
        &mut self,
        row: usize,
        strings: &crate::column_store::strings::StringPool,
    ) -> bool {
        let v = self.reader.get(row);
        match (self.op, v) {
            (CondOp::IsNull, v) => return v == V::Null,
            (CondOp::NotNull, v) => return v != V::Null,
            (_, V::Null) => return false,
            _ => {}
        }
        let ord = match (v, &self.lit) {
            (V::Int(x), Some(Lit::Int(y))) => x.cmp(y),
            (V::Int(x), Some(Lit::Real(y))) => int_real_cmp(x, *y),
            (V::Real(x), Some(Lit::Int(y))) => int_real_cmp(*y, x).reverse(),
            (V::Real(x), Some(Lit::Real(y))) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
            (V::Str(id), Some(Lit::Text(t))) => {
                if let Some((last, hit)) = self.last {
                    if last == id {
                        return hit;
                    }
                }
                if let Some(hit) = self.memo.get(&id) {
                    self.last = Some((id, *hit));
                    return *hit;
                }
                let s = strings.get(id).unwrap_or("");
                let hit = match (&self.pattern, self.op) {
                    (Some(p), CondOp::Glob) => glob(p, s),
                    _ => holds(self.op, s.as_bytes().cmp(t.as_bytes())),
                };
                self.memo.insert(id, hit);
                self.last = Some((id, hit));
                return hit;
            }
            _ => return false,
        };
        holds(self.op, ord)
    }
}

fn holds(op: CondOp, o: Ordering) -> bool {
    match op {
        CondOp::Eq => o == Ordering::Equal,
        CondOp::Ne => o != Ordering::Equal,
        CondOp::Lt => o == Ordering::Less,
        CondOp::Le => o != Ordering::Greater,
        CondOp::Gt => o == Ordering::Greater,
        CondOp::Ge => o != Ordering::Less,
        _ => false,
    }
}

/// The rows of the sorted column's range the conditions allow.
pub(crate) fn range(table: &Table, filters: &[StoredCond]) -> (usize, usize) {
    let (mut lo, mut hi) = (0, table.len);
    let Some(s) = table.sorted_by else {
        return (lo, hi);
    };
    let Some(c) = table.columns.get(s) else {
        return (lo, hi);
    };
    if !table.is_int(s) || c.nullable() {
        return (lo, hi);
    }
    // First row whose value is >= v (> v when strict).
    let lower = |v: i64, strict: bool| {
        let (mut a, mut b) = (0usize, table.len);
        while a < b {
            let mid = a + (b - a) / 2;
            let x = c.int_at(mid).unwrap_or(i64::MIN);
            if x < v || (strict && x == v) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        a
    };
    for f in filters.iter().filter(|f| f.col == s) {
        let Some(Lit::Int(v)) = f.lit else { continue };
        match f.op {
            CondOp::Eq => {
                lo = lo.max(lower(v, false));
                hi = hi.min(lower(v, true));
            }
            CondOp::Ge => lo = lo.max(lower(v, false)),
            CondOp::Gt => lo = lo.max(lower(v, true)),
            CondOp::Le => hi = hi.min(lower(v, true)),
            CondOp::Lt => hi = hi.min(lower(v, false)),
            _ => {}
        }
    }
    (lo, hi.max(lo))
}

/// The rows a string condition (`=`, or `GLOB` with a literal prefix) or
/// an integer `=` narrows to through the column's value order, in row
/// order when `ordered`, else in the column's value order (rows of one
/// value together); None when no condition narrows (the sorted column's
/// range is read instead).
fn candidates(table: &Table, filters: &[StoredCond], ordered: bool) -> Option<Vec<u32>> {
    let (lo, hi) = range(table, filters);
    let in_range = |r: &u32| (lo..hi).contains(&(*r as usize));
    for f in filters {
        let order = match (&f.lit, f.op) {
            (Some(Lit::Text(t)), CondOp::Glob)
                if !t.starts_with(['*', '?', '[']) && table.is_text(f.col) =>
            {
                table.order(f.col)
            }
            (Some(Lit::Text(_)), CondOp::Eq) if table.is_text(f.col) => table.order(f.col),
            (Some(Lit::Int(_)), CondOp::Eq)
                if table.is_int(f.col) && table.sorted_by != Some(f.col) =>
            {
                table.order(f.col)
            }
            _ => continue,
        };
        let reader = Reader::of(table, f.col);
        let (a, b) = match (&f.lit, f.op) {
            (Some(Lit::Text(t)), op) => {
                let prefix = if op == CondOp::Glob {
                    t.find(['*', '?', '['])
                        .map_or(t.as_str(), |i| t.get(..i).unwrap_or(""))
                } else {
                    t.as_str()
                };
                let at = |r: &u32| match reader.get(*r as usize) {
                    V::Str(s) => table.strings.get(s),
                    _ => None,
                };
                let a = order.partition_point(|r| at(r).is_none_or(|s| s < prefix));
                let b = a + order
                    .get(a..)
                    .unwrap_or(&[])
                    .partition_point(|r| at(r).is_some_and(|s| s.starts_with(prefix)));
                (a, b)
            }
            (Some(Lit::Int(v)), _) => {
                let key = |r: &u32| match reader.get(*r as usize) {
                    V::Int(x) => (1, x),
                    _ => (0, 0),
                };
                let a = order.partition_point(|r| key(r) < (1, *v));
                let b = order.partition_point(|r| key(r) <= (1, *v));
                (a, b)
            }
            _ => continue,
        };
        let mut rows: Vec<u32> = order
            .get(a..b)
            .unwrap_or(&[])
            .iter()
            .copied()
            .filter(in_range)
            .collect();
        if ordered {
            rows.sort_unstable();
        }
        return Some(rows);
    }
    None
}
