//! The native operators of the `graphs.*` modules (their macros are our
//! SQL in `perfetto_sql/modules/graphs_*.sql`), written over edge tables
//! any query gives: `__intrinsic_graph_rows_agg` gathers a table's rows
//! into a value (`rows.rs`) and table functions answer from it: the
//! depth-first, breadth-first and weight-bounded searches (`search.rs`),
//! the dominator tree (`dominator.rs`), the structural partition of a tree
//! by group (`partition.rs`), the two scans, whose step is the caller's
//! SQL run on the same connection (`scan.rs`), and the critical path walk
//! over a wakeup graph (`critical_path.rs`) and a table laid out as a tree
//! (`tree_table.rs`). Typed errors in
//! `error.rs`; end-to-end tests through the modules in `tests.rs`, of the
//! modules written over them (`slices.flow`, `viz.slices`) in
//! `users_tests.rs`, of `android.binder` in `binder_tests.rs` and of
//! `sched.thread_executing_span` in `critical_path_tests.rs`.

mod critical_path;
mod dominator;
mod error;
mod partition;
pub(crate) mod rows;
mod scan;
mod search;
mod tree_table;

#[cfg(test)]
mod binder_tests;
#[cfg(test)]
mod critical_path_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod users_tests;

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Value;

use super::perfetto_sql::nested::NestedDb;
use super::prelude::table_function::{self, TableFn};
use error::GraphError;
use rows::{decode, int};
use search::{Graph, Reached, start_ids};

fn opt(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Integer)
}

fn arg(args: &[Value], i: usize) -> &Value {
    args.get(i).unwrap_or(&Value::Null)
}

fn graph(args: &[Value], weighted: bool) -> Result<Graph, GraphError> {
    Graph::from_edges(&decode(arg(args, 0))?, weighted)
}

fn reached_rows(r: Vec<Reached>) -> Vec<Vec<Value>> {
    r.into_iter()
        .map(|(n, p)| vec![Value::Integer(n), opt(p)])
        .collect()
}

/// Which search a [`Search`] runs.
#[derive(Clone, Copy)]
enum Walk {
    Dfs,
    Bfs,
}

/// `__intrinsic_graph_dfs(graph, starts)` and `__intrinsic_graph_bfs`:
/// rows (node_id, parent_node_id).
struct Search(Walk);

impl TableFn for Search {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![("node_id", "BIGINT"), ("parent_node_id", "BIGINT")]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["graph", "starts"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let go = || -> Result<_, GraphError> {
            let g = graph(args, false)?;
            let starts = start_ids(&decode(arg(args, 1))?)?;
            Ok(match self.0 {
                Walk::Dfs => search::dfs(g, &starts),
                Walk::Bfs => search::bfs(g, &starts),
            })
        };
        go().map(reached_rows).map_err(|e| e.to_string())
    }
}

/// `__intrinsic_graph_weight_bounded_dfs(graph, roots, floor)`: rows
/// (root_node_id, node_id, parent_node_id).
struct WeightBounded;

impl TableFn for WeightBounded {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("root_node_id", "BIGINT"),
            ("node_id", "BIGINT"),
            ("parent_node_id", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["graph", "roots", "is_floor"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let go = || -> Result<_, GraphError> {
            let g = graph(args, true)?;
            let roots = decode(arg(args, 1))?;
            if !roots.values.is_empty() && roots.arity < 2 {
                return Err(GraphError::Columns {
                    what: "the roots",
                    needed: 2,
                    given: roots.arity,
                });
            }
            let roots = roots
                .iter()
                .filter_map(|r| {
                    let id = int(r.first(), "root_node_id").transpose()?;
                    let w = int(r.get(1), "root_target_weight").map(|w| w.unwrap_or(0));
                    Some(id.and_then(|id| Ok((id, w?))))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let floor = match arg(args, 2) {
                Value::Integer(x) => *x != 0,
                Value::Real(x) => *x != 0.0,
                _ => false,
            };
            Ok(search::weight_bounded_dfs(g, &roots, floor))
        };
        go().map(|r| {
            r.into_iter()
                .map(|b| {
                    vec![
                        Value::Integer(b.root),
                        Value::Integer(b.node),
                        opt(b.parent),
                    ]
                })
                .collect()
        })
        .map_err(|e| e.to_string())
    }
}

/// `__intrinsic_graph_dominator_tree(graph, root)`: rows (node_id,
/// dominator_node_id).
struct Dominators;

impl TableFn for Dominators {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![("node_id", "BIGINT"), ("dominator_node_id", "BIGINT")]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["graph", "root"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let go = || -> Result<_, GraphError> {
            let g = graph(args, false)?;
            let root = int(Some(arg(args, 1)), "root_node_id")?.unwrap_or(0);
            dominator::dominator_tree(&g, root)
        };
        go().map(reached_rows).map_err(|e| e.to_string())
    }
}

/// `__intrinsic_graph_partition(tree)`: rows (id, parent_id, group_key).
struct Partition;

impl TableFn for Partition {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("id", "BIGINT"),
            ("parent_id", "BIGINT"),
            ("group_key", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["tree"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let rows = decode(arg(args, 0)).map_err(|e| e.to_string())?;
        partition::partition(&rows)
            .map(|r| {
                r.into_iter()
                    .map(|(i, p, g)| vec![Value::Integer(i), opt(p), Value::Integer(g)])
                    .collect()
            })
            .map_err(|e| e.to_string())
    }
}

/// `__intrinsic_graph_scan(graph, init, step_sql, columns)` and
/// `__intrinsic_graph_aggregating_scan`: rows c0 (the id) to c7.
struct ScanFn {
    kind: scan::Kind,
    db: NestedDb,
}

impl TableFn for ScanFn {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        scan::StepRows.columns()
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["graph", "init", "step_sql", "columns"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let text = |i: usize, what: &str| match arg(args, i) {
            Value::Text(s) => Ok(s.as_str()),
            _ => Err(format!("graph scan: {what} cannot be null")),
        };
        let sql = text(2, "step SQL")?;
        let list = text(3, "column list")?;
        let go = || -> Result<_, GraphError> {
            let init = decode(arg(args, 1))?;
            scan::Scan {
                kind: self.kind,
                graph: graph(args, false)?,
                init: &init,
                sql,
                list,
            }
            .run(self.db)
        };
        go().map_err(|e| e.to_string())
    }
}

/// `__intrinsic_critical_path_walk(graph, roots)`: rows (root_id, depth,
/// ts, dur, blocker_id, blocker_utid, parent_id).
struct CriticalPath;

impl TableFn for CriticalPath {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("root_id", "BIGINT"),
            ("depth", "BIGINT"),
            ("ts", "BIGINT"),
            ("dur", "BIGINT"),
            ("blocker_id", "BIGINT"),
            ("blocker_utid", "BIGINT"),
            ("parent_id", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["graph", "roots"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let go = || -> Result<_, GraphError> {
            let roots = start_ids(&decode(arg(args, 1))?)?;
            critical_path::walk(&decode(arg(args, 0))?, &roots)
        };
        go().map(|r| {
            r.into_iter()
                .map(|b| {
                    [
                        b.root_id,
                        b.depth,
                        b.ts,
                        b.dur,
                        b.blocker_id,
                        b.blocker_utid,
                        b.parent_id,
                    ]
                    .into_iter()
                    .map(Value::Integer)
                    .collect()
                })
                .collect()
        })
        .map_err(|e| e.to_string())
    }
}

/// `__intrinsic_tree_to_table(tree)`: rows c0 (`_tree_id`), c1
/// (`_tree_parent_id`), c2 (id), c3 (parent_id) and c4 to c9 (the
/// columns).
struct TreeTable;

impl TableFn for TreeTable {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"]
            .into_iter()
            .map(|c| (c, ""))
            .collect()
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["tree"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        decode(arg(args, 0))
            .and_then(|rows| tree_table::tree_rows(&rows))
            .map_err(|e| e.to_string())
    }
}

/// Registers the aggregate and the operators on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    rows::register(conn)?;
    // SAFETY: the scans run their queries only from these functions,
    // registered on `conn`, while `conn` runs the calling statement.
    let db = unsafe { NestedDb::of(conn) };
    let ops: [(&str, Arc<dyn TableFn>); 10] = [
        ("__intrinsic_graph_dfs", Arc::new(Search(Walk::Dfs))),
        ("__intrinsic_graph_bfs", Arc::new(Search(Walk::Bfs))),
        (
            "__intrinsic_graph_weight_bounded_dfs",
            Arc::new(WeightBounded),
        ),
        ("__intrinsic_graph_dominator_tree", Arc::new(Dominators)),
        ("__intrinsic_graph_partition", Arc::new(Partition)),
        (
            "__intrinsic_graph_scan",
            Arc::new(ScanFn {
                kind: scan::Kind::Steps,
                db,
            }),
        ),
        (
            "__intrinsic_graph_aggregating_scan",
            Arc::new(ScanFn {
                kind: scan::Kind::Aggregating,
                db,
            }),
        ),
        (scan::STEP_ROWS, Arc::new(scan::StepRows)),
        ("__intrinsic_critical_path_walk", Arc::new(CriticalPath)),
        ("__intrinsic_tree_to_table", Arc::new(TreeTable)),
    ];
    for (name, op) in ops {
        table_function::register(conn, name, op)?;
    }
    Ok(())
}
