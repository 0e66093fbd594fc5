//! A columnar [`Table`] as an SQLite virtual table: SQLite reads the
//! columns in place (nothing is copied into SQLite's own tables). Pushed
//! down: `id = ?` (a direct row), and `=`, `<`, `<=`, `>`, `>=` on the
//! column a table is sorted by (a binary search); an `ORDER BY` on `id`,
//! or on the sorted column, ascending, is consumed. SQLite still checks
//! every constraint itself (none is omitted), so a narrowing that cannot be
//! applied (a non-integer bound) only costs time, never a wrong answer.

use std::ffi::c_int;
use std::sync::Arc;

use rusqlite::types::{Null, ValueRef};
use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
};

use super::table::{Cell, Table};

/// The virtual table over one columnar table.
#[repr(C)]
pub struct ColumnarTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    table: Arc<Table>,
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
            _ => return None,
        })
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
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let mut plan: Vec<(usize, Op)> = Vec::new();
        let mut id_eq = false;
        let mut range = 0;
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
            }
        }
        let mut codes = String::new();
        for (n, (i, op)) in plan.iter().enumerate() {
            let mut u = info.constraint_usage(*i);
            u.set_argv_index(c_int::try_from(n + 1).unwrap_or(c_int::MAX));
            u.set_omit(false);
            codes.push(op.code());
        }
        info.set_idx_str(&codes);
        let rows = self.table.len.max(1) as f64;
        let cost = if id_eq {
            1.0
        } else if range > 0 {
            rows.log2().max(1.0) + rows / (4.0 * range as f64)
        } else {
            rows
        };
        info.set_estimated_cost(cost);
        info.set_estimated_rows(if id_eq { 1 } else { cost as i64 });
        let consumed = {
            let obs: Vec<(c_int, bool)> = info
                .order_bys()
                .map(|o| (o.column(), o.is_order_by_desc()))
                .collect();
            obs.len() == 1
                && !obs[0].1
                && ((self.table.has_id && obs[0].0 == 0)
                    || self.table.sorted_by.map(|s| s as c_int) == Some(obs[0].0))
        };
        info.set_order_by_consumed(consumed);
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<ColumnarCursor> {
        Ok(ColumnarCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            table: self.table.clone(),
            row: 0,
            end: 0,
        })
    }
}

/// A scan over a row range.
#[repr(C)]
pub struct ColumnarCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    table: Arc<Table>,
    row: usize,
    end: usize,
}

impl ColumnarCursor {
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

// SAFETY: `ColumnarCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor` as its
// first field, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for ColumnarCursor {
    fn filter(
        &mut self,
        _idx_num: c_int,
        idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        let (mut lo, mut hi) = (0usize, self.table.len);
        let sorted = self.table.sorted_by;
        for (n, code) in idx_str.unwrap_or("").chars().enumerate() {
            let Some(op) = Op::from_code(code) else {
                continue;
            };
            let v = match args.iter().nth(n) {
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
        self.row = lo;
        self.end = hi.max(lo);
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.row += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.row >= self.end
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let col = usize::try_from(i).unwrap_or(usize::MAX);
        match self.table.cell(self.row, col) {
            Cell::Null => ctx.set_result(&Null),
            Cell::Int(v) => ctx.set_result(&v),
            Cell::Real(v) => ctx.set_result(&v),
            Cell::Str(s) => ctx.set_result(&s),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.row as i64)
    }
}
