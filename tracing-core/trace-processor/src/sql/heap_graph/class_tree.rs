//! A tree of objects (the shortest-path tree from the roots, or the
//! dominator tree) folded into a tree of classes: an object's path is its
//! parent's when both have the same class name, else a new node under the
//! parent's path keyed by its class and heap (a root's by its dump, class,
//! root kind and heap). Objects of one path are summed (count, bytes), the
//! native bytes they hold become a `[native]` child. Paths are keyed by
//! the same FNV-1a hashes as upstream's `HASH()` of those values, and the
//! nodes are numbered in the order of their keys, as upstream's
//! `_heap_graph_class_tree` and `_heap_graph_dominator_class_tree` are.

use std::collections::BTreeMap;

use super::graph::ObjectGraph;
use crate::sql::string_functions::{FNV_OFFSET, fnv};

/// One part of a hashed key (upstream hashes integers as 8 little-endian
/// bytes and text as its bytes).
enum Part<'a> {
    Int(i64),
    Text(&'a str),
}

fn hash(parts: &[Part<'_>]) -> i64 {
    let mut h = FNV_OFFSET;
    for p in parts {
        h = match p {
            Part::Int(v) => fnv(h, &v.to_le_bytes()),
            Part::Text(t) => fnv(h, t.as_bytes()),
        };
    }
    h as i64
}

/// One node of the class tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassNode {
    /// The dump's time.
    pub graph_sample_ts: i64,
    /// The dump's process.
    pub upid: i64,
    /// The node's id (its rank among the keys).
    pub id: usize,
    /// The parent node.
    pub parent_id: Option<usize>,
    /// The class name (`[native] ` before it for native bytes).
    pub name: String,
    /// The root kind of the path's objects.
    pub root_type: Option<String>,
    /// Their heap (`HEAP_TYPE_NATIVE` for native bytes).
    pub heap_type: Option<String>,
    /// Objects on the path.
    pub self_count: i64,
    /// Their bytes.
    pub self_size: i64,
    /// The path's key.
    pub path_hash: i64,
}

/// Each object's path key and its parent path's key (0 for a root's) in
/// the object tree (`parent[object]`: `Some(None)` a root, `None` not in
/// the tree, which has no path): upstream's `path_hash` and
/// `parent_path_hash` of `_heap_graph_path_hashes`.
pub(crate) fn object_paths(
    g: &ObjectGraph,
    parent: &[Option<Option<usize>>],
) -> Vec<Option<(i64, i64)>> {
    let n = g.len();
    let name_hash: Vec<i64> = (0..n)
        .map(|i| hash(&[Part::Text(&g.class_name[i])]))
        .collect();
    // (path, parent path) per object, parents first.
    let mut path: Vec<Option<(i64, i64)>> = vec![None; n];
    for start in 0..n {
        if parent[start].is_none() || path[start].is_some() {
            continue;
        }
        let mut chain = vec![start];
        while let Some(&v) = chain.last() {
            match parent[v] {
                Some(Some(p)) if path[p].is_none() && chain.len() <= n => chain.push(p),
                _ => break,
            }
        }
        for &v in chain.iter().rev() {
            let heap = g.heap_type[v].as_deref().unwrap_or("");
            path[v] = Some(match parent[v] {
                Some(Some(p)) => {
                    let Some((pp, ppp)) = path[p] else {
                        continue;
                    };
                    if name_hash[p] == name_hash[v] {
                        (pp, ppp)
                    } else {
                        (
                            hash(&[Part::Int(pp), Part::Int(name_hash[v]), Part::Text(heap)]),
                            pp,
                        )
                    }
                }
                _ => (
                    hash(&[
                        Part::Int(g.upid[v]),
                        Part::Int(g.ts[v]),
                        Part::Int(name_hash[v]),
                        Part::Text(g.root_type[v].as_deref().unwrap_or("")),
                        Part::Text(heap),
                    ]),
                    0,
                ),
            });
        }
    }
    path
}

/// Folds the object tree (`parent[object]`: `Some(None)` a root, `None`
/// not in the tree) into its class tree.
pub(crate) fn class_tree(g: &ObjectGraph, parent: &[Option<Option<usize>>]) -> Vec<ClassNode> {
    let path = object_paths(g, parent);
    #[derive(Default)]
    struct Agg {
        ts: i64,
        upid: i64,
        parent: i64,
        name: String,
        root_type: Option<String>,
        heap_type: Option<String>,
        count: i64,
        size: i64,
        native_count: i64,
        native_size: i64,
    }
    let mut by_path: BTreeMap<i64, Agg> = BTreeMap::new();
    for (v, at) in path.iter().enumerate() {
        let Some((p, pp)) = *at else {
            continue;
        };
        let a = by_path.entry(p).or_default();
        a.ts = g.ts[v];
        a.upid = g.upid[v];
        a.parent = pp;
        a.name = g.class_name[v].clone();
        a.root_type = g.root_type[v].clone();
        a.heap_type = g.heap_type[v].clone();
        a.count += 1;
        if g.self_size[v] != -1 {
            a.size += g.self_size[v];
        }
        if g.native_size[v] > 0 {
            a.native_count += 1;
        }
        a.native_size += g.native_size[v];
    }
    let mut rows: Vec<(i64, Agg)> = Vec::new();
    for (&p, a) in &by_path {
        if a.native_size > 0 {
            rows.push((
                hash(&[Part::Int(p), Part::Text("native"), Part::Text("")]),
                Agg {
                    ts: a.ts,
                    upid: a.upid,
                    parent: p,
                    name: format!("[native] {}", a.name),
                    root_type: a.root_type.clone(),
                    heap_type: Some("HEAP_TYPE_NATIVE".into()),
                    count: a.native_count,
                    size: a.native_size,
                    ..Default::default()
                },
            ));
        }
    }
    rows.extend(by_path);
    rows.sort_by_key(|(p, _)| *p);
    let index: BTreeMap<i64, usize> = rows.iter().enumerate().map(|(i, (p, _))| (*p, i)).collect();
    rows.into_iter()
        .enumerate()
        .map(|(id, (p, a))| ClassNode {
            graph_sample_ts: a.ts,
            upid: a.upid,
            id,
            parent_id: index.get(&a.parent).copied().filter(|_| a.parent != 0),
            name: a.name,
            root_type: a.root_type,
            heap_type: a.heap_type,
            self_count: a.count,
            self_size: a.size,
            path_hash: p,
        })
        .collect()
}
