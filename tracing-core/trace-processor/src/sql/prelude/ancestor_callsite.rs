//! `experimental_ancestor_stack_profile_callsite(id)`: the prelude's
//! operator answering the callsites above callsite `id` (its parent, the
//! parent's parent, ...), root first, with `stack_profile_callsite`'s
//! columns (`id`, `depth`, `parent_id`, `frame_id`). NULL gives no rows; a
//! non-integer or an id that is no callsite is an error.

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Value;

use super::table_function::{self, TableFn};
use crate::column_store::table::{Cell, Table};

/// The columns answered, in upstream's order.
const COLUMNS: [&str; 4] = ["id", "depth", "parent_id", "frame_id"];

/// The operator over the callsite table.
struct AncestorCallsite {
    callsites: Arc<Table>,
}

impl AncestorCallsite {
    fn col(&self, name: &str) -> Option<usize> {
        self.callsites.columns.iter().position(|c| c.name == name)
    }
}

impl TableFn for AncestorCallsite {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        COLUMNS.iter().map(|c| (*c, "BIGINT")).collect()
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
        let t = &self.callsites;
        let row = usize::try_from(start)
            .ok()
            .filter(|r| *r < t.len)
            .ok_or_else(|| format!("no row with id {start}"))?;
        let parent = self.col("parent_id");
        let parent_of = |r: usize| {
            parent
                .and_then(|c| t.columns.get(c))
                .and_then(|c| c.int_at(r))
                .and_then(|p| usize::try_from(p).ok())
                .filter(|p| *p < t.len)
        };
        let mut chain = Vec::new();
        let mut next = parent_of(row);
        // A well-formed forest is at most `len` deep: a cycle stops there.
        while let Some(p) = next {
            if chain.len() >= t.len {
                break;
            }
            chain.push(p);
            next = parent_of(p);
        }
        chain.reverse();
        let cols: Vec<Option<usize>> = COLUMNS.iter().map(|c| self.col(c)).collect();
        Ok(chain
            .into_iter()
            .map(|r| {
                cols.iter()
                    .map(|c| match c.map(|c| t.cell(r, c)) {
                        Some(Cell::Int(v)) => Value::Integer(v),
                        _ => Value::Null,
                    })
                    .collect()
            })
            .collect())
    }
}

/// Registers the operator over `callsites` (`__intrinsic_stack_profile_callsite`).
pub fn register(conn: &Connection, callsites: Arc<Table>) -> rusqlite::Result<()> {
    table_function::register(
        conn,
        "experimental_ancestor_stack_profile_callsite",
        Arc::new(AncestorCallsite { callsites }),
    )
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::tables::profiling::CallsiteRow;
    use crate::{TraceProcessor, Value};

    #[test]
    fn answers_the_chain_of_parents_root_first() {
        let mut s = Storage::default();
        for (depth, parent_id, frame_id) in [(0, None, 7), (1, Some(0), 8), (2, Some(1), 9)] {
            s.profiling.callsites.push(CallsiteRow {
                depth,
                parent_id,
                frame_id,
            });
        }
        let tp = TraceProcessor::from_storage(s).expect("engine");
        let r = tp
            .query("SELECT * FROM experimental_ancestor_stack_profile_callsite(2)")
            .expect("query");
        assert_eq!(r.columns, ["id", "depth", "parent_id", "frame_id"]);
        let v = |a: i64, b: i64, c: Option<i64>, d: i64| {
            vec![
                Value::Int(a),
                Value::Int(b),
                c.map_or(Value::Null, Value::Int),
                Value::Int(d),
            ]
        };
        assert_eq!(r.rows, vec![v(0, 0, None, 7), v(1, 1, Some(0), 8)]);
        assert!(
            tp.query("SELECT * FROM experimental_ancestor_stack_profile_callsite(3)")
                .is_err()
        );
    }
}
