//! `experimental_flamegraph(profile_type, ts, ts_constraint, upid,
//! upid_group, focus_str)`: the prelude's flamegraph of one Java heap
//! dump (`'graph'`). Every object of the dump hangs under the object that
//! reaches it first in a breadth-first walk from the roots (roots by class
//! name, then id; references in the order of the objects they point to;
//! the referent of a weak, finalizer or phantom reference never followed),
//! named by its (deobfuscated) class and root kind, with a `[native]`
//! child for the native bytes it holds; paths of equal names merge
//! top-down (`sql/flamegraph`'s merge) into rows with self and cumulative
//! counts and sizes. A dump without roots whose packets were lost answers
//! one error row, as upstream's; `focus_str` keeps the frames whose name
//! contains it (any case), their ancestors and their descendants, with
//! cumulatives over what is kept. Upstream's errors for bad arguments.

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Value;

use super::table_function::{self, TableFn};
use crate::column_store::table::{Cell, Table};
use crate::sql::flamegraph::resolve::OutColumn;
use crate::sql::flamegraph::source::{Cell as SrcCell, NONE};
use crate::sql::heap_graph::graph::ObjectGraph;

/// The result's columns, in upstream's order (its hidden argument columns
/// `profile_type`, `ts_in`, `ts_constraint`, `upid`, `upid_group` and
/// `focus_str` follow, as the arguments).
const COLUMNS: [(&str, &str); 16] = [
    ("id", "BIGINT"),
    ("ts", "BIGINT"),
    ("depth", "BIGINT"),
    ("name", "TEXT"),
    ("map_name", "TEXT"),
    ("count", "BIGINT"),
    ("cumulative_count", "BIGINT"),
    ("size", "BIGINT"),
    ("cumulative_size", "BIGINT"),
    ("alloc_count", "BIGINT"),
    ("cumulative_alloc_count", "BIGINT"),
    ("alloc_size", "BIGINT"),
    ("cumulative_alloc_size", "BIGINT"),
    ("parent_id", "BIGINT"),
    ("source_file", "TEXT"),
    ("line_number", "BIGINT"),
];

/// The name of the row a truncated dump without roots answers.
const INCOMPLETE: &str = "ERROR: INCOMPLETE GRAPH (try increasing buffer size)";

/// The heap graph's tables.
struct Tables {
    objects: Arc<Table>,
    classes: Arc<Table>,
    references: Arc<Table>,
    graphs: Arc<Table>,
}

/// One output row before ids are given.
#[derive(Debug, Clone)]
struct Node {
    depth: i64,
    name: String,
    map_name: String,
    count: i64,
    cumulative_count: i64,
    size: i64,
    cumulative_size: i64,
    parent: Option<usize>,
}

fn col(t: &Table, name: &str) -> Option<usize> {
    t.columns.iter().position(|c| c.name == name)
}

fn int(t: &Table, row: usize, c: Option<usize>) -> Option<i64> {
    match t.cell(row, c?) {
        Cell::Int(v) => Some(v),
        _ => None,
    }
}

impl Tables {
    /// The dump's flamegraph rows (before focusing).
    fn graph(&self, ts: i64, upid: i64) -> Result<Vec<Node>, String> {
        let g = ObjectGraph::read(&self.objects, &self.classes, &self.references);
        let in_dump = |row: usize| g.upid[row] == upid && g.ts[row] == ts;
        let has_roots = (0..g.len()).any(|row| in_dump(row) && g.root_type[row].is_some());
        if !has_roots {
            let gr = &*self.graphs;
            let (g_upid, g_ts, g_trunc) = (col(gr, "upid"), col(gr, "ts"), col(gr, "truncated"));
            let truncated = (0..gr.len)
                .find(|&row| int(gr, row, g_upid) == Some(upid) && int(gr, row, g_ts) == Some(ts))
                .and_then(|row| int(gr, row, g_trunc))
                .is_some_and(|v| v != 0);
            if !truncated {
                return Err("Failed to build flamegraph".into());
            }
            return Ok(vec![Node {
                depth: 0,
                name: INCOMPLETE.into(),
                map_name: "JAVA".into(),
                count: 1,
                cumulative_count: 1,
                size: 1,
                cumulative_size: 1,
                parent: None,
            }]);
        }
        let parent = g.min_depth_tree();
        // The frames: each reached object of the dump (by id), its native
        // bytes as a child.
        let mut ids = Vec::new();
        let mut parents = Vec::new();
        let mut names = Vec::new();
        let mut sizes = Vec::new();
        let mut natives = Vec::new();
        for (row, up) in parent.iter().enumerate() {
            let Some(up) = up else {
                continue;
            };
            if !in_dump(row) {
                continue;
            }
            let base = &g.class_name[row];
            let name = match &g.root_type[row] {
                Some(root) => format!("{base} [{root}]"),
                None => base.clone(),
            };
            let id = 2 * row as i64;
            ids.push(SrcCell::Int(id));
            parents.push(up.map_or(SrcCell::Null, |p| SrcCell::Int(2 * p as i64)));
            sizes.push(g.self_size[row]);
            if g.native_size[row] != 0 {
                natives.push((id, format!("[native] {name}"), g.native_size[row]));
            }
            names.push(name);
        }
        for (id, name, native) in natives {
            ids.push(SrcCell::Int(id + 1));
            parents.push(SrcCell::Int(id));
            names.push(name);
            sizes.push(native);
        }
        let n = ids.len();
        let column_names: Vec<String> = [
            "id",
            "parent_id",
            "name",
            "value",
            "map_name",
            "count",
            "size",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let columns = vec![
            ids,
            parents,
            names.into_iter().map(SrcCell::Text).collect(),
            sizes.iter().map(|&s| SrcCell::Int(s)).collect(),
            vec![SrcCell::Text("JAVA".into()); n],
            vec![SrcCell::Int(1); n],
            sizes.iter().map(|&s| SrcCell::Int(s)).collect(),
        ];
        let (source, built) = crate::sql::flamegraph::top_down(
            column_names,
            columns,
            vec!["map_name".into()],
            vec!["count".into(), "size".into()],
        )
        .map_err(|e| e.to_string())?;
        let find = |name: &str| built.names.iter().position(|c| c == name);
        let ints = |name: &str| -> Vec<i64> {
            match find(name).and_then(|i| built.columns.get(i)) {
                Some(OutColumn::Int(v)) => v.iter().map(|x| x.unwrap_or(0)).collect(),
                _ => vec![0; built.depth.len()],
            }
        };
        let strs = |name: &str| -> Vec<String> {
            match find(name).and_then(|i| built.columns.get(i)) {
                Some(OutColumn::Str(v)) => v
                    .iter()
                    .map(|x| x.map_or(String::new(), |s| source.string(s).to_owned()))
                    .collect(),
                _ => vec![String::new(); built.depth.len()],
            }
        };
        let (name, map_name) = (strs("name"), strs("map_name"));
        let (count, cumulative_count) = (ints("self_count"), ints("cumulative_count"));
        let (size, cumulative_size) = (ints("self_size"), ints("cumulative_size"));
        Ok((0..built.depth.len())
            .map(|i| Node {
                depth: built.depth[i] - 1,
                name: name[i].clone(),
                map_name: map_name[i].clone(),
                count: count[i],
                cumulative_count: cumulative_count[i],
                size: size[i],
                cumulative_size: cumulative_size[i],
                parent: (built.parent[i] != NONE).then_some(built.parent[i] as usize),
            })
            .collect())
    }
}

/// Keeps the nodes whose name contains `focus` (any case), their
/// ancestors and their descendants; cumulatives over what is kept.
fn focus(nodes: Vec<Node>, focus: &str) -> Vec<Node> {
    if nodes.is_empty() || focus.is_empty() {
        return nodes;
    }
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Out,
        Propagating,
        Ancestor,
    }
    let needle = focus.to_lowercase();
    let mut state = vec![State::Out; nodes.len()];
    for i in 0..nodes.len() {
        if nodes[i].name.to_lowercase().contains(&needle) {
            state[i] = State::Propagating;
            let mut cur = nodes[i].parent;
            while let Some(p) = cur.filter(|&p| p < i) {
                if state[p] != State::Out {
                    break;
                }
                state[p] = State::Ancestor;
                cur = nodes[p].parent;
            }
        } else if nodes[i]
            .parent
            .is_some_and(|p| state.get(p) == Some(&State::Propagating))
        {
            state[i] = State::Propagating;
        }
    }
    let mut cumulative = vec![(0i64, 0i64); nodes.len()];
    for i in (0..nodes.len()).rev() {
        if state[i] == State::Out {
            continue;
        }
        cumulative[i].0 += nodes[i].size;
        cumulative[i].1 += nodes[i].count;
        if let Some(p) = nodes[i].parent.filter(|&p| p < i) {
            let (s, c) = cumulative[i];
            cumulative[p].0 += s;
            cumulative[p].1 += c;
        }
    }
    let mut new_index = vec![None; nodes.len()];
    let mut out = Vec::new();
    for (i, mut n) in nodes.into_iter().enumerate() {
        if state[i] == State::Out {
            continue;
        }
        n.parent = n.parent.and_then(|p| new_index.get(p).copied().flatten());
        n.cumulative_size = cumulative[i].0;
        n.cumulative_count = cumulative[i].1;
        new_index[i] = Some(out.len());
        out.push(n);
    }
    out
}

fn opt_text(v: &Value) -> Result<Option<String>, ()> {
    match v {
        Value::Null => Ok(None),
        Value::Text(t) => Ok(Some(t.clone())),
        _ => Err(()),
    }
}

fn opt_int(v: &Value) -> Result<Option<i64>, ()> {
    match v {
        Value::Null => Ok(None),
        Value::Integer(i) => Ok(Some(*i)),
        _ => Err(()),
    }
}

impl TableFn for Tables {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        COLUMNS.to_vec()
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec![
            "profile_type",
            "ts_in",
            "ts_constraint",
            "upid",
            "upid_group",
            "focus_str",
        ]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
        let err = |m: &str| format!("experimental_flamegraph: {m}");
        let Value::Text(profile_type) = arg(0) else {
            return Err(err("profile_type must be an string"));
        };
        let ts = opt_int(arg(1)).map_err(|_| err("ts must be an integer"))?;
        let ts_constraint = opt_text(arg(2)).map_err(|_| err("ts constraint must be an string"))?;
        let upid = opt_int(arg(3)).map_err(|_| err("upid must be an integer"))?;
        let upid_group = opt_text(arg(4)).map_err(|_| err("upid_group must be an string"))?;
        let focus_str = opt_text(arg(5)).map_err(|_| err("focus_str must be an string"))?;
        if ts.is_none() && ts_constraint.is_none() {
            return Err(err("one of ts and ts_constraints must not be null"));
        }
        if upid.is_none() && upid_group.is_none() {
            return Err(err("one of upid or upid_group must not be null"));
        }
        let nodes = match profile_type.as_str() {
            "graph" => {
                let (Some(ts), Some(upid)) = (ts, upid) else {
                    return Err(err("ts and upid must be present for heap graph"));
                };
                // Upstream reads the upid as unsigned 32 bits.
                self.graph(ts, i64::from(upid as u32))?
            }
            "native" | "perf" => {
                return Err(err(&format!(
                    "profile type {profile_type} is not supported by zerotrace; \
                     use the __intrinsic_flamegraph based modules"
                )));
            }
            other => return Err(err(&format!("Could not recognize profile type: {other}."))),
        };
        let nodes = match &focus_str {
            Some(f) => focus(nodes, f),
            None => nodes,
        };
        let ts = ts.unwrap_or(0);
        Ok(nodes
            .into_iter()
            .enumerate()
            .map(|(id, n)| {
                vec![
                    Value::Integer(id as i64),
                    Value::Integer(ts),
                    Value::Integer(n.depth),
                    Value::Text(n.name),
                    Value::Text(n.map_name),
                    Value::Integer(n.count),
                    Value::Integer(n.cumulative_count),
                    Value::Integer(n.size),
                    Value::Integer(n.cumulative_size),
                    Value::Integer(0),
                    Value::Integer(0),
                    Value::Integer(0),
                    Value::Integer(0),
                    n.parent.map_or(Value::Null, |p| Value::Integer(p as i64)),
                    Value::Null,
                    Value::Null,
                ]
            })
            .collect())
    }
}

/// Registers the operator over the heap graph's tables.
pub fn register(
    conn: &Connection,
    objects: Arc<Table>,
    classes: Arc<Table>,
    references: Arc<Table>,
    graphs: Arc<Table>,
) -> rusqlite::Result<()> {
    table_function::register(
        conn,
        "experimental_flamegraph",
        Arc::new(Tables {
            objects,
            classes,
            references,
            graphs,
        }),
    )
}
