//! Immediate dominators in a graph entered at a root, for both the heap
//! graph's dominator tree and `graph_dominator_tree!`: the iterative
//! algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast Dominance
//! Algorithm") over the reverse postorder of a depth-first walk from the
//! root, made without recursion so that a deep graph cannot overflow the
//! stack.

/// What [`immediate_dominators`] gives a node the root does not reach.
pub(crate) const UNREACHED: usize = usize::MAX;

/// Each node's immediate dominator among nodes `0..n` entered at `root`
/// (the root is its own; [`UNREACHED`] for a node the walk never meets).
/// `succ(v)` gives `v`'s successors in the order the walk takes them.
pub(crate) fn immediate_dominators<I>(
    n: usize,
    root: usize,
    succ: impl Fn(usize) -> I,
) -> Vec<usize>
where
    I: IntoIterator<Item = usize>,
{
    let mut idom = vec![UNREACHED; n];
    if root >= n {
        return idom;
    }
    // Postorder numbers of a depth-first walk, each frame holding the
    // successors it has yet to take.
    let mut post = vec![UNREACHED; n];
    let mut order = Vec::new();
    let mut visited = vec![false; n];
    let mut stack: Vec<(usize, Vec<usize>, usize)> =
        vec![(root, succ(root).into_iter().collect(), 0)];
    visited[root] = true;
    while let Some((v, children, i)) = stack.last_mut() {
        if let Some(&w) = children.get(*i) {
            *i += 1;
            if w < n && !visited[w] {
                visited[w] = true;
                let next = succ(w).into_iter().collect();
                stack.push((w, next, 0));
            }
        } else {
            post[*v] = order.len();
            order.push(*v);
            stack.pop();
        }
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &v in &order {
        for w in succ(v) {
            if w < n && visited[w] {
                preds[w].push(v);
            }
        }
    }
    idom[root] = root;
    let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while post[a] < post[b] {
                a = idom[a];
            }
            while post[b] < post[a] {
                b = idom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in order.iter().rev() {
            if v == root {
                continue;
            }
            let mut new = UNREACHED;
            for &p in &preds[v] {
                if idom[p] == UNREACHED {
                    continue;
                }
                new = if new == UNREACHED {
                    p
                } else {
                    intersect(&idom, p, new)
                };
            }
            if new != UNREACHED && idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    idom
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diamond_and_a_loop_back_are_dominated_by_their_entry() {
        // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 1; 4 is not reached.
        let edges: [&[usize]; 5] = [&[1, 2], &[3], &[3], &[1], &[0]];
        let idom = immediate_dominators(5, 0, |v| edges[v].iter().copied());
        assert_eq!(idom, vec![0, 0, 0, 0, UNREACHED]);
    }

    #[test]
    fn a_chain_is_dominated_link_by_link() {
        let edges: [&[usize]; 4] = [&[1], &[2], &[3], &[]];
        let idom = immediate_dominators(4, 0, |v| edges[v].iter().copied());
        assert_eq!(idom, vec![0, 0, 1, 2]);
    }
}
