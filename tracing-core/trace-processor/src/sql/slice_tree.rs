//! The prelude's table-valued operators over the slice tree:
//! `ancestor_slice(id)` (the slices enclosing `id`, root first) and
//! `descendant_slice(id)` (the slices `id` encloses, in id order), with
//! upstream's columns (`id`, `ts`, `dur`, `track_id`, `category`, `name`,
//! `depth`, `parent_id`, `arg_set_id` and the thread times). Each is an
//! eponymous virtual table whose argument is the hidden column
//! `start_id`; a call walks `parent_id` directly over the frozen slice
//! columns (no SQL recursion per row). A NULL id gives no rows; an id that
//! is no slice and an argument that is not an integer are errors with
//! upstream's wording. `slice_is_ancestor(a, d)` answers for one pair.

use std::ffi::c_int;
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::{Null, ValueRef};
use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};

use crate::column_store::table::{Cell, Table};

/// The columns both operators return, in upstream's order.
const COLUMNS: [&str; 13] = [
    "id",
    "ts",
    "dur",
    "track_id",
    "category",
    "name",
    "depth",
    "parent_id",
    "arg_set_id",
    "thread_ts",
    "thread_dur",
    "thread_instruction_count",
    "thread_instruction_delta",
];

/// Which walk a module does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    Ancestors,
    Descendants,
}

/// What a module holds: the slice table, where each returned column is
/// in it, and its walk.
#[derive(Debug, Clone)]
pub struct Aux {
    slices: Arc<Table>,
    /// For each of `COLUMNS`, its index in `slices`.
    at: Vec<Option<usize>>,
    walk: Walk,
}

impl Aux {
    fn int(&self, row: usize, name: &str) -> Option<i64> {
        let col = COLUMNS.iter().position(|c| *c == name)?;
        let col = (*self.at.get(col)?)?;
        self.slices.columns.get(col)?.int_at(row)
    }

    /// The rows enclosing `start`, root first (ids ascend down a tree).
    fn ancestors(&self, start: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut next = self.int(start, "parent_id");
        // A well-formed tree is at most `len` deep: a cycle stops there.
        while let Some(p) = next.and_then(|p| usize::try_from(p).ok()) {
            if p >= self.slices.len || out.len() >= self.slices.len {
                break;
            }
            out.push(p);
            next = self.int(p, "parent_id");
        }
        out.reverse();
        out
    }

    /// Whether `start` (at `depth`) is on `row`'s chain of parents.
    fn encloses(&self, start: usize, depth: i64, row: usize) -> bool {
        let mut next = self.int(row, "parent_id");
        let mut steps = 0usize;
        while let Some(p) = next.and_then(|p| usize::try_from(p).ok()) {
            if p == start {
                return true;
            }
            steps += 1;
            if p >= self.slices.len || steps > self.slices.len {
                return false;
            }
            if self.int(p, "depth").is_none_or(|d| d <= depth) {
                return false;
            }
            next = self.int(p, "parent_id");
        }
        false
    }

    /// The rows `start` encloses, in id order: the slices of its track
    /// deeper than it that start within it (to its end, inclusive, or
    /// to the trace's end while it is unfinished) and have it as an
    /// ancestor.
    fn descendants(&self, start: usize) -> Vec<usize> {
        let (Some(ts), Some(depth), track) = (
            self.int(start, "ts"),
            self.int(start, "depth"),
            self.int(start, "track_id"),
        ) else {
            return Vec::new();
        };
        let dur = self.int(start, "dur").unwrap_or(-1);
        let end = if dur >= 0 {
            ts.saturating_add(dur)
        } else {
            i64::MAX
        };
        // Children begin no earlier than their parent and come after it
        // in id order.
        let mut out = Vec::new();
        for row in start + 1..self.slices.len {
            let Some(row_ts) = self.int(row, "ts") else {
                continue;
            };
            if self.slices.sorted_by.is_some() && row_ts > end {
                break;
            }
            if row_ts < ts
                || row_ts > end
                || self.int(row, "track_id") != track
                || self.int(row, "depth").is_none_or(|d| d <= depth)
            {
                continue;
            }
            if self.encloses(start, depth, row) {
                out.push(row);
            }
        }
        out
    }
}

/// `slice_is_ancestor(ancestor_id, descendant_id)` as upstream decides
/// it, by position rather than by the parent chain: the same track, a
/// smaller depth, and a span (to the end of the trace while unfinished)
/// that covers the other's; NULL when either id is no slice.
fn is_ancestor(aux: &Aux, ancestor: i64, descendant: i64) -> Option<bool> {
    let row = |id: i64| usize::try_from(id).ok().filter(|r| *r < aux.slices.len);
    let (a, d) = (row(ancestor)?, row(descendant)?);
    let get = |r: usize, c: &str| aux.int(r, c);
    let (a_ts, a_dur, d_ts, d_dur) = (get(a, "ts")?, get(a, "dur")?, get(d, "ts")?, get(d, "dur")?);
    Some(
        get(a, "track_id") == get(d, "track_id")
            && get(a, "depth")? < get(d, "depth")?
            && a_ts <= d_ts
            && (a_dur == -1 || a_ts.saturating_add(a_dur) >= d_ts.saturating_add(d_dur)),
    )
}

/// Registers `ancestor_slice` and `descendant_slice` over `slices`.
/// Also `slice_is_ancestor(ancestor_id, descendant_id)`.
pub fn register(conn: &Connection, slices: Arc<Table>) -> rusqlite::Result<()> {
    let at: Vec<Option<usize>> = COLUMNS
        .iter()
        .map(|name| slices.columns.iter().position(|c| c.name == *name))
        .collect();
    for (name, walk) in [
        ("ancestor_slice", Walk::Ancestors),
        ("descendant_slice", Walk::Descendants),
    ] {
        conn.create_module(
            name,
            eponymous_only_module::<TreeTab>(),
            Some(Aux {
                slices: slices.clone(),
                at: at.clone(),
                walk,
            }),
        )?;
    }
    let aux = Aux {
        slices,
        at,
        walk: Walk::Ancestors,
    };
    conn.create_scalar_function(
        "slice_is_ancestor",
        2,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8
            | rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| {
            Ok(match (ctx.get_raw(0), ctx.get_raw(1)) {
                (ValueRef::Integer(a), ValueRef::Integer(d)) => {
                    is_ancestor(&aux, a, d).map(i64::from)
                }
                _ => None,
            })
        },
    )?;
    Ok(())
}

/// One operator's virtual table.
#[repr(C)]
pub struct TreeTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    aux: Aux,
}

// SAFETY: `TreeTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for TreeTab {
    type Aux = Aux;
    type Cursor = TreeCursor;

    fn connect(
        db: &mut VTabConnection,
        aux: Option<&Aux>,
        _args: &[&[u8]],
    ) -> rusqlite::Result<(String, Self)> {
        let aux = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("slice table missing".into()))?;
        db.config(VTabConfig::Innocuous)?;
        let mut cols: Vec<String> = COLUMNS
            .iter()
            .zip(&aux.at)
            .map(|(name, at)| {
                let ty = at
                    .and_then(|i| aux.slices.columns.get(i))
                    .map_or("BIGINT", |c| c.sql_type);
                format!("\"{name}\" {ty}")
            })
            .collect();
        cols.push("start_id HIDDEN".into());
        Ok((
            format!("CREATE TABLE x({})", cols.join(", ")),
            TreeTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                aux,
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<()> {
        let hidden = c_int::try_from(COLUMNS.len()).unwrap_or(c_int::MAX);
        let found = info.constraints().enumerate().find_map(|(i, c)| {
            (c.is_usable()
                && c.column() == hidden
                && c.operator() == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ)
                .then_some(i)
        });
        if let Some(i) = found {
            let mut u = info.constraint_usage(i);
            u.set_argv_index(1);
            u.set_omit(true);
            info.set_idx_num(1);
            info.set_estimated_cost(1000.0);
        } else {
            info.set_idx_num(0);
            info.set_estimated_cost(1e15);
        }
        Ok(())
    }

    fn open(&'vtab mut self) -> rusqlite::Result<TreeCursor> {
        Ok(TreeCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            aux: self.aux.clone(),
            rows: Vec::new(),
            start: None,
            pos: 0,
        })
    }
}

/// The rows of one call.
#[repr(C)]
pub struct TreeCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    aux: Aux,
    /// Rows of the slice table, in the order returned.
    rows: Vec<usize>,
    /// The call's argument.
    start: Option<i64>,
    pos: usize,
}

// SAFETY: `TreeCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor` first,
// as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for TreeCursor {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        self.rows.clear();
        self.start = None;
        self.pos = 0;
        let err = |m: String| rusqlite::Error::ModuleError(m);
        if idx_num != 1 {
            return Err(err("the start id must be given".into()));
        }
        let start = match args.iter().next() {
            None | Some(ValueRef::Null) => return Ok(()),
            Some(ValueRef::Integer(v)) => v,
            Some(_) => return Err(err("start id should be an integer.".into())),
        };
        let row = usize::try_from(start)
            .ok()
            .filter(|r| *r < self.aux.slices.len)
            .ok_or_else(|| err(format!("no row with id {start}")))?;
        self.start = Some(start);
        self.rows = match self.aux.walk {
            Walk::Ancestors => self.aux.ancestors(row),
            Walk::Descendants => self.aux.descendants(row),
        };
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.pos >= self.rows.len()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> rusqlite::Result<()> {
        let i = usize::try_from(i).unwrap_or(usize::MAX);
        if i == COLUMNS.len() {
            return match self.start {
                Some(v) => ctx.set_result(&v),
                None => ctx.set_result(&Null),
            };
        }
        let (Some(row), Some(Some(col))) = (self.rows.get(self.pos), self.aux.at.get(i)) else {
            return ctx.set_result(&Null);
        };
        match self.aux.slices.cell(*row, *col) {
            Cell::Null => ctx.set_result(&Null),
            Cell::Int(v) => ctx.set_result(&v),
            Cell::Real(v) => ctx.set_result(&v),
            Cell::Str(s) => ctx.set_result(&s),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(i64::try_from(self.pos).unwrap_or(i64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::tables::core::SliceRow;
    use crate::{TraceProcessor, Value};

    /// Track 0: a [0, 100) > b [10, 50) > c [20, 30), d [60, 70) under a,
    /// e [100, 110) after a; track 1: f [10, 20), a sibling in time.
    fn trace() -> TraceProcessor {
        let mut s = Storage::default();
        let slice = |ts, dur, track_id, depth, parent_id: Option<u32>| SliceRow {
            ts,
            dur,
            track_id,
            depth,
            parent_id: parent_id.into(),
            ..Default::default()
        };
        s.slices.push(slice(0, 100, 0, 0, None)); // 0: a
        s.slices.push(slice(10, 40, 0, 1, Some(0))); // 1: b
        s.slices.push(slice(10, 10, 1, 0, None)); // 2: f
        s.slices.push(slice(20, 10, 0, 2, Some(1))); // 3: c
        s.slices.push(slice(60, 10, 0, 1, Some(0))); // 4: d
        s.slices.push(slice(100, 10, 0, 0, None)); // 5: e
        TraceProcessor::from_storage(s).expect("engine")
    }

    fn ids(tp: &TraceProcessor, sql: &str) -> Vec<i64> {
        tp.query(sql)
            .expect(sql)
            .rows
            .into_iter()
            .map(|r| match r.first() {
                Some(Value::Int(v)) => *v,
                other => panic!("not an id: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn ancestors_are_root_first_and_descendants_in_id_order() {
        let tp = trace();
        assert_eq!(ids(&tp, "SELECT id FROM ancestor_slice(3)"), vec![0, 1]);
        assert_eq!(
            ids(&tp, "SELECT id FROM ancestor_slice(0)"),
            Vec::<i64>::new()
        );
        assert_eq!(
            ids(&tp, "SELECT id FROM descendant_slice(0)"),
            vec![1, 3, 4]
        );
        assert_eq!(ids(&tp, "SELECT id FROM descendant_slice(1)"), vec![3]);
        assert_eq!(
            ids(&tp, "SELECT id FROM descendant_slice(5)"),
            Vec::<i64>::new()
        );
        assert_eq!(
            ids(&tp, "SELECT id FROM ancestor_slice(NULL)"),
            Vec::<i64>::new()
        );
        // Joined: the argument is a column of the table to the left.
        assert_eq!(
            ids(
                &tp,
                "SELECT a.id FROM slice s JOIN ancestor_slice(s.id) a WHERE s.depth = 2"
            ),
            vec![0, 1]
        );
    }

    #[test]
    fn slice_is_ancestor_decides_by_track_depth_and_span() {
        let tp = trace();
        let one = |sql: &str| tp.query(sql).expect(sql).rows.remove(0).remove(0);
        assert_eq!(one("SELECT slice_is_ancestor(0, 3)"), Value::Int(1));
        assert_eq!(one("SELECT slice_is_ancestor(1, 4)"), Value::Int(0));
        assert_eq!(one("SELECT slice_is_ancestor(3, 0)"), Value::Int(0));
        // Another track, though inside in time.
        assert_eq!(one("SELECT slice_is_ancestor(0, 2)"), Value::Int(0));
        assert_eq!(one("SELECT slice_is_ancestor(0, 99)"), Value::Null);
        assert_eq!(one("SELECT slice_is_ancestor(NULL, 1)"), Value::Null);
    }

    #[test]
    fn the_columns_are_upstream_s_with_the_slice_s_values() {
        let tp = trace();
        let r = tp.query("SELECT * FROM ancestor_slice(1)").expect("query");
        assert_eq!(
            r.columns,
            [
                "id",
                "ts",
                "dur",
                "track_id",
                "category",
                "name",
                "depth",
                "parent_id",
                "arg_set_id",
                "thread_ts",
                "thread_dur",
                "thread_instruction_count",
                "thread_instruction_delta"
            ]
        );
        assert_eq!(r.rows.len(), 1);
        assert_eq!(
            r.rows[0][..4],
            [Value::Int(0), Value::Int(0), Value::Int(100), Value::Int(0)]
        );
        assert_eq!(r.rows[0][7], Value::Null);
    }

    #[test]
    fn an_id_that_is_no_slice_or_not_an_integer_is_an_error() {
        let tp = trace();
        let e = tp
            .query("SELECT * FROM ancestor_slice(99)")
            .expect_err("no such slice");
        assert!(e.to_string().contains("no row with id 99"), "{e}");
        let e = tp
            .query("SELECT * FROM descendant_slice(-1)")
            .expect_err("no such slice");
        assert!(e.to_string().contains("no row with id -1"), "{e}");
        let e = tp
            .query("SELECT * FROM descendant_slice('x')")
            .expect_err("text");
        assert!(
            e.to_string().contains("start id should be an integer"),
            "{e}"
        );
    }

    #[test]
    fn an_empty_trace_answers_errors_not_panics() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        assert!(tp.query("SELECT * FROM descendant_slice(0)").is_err());
        assert_eq!(
            ids(&tp, "SELECT id FROM descendant_slice(NULL)"),
            Vec::<i64>::new()
        );
    }
}
