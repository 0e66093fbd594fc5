//! A columnar [`Table`] as an SQLite virtual table: SQLite reads the
//! columns in place (nothing is copied into SQLite's own tables). Pushed
//! down: `id = ?` (a direct row), and `=`, `<`, `<=`, `>`, `>=` on the
//! column a table is sorted by (a binary search); an `ORDER BY` on `id`,
//! or on the sorted column, ascending, is consumed. Through a column's
//! value order ([`Table::order`], an index built on first use): an
//! `ORDER BY` (or `GROUP BY`) of one column, either way, is consumed, so
//! `ORDER BY dur DESC LIMIT 10` reads ten rows and a `GROUP BY track_id`
//! aggregates as it goes; `=` on an integer or string column (a join's
//! key) is one run of the column's value order, found by binary search and
//! visited in place (nothing copied per lookup); `GLOB` on
//! a string column is matched once per distinct string of those beginning
//! with its literal prefix, then only the rows holding a matching string
//! are visited. The cost and rows told to SQLite are upstream's estimates
//! for the same constraints (`vtab_cost.rs`), so that SQLite orders a
//! join's tables as it does upstream. SQLite still checks every constraint
//! itself (none is omitted), so a narrowing that cannot be applied (a
//! non-integer bound) only costs time, never a wrong answer.

use std::ffi::c_int;
use std::sync::Arc;

use rusqlite::types::{Null, ValueRef};
use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexFlags, IndexInfo, VTab, VTabConfig, VTabConnection,
    VTabCursor,
};

use super::distinct_count;
use super::vtab_cost::{self, FilterOp};
use crate::column_store::strings::StrId;
use crate::column_store::table::{Cell, Table};

/// The virtual table over one columnar table.
#[repr(C)]
pub struct ColumnarTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    table: Arc<Table>,
    /// Per column, how many distinct values it holds (NULL aside), found
    /// on the first plan that could look one value up.
    distinct: std::cell::RefCell<Vec<Option<usize>>>,
}

/// One pushed-down constraint, as told to `filter` in `idx_str`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    IdEq,
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
    /// `=` on the string column `idx_num` names.
    StrEq,
    /// `GLOB` on the string column `idx_num` names.
    Glob,
    /// `=` on the integer column `idx_num` names (through its value order).
    IntEq,
}

impl Op {
    fn code(self) -> char {
        match self {
            Op::IdEq => 'i',
            Op::Eq => '=',
            Op::Lt => '<',
            Op::Le => 'l',
            Op::Gt => '>',
            Op::Ge => 'g',
            Op::StrEq => 's',
            Op::Glob => '*',
            Op::IntEq => 'e',
        }
    }

    fn from_code(c: char) -> Option<Op> {
        Some(match c {
            'i' => Op::IdEq,
            '=' => Op::Eq,
            '<' => Op::Lt,
            'l' => Op::Le,
            '>' => Op::Gt,
            'g' => Op::Ge,
            's' => Op::StrEq,
            '*' => Op::Glob,
            'e' => Op::IntEq,
            _ => return None,
        })
    }
}

impl ColumnarTab {
    /// The virtual table over `table`, for a table built after SQLite
    /// connected to it (`perfetto_sql/lazy_table.rs`).
    pub(crate) fn over(table: Arc<Table>) -> ColumnarTab {
        ColumnarTab {
            base: rusqlite::ffi::sqlite3_vtab::default(),
            table,
            distinct: Default::default(),
        }
    }

    /// How many distinct values column `col` holds, NULL aside, counted
    /// once: the runs of its value order when a lookup built it, else
    /// counted without one (a plan's estimate alone is no reason to sort
    /// the column and keep the order).
    fn distinct(&self, col: usize) -> usize {
        if let Some(Some(n)) = self.distinct.borrow().get(col) {
            return *n;
        }
        let built = self
            .table
            .orders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(col)
            .cloned()
            .flatten();
        let n = match (self.table.columns.get(col), built) {
            (Some(c), Some(order)) if c.is_text() => distinct_count::count_runs(&order, |r| {
                c.str_at(r).filter(|s| !s.is_null()).map(|s| i64::from(s.0))
            }),
            (Some(c), Some(order)) => distinct_count::count_runs(&order, |r| c.int_at(r)),
            (Some(c), None) if c.is_text() => distinct_count::count_distinct(self.table.len, |r| {
                c.str_at(r).filter(|s| !s.is_null()).map(|s| i64::from(s.0))
            }),
            (Some(c), None) => distinct_count::count_distinct(self.table.len, |r| c.int_at(r)),
            (None, _) => 0,
        };
        let mut d = self.distinct.borrow_mut();
        if d.len() <= col {
            d.resize(col + 1, None);
        }
        if let Some(slot) = d.get_mut(col) {
            *slot = Some(n);
        }
        n
    }
}

// SAFETY: `ColumnarTab` is `#[repr(C)]` with `sqlite3_vtab` as its first
// field, as rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for ColumnarTab {
    type Aux = Arc<Table>;
    type Cursor = ColumnarCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Arc<Table>>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let table = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("table data missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        Ok((
            table.schema(),
            ColumnarTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                table,
                distinct: Default::default(),
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let mut plan: Vec<(usize, Op)> = Vec::new();
        let mut id_eq = false;
        let mut range = 0;
        // The string column a `=` or `GLOB` is pushed down on (one only).
        let mut text_col: Option<usize> = None;
        for (i, c) in info.constraints().enumerate() {
            if !c.is_usable() {
                continue;
            }
            let col = c.column();
            let op = c.operator();
            if self.table.has_id && col == 0 && op == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ
            {
                if !id_eq {
                    plan.push((i, Op::IdEq));
                    id_eq = true;
                }
                continue;
            }
            if self.table.sorted_by.map(|s| s as c_int) == Some(col) {
                let op = match op {
                    IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ => Op::Eq,
                    IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LT => Op::Lt,
                    IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LE => Op::Le,
                    IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GT => Op::Gt,
                    IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GE => Op::Ge,
                    _ => continue,
                };
                plan.push((i, op));
                range += 1;
                continue;
            }
            let Ok(ucol) = usize::try_from(col) else {
                continue;
            };
            if text_col.is_none() && self.table.is_text(ucol) {
                let op = match op {
                    IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ => Op::StrEq,
                    IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GLOB => Op::Glob,
                    _ => continue,
                };
                plan.push((i, op));
                text_col = Some(ucol);
            } else if text_col.is_none()
                && self.table.is_int(ucol)
                && op == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ
            {
                // Integer equality on any other column (a join's key)
                // through the column's value order: the equal rows are one
                // run of it. It takes the string filter's slot.
                plan.push((i, Op::IntEq));
                text_col = Some(ucol);
            }
        }
        let obs: Vec<(c_int, bool)> = info
            .order_bys()
            .map(|o| (o.column(), o.is_order_by_desc()))
            .collect();
        let natural = obs.len() == 1
            && !obs[0].1
            && ((self.table.has_id && obs[0].0 == 0)
                || self.table.sorted_by.map(|s| s as c_int) == Some(obs[0].0));
        // An order of one column through its value order (either way),
        // when no narrower plan reads the rows (an id, a range). A string
        // filter visits its matches in the column's order too, so it serves
        // an ascending order (or grouping) of its own column.
        let single = match obs.as_slice() {
            [(c, desc)] => usize::try_from(*c).ok().map(|c| (c, *desc)),
            _ => None,
        };
        // With a string filter, the natural order is kept by sorting the
        // matches by row (`n`).
        let mut consumed = natural;
        let keep_rows = natural && text_col.is_some();
        let mut by_order = None;
        if let (false, false, 0, Some((c, desc))) = (natural, id_eq, range, single) {
            match text_col {
                Some(t) => consumed = t == c && !desc,
                None => {
                    if c < self.table.columns.len() {
                        consumed = true;
                        by_order = Some((c, desc));
                    }
                }
            }
        }
        let mut codes = String::new();
        for (n, (i, op)) in plan.iter().enumerate() {
            let mut u = info.constraint_usage(*i);
            u.set_argv_index(c_int::try_from(n + 1).unwrap_or(c_int::MAX));
            u.set_omit(false);
            codes.push(op.code());
        }
        // idx_num: the column of a string filter or of an order, plus one
        // (0: none); an order adds `d` (descending) or `a` to the codes.
        let mut idx_num = 0;
        if let Some(c) = text_col {
            idx_num = c_int::try_from(c + 1).unwrap_or(0);
            if keep_rows {
                codes.push('n');
            }
        } else if let Some((c, desc)) = by_order {
            idx_num = c_int::try_from(c + 1).unwrap_or(0);
            codes.push(if desc { 'd' } else { 'a' });
        }
        info.set_idx_num(idx_num);
        info.set_idx_str(&codes);
        // What the scan costs and gives, as upstream's planner estimates
        // it for every constraint it could take (SQLite orders a join's
        // tables by these figures, so joins without an ORDER BY come out
        // in upstream's order): `vtab_cost.rs`.
        let filters: Vec<(usize, FilterOp)> = info
            .constraints()
            .filter(|c| c.is_usable())
            .filter_map(|c| {
                Some((
                    usize::try_from(c.column()).ok()?,
                    vtab_cost::filter_op(c.operator())?,
                ))
            })
            .collect();
        let order: Vec<(usize, bool)> = obs
            .iter()
            .filter_map(|&(c, desc)| Some((usize::try_from(c).ok()?, desc)))
            .collect();
        let est = vtab_cost::estimate(
            self.table.len as u64,
            &|c| {
                let equal = filters.iter().any(|&(f, op)| f == c && op == FilterOp::Eq);
                vtab_cost::column_facts(&self.table, c, || equal.then(|| self.distinct(c)))
            },
            &filters,
            &order,
            info.col_used(),
            self.table.columns.len(),
        );
        info.set_estimated_cost(est.cost);
        info.set_estimated_rows(i64::try_from(est.rows).unwrap_or(i64::MAX));
        if est.max_rows <= 1 {
            info.set_idx_flags(IndexFlags::SQLITE_INDEX_SCAN_UNIQUE);
        }
        info.set_order_by_consumed(consumed && (natural || idx_num > 0));
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<ColumnarCursor> {
        Ok(ColumnarCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            table: self.table.clone(),
            row: 0,
            end: 0,
            through: None,
        })
    }
}

// A PERFETTO TABLE stored as columns (`perfetto_sql/columnar.rs`) is made
// by `CREATE VIRTUAL TABLE`, so that it is in the schema as a table (it is
// dropped, listed and replaced as one); creating it only connects.
impl rusqlite::vtab::CreateVTab<'_> for ColumnarTab {
    const KIND: rusqlite::vtab::VTabKind = rusqlite::vtab::VTabKind::Default;
}

/// A scan over a row range, directly or through a column's value order.
#[repr(C)]
pub struct ColumnarCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    table: Arc<Table>,
    /// The current row (a row index, or with `through` a position in it).
    row: usize,
    end: usize,
    through: Option<Through>,
}

/// Rows visited in a given order: a column's value order, or the rows a
/// string filter matched.
struct Through {
    /// The rows, in the order to visit them (the cursor's positions index
    /// it).
    rows: Rows,
    /// Backwards (`ORDER BY ... DESC`): the runs of equal values from the
    /// last to the first, each in row order, as a stable sort gives them
    /// (SQLite's sort of a stored table keeps equal rows in their order).
    desc: Option<Backwards>,
}

/// A list of rows: a column's value order, shared with the table (a run
/// of it is visited in place, nothing copied), or rows a filter picked.
enum Rows {
    Shared(Arc<[u32]>),
    Owned(Vec<u32>),
}

impl Rows {
    fn as_slice(&self) -> &[u32] {
        match self {
            Rows::Shared(r) => r,
            Rows::Owned(r) => r,
        }
    }
}

/// Where a backwards visit of column `col`'s value order is: the run of
/// equal values `lo..hi` of the order, and the position in it.
struct Backwards {
    col: usize,
    lo: usize,
    hi: usize,
    at: usize,
}

impl ColumnarCursor {
    /// The table row the cursor is on.
    fn current(&self) -> usize {
        match &self.through {
            None => self.row,
            Some(t) => {
                let pos = t.desc.as_ref().map_or(self.row, |b| b.at);
                t.rows
                    .as_slice()
                    .get(pos)
                    .map_or(usize::MAX, |r| *r as usize)
            }
        }
    }

    /// The first position of the run of equal values in column `col`
    /// that ends at position `hi` of `rows` (a value order).
    fn run_start(&self, rows: &[u32], col: usize, hi: usize) -> usize {
        let cell = |pos: usize| {
            rows.get(pos)
                .map_or(Cell::Null, |r| self.table.cell(*r as usize, col))
        };
        let Some(mut lo) = hi.checked_sub(1) else {
            return 0;
        };
        let last = cell(lo);
        while lo > 0 && cell(lo - 1) == last {
            lo -= 1;
        }
        lo
    }

    /// Starts a visit of `rows` in their order (positions `span.0` to
    /// `span.1`), or of `col`'s value order `rows` backwards (`desc`).
    fn begin_through(&mut self, rows: Rows, span: (usize, usize), desc: Option<usize>) {
        let all = rows.as_slice().len();
        self.end = span.1.min(all);
        self.row = span.0.min(self.end);
        let back = desc.map(|col| {
            let lo = self.run_start(rows.as_slice(), col, all);
            Backwards {
                col,
                lo,
                hi: all,
                at: lo,
            }
        });
        self.through = Some(Through { rows, desc: back });
    }

    /// Visits the positions `a..b` of `col`'s value order `order`, a run
    /// of equal values (so in row order, ties keeping it), narrowed to the
    /// rows in `span`: two binary searches, nothing copied.
    fn visit_run(&mut self, order: Arc<[u32]>, (a, b): (usize, usize), span: (usize, usize)) {
        let run = order.get(a..b).unwrap_or(&[]);
        let from = a + run.partition_point(|r| (*r as usize) < span.0);
        let to = a + run.partition_point(|r| (*r as usize) < span.1);
        self.begin_through(Rows::Shared(order), (from, to.max(from)), None);
    }

    /// The positions of `col`'s value order holding a string `s` for
    /// which `below(s)` is false and `within(s)` is true, where `below`
    /// holds for a prefix of the (ascending) strings and `within` then
    /// for a run of them: two binary searches over the order. NULL sorts
    /// first and is in neither.
    fn string_span(
        &self,
        order: &[u32],
        col: usize,
        below: impl Fn(&str) -> bool,
        within: impl Fn(&str) -> bool,
    ) -> (usize, usize) {
        let at = |r: &u32| {
            self.table
                .str_id(*r as usize, col)
                .filter(|id| *id != StrId::NULL)
                .and_then(|id| self.table.strings.get(id))
        };
        let a = order.partition_point(|r| at(r).is_none_or(&below));
        let b = a + order
            .get(a..)
            .unwrap_or(&[])
            .partition_point(|r| at(r).is_some_and(&within));
        (a, b)
    }

    /// Visits the rows in `span` whose string in `col` equals `text`: one
    /// run of the column's value order, found by binary search and visited
    /// in place (a string is pooled once per table, so the run is one
    /// string id and in row order).
    fn visit_equal_strings(&mut self, col: usize, text: &str, span: (usize, usize)) {
        let order = self.table.order(col);
        let (a, b) = self.string_span(&order, col, |s| s < text, |s| s == text);
        let id = |pos: usize| {
            order
                .get(pos)
                .and_then(|r| self.table.str_id(*r as usize, col))
        };
        if b <= a || id(a) == id(b - 1) {
            self.visit_run(order, (a, b), span);
        } else {
            // The same text under two ids: the rows, in row order.
            let mut rows: Vec<u32> = order
                .get(a..b)
                .unwrap_or(&[])
                .iter()
                .copied()
                .filter(|r| (span.0..span.1).contains(&(*r as usize)))
                .collect();
            rows.sort_unstable();
            let n = rows.len();
            self.begin_through(Rows::Owned(rows), (0, n), None);
        }
    }

    /// The rows in `span` whose string in `col` matches the `GLOB`
    /// `pattern`, in the column's value order (each distinct string is
    /// tested once), or in row order when `by_row`. Only the strings that
    /// begin with the pattern's literal prefix (up to its first `*`, `?`
    /// or `[`) are looked at, found by binary search.
    fn glob_rows(&self, col: usize, pattern: &str, span: (usize, usize), by_row: bool) -> Vec<u32> {
        let mut out = Vec::new();
        let Ok(pat) = std::ffi::CString::new(pattern) else {
            return out;
        };
        let order = self.table.order(col);
        let prefix = pattern
            .find(['*', '?', '['])
            .map_or(pattern, |i| pattern.get(..i).unwrap_or(""));
        let (a, b) = self.string_span(&order, col, |s| s < prefix, |s| s.starts_with(prefix));
        let id_at = |pos: usize| {
            order
                .get(pos)
                .and_then(|r| self.table.str_id(*r as usize, col))
        };
        let mut start = a;
        while start < b {
            let id = id_at(start);
            let mut end = start + 1;
            while end < b && id_at(end) == id {
                end += 1;
            }
            let hit = match id.and_then(|i| self.table.strings.get(i)) {
                Some(s) if id != Some(StrId::NULL) => glob(&pat, s),
                _ => false,
            };
            if hit {
                let run = order.get(start..end).unwrap_or(&[]);
                out.extend(
                    run.iter()
                        .filter(|r| (span.0..span.1).contains(&(**r as usize))),
                );
            }
            start = end;
        }
        if by_row {
            out.sort_unstable();
        }
        out
    }

    /// Visits the rows in `span` whose integer in `col` equals `v`: one
    /// run of the column's value order, visited in place. Every row of
    /// `span` when `v` is None (not an integer: SQLite checks each one).
    fn visit_equal_ints(&mut self, col: usize, v: Option<i64>, span: (usize, usize)) {
        let Some(v) = v else {
            self.through = None;
            self.row = span.0;
            self.end = span.1.max(span.0);
            return;
        };
        let order = self.table.order(col);
        let Some(c) = self.table.columns.get(col) else {
            self.begin_through(Rows::Owned(Vec::new()), (0, 0), None);
            return;
        };
        // NULLs sort first; they equal nothing.
        let key = |r: &u32| c.int_at(*r as usize).map_or((0, 0), |x| (1, x));
        let a = order.partition_point(|r| key(r) < (1, v));
        let b = order.partition_point(|r| key(r) <= (1, v));
        self.visit_run(order, (a, b), span);
    }

    /// First row whose sorted column is >= v (or > v when `strict`).
    fn lower(&self, col: usize, v: i64, strict: bool) -> usize {
        let c = &self.table.columns[col];
        let (mut lo, mut hi) = (0usize, self.table.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let x = c.int_at(mid).unwrap_or(i64::MIN);
            if x < v || (strict && x == v) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// SQLite's own `GLOB` (case-sensitive, `*`, `?`, `[...]`), so a pushed-down
/// `GLOB` matches exactly what SQLite would.
fn glob(pattern: &std::ffi::CStr, s: &str) -> bool {
    // A C string ends at its first NUL, as SQLite's comparison of it does.
    let Ok(s) = std::ffi::CString::new(s.split('\0').next().unwrap_or("")) else {
        return false;
    };
    // SAFETY: both are valid NUL-terminated strings that outlive the call;
    // sqlite3_strglob only reads them.
    unsafe { rusqlite::ffi::sqlite3_strglob(pattern.as_ptr(), s.as_ptr()) == 0 }
}

// SAFETY: `ColumnarCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor` as its
// first field, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for ColumnarCursor {
    fn filter(
        &mut self,
        idx_num: c_int,
        idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        let (mut lo, mut hi) = (0usize, self.table.len);
        let sorted = self.table.sorted_by;
        let column = usize::try_from(idx_num).ok().and_then(|c| c.checked_sub(1));
        self.through = None;
        let mut text: Option<(Op, String)> = None;
        let mut int_eq: Option<Option<i64>> = None;
        let mut desc = None;
        let mut by_row = false;
        let mut n = 0;
        for code in idx_str.unwrap_or("").chars() {
            match code {
                'a' | 'd' => {
                    desc = Some(code == 'd');
                    continue;
                }
                'n' => {
                    by_row = true;
                    continue;
                }
                _ => {}
            }
            let Some(op) = Op::from_code(code) else {
                continue;
            };
            let arg = args.iter().nth(n);
            n += 1;
            if let (Op::StrEq | Op::Glob, Some(ValueRef::Text(t))) = (op, arg) {
                text = Some((op, String::from_utf8_lossy(t).into_owned()));
                continue;
            }
            if op == Op::IntEq {
                // Not an integer: every row, in the column's order (SQLite
                // checks each one again, as the constraint is not omitted).
                int_eq = Some(match arg {
                    Some(ValueRef::Integer(v)) => Some(v),
                    _ => None,
                });
                continue;
            }
            let v = match arg {
                Some(ValueRef::Integer(v)) => v,
                _ => continue,
            };
            match (op, sorted) {
                (Op::IdEq, _) => {
                    if v >= 0 && (v as u64) < self.table.len as u64 {
                        lo = lo.max(v as usize);
                        hi = hi.min(v as usize + 1);
                    } else {
                        hi = 0;
                    }
                }
                (Op::Eq, Some(c)) => {
                    lo = lo.max(self.lower(c, v, false));
                    hi = hi.min(self.lower(c, v, true));
                }
                (Op::Ge, Some(c)) => lo = lo.max(self.lower(c, v, false)),
                (Op::Gt, Some(c)) => lo = lo.max(self.lower(c, v, true)),
                (Op::Le, Some(c)) => hi = hi.min(self.lower(c, v, true)),
                (Op::Lt, Some(c)) => hi = hi.min(self.lower(c, v, false)),
                _ => {}
            }
        }
        match (column, text, desc) {
            (Some(c), None, _) if int_eq.is_some() => {
                self.visit_equal_ints(c, int_eq.flatten(), (lo, hi));
            }
            (Some(c), Some((Op::Glob, pattern)), _) => {
                let rows = self.glob_rows(c, &pattern, (lo, hi), by_row);
                let n = rows.len();
                self.begin_through(Rows::Owned(rows), (0, n), None);
            }
            (Some(c), Some((_, text)), _) => self.visit_equal_strings(c, &text, (lo, hi)),
            (Some(c), None, Some(desc)) => {
                let order = self.table.order(c);
                let n = order.len();
                self.begin_through(Rows::Shared(order), (0, n), desc.then_some(c));
            }
            _ => {
                self.row = lo;
                self.end = hi.max(lo);
            }
        }
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.row += 1;
        // Backwards: the next position of the run, else the run before it.
        let step = match &self.through {
            Some(Through {
                rows,
                desc: Some(b),
            }) if b.at + 1 >= b.hi && b.lo > 0 => {
                let lo = self.run_start(rows.as_slice(), b.col, b.lo);
                Some(Backwards {
                    col: b.col,
                    lo,
                    hi: b.lo,
                    at: lo,
                })
            }
            Some(Through { desc: Some(b), .. }) => Some(Backwards {
                col: b.col,
                lo: b.lo,
                hi: b.hi,
                at: b.at + 1,
            }),
            _ => None,
        };
        if let (Some(step), Some(t)) = (step, self.through.as_mut()) {
            t.desc = Some(step);
        }
        Ok(())
    }

    fn eof(&self) -> bool {
        self.row >= self.end
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let col = usize::try_from(i).unwrap_or(usize::MAX);
        match self.table.cell(self.current(), col) {
            Cell::Null => ctx.set_result(&Null),
            Cell::Int(v) => ctx.set_result(&v),
            Cell::Real(v) => ctx.set_result(&v),
            Cell::Str(s) => ctx.set_result(&s),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.current() as i64)
    }
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};

    /// A join of a table of many rows per key with a table of the keys
    /// (as `counter` with its tracks, a track chosen by name) reads the
    /// keys first and each key's run of the big table, not the big table
    /// whole with a lookup of its key per row: an equality's estimate is
    /// the rows over the column's distinct values, not a fixed share.
    #[test]
    fn a_join_on_a_key_of_many_rows_starts_from_the_keys() {
        let tp = TraceProcessor::from_bytes(&[]).expect("engine");
        tp.query(
            "CREATE PERFETTO TABLE samples AS
             WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
             SELECT i AS id, i % 1000 AS key_id, i * 2 AS v FROM n;
             CREATE PERFETTO TABLE keys AS
             WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
             SELECT i AS id, 'key' || i AS name FROM n",
        )
        .expect("tables");
        let sql = "SELECT count(*), sum(s.v) FROM samples AS s JOIN keys AS k \
                   ON k.id = s.key_id WHERE k.name = 'key7'";
        let steps: Vec<String> = tp
            .query(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("plan")
            .rows
            .into_iter()
            .filter_map(|r| match r.get(3) {
                Some(Value::Text(t)) => Some(t.clone()),
                _ => None,
            })
            .collect();
        let at = |table: &str| steps.iter().position(|s| s.starts_with(table));
        assert!(at("SCAN k ") < at("SCAN s "), "{steps:?}");
        assert!(
            steps
                .iter()
                .any(|s| s.starts_with("SCAN s ") && s.ends_with(":e")),
            "{steps:?}"
        );
        let sum: i64 = (0..100).map(|j| (7 + 1000 * j) * 2).sum();
        assert_eq!(
            tp.query(sql).expect("join").rows,
            [vec![Value::Int(100), Value::Int(sum)]]
        );
    }
}
