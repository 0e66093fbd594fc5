//! The prelude's flow operators: `directly_connected_flow(id)` (the flows
//! reachable from slice `id` by following flow arrows either way, never
//! turning back on the arrow that reached a slice), `following_flow(id)`
//! (outgoing arrows, from the slice and every slice it encloses, and on
//! from each slice reached) and `preceding_flow(id)` (incoming arrows,
//! from the slice and every slice enclosing it, and on). A breadth-first
//! walk from the slice, as upstream's; the columns are `flow`'s: `id`
//! (the row's number), `slice_out`, `slice_in`, `trace_id`, `arg_set_id`.
//! NULL gives no rows; a non-integer or an id that is no slice is an
//! error.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Value;

use super::table_function::{self, TableFn};
use crate::column_store::table::Table;

/// Which way a walk follows the arrows, and which relatives it adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Direct,
    Following,
    Preceding,
}

/// How a slice was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Start,
    Incoming,
    Outgoing,
    Relative,
}

/// One operator over the slice and flow tables.
struct ConnectedFlow {
    mode: Mode,
    slices: Arc<Table>,
    flows: Arc<Table>,
}

fn column(t: &Table, name: &str) -> Option<usize> {
    t.columns.iter().position(|c| c.name == name)
}

impl ConnectedFlow {
    fn int(t: &Table, row: usize, col: Option<usize>) -> Option<i64> {
        t.columns.get(col?)?.int_at(row)
    }

    /// The slice `row`'s ancestors (by `parent_id`), root first.
    fn ancestors(&self, row: usize) -> Vec<usize> {
        let parent = column(&self.slices, "parent_id");
        let mut out = Vec::new();
        let mut next = Self::int(&self.slices, row, parent);
        while let Some(p) = next.and_then(|p| usize::try_from(p).ok()) {
            if p >= self.slices.len || out.len() >= self.slices.len {
                break;
            }
            out.push(p);
            next = Self::int(&self.slices, p, parent);
        }
        out.reverse();
        out
    }

    /// The slices whose chain of parents reaches `row`, in id order.
    fn descendants(&self, row: usize) -> Vec<usize> {
        let parent = column(&self.slices, "parent_id");
        let mut inside: HashSet<usize> = HashSet::from([row]);
        let mut out = Vec::new();
        // A parent's id is below its children's.
        for r in row + 1..self.slices.len {
            let p = Self::int(&self.slices, r, parent).and_then(|p| usize::try_from(p).ok());
            if p.is_some_and(|p| inside.contains(&p)) {
                inside.insert(r);
                out.push(r);
            }
        }
        out
    }

    fn walk(&self, start: usize) -> Vec<usize> {
        let (out_col, in_col) = (
            column(&self.flows, "slice_out"),
            column(&self.flows, "slice_in"),
        );
        let mut outgoing: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut incoming: HashMap<i64, Vec<usize>> = HashMap::new();
        for f in 0..self.flows.len {
            if let Some(s) = Self::int(&self.flows, f, out_col) {
                outgoing.entry(s).or_default().push(f);
            }
            if let Some(s) = Self::int(&self.flows, f, in_col) {
                incoming.entry(s).or_default().push(f);
            }
        }
        let (go_in, go_out) = match self.mode {
            Mode::Direct => (true, true),
            Mode::Following => (false, true),
            Mode::Preceding => (true, false),
        };
        let mut known: HashSet<usize> = HashSet::from([start]);
        let mut queue: VecDeque<(usize, Via)> = VecDeque::from([(start, Via::Start)]);
        let mut found = Vec::new();
        while let Some((slice, via)) = queue.pop_front() {
            if via != Via::Relative {
                let relatives = match self.mode {
                    Mode::Direct => Vec::new(),
                    Mode::Following => self.descendants(slice),
                    Mode::Preceding => self.ancestors(slice),
                };
                for r in relatives {
                    if known.insert(r) {
                        queue.push_back((r, Via::Relative));
                    }
                }
            }
            let key = i64::try_from(slice).unwrap_or(i64::MAX);
            let mut follow = |flows: Option<&Vec<usize>>, to: Option<usize>, via: Via| {
                for &f in flows.into_iter().flatten() {
                    found.push(f);
                    let Some(next) =
                        Self::int(&self.flows, f, to).and_then(|s| usize::try_from(s).ok())
                    else {
                        continue;
                    };
                    if known.insert(next) {
                        queue.push_back((next, via));
                    }
                }
            };
            if go_in && via != Via::Outgoing {
                follow(incoming.get(&key), out_col, Via::Incoming);
            }
            if go_out && via != Via::Incoming {
                follow(outgoing.get(&key), in_col, Via::Outgoing);
            }
        }
        found
    }
}

impl TableFn for ConnectedFlow {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("id", "BIGINT"),
            ("slice_out", "BIGINT"),
            ("slice_in", "BIGINT"),
            ("trace_id", "BIGINT"),
            ("arg_set_id", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["start_id"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let start = match args.first() {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Integer(v)) => *v,
            Some(_) => return Err("start id should be an integer.".into()),
        };
        let row = usize::try_from(start)
            .ok()
            .filter(|r| *r < self.slices.len)
            .ok_or_else(|| format!("invalid slice id {start}"))?;
        let cols: Vec<Option<usize>> = ["slice_out", "slice_in", "trace_id", "arg_set_id"]
            .iter()
            .map(|c| column(&self.flows, c))
            .collect();
        Ok(self
            .walk(row)
            .into_iter()
            .enumerate()
            .map(|(n, f)| {
                let mut r = vec![Value::Integer(i64::try_from(n).unwrap_or(i64::MAX))];
                r.extend(
                    cols.iter()
                        .map(|c| Self::int(&self.flows, f, *c).map_or(Value::Null, Value::Integer)),
                );
                r
            })
            .collect())
    }
}

/// Registers the three operators over `slices` and `flows`.
pub fn register(conn: &Connection, slices: Arc<Table>, flows: Arc<Table>) -> rusqlite::Result<()> {
    for (name, mode) in [
        ("directly_connected_flow", Mode::Direct),
        ("following_flow", Mode::Following),
        ("preceding_flow", Mode::Preceding),
    ] {
        let op = ConnectedFlow {
            mode,
            slices: slices.clone(),
            flows: flows.clone(),
        };
        table_function::register(conn, name, Arc::new(op))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::tables::core::{FlowRow, SliceRow};
    use crate::{TraceProcessor, Value};

    /// Slices: 0 [0, 100) with child 1 [10, 20) (track 0); 2 [30, 40)
    /// with child 3 [32, 35) (track 1); 4 [50, 60) (track 2), 5 (track 3).
    /// Flows: 1 → 2, 3 → 4, 0 → 5, 5 → 3.
    fn trace() -> TraceProcessor {
        let mut s = Storage::default();
        for (ts, dur, track_id, depth, parent_id) in [
            (0, 100, 0, 0, None),
            (10, 10, 0, 1, Some(0)),
            (30, 10, 1, 0, None),
            (32, 3, 1, 1, Some(2)),
            (50, 10, 2, 0, None),
            (70, 1, 3, 0, None),
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
        for (slice_out, slice_in) in [(1, 2), (3, 4), (0, 5), (5, 3)] {
            s.flows.push(FlowRow {
                slice_out,
                slice_in,
                ..Default::default()
            });
        }
        TraceProcessor::from_storage(s).expect("engine")
    }

    fn flows(tp: &TraceProcessor, sql: &str) -> Vec<(i64, i64)> {
        tp.query(sql)
            .expect(sql)
            .rows
            .into_iter()
            .filter_map(|r| match (r.first(), r.get(1)) {
                (Some(Value::Int(a)), Some(Value::Int(b))) => Some((*a, *b)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_three_walks_follow_upstreams_rules() {
        let tp = trace();
        // From 5: its incoming 0 → 5, then its outgoing 5 → 3, then 3's
        // outgoing 3 → 4 (never back along the arrow that reached 3).
        assert_eq!(
            flows(
                &tp,
                "SELECT slice_out, slice_in FROM directly_connected_flow(5)"
            ),
            [(0, 5), (5, 3), (3, 4)]
        );
        // From 0: 0's own 0 → 5 and its child 1's 1 → 2, then on from 5
        // (5 → 3) and from 3 (3 → 4).
        assert_eq!(
            flows(&tp, "SELECT slice_out, slice_in FROM following_flow(0)"),
            [(0, 5), (1, 2), (5, 3), (3, 4)]
        );
        // Into 3: 5 → 3 and, from its parent 2, 1 → 2; then into 5 and 1.
        assert_eq!(
            flows(&tp, "SELECT slice_out, slice_in FROM preceding_flow(3)"),
            [(5, 3), (1, 2), (0, 5)]
        );
        let r = tp
            .query("SELECT * FROM directly_connected_flow(4)")
            .expect("query");
        assert_eq!(
            r.columns,
            ["id", "slice_out", "slice_in", "trace_id", "arg_set_id"]
        );
        assert!(tp.query("SELECT * FROM following_flow(99)").is_err());
        assert!(tp.query("SELECT * FROM following_flow('a')").is_err());
        assert_eq!(flows(&tp, "SELECT * FROM preceding_flow(NULL)"), []);
    }
}
