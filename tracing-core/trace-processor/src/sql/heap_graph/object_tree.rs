//! What each object of the shortest-path tree holds below it, as upstream's
//! `_heap_graph_object_tree_aggregation` measures it: its objects'
//! sizes, native sizes and count summed over the object's strict
//! descendants, each column then the larger of that sum and the object's
//! own value (an object with no descendant, or outside the tree, keeps
//! its own). Upstream gets this from an aggregating graph scan up the
//! tree; here it is one pass from the leaves up.

use super::graph::ObjectGraph;

/// One object's totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Totals {
    /// Bytes.
    pub size: i64,
    /// Native bytes.
    pub native_size: i64,
    /// Objects.
    pub count: i64,
}

/// The totals of every object, by id, over the tree `parent` (`Some(None)`
/// a root, `None` not in the tree).
pub(crate) fn object_tree_totals(g: &ObjectGraph, parent: &[Option<Option<usize>>]) -> Vec<Totals> {
    let n = g.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut stack = Vec::new();
    for (v, p) in parent.iter().enumerate().take(n) {
        match p {
            Some(Some(p)) if *p < n => children[*p].push(v),
            Some(None) => stack.push(v),
            _ => {}
        }
    }
    // Parents before their children.
    let mut walk = Vec::with_capacity(n);
    while let Some(v) = stack.pop() {
        walk.push(v);
        stack.extend(children[v].iter().copied());
    }
    // The strict descendants' sums, filled from the leaves up.
    let mut below = vec![
        Totals {
            size: 0,
            native_size: 0,
            count: 0
        };
        n
    ];
    for &v in walk.iter().rev() {
        let mut sum = Totals {
            size: 0,
            native_size: 0,
            count: 0,
        };
        for &c in &children[v] {
            sum.size = sum
                .size
                .wrapping_add(g.self_size[c])
                .wrapping_add(below[c].size);
            sum.native_size = sum
                .native_size
                .wrapping_add(g.native_size[c])
                .wrapping_add(below[c].native_size);
            sum.count = sum.count.wrapping_add(1).wrapping_add(below[c].count);
        }
        below[v] = sum;
    }
    (0..n)
        .map(|v| {
            let own = Totals {
                size: g.self_size[v],
                native_size: g.native_size[v],
                count: 1,
            };
            if children[v].is_empty() {
                own
            } else {
                Totals {
                    size: own.size.max(below[v].size),
                    native_size: own.native_size.max(below[v].native_size),
                    count: own.count.max(below[v].count),
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(sizes: &[(i64, i64)]) -> ObjectGraph {
        let mut g = ObjectGraph::default();
        for &(size, native) in sizes {
            g.self_size.push(size);
            g.native_size.push(native);
            g.edges.push(Vec::new());
        }
        g
    }

    #[test]
    fn a_node_takes_the_larger_of_its_own_value_and_its_descendants_sum() {
        // 0 -> {1, 2}, 1 -> {3}; 4 is outside the tree.
        let g = graph(&[(100, 0), (10, 5), (20, 0), (30, 1), (7, 7)]);
        let parent = [
            Some(None),
            Some(Some(0)),
            Some(Some(0)),
            Some(Some(1)),
            None,
        ];
        let t = object_tree_totals(&g, &parent);
        let sc = |size, native_size, count| Totals {
            size,
            native_size,
            count,
        };
        // 0: descendants 10 + 20 + 30 = 60 < 100 bytes, 6 native, 3 objects.
        assert_eq!(t[0], sc(100, 6, 3));
        // 1: its one descendant, 30 bytes and 1 native byte, against its own 10 and 5.
        assert_eq!(t[1], sc(30, 5, 1));
        assert_eq!(t[2], sc(20, 0, 1));
        assert_eq!(t[3], sc(30, 1, 1));
        assert_eq!(t[4], sc(7, 7, 1));
    }
}
