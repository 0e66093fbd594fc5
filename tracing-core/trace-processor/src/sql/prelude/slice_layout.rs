//! `experimental_slice_layout(track_ids)`: the prelude's operator that
//! lays the slices of several tracks (`'1,2,3'`, ids that do not parse
//! are ignored) out on one set of rows, as the UI draws merged tracks.
//! Each root slice and everything below it is a block (its span: the
//! root's start to the latest end below it, unfinished slices to the end
//! of time; its height: its deepest slice's depth + 1). Blocks are placed
//! tallest first, then earliest, then in id order, each at the lowest row
//! from which it has as many consecutive rows free over its span. The
//! answer is every slice of the tracks (`id`, in the slice table's order)
//! with `layout_depth`: its depth plus its block's row. A text argument is
//! required. The answer for a list is kept, as upstream keeps it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite::types::Value;

use super::table_function::{self, TableFn};
use crate::column_store::table::Table;

/// One block: a root slice and its descendants.
#[derive(Debug, Clone, Copy)]
struct Block {
    start: i64,
    end: i64,
    max_depth: i64,
    row: i64,
}

/// The occupied spans of one row, by start.
type Row = Vec<(i64, i64)>;

fn is_free(row: &Row, start: i64, end: i64) -> bool {
    match row.last() {
        None => return true,
        Some(&(_, last_end)) if start >= last_end => return true,
        _ => {}
    }
    let at = row.partition_point(|&(s, _)| s < start);
    if row.get(at).is_some_and(|&(s, _)| s < end) {
        return false;
    }
    !(at > 0 && row.get(at - 1).is_some_and(|&(_, e)| e > start))
}

fn mark(row: &mut Row, start: i64, end: i64) {
    let at = row.partition_point(|&(s, _)| s < start);
    row.insert(at, (start, end));
}

/// The operator over the slice table.
struct SliceLayout {
    slices: Arc<Table>,
    /// Answers already computed, by argument.
    kept: Mutex<HashMap<String, Vec<Vec<Value>>>>,
}

impl SliceLayout {
    fn int(&self, row: usize, name: &str) -> Option<i64> {
        let col = self.slices.columns.iter().position(|c| c.name == name)?;
        self.slices.columns.get(col)?.int_at(row)
    }

    fn layout(&self, tracks: &[i64]) -> Vec<Vec<Value>> {
        let track_col = self
            .slices
            .columns
            .iter()
            .position(|c| c.name == "track_id");
        let rows: Vec<usize> = (0..self.slices.len)
            .filter(|&r| {
                track_col
                    .and_then(|c| self.slices.columns.get(c))
                    .and_then(|c| c.int_at(r))
                    .is_some_and(|t| tracks.contains(&t))
            })
            .collect();
        let mut block_of: HashMap<usize, usize> = HashMap::new();
        let mut blocks: Vec<Block> = Vec::new();
        let mut slice_block = Vec::with_capacity(rows.len());
        for &r in &rows {
            let depth = self.int(r, "depth").unwrap_or(0);
            let start = self.int(r, "ts").unwrap_or(0);
            let dur = self.int(r, "dur").unwrap_or(0);
            let end = if dur == -1 {
                i64::MAX
            } else {
                start.saturating_add(dur)
            };
            let parent = self
                .int(r, "parent_id")
                .and_then(|p| usize::try_from(p).ok())
                .and_then(|p| block_of.get(&p).copied());
            let b = match parent.and_then(|b| blocks.get_mut(b).map(|g| (b, g))) {
                Some((b, g)) => {
                    g.max_depth = g.max_depth.max(depth);
                    g.end = g.end.max(end);
                    b
                }
                None => {
                    blocks.push(Block {
                        start,
                        end,
                        max_depth: depth,
                        row: 0,
                    });
                    blocks.len() - 1
                }
            };
            block_of.insert(r, b);
            slice_block.push(b);
        }
        let mut order: Vec<usize> = (0..blocks.len()).collect();
        order.sort_by(|&a, &b| {
            let (ga, gb) = (&blocks[a], &blocks[b]);
            gb.max_depth
                .cmp(&ga.max_depth)
                .then(ga.start.cmp(&gb.start))
                .then(a.cmp(&b))
        });
        let mut occupied: Vec<Row> = Vec::new();
        for b in order {
            let Some(g) = blocks.get_mut(b) else {
                continue;
            };
            let height = usize::try_from(g.max_depth).unwrap_or(0) + 1;
            let (mut first, mut run, mut r) = (0usize, 0usize, 0usize);
            loop {
                if occupied
                    .get(r)
                    .is_none_or(|row| is_free(row, g.start, g.end))
                {
                    if run == 0 {
                        first = r;
                    }
                    run += 1;
                    if run == height {
                        break;
                    }
                } else {
                    run = 0;
                }
                r += 1;
            }
            g.row = i64::try_from(first).unwrap_or(i64::MAX);
            if occupied.len() < first + height {
                occupied.resize(first + height, Row::new());
            }
            for row in occupied.iter_mut().skip(first).take(height) {
                mark(row, g.start, g.end);
            }
        }
        rows.iter()
            .zip(slice_block)
            .map(|(&r, b)| {
                let id = self.int(r, "id").unwrap_or(r as i64);
                let depth = self.int(r, "depth").unwrap_or(0);
                let row = blocks.get(b).map_or(0, |g| g.row);
                vec![Value::Integer(id), Value::Integer(depth + row)]
            })
            .collect()
    }
}

impl TableFn for SliceLayout {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![("id", "BIGINT"), ("layout_depth", "BIGINT")]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["filter_track_ids"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let Some(Value::Text(list)) = args.first() else {
            return Err("invalid input track id list".into());
        };
        if let Some(rows) = self.kept.lock().ok().and_then(|k| k.get(list).cloned()) {
            return Ok(rows);
        }
        let tracks: Vec<i64> = list
            .split(',')
            .filter_map(|t| t.parse::<u32>().ok())
            .map(i64::from)
            .collect();
        let rows = self.layout(&tracks);
        if let Ok(mut k) = self.kept.lock() {
            k.insert(list.clone(), rows.clone());
        }
        Ok(rows)
    }
}

/// Registers `experimental_slice_layout` over `slices`.
pub fn register(conn: &Connection, slices: Arc<Table>) -> rusqlite::Result<()> {
    let op = SliceLayout {
        slices,
        kept: Mutex::new(HashMap::new()),
    };
    table_function::register(conn, "experimental_slice_layout", Arc::new(op))
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::tables::core::SliceRow;
    use crate::{TraceProcessor, Value};

    #[test]
    fn blocks_are_placed_tallest_first_on_free_rows() {
        let mut s = Storage::default();
        // Track 0: 0 [0, 10) with child 1 [1, 5); track 1: 2 [5, 20)
        // overlaps block 0; 3 [30, 40) overlaps nothing; track 2 is not
        // asked for.
        for (ts, dur, track_id, depth, parent_id) in [
            (0, 10, 0, 0, None),
            (1, 4, 0, 1, Some(0)),
            (5, 15, 1, 0, None),
            (30, 10, 1, 0, None),
            (0, 100, 2, 0, None),
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
            .query("SELECT id, layout_depth FROM experimental_slice_layout('0,1,x')")
            .expect("query");
        let v = |a, b| vec![Value::Int(a), Value::Int(b)];
        assert_eq!(r.rows, vec![v(0, 0), v(1, 1), v(2, 2), v(3, 0)]);
        assert!(
            tp.query("SELECT * FROM experimental_slice_layout(1)")
                .is_err()
        );
    }
}
