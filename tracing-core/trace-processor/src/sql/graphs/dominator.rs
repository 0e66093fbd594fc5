//! `graph_dominator_tree!`'s operator: each node's immediate dominator in
//! a flow graph entered at a root, the last node other than itself that
//! every path from the root to it passes through. Computed with the
//! iterative algorithm of Cooper, Harvey and Kennedy over a reverse
//! postorder; the rows come in the preorder of the depth-first walk that
//! takes a node's edges in their order (as `graph_reachable_dfs!`'s), the
//! root first with no dominator. Nodes the root does not reach have no
//! row.

use super::error::GraphError;
use super::search::Graph;
use crate::sql::immediate_dominators::{UNREACHED, immediate_dominators};

/// The (node, immediate dominator) rows of `g` entered at `root`. An empty
/// graph has none; a root that is no node is an error unless its id lies
/// within the graph's ids (then it reaches only itself).
pub(crate) fn dominator_tree(g: &Graph, root: i64) -> Result<Vec<(i64, Option<i64>)>, GraphError> {
    if g.ids.is_empty() {
        return Ok(Vec::new());
    }
    let Some(r) = g.find(root) else {
        let max = g.ids.iter().copied().max().unwrap_or(-1);
        return if (0..=max).contains(&root) {
            Ok(vec![(root, None)])
        } else {
            Err(GraphError::RootNotInGraph)
        };
    };
    let n = g.ids.len();
    let succ = |v: usize| g.out.get(v).map_or(&[][..], Vec::as_slice);

    // Preorder (the rows' order), popping a stack of edges pushed in reverse.
    let mut pre = Vec::new();
    let mut seen = vec![false; n];
    let mut stack = vec![r];
    while let Some(v) = stack.pop() {
        if std::mem::replace(&mut seen[v], true) {
            continue;
        }
        pre.push(v);
        stack.extend(succ(v).iter().rev().map(|&(d, _)| d));
    }

    let idom = immediate_dominators(n, r, |v| succ(v).iter().map(|&(d, _)| d));
    Ok(pre
        .into_iter()
        .map(|v| {
            let d = (v != r && idom[v] != UNREACHED).then(|| g.ids[idom[v]]);
            (g.ids[v], d)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(i64, i64)]) -> Graph {
        let mut g = Graph::default();
        for &(s, d) in edges {
            let (s, d) = (g.node(s), g.node(d));
            g.out[s].push((d, 0));
        }
        g
    }

    #[test]
    fn lengauer_tarjans_example_has_its_published_dominators() {
        let e = [
            "RA", "RB", "RC", "AD", "BA", "BD", "BE", "CF", "CG", "DL", "EH", "FI", "GI", "GJ",
            "HE", "HK", "IK", "JI", "KI", "KR", "LH",
        ];
        let b = |s: &str, i: usize| i64::from(s.as_bytes()[i]);
        let g = graph(&e.map(|s| (b(s, 0), b(s, 1))));
        let rows = dominator_tree(&g, i64::from(b'R')).unwrap();
        let c = |x: i64| char::from(u8::try_from(x).unwrap_or(b'?'));
        let got: Vec<String> = rows
            .iter()
            .map(|(n, d)| format!("{}{}", c(*n), d.map_or('-', c)))
            .collect();
        // Preorder of the walk, each with its immediate dominator.
        assert_eq!(
            got,
            [
                "R-", "AR", "DR", "LD", "HR", "ER", "KR", "IR", "BR", "CR", "FC", "GC", "JG"
            ]
        );
    }

    #[test]
    fn unreached_nodes_have_no_row_and_a_foreign_root_is_an_error() {
        let g = graph(&[(1, 2), (2, 3), (1, 3), (7, 8)]);
        assert_eq!(
            dominator_tree(&g, 1).unwrap(),
            [(1, None), (2, Some(1)), (3, Some(1))]
        );
        assert_eq!(dominator_tree(&g, 5).unwrap(), [(5, None)]);
        assert_eq!(dominator_tree(&g, 50), Err(GraphError::RootNotInGraph));
        assert_eq!(dominator_tree(&Graph::default(), 1).unwrap(), []);
    }
}
