//! The interval operators as table-valued functions SQL calls with the
//! sets the aggregates made (`aggregate.rs`), their arguments hidden
//! columns: `__intrinsic_interval_intersect('(cols)', set_0, …, set_14)`
//! answers `ts, dur, id_0 … id_14, part_0 … part_3` (`intersect.rs`; ids
//! past the tables given and partition columns past the list are NULL),
//! `__intrinsic_interval_create(starts, ends)` answers `ts, dur`
//! (`create.rs`). The modules' macros name the columns as upstream does.

use std::ffi::c_int;
use std::sync::{Arc, Mutex};

use rusqlite::types::{Null, Value, ValueRef};
use rusqlite::vtab::{
    Context, Filters, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};
use rusqlite::{Connection, Result};

use crate::sql::hidden_arguments::bind_hidden_arguments;

use super::create::create;
use super::error::IntervalError;
use super::intersect::{Intersection, MAX_PARTITIONS, MAX_TABLES, intersect, partition_list};
use super::set::{Key, PartitionedIntervals, decode_timestamps};

/// Which operator a table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `__intrinsic_interval_intersect`.
    Intersect,
    /// `__intrinsic_interval_create`.
    Create,
}

const INTERSECT: &str = "__intrinsic_interval_intersect";
const CREATE: &str = "__intrinsic_interval_create";
const AGG: &str = "__intrinsic_interval_tree_intervals_agg";
const TS_AGG: &str = "__intrinsic_timestamp_set_agg";

impl Op {
    /// The visible columns, then the hidden ones (the arguments).
    fn columns(self) -> (Vec<String>, Vec<String>) {
        match self {
            Op::Intersect => {
                let mut cols = vec!["ts".to_owned(), "dur".to_owned()];
                cols.extend((0..MAX_TABLES).map(|i| format!("id_{i}")));
                cols.extend((0..MAX_PARTITIONS).map(|i| format!("part_{i}")));
                let mut hidden = vec!["partition_list".to_owned()];
                hidden.extend((0..MAX_TABLES).map(|i| format!("t{i}")));
                (cols, hidden)
            }
            Op::Create => (
                vec!["ts".into(), "dur".into()],
                vec!["starts".into(), "ends".into()],
            ),
        }
    }
}

/// Registers both operators on `conn`.
pub(crate) fn register(conn: &Connection) -> Result<()> {
    conn.create_module(
        INTERSECT,
        eponymous_only_module::<OpTab>(),
        Some(Op::Intersect),
    )?;
    conn.create_module(CREATE, eponymous_only_module::<OpTab>(), Some(Op::Create))?;
    Ok(())
}

/// One operator's virtual table.
#[repr(C)]
pub(crate) struct OpTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    op: Op,
    /// How many visible columns precede the hidden ones.
    visible: usize,
    /// How many hidden columns there are.
    hidden: usize,
    /// The last call's arguments and rows: SQLite may run the call again
    /// for each row of an outer loop, with the same arguments.
    last: Arc<Mutex<Option<LastCall>>>,
}

/// A call's arguments (None: not given) and its rows.
type LastCall = (Vec<Option<Value>>, Arc<Rows>);

// SAFETY: `OpTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for OpTab {
    type Aux = Op;
    type Cursor = OpCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Op>,
        _args: &[&[u8]],
    ) -> Result<(String, Self)> {
        let op = aux
            .copied()
            .ok_or_else(|| rusqlite::Error::ModuleError("interval operator missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        let (cols, hidden) = op.columns();
        let decl: Vec<String> = cols
            .iter()
            .cloned()
            .chain(hidden.iter().map(|c| format!("{c} HIDDEN")))
            .collect();
        Ok((
            format!("CREATE TABLE x({})", decl.join(", ")),
            OpTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                op,
                visible: cols.len(),
                hidden: hidden.len(),
                last: Arc::default(),
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> Result<()> {
        // Each argument given is an `=` on its hidden column; their values
        // come in column order, which `idx_num`'s bits record.
        let mask = bind_hidden_arguments(info, self.visible, self.hidden);
        info.set_idx_num(mask);
        // Without its first argument the call cannot run.
        info.set_estimated_cost(if mask & 1 == 1 { 1000.0 } else { 1e15 });
        Ok(())
    }

    fn open(&'vtab mut self) -> Result<OpCursor> {
        Ok(OpCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            op: self.op,
            hidden: self.hidden,
            last: self.last.clone(),
            rows: Arc::new(Rows::Create(Vec::new())),
            pos: 0,
        })
    }
}

/// One call's rows.
enum Rows {
    Intersect(Intersection),
    Create(Vec<(i64, i64)>),
}

impl Rows {
    fn len(&self) -> usize {
        match self {
            Rows::Intersect(x) => x.len(),
            Rows::Create(v) => v.len(),
        }
    }
}

/// A call's cursor.
#[repr(C)]
pub(crate) struct OpCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    op: Op,
    hidden: usize,
    last: Arc<Mutex<Option<LastCall>>>,
    rows: Arc<Rows>,
    pos: usize,
}

/// The blob argument `v` of `operator`; None for NULL.
fn blob<'a>(
    v: Option<ValueRef<'a>>,
    operator: &'static str,
    maker: &'static str,
) -> Result<Option<&'a [u8]>, IntervalError> {
    match v {
        None | Some(ValueRef::Null) => Ok(None),
        Some(ValueRef::Blob(b)) => Ok(Some(b)),
        Some(_) => Err(IntervalError::NotASet { operator, maker }),
    }
}

impl OpCursor {
    /// The rows of a call whose arguments are `args` (None: not given).
    fn run(&self, args: &[Option<ValueRef<'_>>]) -> Result<Rows, IntervalError> {
        let not_set = |operator, maker| IntervalError::NotASet { operator, maker };
        match self.op {
            Op::Intersect => {
                let list = match args.first().copied().flatten() {
                    Some(ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned(),
                    _ => {
                        return Err(IntervalError::MissingArgument {
                            operator: INTERSECT,
                            name: "partition_list",
                        });
                    }
                };
                // The tables given: up to the last argument present.
                let given = args
                    .iter()
                    .skip(1)
                    .rposition(Option::is_some)
                    .map_or(0, |p| p + 1);
                let mut sets = Vec::with_capacity(given);
                for a in args.iter().skip(1).take(given) {
                    sets.push(match blob(*a, INTERSECT, AGG)? {
                        None => None,
                        Some(b) => Some(
                            PartitionedIntervals::decode(b)
                                .ok_or_else(|| not_set(INTERSECT, AGG))?,
                        ),
                    });
                }
                if sets.is_empty() {
                    return Err(IntervalError::MissingArgument {
                        operator: INTERSECT,
                        name: "t0",
                    });
                }
                Ok(Rows::Intersect(intersect(&sets, &partition_list(&list))?))
            }
            Op::Create => {
                let mut lists = Vec::new();
                for a in args.iter().take(2) {
                    lists.push(match blob(*a, CREATE, TS_AGG)? {
                        None => Vec::new(),
                        Some(b) => decode_timestamps(b).ok_or_else(|| not_set(CREATE, TS_AGG))?,
                    });
                }
                let (starts, ends) = match lists.as_slice() {
                    [s, e] => (s.as_slice(), e.as_slice()),
                    _ => (&[][..], &[][..]),
                };
                Ok(Rows::Create(create(starts, ends)))
            }
        }
    }
}

// SAFETY: `OpCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor` first,
// as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for OpCursor {
    fn filter(&mut self, idx_num: c_int, _idx_str: Option<&str>, args: &Filters<'_>) -> Result<()> {
        self.pos = 0;
        self.rows = Arc::new(Rows::Create(Vec::new()));
        let mut given = args.iter();
        let by_column: Vec<Option<ValueRef<'_>>> = (0..self.hidden)
            .map(|h| {
                if h < 31 && idx_num & (1 << h) != 0 {
                    given.next()
                } else {
                    None
                }
            })
            .collect();
        let owned: Vec<Option<Value>> = by_column.iter().map(|v| v.map(Value::from)).collect();
        let cached = match self.last.lock() {
            Ok(last) => last
                .as_ref()
                .filter(|(args, _)| *args == owned)
                .map(|(_, rows)| rows.clone()),
            Err(_) => None,
        };
        self.rows = match cached {
            Some(rows) => rows,
            None => {
                let rows = Arc::new(self.run(&by_column)?);
                if let Ok(mut last) = self.last.lock() {
                    *last = Some((owned, rows.clone()));
                }
                rows
            }
        };
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.pos >= self.rows.len()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> Result<()> {
        let r = self.pos;
        let Ok(i) = usize::try_from(i) else {
            return ctx.set_result(&Null);
        };
        match self.rows.as_ref() {
            Rows::Create(v) => match (v.get(r), i) {
                (Some((ts, _)), 0) => ctx.set_result(ts),
                (Some((_, dur)), 1) => ctx.set_result(dur),
                _ => ctx.set_result(&Null),
            },
            Rows::Intersect(x) => {
                let start = x.starts.get(r).copied();
                let end = x.ends.get(r).copied();
                match i {
                    0 => ctx.set_result(&start),
                    1 => ctx.set_result(&start.zip(end).map(|(s, e)| e.saturating_sub(s))),
                    _ if i < 2 + MAX_TABLES => ctx.set_result(&x.id(r, i - 2)),
                    _ => match x.key(r, i - 2 - MAX_TABLES) {
                        None | Some(Key::Null) => ctx.set_result(&Null),
                        Some(Key::Int(v)) => ctx.set_result(v),
                        Some(Key::Real(v)) => ctx.set_result(&f64::from_bits(*v)),
                        Some(Key::Text(s)) => ctx.set_result(s),
                    },
                }
            }
        }
    }

    fn rowid(&self) -> Result<i64> {
        Ok(i64::try_from(self.pos).unwrap_or(i64::MAX))
    }
}
