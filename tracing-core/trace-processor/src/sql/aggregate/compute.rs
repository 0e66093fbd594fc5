//! The aggregates computed over the columns, with exactly SQLite's
//! answers: the rows meeting every condition (a NULL meets none; numbers
//! compared as numbers, text by its bytes, `GLOB` by SQLite's own
//! matcher), grouped by the key columns (NULLs one group, text by its
//! bytes as the BINARY collation groups, a double's NaN read as NULL as
//! SQLite reads it), and per group `COUNT(*)`, `COUNT`, `SUM`, `AVG`
//! (SQLite's integer sum, switching to its Kahan-Babuska-Neumaier double
//! sum at the first double, rows taken in row order), `MIN` and `MAX`
//! (NULLs skipped, the first of equal values kept). A sum that SQLite
//! might find overflowing 64 bits is not computed here ([`Overflow`]):
//! SQLite then answers, with its error.
//!
//! The rows are found as the columnar virtual table finds them: a range of
//! the column the table is sorted by by binary search, a `GLOB` with a
//! literal prefix or a string `=` through the column's value order (each
//! distinct string tested once), integer equality as one run of the
//! column's value order. A single integer key with a dense range of values
//! (ids, as `track_id` or `utid` are) indexes an array of groups; other
//! keys go through a hash map.

use std::cmp::Ordering;

use super::result_table::{Rows, Val};
use super::shape::{AggFn, CondOp, Lit};
use super::source::StoredCond;
use crate::hash::HashMap;
use crate::sql::table::{ColumnData, Nullable, NullableInts, Table};
use crate::storage::strings::StrId;

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

/// A cell as the pass reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum V {
    Null,
    Int(i64),
    Real(f64),
    Str(StrId),
}

/// A column read without going through a cell's general form.
enum Reader<'a> {
    Index(usize),
    I64(&'a [i64]),
    I32(&'a [i32]),
    OptInt(&'a NullableInts),
    Real(&'a [f64]),
    OptReal(&'a Nullable<f64>),
    Str(&'a [StrId]),
    Missing,
}

impl Reader<'_> {
    fn of(table: &Table, col: usize) -> Reader<'_> {
        match table.columns.get(col).map(|c| &c.data) {
            Some(ColumnData::RowIndex(n)) => Reader::Index(*n),
            Some(ColumnData::Int(v)) => Reader::I64(v),
            Some(ColumnData::Int32(v)) => Reader::I32(v),
            Some(ColumnData::OptInt(v)) => Reader::OptInt(v),
            Some(ColumnData::Real(v)) => Reader::Real(v),
            Some(ColumnData::OptReal(v)) => Reader::OptReal(v),
            Some(ColumnData::Str(v)) => Reader::Str(v),
            None => Reader::Missing,
        }
    }

    #[inline]
    fn get(&self, row: usize) -> V {
        let real = |x: Option<f64>| match x {
            Some(x) if !x.is_nan() => V::Real(x),
            _ => V::Null,
        };
        match self {
            Reader::Index(n) => {
                if row < *n {
                    V::Int(row as i64)
                } else {
                    V::Null
                }
            }
            Reader::I64(v) => v.get(row).map_or(V::Null, |x| V::Int(*x)),
            Reader::I32(v) => v.get(row).map_or(V::Null, |x| V::Int(i64::from(*x))),
            Reader::OptInt(v) => v.get(row).map_or(V::Null, V::Int),
            Reader::Real(v) => real(v.get(row).copied()),
            Reader::OptReal(v) => real(v.get(row)),
            Reader::Str(v) => match v.get(row) {
                Some(s) if *s != StrId::NULL => V::Str(*s),
                _ => V::Null,
            },
            Reader::Missing => V::Null,
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
struct Test<'a> {
    reader: Reader<'a>,
    op: CondOp,
    lit: Option<Lit>,
    pattern: Option<std::ffi::CString>,
    /// Per string id, the answer (strings are tested once each).
    memo: HashMap<StrId, bool>,
}

impl Test<'_> {
    fn pass(&mut self, row: usize, strings: &crate::storage::strings::StringPool) -> bool {
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
                if let Some(hit) = self.memo.get(&id) {
                    return *hit;
                }
                let s = strings.get(id).unwrap_or("");
                let hit = match (&self.pattern, self.op) {
                    (Some(p), CondOp::Glob) => glob(p, s),
                    _ => holds(self.op, s.as_bytes().cmp(t.as_bytes())),
                };
                self.memo.insert(id, hit);
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

/// One aggregate's state in one group.
#[derive(Debug, Clone, Copy)]
enum Acc {
    Count(i64),
    Sum(Sum),
    Best(Option<V>),
}

/// A key's part: its value as grouping compares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Part {
    Null,
    Int(i64),
    /// A double's bits (-0.0 as 0.0: they are one group).
    Real(u64),
    /// A distinct text (strings equal in bytes share it).
    Text(u32),
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
    let rows = candidates(spec);
    let mut tests: Vec<Test<'_>> = spec
        .filters
        .iter()
        .map(|f| Test {
            reader: Reader::of(table, f.col),
            op: f.op,
            pattern: match (&f.lit, f.op) {
                (Some(Lit::Text(t)), CondOp::Glob) => std::ffi::CString::new(t.as_str()).ok(),
                _ => None,
            },
            lit: f.lit.clone(),
            memo: HashMap::default(),
        })
        .collect();
    let key_readers: Vec<Reader<'_>> = spec.keys.iter().map(|c| Reader::of(table, *c)).collect();
    let agg_readers: Vec<Reader<'_>> = spec
        .aggs
        .iter()
        .map(|a| a.col.map_or(Reader::Missing, |c| Reader::of(table, c)))
        .collect();
    let fresh: Vec<Acc> = spec
        .aggs
        .iter()
        .map(|a| match a.func {
            AggFn::CountStar | AggFn::Count => Acc::Count(0),
            AggFn::Sum | AggFn::Avg => Acc::Sum(Sum::default()),
            AggFn::Min | AggFn::Max => Acc::Best(None),
        })
        .collect();
    let mut groups = Groups::new(spec, &key_readers, rows.as_ref());
    let mut accs: Vec<Acc> = Vec::new();
    let mut firsts: Vec<usize> = Vec::new();
    let mut visit = |row: usize| {
        if !tests.iter_mut().all(|t| t.pass(row, strings)) {
            return;
        }
        let g = groups.group(row, &key_readers, strings);
        if g == firsts.len() {
            firsts.push(row);
            accs.extend_from_slice(&fresh);
        }
        let base = g * fresh.len();
        for (i, (a, r)) in spec.aggs.iter().zip(&agg_readers).enumerate() {
            let Some(acc) = accs.get_mut(base + i) else {
                continue;
            };
            match (acc, a.func) {
                (Acc::Count(n), AggFn::CountStar) => *n += 1,
                (Acc::Count(n), _) => {
                    if r.get(row) != V::Null {
                        *n += 1;
                    }
                }
                (Acc::Sum(s), _) => s.step(r.get(row)),
                (Acc::Best(best), f) => {
                    let v = r.get(row);
                    if v == V::Null {
                        continue;
                    }
                    let better = match best {
                        None => true,
                        Some(b) => {
                            let o = compare(v, *b, strings);
                            (f == AggFn::Max && o == Ordering::Greater)
                                || (f == AggFn::Min && o == Ordering::Less)
                        }
                    };
                    if better {
                        *best = Some(v);
                    }
                }
            }
        }
    };
    match &rows {
        Some(list) => list.iter().for_each(|r| visit(*r as usize)),
        None => {
            let (a, b) = range(spec);
            (a..b).for_each(&mut visit);
        }
    }
    if spec.keys.is_empty() && firsts.is_empty() {
        firsts.push(usize::MAX);
        accs.extend_from_slice(&fresh);
    }
    let text = |v: V| match v {
        V::Null => Val::Null,
        V::Int(x) => Val::Int(x),
        V::Real(x) => Val::Real(x),
        V::Str(s) => strings
            .get(s)
            .map_or(Val::Null, |s| Val::Text(s.to_owned())),
    };
    let mut out = Vec::with_capacity(firsts.len());
    for (g, first) in firsts.iter().enumerate() {
        let mut row: Vec<Val> = key_readers.iter().map(|r| text(r.get(*first))).collect();
        for (i, a) in spec.aggs.iter().enumerate() {
            row.push(match (accs.get(g * fresh.len() + i), a.func) {
                (Some(Acc::Count(n)), _) => Val::Int(*n),
                (Some(Acc::Sum(s)), AggFn::Avg) => s.avg(),
                (Some(Acc::Sum(s)), _) => s.sum()?,
                (Some(Acc::Best(Some(v))), _) => text(*v),
                _ => Val::Null,
            });
        }
        out.push(row);
    }
    Ok(out)
}

/// Two non-NULL values of one column, as SQLite's BINARY comparison.
fn compare(a: V, b: V, strings: &crate::storage::strings::StringPool) -> Ordering {
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

/// The rows of the sorted column's range the conditions allow.
fn range(spec: &Spec<'_>) -> (usize, usize) {
    let table = spec.table;
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
    for f in spec.filters.iter().filter(|f| f.col == s) {
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
/// order; None when no condition narrows (the sorted column's range is
/// read instead).
fn candidates(spec: &Spec<'_>) -> Option<Vec<u32>> {
    let table = spec.table;
    let (lo, hi) = range(spec);
    let in_range = |r: &u32| (lo..hi).contains(&(*r as usize));
    for f in spec.filters {
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
        rows.sort_unstable();
        return Some(rows);
    }
    None
}

/// The groups met so far.
struct Groups {
    /// One key, dense integers from `base`: the group of each, u32::MAX
    /// where none yet; the NULL key's group apart.
    dense: Option<(i64, Vec<u32>, Option<u32>)>,
    map: HashMap<Vec<Part>, u32>,
    one: HashMap<Part, u32>,
    /// Distinct texts: per string id, and per text.
    text_of_id: HashMap<StrId, u32>,
    text_ids: HashMap<String, u32>,
    count: u32,
    last: Option<(V, u32)>,
    keys: usize,
}

impl Groups {
    fn new(spec: &Spec<'_>, readers: &[Reader<'_>], rows: Option<&Vec<u32>>) -> Groups {
        let mut dense = None;
        if let [r] = readers {
            if !matches!(r, Reader::Real(_) | Reader::OptReal(_) | Reader::Str(_)) {
                let (a, b) = range(spec);
                let visit = |f: &mut dyn FnMut(usize)| match rows {
                    Some(list) => list.iter().for_each(|x| f(*x as usize)),
                    None => (a..b).for_each(f),
                };
                let (mut min, mut max, mut n) = (i64::MAX, i64::MIN, 0usize);
                visit(&mut |row| {
                    if let V::Int(x) = r.get(row) {
                        min = min.min(x);
                        max = max.max(x);
                    }
                    n += 1;
                });
                let span = max.checked_sub(min).and_then(|s| usize::try_from(s).ok());
                if let Some(s) = span.filter(|s| *s <= 4 * n + 4096) {
                    dense = Some((min, vec![u32::MAX; s + 1], None));
                }
            }
        }
        Groups {
            dense,
            map: HashMap::default(),
            one: HashMap::default(),
            text_of_id: HashMap::default(),
            text_ids: HashMap::default(),
            count: 0,
            last: None,
            keys: readers.len(),
        }
    }

    fn part(&mut self, v: V, strings: &crate::storage::strings::StringPool) -> Part {
        match v {
            V::Null => Part::Null,
            V::Int(x) => Part::Int(x),
            V::Real(x) => Part::Real(if x == 0.0 { 0 } else { x.to_bits() }),
            V::Str(id) => {
                if let Some(t) = self.text_of_id.get(&id) {
                    return Part::Text(*t);
                }
                let s = strings.get(id).unwrap_or("");
                let next = u32::try_from(self.text_ids.len()).unwrap_or(u32::MAX);
                let t = *self.text_ids.entry(s.to_owned()).or_insert(next);
                self.text_of_id.insert(id, t);
                Part::Text(t)
            }
        }
    }

    fn new_group(&mut self) -> u32 {
        let g = self.count;
        self.count += 1;
        g
    }

    /// The group of `row` (a new one numbered next when its key is new).
    #[inline]
    fn group(
        &mut self,
        row: usize,
        readers: &[Reader<'_>],
        strings: &crate::storage::strings::StringPool,
    ) -> usize {
        if self.keys == 0 {
            if self.count == 0 {
                self.new_group();
            }
            return 0;
        }
        if let ([r], true) = (readers, self.dense.is_some()) {
            let v = r.get(row);
            let mut fresh = false;
            let g = match (&mut self.dense, v) {
                (Some((base, slots, _)), V::Int(x)) => {
                    let i = usize::try_from(x.wrapping_sub(*base)).unwrap_or(usize::MAX);
                    match slots.get(i) {
                        Some(g) if *g != u32::MAX => *g,
                        _ => {
                            fresh = true;
                            u32::MAX
                        }
                    }
                }
                (Some((_, _, Some(g))), _) => *g,
                _ => {
                    fresh = true;
                    u32::MAX
                }
            };
            if !fresh {
                return g as usize;
            }
            let g = self.new_group();
            match (&mut self.dense, v) {
                (Some((base, slots, _)), V::Int(x)) => {
                    let i = usize::try_from(x.wrapping_sub(*base)).unwrap_or(usize::MAX);
                    if let Some(s) = slots.get_mut(i) {
                        *s = g;
                    }
                }
                (Some((_, _, null)), _) => *null = Some(g),
                _ => {}
            }
            return g as usize;
        }
        if let [r] = readers {
            let v = r.get(row);
            if let Some((lv, g)) = self.last {
                if lv == v {
                    return g as usize;
                }
            }
            let p = self.part(v, strings);
            let g = match self.one.get(&p) {
                Some(g) => *g,
                None => {
                    let g = self.new_group();
                    self.one.insert(p, g);
                    g
                }
            };
            self.last = Some((v, g));
            return g as usize;
        }
        let key: Vec<Part> = readers
            .iter()
            .map(|r| r.get(row))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|v| self.part(v, strings))
            .collect();
        let g = match self.map.get(&key) {
            Some(g) => *g,
            None => {
                let g = self.new_group();
                self.map.insert(key, g);
                g
            }
        };
        g as usize
    }
}
