//! The order SurfaceFlinger draws a snapshot's layers in: each layer is
//! drawn among the children of the layer it is relative to (else its
//! parent), siblings by z then by id (the greater id on top), children
//! with a negative z below their parent and the rest above it; the roots
//! (no parent, or -1, and not relative to another layer) are the tree's
//! tops. Layers without an id, or hung under a layer the snapshot does not
//! hold, are not drawn.

use crate::hash::{HashMap, HashSet};

use super::sf_model::Layer;

/// The indices (into `layers`) of the drawn layers, top first.
pub fn top_to_bottom(layers: &[Layer]) -> Vec<usize> {
    // The first layer of each id is the one the tree holds.
    let mut by_id: HashMap<i32, usize> = HashMap::default();
    let mut roots: Vec<i32> = Vec::new();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::default();
    for (i, l) in layers.iter().enumerate() {
        let Some(id) = l.id else {
            continue;
        };
        if l.is_root() && l.z_relative_of <= 0 {
            roots.push(id);
        } else if l.z_relative_of > 0 {
            children.entry(l.z_relative_of).or_default().push(id);
        } else if let Some(p) = l.parent.filter(|&p| p > 0) {
            children.entry(p).or_default().push(id);
        }
        by_id.entry(id).or_insert(i);
    }
    let key = |id: &i32| (by_id.get(id).map_or(0, |&i| layers[i].z), *id);
    roots.sort_by_key(key);
    for c in children.values_mut() {
        c.sort_by_key(key);
    }
    let mut bottom_to_top = Vec::new();
    let mut seen: HashSet<i32> = HashSet::default();
    // An explicit stack: (layer, whether its own turn has come).
    for &root in &roots {
        let mut stack: Vec<(i32, bool)> = vec![(root, false)];
        while let Some((id, placed)) = stack.pop() {
            let Some(&index) = by_id.get(&id) else {
                continue;
            };
            if placed {
                bottom_to_top.push(index);
                continue;
            }
            if !seen.insert(id) {
                // A cycle of relative layers: each is drawn once.
                continue;
            }
            let kids = children.get(&id).map_or(&[][..], Vec::as_slice);
            // Pushed in reverse: children below, then the layer, then the
            // children above, come off the stack in drawing order.
            for &c in kids.iter().rev() {
                if by_id.get(&c).is_some_and(|&i| layers[i].z >= 0) {
                    stack.push((c, false));
                }
            }
            stack.push((id, true));
            for &c in kids.iter().rev() {
                if by_id.get(&c).is_some_and(|&i| layers[i].z < 0) {
                    stack.push((c, false));
                }
            }
        }
    }
    bottom_to_top.reverse();
    bottom_to_top
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(id: i32, parent: Option<i32>, z: i32) -> Layer {
        Layer {
            id: Some(id),
            parent,
            z,
            ..Layer::default()
        }
    }

    #[test]
    fn children_below_and_above_their_parent() {
        let layers = vec![
            layer(1, None, 0),
            layer(2, Some(1), -1),
            layer(3, Some(1), 5),
            layer(4, Some(1), 5),
            layer(5, None, 1),
            layer(6, Some(99), 0),
        ];
        let order: Vec<i32> = top_to_bottom(&layers)
            .into_iter()
            .map(|i| layers[i].id.unwrap_or(0))
            .collect();
        assert_eq!(order, vec![5, 4, 3, 1, 2]);
    }

    #[test]
    fn relative_layers_are_drawn_with_their_anchor() {
        let mut rel = layer(3, Some(1), 1);
        rel.z_relative_of = 2;
        let layers = vec![layer(1, None, 0), layer(2, None, 1), rel];
        let order: Vec<i32> = top_to_bottom(&layers)
            .into_iter()
            .map(|i| layers[i].id.unwrap_or(0))
            .collect();
        assert_eq!(order, vec![3, 2, 1]);
    }
}
