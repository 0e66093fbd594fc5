//! The SQLite glue of `SPAN_JOIN`, `SPAN_LEFT_JOIN` and `SPAN_OUTER_JOIN`:
//! a virtual table created by `CREATE VIRTUAL TABLE t USING
//! SPAN_JOIN(a [PARTITIONED p], b [PARTITIONED p])`. Creating it reads the
//! sides' columns (`args.rs`); `best_index` says which constraints each
//! side's query applies (`plan.rs`); each scan prepares the two sides'
//! queries (`stmt.rs`) and sweeps them (`sweep.rs`), one joined row at a
//! time.

use std::ffi::c_int;
use std::sync::Arc;

use rusqlite::types::{Null, ToSqlOutput, Value};
use rusqlite::vtab::{
    Context, CreateVTab, Filters, IndexInfo, VTab, VTabConnection, VTabCursor, VTabKind,
};

use super::args::{Column, JoinKind, Origin, Partitioning, Spec, parse_descriptor};
use super::error::SpanJoinError;
use super::plan::{Cond, Op, Plan, targets};
use super::side::Side;
use super::stmt::{Db, SideRows, Stmt};
use super::sweep::Sweep;

/// A span join table.
#[repr(C)]
pub struct SpanJoinTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    db: Db,
    spec: Arc<Spec>,
}

/// The columns of table or view `name` as SQLite lists them.
fn columns_of(db: Db, name: &str) -> Result<Vec<Column>, SpanJoinError> {
    let mut stmt = Stmt::prepare(
        db,
        "SELECT name, type FROM pragma_table_info(?1)",
        &[Value::Text(name.to_owned())],
    )?;
    let mut out = Vec::new();
    while stmt.step()? {
        let text = |i| match stmt.value(i) {
            rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            _ => String::new(),
        };
        out.push(Column::new(&text(0), &text(1)));
    }
    Ok(out)
}

/// Argument `i` of the `CREATE VIRTUAL TABLE` as text.
fn arg(args: &[&[u8]], i: usize) -> Result<String, SpanJoinError> {
    let a = args.get(i).ok_or(SpanJoinError::ArgumentCount)?;
    Ok(String::from_utf8_lossy(a).into_owned())
}

// SAFETY: `SpanJoinTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for SpanJoinTab {
    type Aux = JoinKind;
    type Cursor = SpanJoinCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&JoinKind>,
        args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let kind = aux
            .copied()
            .ok_or_else(|| rusqlite::Error::ModuleError("SPAN_JOIN: join kind missing".into()))?;
        // SQLite passes the module, database and table names first.
        if args.len() != 5 {
            return Err(SpanJoinError::ArgumentCount.into());
        }
        let left = parse_descriptor(&arg(args, 3)?)?;
        let right = parse_descriptor(&arg(args, 4)?)?;
        // SAFETY: the handle is this table's connection, used only from
        // the table's and its cursors' methods.
        let handle = unsafe { Db::new(db.handle()) };
        let left_cols = columns_of(handle, left.schema_name())?;
        let right_cols = columns_of(handle, right.schema_name())?;
        let spec = Spec::new(kind, left, left_cols, right, right_cols)?;
        Ok((
            spec.schema.clone(),
            SpanJoinTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                db: handle,
                spec: Arc::new(spec),
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let mut plan = Plan::default();
        let mut used = Vec::new();
        for (i, c) in info.constraints().enumerate() {
            if !c.is_usable() {
                continue;
            }
            let Some(op) = Op::of(c.operator()) else {
                continue;
            };
            let Some(origin) = usize::try_from(c.column())
                .ok()
                .and_then(|col| self.spec.origins.get(col))
            else {
                continue;
            };
            let sides = targets(&self.spec, *origin, op);
            if sides.is_empty() {
                continue;
            }
            let value = if op.takes_value() {
                used.push(i);
                Some(used.len() - 1)
            } else {
                None
            };
            for (left, col) in sides {
                plan.conds.push(Cond {
                    left,
                    col,
                    op,
                    value,
                });
            }
        }
        for (k, i) in used.iter().enumerate() {
            let mut u = info.constraint_usage(*i);
            u.set_argv_index(c_int::try_from(k + 1).unwrap_or(c_int::MAX));
            u.set_omit(false);
        }
        // The sweep yields rows by partition, then start.
        let order: Vec<(c_int, bool)> = info
            .order_bys()
            .map(|o| (o.column(), o.is_order_by_desc()))
            .collect();
        let consumed = if self.spec.partitioning == Partitioning::None {
            order == [(0, false)]
        } else {
            order == [(2, false)] || order == [(2, false), (0, false)]
        };
        info.set_order_by_consumed(consumed);
        info.set_idx_str(&plan.encode());
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<SpanJoinCursor> {
        Ok(SpanJoinCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            db: self.db,
            spec: self.spec.clone(),
            sweep: None,
            row: 0,
        })
    }
}

impl CreateVTab<'_> for SpanJoinTab {
    const KIND: VTabKind = VTabKind::Default;
}

/// A scan of a span join table.
#[repr(C)]
pub struct SpanJoinCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    db: Db,
    spec: Arc<Spec>,
    sweep: Option<Sweep<SideRows>>,
    /// The rows yielded so far (the rowid).
    row: i64,
}

impl SpanJoinCursor {
    /// Starts the sweep of one scan with `plan` and the filter's values.
    fn start(&mut self, plan: &Plan, values: &[Value]) -> Result<(), SpanJoinError> {
        let spec = self.spec.clone();
        let mut sides = Vec::with_capacity(2);
        for (left, s) in [(true, &spec.left), (false, &spec.right)] {
            let (sql, binds) = plan.side_query(s, left, values)?;
            let stmt = Stmt::prepare(self.db, &sql, &binds)?;
            let rows = SideRows::new(stmt, s.ts, s.dur, s.part);
            sides.push(Side::new(rows, s.part.is_some(), s.shadows));
        }
        let right = sides.pop().ok_or(SpanJoinError::ArgumentCount)?;
        let left = sides.pop().ok_or(SpanJoinError::ArgumentCount)?;
        self.sweep = Some(Sweep::start(spec.kind, spec.partitioning, left, right)?);
        Ok(())
    }
}

// SAFETY: `SpanJoinCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor`
// first, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for SpanJoinCursor {
    fn filter(
        &mut self,
        _idx_num: c_int,
        idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        // The previous scan's statements are finalized first.
        self.sweep = None;
        self.row = 0;
        let plan = Plan::decode(idx_str.unwrap_or(""))?;
        let values: Vec<Value> = args.iter().map(Value::from).collect();
        self.start(&plan, &values)?;
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        if let Some(s) = self.sweep.as_mut() {
            s.advance()?;
            self.row += 1;
        }
        Ok(())
    }

    fn eof(&self) -> bool {
        self.sweep.as_ref().is_none_or(Sweep::is_end)
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let Some(s) = self.sweep.as_ref().filter(|s| !s.is_end()) else {
            return ctx.set_result(&Null);
        };
        let origin = usize::try_from(i)
            .ok()
            .and_then(|i| self.spec.origins.get(i));
        match origin {
            Some(Origin::Ts) => ctx.set_result(&s.ts()),
            Some(Origin::Dur) => ctx.set_result(&s.dur()),
            Some(Origin::Partition) => ctx.set_result(&s.partition()),
            Some(Origin::Left(c)) if s.left().is_real() => {
                ctx.set_result(&ToSqlOutput::Borrowed(s.left().rows().value(*c)))
            }
            Some(Origin::Right(c)) if s.right().is_real() => {
                ctx.set_result(&ToSqlOutput::Borrowed(s.right().rows().value(*c)))
            }
            _ => ctx.set_result(&Null),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.row)
    }
}
