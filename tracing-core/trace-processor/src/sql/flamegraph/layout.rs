//! A built flamegraph's presentation geometry, in render order: roots
//! first (the downward and the upward strips each start at x = 0, merged
//! by position, downward first on ties), then breadth-first, each node's
//! children packed left to right from its own x, widest first (ties in
//! node order). A node's width is its cumulative value clamped to zero.

use super::source::NONE;

/// The geometry of every node.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Layout {
    /// Output row -> node.
    pub node: Vec<u32>,
    /// Output row -> its parent's output row ([`NONE`] for a root).
    pub parent_row: Vec<u32>,
    /// Output row -> its x.
    pub x_start: Vec<f64>,
}

/// Lays out nodes with parents `parent`, depths `depth` (its sign tells
/// the halves apart) and widths `width` (already clamped).
pub(crate) fn compute(parent: &[u32], depth: &[i64], width: &[f64]) -> Layout {
    let n = parent.len();
    let w = |i: u32| width.get(i as usize).copied().unwrap_or(0.0);
    let mut by_width: Vec<u32> = (0..n as u32).collect();
    by_width.sort_by(|&a, &b| w(b).total_cmp(&w(a)));
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    let (mut down_roots, mut up_roots) = (Vec::new(), Vec::new());
    for &node in &by_width {
        let p = parent.get(node as usize).copied().unwrap_or(NONE);
        if let Some(c) = children.get_mut(p as usize) {
            c.push(node);
        } else if depth.get(node as usize).copied().unwrap_or(0) >= 0 {
            down_roots.push(node);
        } else {
            up_roots.push(node);
        }
    }
    let mut x = vec![0.0; n];
    for roots in [&down_roots, &up_roots] {
        let mut strip = 0.0;
        for &r in roots.iter() {
            if let Some(v) = x.get_mut(r as usize) {
                *v = strip;
            }
            strip += w(r);
        }
    }
    let xs = |x: &[f64], i: u32| x.get(i as usize).copied().unwrap_or(0.0);
    let mut out = Layout {
        node: Vec::with_capacity(n),
        parent_row: Vec::with_capacity(n),
        x_start: Vec::with_capacity(n),
    };
    let (mut d, mut u) = (0, 0);
    while d < down_roots.len() || u < up_roots.len() {
        let take_down = match (down_roots.get(d), up_roots.get(u)) {
            (Some(&a), Some(&b)) => xs(&x, a) <= xs(&x, b),
            (Some(_), None) => true,
            _ => false,
        };
        let r = if take_down {
            d += 1;
            down_roots.get(d - 1)
        } else {
            u += 1;
            up_roots.get(u - 1)
        };
        if let Some(&r) = r {
            out.node.push(r);
            out.parent_row.push(NONE);
            out.x_start.push(xs(&x, r));
        }
    }
    let mut row = 0;
    while let Some(&node) = out.node.get(row) {
        let mut offset = out.x_start.get(row).copied().unwrap_or(0.0);
        for &c in children.get(node as usize).map_or(&[][..], |v| v) {
            if let Some(v) = x.get_mut(c as usize) {
                *v = offset;
            }
            offset += w(c);
            out.node.push(c);
            out.parent_row.push(row as u32);
            out.x_start.push(xs(&x, c));
        }
        row += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_pack_widest_first_and_strips_start_at_zero() {
        // 0: root (10) with children 1 (3) and 2 (5); 3: upward root (4).
        let l = compute(&[NONE, 0, 0, NONE], &[1, 2, 2, -1], &[10.0, 3.0, 5.0, 4.0]);
        assert_eq!(l.node, vec![0, 3, 2, 1]);
        assert_eq!(l.parent_row, vec![NONE, NONE, 0, 0]);
        assert_eq!(l.x_start, vec![0.0, 0.0, 0.0, 5.0]);
    }
}
