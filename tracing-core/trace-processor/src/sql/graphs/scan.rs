//! The scans of `graphs.scan`, a prefix sum over a graph's edges whose
//! step is the caller's SQL. Both start from rows (id, then the scan's
//! columns) and pass each row along every edge of its node, as rows of
//! the edge's destination with the row's values; the caller's query,
//! reading those rows as `$table`, answers the destinations' own rows.
//! `_graph_scan!` runs the query on every step's rows until a step passes
//! nothing on; `_graph_aggregating_scan!` computes a node once, after
//! every row that reaches it: nodes are run in the order of their height
//! (the longest path below them), highest first, one query per height.
//! The result is every row: the first ones, then each query's, in order.
//! The query runs on the calling connection (`perfetto_sql/nested.rs`),
//! reading a step's rows from `__intrinsic_graph_scan_rows(key)`, a table
//! function over rows this file keeps by key while the query runs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rusqlite::types::Value;

use crate::sql::perfetto_sql::nested::NestedDb;
use crate::sql::prelude::table_function::TableFn;

use super::error::GraphError;
use super::rows::{Rows, int};
use super::search::Graph;

/// The step rows' table function.
pub(crate) const STEP_ROWS: &str = "__intrinsic_graph_scan_rows";

/// The most columns a scan carries (id included).
pub(crate) const MAX_COLUMNS: usize = 8;

/// A scan that passes rows on this many times has no end.
const MAX_STEPS: usize = 10_000_000;

/// A row: id, then the scan's columns.
type Row = Vec<Value>;

/// The rows each running query reads, by key.
fn registry() -> &'static Mutex<HashMap<i64, Arc<Vec<Row>>>> {
    static STEPS: OnceLock<Mutex<HashMap<i64, Arc<Vec<Row>>>>> = OnceLock::new();
    STEPS.get_or_init(Mutex::default)
}

/// Rows kept under a key while a query reads them; dropped, they go.
struct Lent(i64);

impl Lent {
    fn new(rows: Vec<Row>) -> Lent {
        static NEXT: AtomicI64 = AtomicI64::new(1);
        let key = NEXT.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut m) = registry().lock() {
            m.insert(key, Arc::new(rows));
        }
        Lent(key)
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Ok(mut m) = registry().lock() {
            m.remove(&self.0);
        }
    }
}

/// `__intrinsic_graph_scan_rows(key)`: the rows lent under `key`, as
/// columns c0 (the id) to c7.
pub(crate) struct StepRows;

impl TableFn for StepRows {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"]
            .into_iter()
            .map(|c| (c, ""))
            .collect()
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["key"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let Some(Value::Integer(key)) = args.first() else {
            return Ok(Vec::new());
        };
        let rows = registry()
            .lock()
            .map_err(|_| "graph scan: rows unavailable".to_owned())?
            .get(key)
            .cloned();
        Ok(rows.map(|r| r.as_ref().clone()).unwrap_or_default())
    }
}

/// Which scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `_graph_scan!`.
    Steps,
    /// `_graph_aggregating_scan!`.
    Aggregating,
}

impl Kind {
    fn operator(self) -> &'static str {
        match self {
            Kind::Steps => "graph_scan",
            Kind::Aggregating => "graph_aggregating_scan",
        }
    }
}

/// A scan's inputs.
pub(crate) struct Scan<'a> {
    /// Which scan.
    pub kind: Kind,
    /// The edges.
    pub graph: Graph,
    /// The first rows (id, then the columns).
    pub init: &'a Rows,
    /// The step's SQL, reading `$table`.
    pub sql: &'a str,
    /// The column list as written, `(a, b)`.
    pub list: &'a str,
}

/// The names of a scan's columns: `id`, then the list's.
fn names(list: &str) -> Vec<String> {
    let inner = list.trim().trim_start_matches('(').trim_end_matches(')');
    std::iter::once("id".to_owned())
        .chain(
            inner
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        )
        .collect()
}

impl Scan<'_> {
    /// The scan's rows, each `id` then the columns; the step query runs on
    /// `db`.
    pub fn run(mut self, db: NestedDb) -> Result<Vec<Row>, GraphError> {
        let cols = names(self.list);
        let op = self.kind.operator();
        if self.init.values.is_empty() {
            return Ok(Vec::new());
        }
        if cols.len() != self.init.arity || cols.len() > MAX_COLUMNS {
            return Err(GraphError::ColumnMismatch {
                operator: op,
                list: cols.join(","),
                init: format!("{} columns", self.init.arity),
            });
        }
        let select: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| format!("c{i} AS {c}"))
            .collect();
        let (kind, step_sql) = (self.kind, self.sql);
        let query = |rows: Vec<Row>| -> Result<Vec<Row>, GraphError> {
            let lent = Lent::new(rows);
            let table = format!(
                "(SELECT {} FROM {STEP_ROWS}({}))",
                select.join(", "),
                lent.0
            );
            let sql = format!("SELECT * FROM {}", step_sql.replace("$table", &table));
            let got = db
                .query(&sql, &[], usize::MAX - 1)
                .map_err(|message| GraphError::Step {
                    operator: op,
                    message,
                })?;
            if kind == Kind::Aggregating && got.columns != cols {
                return Err(GraphError::Step {
                    operator: op,
                    message: "aggregate SQL columns do not match init columns".to_owned(),
                });
            }
            Ok(got.rows)
        };
        let init: Vec<Row> = self.init.iter().map(<[Value]>::to_vec).collect();
        let mut nodes = Vec::with_capacity(init.len());
        for r in &init {
            let id = int(r.first(), "id")?.unwrap_or(0);
            nodes.push(self.graph.node(id));
        }
        match self.kind {
            Kind::Steps => self.steps(init, &nodes, query),
            Kind::Aggregating => self.aggregating(init, &nodes, query),
        }
    }

    /// Each of `row`'s node's edges as a row of its destination.
    fn pass_on(&self, v: usize, row: &[Value], mut to: impl FnMut(usize, Row)) {
        for &(d, _) in self.graph.out.get(v).map_or(&[][..], Vec::as_slice) {
            let mut r = Vec::with_capacity(row.len());
            r.push(Value::Integer(self.graph.ids[d]));
            r.extend(row.iter().skip(1).cloned());
            to(d, r);
        }
    }

    fn steps(
        &mut self,
        init: Vec<Row>,
        nodes: &[usize],
        query: impl Fn(Vec<Row>) -> Result<Vec<Row>, GraphError>,
    ) -> Result<Vec<Row>, GraphError> {
        let mut step = Vec::new();
        for (r, &v) in init.iter().zip(nodes) {
            self.pass_on(v, r, |_, row| step.push(row));
        }
        let mut out = init;
        let mut n = 0;
        while !step.is_empty() {
            n += 1;
            if n > MAX_STEPS {
                return Err(GraphError::Step {
                    operator: Kind::Steps.operator(),
                    message: "the scan does not end (a cycle?)".to_owned(),
                });
            }
            let got = query(std::mem::take(&mut step))?;
            for r in &got {
                let id = int(r.first(), "id")?.unwrap_or(0);
                let v = self.graph.node(id);
                self.pass_on(v, r, |_, row| step.push(row));
            }
            out.extend(got);
        }
        Ok(out)
    }

    /// Each node's height below the first rows' nodes: 0 for a node
    /// without edges, else one more than its highest destination's.
    fn heights(&self, nodes: &[usize]) -> (Vec<usize>, usize) {
        let n = self.graph.ids.len();
        let mut height = vec![0usize; n];
        // 0 unvisited, 1 waiting for its destinations, 2 done.
        let mut state = vec![0u8; n];
        let edges = |v: usize| self.graph.out.get(v).map_or(&[][..], Vec::as_slice);
        let mut stack: Vec<usize> = nodes
            .iter()
            .flat_map(|&v| edges(v).iter().map(|&(d, _)| d))
            .collect();
        let mut max = 0;
        while let Some(&v) = stack.last() {
            match state[v] {
                0 => {
                    state[v] = 1;
                    stack.extend(edges(v).iter().map(|&(d, _)| d));
                }
                1 => {
                    stack.pop();
                    state[v] = 2;
                    let h = edges(v)
                        .iter()
                        .filter(|&&(d, _)| state[d] == 2)
                        .map(|&(d, _)| height[d] + 1)
                        .max()
                        .unwrap_or(0);
                    height[v] = h;
                    max = max.max(h);
                }
                _ => {
                    stack.pop();
                }
            }
        }
        (height, max)
    }

    fn aggregating(
        &mut self,
        init: Vec<Row>,
        nodes: &[usize],
        query: impl Fn(Vec<Row>) -> Result<Vec<Row>, GraphError>,
    ) -> Result<Vec<Row>, GraphError> {
        let (height, max) = self.heights(nodes);
        let mut by_height: Vec<Vec<Row>> = vec![Vec::new(); max + 1];
        for (r, &v) in init.iter().zip(nodes) {
            self.pass_on(v, r, |d, row| {
                if let Some(t) = by_height.get_mut(height.get(d).copied().unwrap_or(0)) {
                    t.push(row);
                }
            });
        }
        let mut out = init;
        for h in (0..=max).rev() {
            let rows = by_height.get_mut(h).map(std::mem::take).unwrap_or_default();
            let got = query(rows)?;
            for r in &got {
                let id = int(r.first(), "id")?.unwrap_or(0);
                let Some(v) = self.graph.find(id) else {
                    continue;
                };
                self.pass_on(v, r, |d, row| {
                    if let Some(t) = by_height.get_mut(height.get(d).copied().unwrap_or(0)) {
                        t.push(row);
                    }
                });
            }
            out.extend(got);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_list_names_id_then_its_columns() {
        assert_eq!(names("(a, b)"), ["id", "a", "b"]);
        assert_eq!(names(" ( x ) "), ["id", "x"]);
        assert_eq!(names("()"), ["id"]);
    }
}
