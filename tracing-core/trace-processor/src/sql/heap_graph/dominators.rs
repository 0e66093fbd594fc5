//! Which object keeps which alive: the dominator tree of the heap graph
//! (upstream's `_raw_heap_graph_dominator_tree` and
//! `heap_graph_dominator_tree`). A super-root points at every root; an
//! object's immediate dominator is the last object every path from the
//! super-root to it passes through (none when that is the super-root).
//! Only reachable objects' references count. Computed with the iterative
//! algorithm of Cooper, Harvey and Kennedy over a reverse postorder, then
//! summarised per object: the objects and bytes it dominates and its depth
//! (roots' children of the super-root are at depth 1).

use super::graph::ObjectGraph;
use crate::sql::immediate_dominators::{UNREACHED, immediate_dominators};

/// Each object's immediate dominator: `Some(None)` when the super-root
/// dominates it alone, `None` when the super-root does not reach it.
pub(crate) fn dominators(g: &ObjectGraph) -> Vec<Option<Option<usize>>> {
    let n = g.len();
    let root = n;
    let succ = |v: usize| -> Vec<usize> {
        if v == root {
            (0..n).filter(|&i| g.root_type[i].is_some()).collect()
        } else if g.reachable[v] {
            g.edges[v].clone()
        } else {
            Vec::new()
        }
    };
    let idom = immediate_dominators(n + 1, root, succ);
    (0..n)
        .map(|v| match idom[v] {
            UNREACHED => None,
            d if d == root => Some(None),
            d => Some(Some(d)),
        })
        .collect()
}

/// One object of the dominator tree, summarised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dominated {
    /// The object.
    pub id: usize,
    /// Its immediate dominator (None: a root of the tree).
    pub idom: Option<usize>,
    /// Objects it dominates, itself included.
    pub count: i64,
    /// Their bytes.
    pub size: i64,
    /// Their native bytes.
    pub native_size: i64,
    /// Depth in the tree, 1 for its roots.
    pub depth: i64,
}

/// Whether each object of the dominator tree is the first of its class on
/// its path from the tree's root (no dominator of it has its class): the
/// objects whose dominated totals a per-class sum may add without counting
/// an object twice. None for objects outside the tree.
pub(crate) fn first_of_class(g: &ObjectGraph, idom: &[Option<Option<usize>>]) -> Vec<Option<bool>> {
    let n = g.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut stack = Vec::new();
    for (v, d) in idom.iter().enumerate() {
        match d {
            Some(Some(p)) => children[*p].push(v),
            Some(None) => stack.push((v, false)),
            None => {}
        }
    }
    let mut on_path: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    let mut out = vec![None; n];
    while let Some((v, leaving)) = stack.pop() {
        let t = g.type_id[v];
        if leaving {
            if let Some(c) = on_path.get_mut(&t) {
                *c = c.saturating_sub(1);
            }
            continue;
        }
        let seen = on_path.get(&t).copied().unwrap_or(0);
        out[v] = Some(seen == 0);
        *on_path.entry(t).or_insert(0) += 1;
        stack.push((v, true));
        for &c in &children[v] {
            stack.push((c, false));
        }
    }
    out
}

/// The dominator tree's objects by id, with what each dominates.
pub(crate) fn summary(g: &ObjectGraph, idom: &[Option<Option<usize>>]) -> Vec<Dominated> {
    let n = g.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut tops = Vec::new();
    for (v, d) in idom.iter().enumerate() {
        match d {
            Some(Some(p)) => children[*p].push(v),
            Some(None) => tops.push(v),
            None => {}
        }
    }
    let mut depth = vec![0i64; n];
    let mut walk = Vec::new();
    let mut stack: Vec<usize> = tops.clone();
    for &t in &tops {
        depth[t] = 1;
    }
    while let Some(v) = stack.pop() {
        walk.push(v);
        for &c in &children[v] {
            depth[c] = depth[v] + 1;
            stack.push(c);
        }
    }
    let mut count = vec![0i64; n];
    let mut size = vec![0i64; n];
    let mut native = vec![0i64; n];
    for &v in walk.iter().rev() {
        count[v] += 1;
        size[v] += g.self_size[v];
        native[v] += g.native_size[v];
        if let Some(Some(p)) = idom[v] {
            count[p] += count[v];
            size[p] += size[v];
            native[p] += native[v];
        }
    }
    (0..n)
        .filter_map(|v| {
            let d = idom[v]?;
            Some(Dominated {
                id: v,
                idom: d,
                count: count[v],
                size: size[v],
                native_size: native[v],
                depth: depth[v],
            })
        })
        .collect()
}
