//! The searches of `graphs.search`: which nodes a depth-first or
//! breadth-first walk reaches from start nodes, each with the node it was
//! first reached from, and the weight-bounded walk of
//! `graph_reachable_weight_bounded_dfs!`. A node's edges are followed in
//! the order the edges came; node ids are any integers (kept in a map, so
//! a sparse id costs no memory). An edge whose destination is NULL only
//! says that its source is a node.

use std::collections::HashMap;

use super::error::GraphError;
use super::rows::{Rows, int};

/// A directed graph over integer node ids.
#[derive(Debug, Default, Clone)]
pub(crate) struct Graph {
    index: HashMap<i64, usize>,
    /// Each node's id, by index.
    pub ids: Vec<i64>,
    /// Each node's edges in their order: (destination index, weight).
    pub out: Vec<Vec<(usize, i64)>>,
}

impl Graph {
    /// The index of node `id`, added when new.
    pub fn node(&mut self, id: i64) -> usize {
        if let Some(&i) = self.index.get(&id) {
            return i;
        }
        let i = self.ids.len();
        self.index.insert(id, i);
        self.ids.push(id);
        self.out.push(Vec::new());
        i
    }

    /// The index of node `id`, if it is one.
    pub fn find(&self, id: i64) -> Option<usize> {
        self.index.get(&id).copied()
    }

    /// The graph of edge rows (source, destination[, weight]); a row whose
    /// source is NULL is skipped, a NULL weight is 0.
    pub fn from_edges(rows: &Rows, weighted: bool) -> Result<Graph, GraphError> {
        let needed = if weighted { 3 } else { 2 };
        let mut g = Graph::default();
        if rows.values.is_empty() {
            return Ok(g);
        }
        if rows.arity < needed {
            return Err(GraphError::Columns {
                what: "the graph",
                needed,
                given: rows.arity,
            });
        }
        for r in rows.iter() {
            let Some(src) = int(r.first(), "source_node_id")? else {
                continue;
            };
            let s = g.node(src);
            let Some(dst) = int(r.get(1), "dest_node_id")? else {
                continue;
            };
            let w = if weighted {
                int(r.get(2), "edge_weight")?.unwrap_or(0)
            } else {
                0
            };
            let d = g.node(dst);
            if let Some(edges) = g.out.get_mut(s) {
                edges.push((d, w));
            }
        }
        Ok(g)
    }

    fn edges(&self, v: usize) -> &[(usize, i64)] {
        self.out.get(v).map_or(&[], Vec::as_slice)
    }
}

/// The start ids of a one-column rows argument (NULLs skipped).
pub(crate) fn start_ids(rows: &Rows) -> Result<Vec<i64>, GraphError> {
    rows.iter()
        .filter_map(|r| int(r.first(), "node_id").transpose())
        .collect()
}

/// A node reached and the node it was reached from.
pub(crate) type Reached = (i64, Option<i64>);

/// Depth-first: a stack of every start (the last on top), each node taken
/// when popped the first time, its edges pushed so that the first edge is
/// walked first.
pub(crate) fn dfs(mut g: Graph, starts: &[i64]) -> Vec<Reached> {
    let mut stack: Vec<(usize, Option<usize>)> =
        starts.iter().map(|&s| (g.node(s), None)).collect();
    let mut seen = vec![false; g.ids.len()];
    let mut out = Vec::new();
    while let Some((v, parent)) = stack.pop() {
        match seen.get_mut(v) {
            Some(s) if !*s => *s = true,
            _ => continue,
        }
        out.push((g.ids[v], parent.map(|p| g.ids[p])));
        stack.extend(g.edges(v).iter().rev().map(|&(d, _)| (d, Some(v))));
    }
    out
}

/// Breadth-first: the starts in order (each once), then every node in the
/// order it is first reached.
pub(crate) fn bfs(mut g: Graph, starts: &[i64]) -> Vec<Reached> {
    let starts: Vec<usize> = starts.iter().map(|&s| g.node(s)).collect();
    let mut seen = vec![false; g.ids.len()];
    let mut queue = std::collections::VecDeque::new();
    for s in starts {
        if let Some(x) = seen.get_mut(s).filter(|x| !**x) {
            *x = true;
            queue.push_back((s, None));
        }
    }
    let mut out = Vec::new();
    while let Some((v, parent)) = queue.pop_front() {
        out.push((g.ids[v], parent.map(|p: usize| g.ids[p])));
        for &(d, _) in g.edges(v) {
            if let Some(x) = seen.get_mut(d).filter(|x| !**x) {
                *x = true;
                queue.push_back((d, Some(v)));
            }
        }
    }
    out
}

/// A node reached from a root by the weight-bounded walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BoundedReach {
    /// The root the walk started from.
    pub root: i64,
    /// The node.
    pub node: i64,
    /// The node it was reached from (None for the root).
    pub parent: Option<i64>,
}

/// From each root in turn, a depth-first walk that adds up the weights of
/// the edges it takes, in the order it takes them; it stops once the sum
/// passes the root's target weight. With `floor` the node that passed it
/// is kept, without it that node is not. An empty graph reaches nothing.
pub(crate) fn weight_bounded_dfs(
    mut g: Graph,
    roots: &[(i64, i64)],
    floor: bool,
) -> Vec<BoundedReach> {
    let mut out = Vec::new();
    if g.ids.is_empty() {
        return out;
    }
    let roots: Vec<(usize, i64)> = roots.iter().map(|&(r, w)| (g.node(r), w)).collect();
    let mut seen = vec![false; g.ids.len()];
    let mut stack: Vec<(usize, i64, Option<usize>)> = Vec::new();
    for (root, target) in roots {
        seen.iter_mut().for_each(|s| *s = false);
        stack.clear();
        stack.push((root, 0, None));
        let mut total: i64 = 0;
        while let Some((v, w, parent)) = stack.pop() {
            match seen.get_mut(v) {
                Some(s) if !*s => *s = true,
                _ => continue,
            }
            total = total.saturating_add(w);
            if !floor && total > target {
                break;
            }
            out.push(BoundedReach {
                root: g.ids[root],
                node: g.ids[v],
                parent: parent.map(|p| g.ids[p]),
            });
            if total > target {
                break;
            }
            stack.extend(g.edges(v).iter().rev().map(|&(d, w)| (d, w, Some(v))));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(i64, Option<i64>)]) -> Graph {
        let mut g = Graph::default();
        for &(s, d) in edges {
            let s = g.node(s);
            if let Some(d) = d {
                let d = g.node(d);
                g.out[s].push((d, 0));
            }
        }
        g
    }

    /// Lengauer and Tarjan's example graph, letters as ids.
    fn lt() -> Graph {
        let e = [
            "RA", "RB", "RC", "AD", "BA", "BD", "BE", "CF", "CG", "DL", "EH", "FI", "GI", "GJ",
            "HE", "HK", "IK", "JI", "KI", "KR", "LH",
        ];
        let b = |c: u8| i64::from(c);
        graph(&e.map(|s| (b(s.as_bytes()[0]), Some(b(s.as_bytes()[1])))))
    }

    fn letters(mut r: Vec<Reached>) -> Vec<String> {
        r.sort();
        let c = |x: i64| char::from(u8::try_from(x).unwrap_or(b'?'));
        r.iter()
            .map(|(n, p)| format!("{}{}", c(*n), p.map_or('-', c)))
            .collect()
    }

    #[test]
    fn dfs_walks_the_first_edge_first_and_bfs_level_by_level() {
        let r = i64::from(b'R');
        assert_eq!(
            letters(dfs(lt(), &[r])),
            [
                "AR", "BR", "CR", "DA", "EH", "FC", "GC", "HL", "IK", "JG", "KH", "LD", "R-"
            ]
        );
        assert_eq!(
            letters(bfs(lt(), &[r])),
            [
                "AR", "BR", "CR", "DA", "EB", "FC", "GC", "HE", "IF", "JG", "KH", "LD", "R-"
            ]
        );
    }

    #[test]
    fn starts_outside_the_graph_are_reached_alone_and_null_edges_link_nothing() {
        let g = graph(&[(0, Some(1))]);
        assert_eq!(dfs(g.clone(), &[99]), [(99, None)]);
        assert_eq!(
            bfs(g.clone(), &[0, 99, 0]),
            [(0, None), (99, None), (1, Some(0))]
        );
        // The last start is walked first.
        assert_eq!(dfs(g, &[0, 99]), [(99, None), (0, None), (1, Some(0))]);
        let g = graph(&[(2, Some(1)), (1, None), (0, None)]);
        assert_eq!(dfs(g, &[2]), [(2, None), (1, Some(2))]);
        assert_eq!(dfs(Graph::default(), &[]), []);
        // A self loop is walked once.
        assert_eq!(
            dfs(graph(&[(5, Some(10)), (10, Some(10))]), &[5]),
            [(5, None), (10, Some(5))]
        );
    }

    #[test]
    fn the_bounded_walk_stops_past_the_target_keeping_the_last_node_with_floor() {
        let mut g = Graph::default();
        for (s, d, w) in [
            (0, 0, 0),
            (1, 2, 1),
            (1, 3, 1),
            (3, 4, 1),
            (3, 5, 0),
            (5, 6, 0),
        ] {
            let (s, d) = (g.node(s), g.node(d));
            g.out[s].push((d, w));
        }
        let roots = [(0, 0), (1, 2), (3, 1), (2, 0)];
        let rows = |floor| {
            weight_bounded_dfs(g.clone(), &roots, floor)
                .iter()
                .map(|b| (b.root, b.node, b.parent))
                .collect::<Vec<_>>()
        };
        let mut floor = vec![
            (0, 0, None),
            (1, 1, None),
            (1, 2, Some(1)),
            (1, 3, Some(1)),
            (1, 4, Some(3)),
            (3, 3, None),
            (3, 4, Some(3)),
            (3, 5, Some(3)),
            (3, 6, Some(5)),
            (2, 2, None),
        ];
        assert_eq!(rows(true), floor);
        floor.remove(4);
        assert_eq!(rows(false), floor);
        assert_eq!(weight_bounded_dfs(Graph::default(), &roots, true), []);
    }
}
