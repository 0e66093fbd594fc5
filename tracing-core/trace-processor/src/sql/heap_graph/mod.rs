//! The heap graph's graph operators, which the `android.memory.heap_graph.*`
//! modules are written over: `__intrinsic_heap_graph_min_depth_tree()`
//! (each object's parent on a shortest path from the roots),
//! `__intrinsic_heap_graph_dominator_tree()` (each object's immediate
//! dominator, with what it dominates and its depth) and
//! `__intrinsic_heap_graph_dominator_first_of_class()` (whether no
//! dominator of an object has its class), `__intrinsic_heap_graph_class_tree(tree)` (either tree, `'min_depth'`
//! or `'dominator'`, folded into classes), `__intrinsic_heap_graph_object_tree_totals()`
//! (what each object holds below it in the shortest-path tree),
//! `__intrinsic_heap_graph_path_hashes(tree)` (each object's class path key in either tree)
//! and `__intrinsic_heap_graph_tree_path_hashes(rows)` (the same for any tree given as rows). One file per step: `graph.rs`
//! (the objects and references), `dominators.rs`, `class_tree.rs`, `object_tree.rs`.

mod class_tree;
mod dominators;
pub(crate) mod graph;
mod object_tree;

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Value;

use super::graphs::rows as graph_rows;
use super::prelude::table_function::{self, TableFn};
use crate::column_store::table::Table;
use graph::ObjectGraph;

/// The tables the operators read.
#[derive(Clone)]
struct Tables {
    objects: Arc<Table>,
    classes: Arc<Table>,
    references: Arc<Table>,
}

impl Tables {
    fn graph(&self) -> ObjectGraph {
        ObjectGraph::read(&self.objects, &self.classes, &self.references)
    }
}

fn id(v: usize) -> Value {
    Value::Integer(i64::try_from(v).unwrap_or(i64::MAX))
}

fn opt_id(v: Option<usize>) -> Value {
    v.map_or(Value::Null, id)
}

fn opt_text(v: Option<String>) -> Value {
    v.map_or(Value::Null, Value::Text)
}

/// `__intrinsic_heap_graph_min_depth_tree()`.
struct MinDepthTree(Tables);

impl TableFn for MinDepthTree {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![("id", "BIGINT"), ("parent_id", "BIGINT")]
    }

    fn arguments(&self) -> Vec<&'static str> {
        Vec::new()
    }

    fn run(&self, _args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let parent = self.0.graph().min_depth_tree();
        Ok(parent
            .iter()
            .enumerate()
            .filter_map(|(v, p)| Some(vec![id(v), opt_id((*p)?)]))
            .collect())
    }
}

/// `__intrinsic_heap_graph_dominator_tree()`.
struct DominatorTree(Tables);

impl TableFn for DominatorTree {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("id", "BIGINT"),
            ("idom_id", "BIGINT"),
            ("dominated_obj_count", "BIGINT"),
            ("dominated_size_bytes", "BIGINT"),
            ("dominated_native_size_bytes", "BIGINT"),
            ("depth", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        Vec::new()
    }

    fn run(&self, _args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let g = self.0.graph();
        let idom = dominators::dominators(&g);
        Ok(dominators::summary(&g, &idom)
            .into_iter()
            .map(|d| {
                vec![
                    id(d.id),
                    opt_id(d.idom),
                    Value::Integer(d.count),
                    Value::Integer(d.size),
                    Value::Integer(d.native_size),
                    Value::Integer(d.depth),
                ]
            })
            .collect())
    }
}

/// `__intrinsic_heap_graph_dominator_first_of_class()`.
struct FirstOfClass(Tables);

impl TableFn for FirstOfClass {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![("id", "BIGINT"), ("marked", "BIGINT")]
    }

    fn arguments(&self) -> Vec<&'static str> {
        Vec::new()
    }

    fn run(&self, _args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let g = self.0.graph();
        let idom = dominators::dominators(&g);
        Ok(dominators::first_of_class(&g, &idom)
            .into_iter()
            .enumerate()
            .filter_map(|(v, m)| Some(vec![id(v), Value::Integer(i64::from(m?))]))
            .collect())
    }
}

/// `__intrinsic_heap_graph_class_tree(tree)`.
struct ClassTree(Tables);

impl TableFn for ClassTree {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("graph_sample_ts", "BIGINT"),
            ("upid", "BIGINT"),
            ("id", "BIGINT"),
            ("parent_id", "BIGINT"),
            ("name", "TEXT"),
            ("root_type", "TEXT"),
            ("heap_type", "TEXT"),
            ("self_count", "BIGINT"),
            ("self_size", "BIGINT"),
            ("path_hash_stable", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["tree"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let g = self.0.graph();
        let parent = tree_named("__intrinsic_heap_graph_class_tree", &g, args)?;
        Ok(class_tree::class_tree(&g, &parent)
            .into_iter()
            .map(|c| {
                vec![
                    Value::Integer(c.graph_sample_ts),
                    Value::Integer(c.upid),
                    id(c.id),
                    opt_id(c.parent_id),
                    Value::Text(c.name),
                    opt_text(c.root_type),
                    opt_text(c.heap_type),
                    Value::Integer(c.self_count),
                    Value::Integer(c.self_size),
                    Value::Integer(c.path_hash),
                ]
            })
            .collect())
    }
}

/// The tree an operator's `tree` argument names: `'min_depth'` (the
/// shortest-path tree) or `'dominator'`.
fn tree_named(
    what: &str,
    g: &ObjectGraph,
    args: &[Value],
) -> Result<Vec<Option<Option<usize>>>, String> {
    match args.first() {
        Some(Value::Text(t)) if t == "min_depth" => Ok(g.min_depth_tree()),
        Some(Value::Text(t)) if t == "dominator" => Ok(dominators::dominators(g)),
        _ => Err(format!("{what}: tree must be 'min_depth' or 'dominator'")),
    }
}

/// `__intrinsic_heap_graph_path_hashes(tree)`.
struct PathHashes(Tables);

impl TableFn for PathHashes {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        PATH_COLUMNS.to_vec()
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["tree"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let g = self.0.graph();
        let parent = tree_named("__intrinsic_heap_graph_path_hashes", &g, args)?;
        Ok(path_rows(&g, &parent))
    }
}

/// The columns of the path-key functions.
const PATH_COLUMNS: [(&str, &str); 3] = [
    ("id", "BIGINT"),
    ("path_hash", "BIGINT"),
    ("parent_path_hash", "BIGINT"),
];

/// The rows of the path-key functions: each object with a key, its key and
/// its parent's, over `parent` (an object's parent in the tree; None for an
/// object outside it).
fn path_rows(g: &ObjectGraph, parent: &[Option<Option<usize>>]) -> Vec<Vec<Value>> {
    class_tree::object_paths(g, parent)
        .into_iter()
        .enumerate()
        .filter_map(|(v, p)| {
            let (path, parent_path) = p?;
            Some(vec![
                id(v),
                Value::Integer(path),
                Value::Integer(parent_path),
            ])
        })
        .collect()
}

/// `__intrinsic_heap_graph_tree_path_hashes(rows)`: the class path keys
/// of any tree of objects, given as `__intrinsic_graph_rows_agg(id,
/// parent_id)` (a NULL parent is a root; an object no root reaches has
/// no key).
struct TreePathHashes(Tables);

impl TableFn for TreePathHashes {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        PATH_COLUMNS.to_vec()
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["tree_rows"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        const NAME: &str = "__intrinsic_heap_graph_tree_path_hashes";
        let given = graph_rows::decode(args.first().unwrap_or(&Value::Null))
            .map_err(|e| format!("{NAME}: {e}"))?;
        if !given.values.is_empty() && given.arity != 2 {
            return Err(format!("{NAME}: each row needs id and parent_id"));
        }
        let g = self.0.graph();
        let n = g.len();
        let object = |v: Option<&Value>, what| -> Result<Option<usize>, String> {
            Ok(graph_rows::int(v, what)
                .map_err(|e| format!("{NAME}: {e}"))?
                .and_then(|x| usize::try_from(x).ok())
                .filter(|x| *x < n))
        };
        let mut parent: Vec<Option<Option<usize>>> = vec![None; n];
        for r in given.iter() {
            let Some(v) = object(r.first(), "id")? else {
                continue;
            };
            parent[v] = match r.get(1) {
                None | Some(Value::Null) => Some(None),
                p => object(p, "parent_id")?.map(Some),
            };
        }
        Ok(path_rows(&g, &parent))
    }
}

/// `__intrinsic_heap_graph_object_tree_totals()`.
struct ObjectTreeTotals(Tables);

impl TableFn for ObjectTreeTotals {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("id", "BIGINT"),
            ("cumulative_size", "BIGINT"),
            ("cumulative_native_size", "BIGINT"),
            ("cumulative_count", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        Vec::new()
    }

    fn run(&self, _args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let g = self.0.graph();
        let parent = g.min_depth_tree();
        Ok(object_tree::object_tree_totals(&g, &parent)
            .into_iter()
            .enumerate()
            .map(|(v, t)| {
                vec![
                    id(v),
                    Value::Integer(t.size),
                    Value::Integer(t.native_size),
                    Value::Integer(t.count),
                ]
            })
            .collect())
    }
}

/// Registers the operators over the heap graph's object, class and
/// reference tables.
pub fn register(
    conn: &Connection,
    objects: Arc<Table>,
    classes: Arc<Table>,
    references: Arc<Table>,
) -> rusqlite::Result<()> {
    let t = Tables {
        objects,
        classes,
        references,
    };
    table_function::register(
        conn,
        "__intrinsic_heap_graph_min_depth_tree",
        Arc::new(MinDepthTree(t.clone())),
    )?;
    table_function::register(
        conn,
        "__intrinsic_heap_graph_dominator_tree",
        Arc::new(DominatorTree(t.clone())),
    )?;
    table_function::register(
        conn,
        "__intrinsic_heap_graph_dominator_first_of_class",
        Arc::new(FirstOfClass(t.clone())),
    )?;
    table_function::register(
        conn,
        "__intrinsic_heap_graph_path_hashes",
        Arc::new(PathHashes(t.clone())),
    )?;
    table_function::register(
        conn,
        "__intrinsic_heap_graph_tree_path_hashes",
        Arc::new(TreePathHashes(t.clone())),
    )?;
    table_function::register(
        conn,
        "__intrinsic_heap_graph_object_tree_totals",
        Arc::new(ObjectTreeTotals(t.clone())),
    )?;
    table_function::register(
        conn,
        "__intrinsic_heap_graph_class_tree",
        Arc::new(ClassTree(t)),
    )
}
