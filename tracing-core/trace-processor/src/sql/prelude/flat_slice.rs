//! `experimental_flat_slice(start_bound, end_bound)`: the prelude's
//! operator that flattens each track's slice stacks between two bounds
//! into back-to-back intervals, each naming the innermost slice running
//! then (`source_id`), and gaps as rows of no slice (NULL name, category,
//! arg set and source). A track starts at its first root slice at or after
//! `start_bound` (with a gap row from `start_bound`); slices starting at or
//! after `end_bound` and instants are left out; when a slice ends, its
//! parent resumes (a new row), and the last row of each track runs to
//! `end_bound`. Columns: `id` (row number), `ts`, `dur`, `track_id`,
//! `category`, `name`, `arg_set_id`, `source_id`. A NULL bound gives no
//! rows; a bound that is not an integer is an error.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Value;

use super::table_function::{self, TableFn};
use crate::column_store::table::{Cell, Table};

/// One output row while it is being built.
#[derive(Debug, Clone, Copy)]
struct Out {
    ts: i64,
    /// -1 until the row is ended.
    dur: i64,
    track: i64,
    /// The slice row it shows; None for a gap.
    source: Option<usize>,
}

/// A track's state: the open ancestors of the shown slice, and the row
/// being shown.
#[derive(Debug, Default)]
struct Track {
    parents: Vec<usize>,
    source: Option<usize>,
    out: usize,
}

struct Flattener<'a> {
    op: &'a FlatSlice,
    rows: Vec<Out>,
}

impl Flattener<'_> {
    fn push(&mut self, ts: i64, track: i64, source: Option<usize>) -> usize {
        self.rows.push(Out {
            ts,
            dur: -1,
            track,
            source,
        });
        self.rows.len() - 1
    }

    fn end_row(&mut self, out: usize, end: i64) {
        if let Some(r) = self.rows.get_mut(out) {
            r.dur = end.saturating_sub(r.ts);
        }
    }

    /// Ends the shown slice's row when the slice ends by `at`.
    fn end_if_done(&mut self, t: &Track, at: i64) -> bool {
        let Some(src) = t.source else {
            return false;
        };
        let (ts, dur) = (self.op.int(src, "ts"), self.op.int(src, "dur"));
        let (Some(ts), Some(dur)) = (ts, dur) else {
            return false;
        };
        let end = ts.saturating_add(dur);
        if dur == -1 || end > at {
            return false;
        }
        self.end_row(t.out, end);
        true
    }

    /// Writes the rows of what ends before `at`: the shown slice, then
    /// each parent it returns to, then a gap when the stack empties.
    fn close_before(&mut self, id: i64, t: &mut Track, at: i64) {
        if t.source.is_none() || !self.end_if_done(t, at) {
            return;
        }
        while let Some(parent) = t.parents.pop() {
            let end = self
                .rows
                .get(t.out)
                .map_or(at, |r| r.ts.saturating_add(r.dur));
            t.source = Some(parent);
            t.out = self.push(end, id, Some(parent));
            if !self.end_if_done(t, at) {
                break;
            }
        }
        if !t.parents.is_empty() {
            return;
        }
        let Some(&Out { ts, dur, .. }) = self.rows.get(t.out) else {
            return;
        };
        if dur == -1 {
            return;
        }
        t.source = None;
        t.out = self.push(ts.saturating_add(dur), id, None);
    }
}

/// The operator over the slice table.
struct FlatSlice {
    slices: Arc<Table>,
}

impl FlatSlice {
    fn col(&self, name: &str) -> Option<usize> {
        self.slices.columns.iter().position(|c| c.name == name)
    }

    fn int(&self, row: usize, name: &str) -> Option<i64> {
        self.slices.columns.get(self.col(name)?)?.int_at(row)
    }

    fn cell(&self, row: Option<usize>, name: &str) -> Value {
        let (Some(row), Some(col)) = (row, self.col(name)) else {
            return Value::Null;
        };
        match self.slices.cell(row, col) {
            Cell::Int(v) => Value::Integer(v),
            Cell::Real(v) => Value::Real(v),
            Cell::Str(s) => Value::Text(s.to_owned()),
            Cell::Null => Value::Null,
        }
    }

    fn flatten(&self, start: i64, end: i64) -> Vec<Vec<Value>> {
        let mut f = Flattener {
            op: self,
            rows: Vec::new(),
        };
        let mut tracks: BTreeMap<i64, Track> = BTreeMap::new();
        for row in 0..self.slices.len {
            let (Some(ts), Some(dur), Some(track)) = (
                self.int(row, "ts"),
                self.int(row, "dur"),
                self.int(row, "track_id"),
            ) else {
                continue;
            };
            if ts < start {
                continue;
            }
            if ts >= end {
                break;
            }
            if dur == 0 {
                continue;
            }
            let is_root = self.int(row, "depth") == Some(0);
            let t = match tracks.entry(track) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    if !is_root {
                        continue;
                    }
                    let out = f.push(start, track, None);
                    e.insert(Track {
                        out,
                        ..Track::default()
                    })
                }
            };
            f.close_before(track, t, ts);
            f.end_row(t.out, ts);
            if !is_root && let Some(src) = t.source {
                t.parents.push(src);
            }
            t.source = Some(row);
            t.out = f.push(ts, track, Some(row));
        }
        for (id, t) in tracks.iter_mut() {
            f.close_before(*id, t, end);
            f.end_row(t.out, end);
        }
        f.rows
            .iter()
            .enumerate()
            .map(|(n, r)| {
                vec![
                    Value::Integer(i64::try_from(n).unwrap_or(i64::MAX)),
                    Value::Integer(r.ts),
                    Value::Integer(r.dur),
                    Value::Integer(r.track),
                    self.cell(r.source, "category"),
                    self.cell(r.source, "name"),
                    self.cell(r.source, "arg_set_id"),
                    r.source
                        .and_then(|s| self.int(s, "id"))
                        .map_or(Value::Null, Value::Integer),
                ]
            })
            .collect()
    }
}

impl TableFn for FlatSlice {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("id", "BIGINT"),
            ("ts", "BIGINT"),
            ("dur", "BIGINT"),
            ("track_id", "BIGINT"),
            ("category", "TEXT"),
            ("name", "TEXT"),
            ("arg_set_id", "BIGINT"),
            ("source_id", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["start_bound", "end_bound"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let (start, end) = match (args.first(), args.get(1)) {
            (Some(Value::Null), _) | (_, Some(Value::Null)) => return Ok(Vec::new()),
            (Some(Value::Integer(s)), Some(Value::Integer(e))) => (*s, *e),
            (Some(Value::Integer(_)), _) => return Err("end timestamp must be an integer".into()),
            _ => return Err("start timestamp must be an integer".into()),
        };
        Ok(self.flatten(start, end))
    }
}

/// Registers `experimental_flat_slice` over `slices`.
pub fn register(conn: &Connection, slices: Arc<Table>) -> rusqlite::Result<()> {
    table_function::register(
        conn,
        "experimental_flat_slice",
        Arc::new(FlatSlice { slices }),
    )
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::tables::core::SliceRow;
    use crate::{TraceProcessor, Value};

    #[test]
    fn stacks_become_back_to_back_rows_between_the_bounds() {
        let mut s = Storage::default();
        // Track 0: 0 [10, 50) with child 1 [20, 30); an instant 2 at 25;
        // 3 [60, 70). Track 1: only a child 4 (no root in the window).
        for (ts, dur, track_id, depth, parent_id) in [
            (10, 40, 0, 0, None),
            (20, 10, 0, 1, Some(0)),
            (25, 0, 0, 2, Some(1)),
            (40, 5, 1, 1, None),
            (60, 10, 0, 0, None),
        ] {
            s.slices.push(SliceRow {
                ts,
                dur,
                track_id,
                depth,
                parent_id: parent_id.into(),
                ..Default::default()
            });
        }
        let tp = TraceProcessor::from_storage(s).expect("engine");
        let r = tp
            .query("SELECT ts, dur, track_id, source_id FROM experimental_flat_slice(0, 100)")
            .expect("query");
        let row = |ts: i64, dur: i64, src: Option<i64>| {
            vec![
                Value::Int(ts),
                Value::Int(dur),
                Value::Int(0),
                src.map_or(Value::Null, Value::Int),
            ]
        };
        assert_eq!(
            r.rows,
            vec![
                row(0, 10, None),
                row(10, 10, Some(0)),
                row(20, 10, Some(1)),
                row(30, 20, Some(0)),
                row(50, 10, None),
                row(60, 10, Some(4)),
                row(70, 30, None),
            ]
        );
        assert!(
            tp.query("SELECT * FROM experimental_flat_slice(NULL, 5)")
                .expect("query")
                .rows
                .is_empty()
        );
        assert!(
            tp.query("SELECT * FROM experimental_flat_slice('a', 5)")
                .is_err()
        );
    }
}
