//! Where each view of a ViewCapture snapshot is drawn and whether it is
//! seen: views are walked from the root depth first, children in the order
//! captured (the drawing order); a view is visible when its own and every
//! ancestor's visibility flag say so and it has a size; its rectangle is
//! its position and translation inside its parent's, shifted by the
//! parent's scroll and scaled by every ancestor's scale, each level four
//! depth units above its parent. Sans-IO: views in, one result per view
//! id out.

use crate::hash::{HashMap, HashSet};

/// The fields of a view the computation reads (proto defaults: 0).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct View {
    /// Its id in the snapshot.
    pub id: i32,
    /// Its parent's id (-1 for the root).
    pub parent_id: i32,
    /// Left, top, width, height in its parent.
    pub bounds: [i32; 4],
    /// Its content's scroll, x and y.
    pub scroll: [i32; 2],
    /// Its translation, x and y.
    pub translation: [f32; 2],
    /// Its scale, x and y.
    pub scale: [f32; 2],
    /// Android's visibility flag (0: visible).
    pub visibility: i32,
}

/// Where a view is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    /// Left, top, width, height on the screen.
    pub rect: [f64; 4],
    /// Its depth: four per level below the root.
    pub depth: u32,
    /// Whether it is seen.
    pub visible: bool,
}

/// The parent id of the root view.
const ROOT_PARENT: i32 = -1;
/// Depth units per level, so levels stand apart.
const DEPTH_STEP: u32 = 4;

/// The views reachable from the root, in drawing order (each id once).
fn top_to_bottom(views: &[View]) -> Vec<View> {
    let mut root = 0;
    let mut children: HashMap<i32, Vec<i32>> = HashMap::default();
    let mut by_id: HashMap<i32, View> = HashMap::default();
    for v in views {
        if v.parent_id == ROOT_PARENT {
            root = v.id;
        } else {
            children.entry(v.parent_id).or_default().push(v.id);
        }
        by_id.entry(v.id).or_insert(*v);
    }
    let mut out = Vec::new();
    let mut seen: HashSet<i32> = HashSet::default();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        let Some(v) = by_id.get(&id) else {
            continue;
        };
        if !seen.insert(id) {
            continue;
        }
        out.push(*v);
        if let Some(c) = children.get(&id) {
            stack.extend(c.iter().rev());
        }
    }
    out
}

/// What a placed parent hands its children.
#[derive(Clone, Copy)]
struct Frame {
    rect: [f64; 4],
    depth: u32,
    scale: [f64; 2],
    scroll: [f64; 2],
    flag_visible: bool,
}

/// Each reachable view's place, with its id, in drawing order.
pub fn place(views: &[View]) -> Vec<(i32, Placed)> {
    let mut frames: HashMap<i32, Frame> = HashMap::default();
    let mut out = Vec::new();
    for v in top_to_bottom(views) {
        let parent = frames.get(&v.parent_id).copied();
        let (shift, depth, scale, parent_flag) = match parent {
            Some(p) => (
                [p.rect[0] - p.scroll[0], p.rect[1] - p.scroll[1]],
                p.depth + 1,
                p.scale,
                Some(p.flag_visible),
            ),
            None => ([0.0, 0.0], 0, [1.0, 1.0], None),
        };
        let flag_visible = v.visibility == 0 && parent_flag.unwrap_or(true);
        let [left, top, width, height] = v.bounds.map(f64::from);
        let new_scale = [
            scale[0] * f64::from(v.scale[0]),
            scale[1] * f64::from(v.scale[1]),
        ];
        let x = shift[0]
            + (left + f64::from(v.translation[0])) * scale[0]
            + width * (scale[0] - new_scale[0]) / 2.0;
        let y = shift[1]
            + (top + f64::from(v.translation[1])) * scale[1]
            + height * (scale[1] - new_scale[1]) / 2.0;
        let (w, h) = (width * new_scale[0], height * new_scale[1]);
        // Kept as left, top, right, bottom and back, as upstream's rects.
        let rect = [x, y, (x + w) - x, (y + h) - y];
        frames.insert(
            v.id,
            Frame {
                rect,
                depth,
                scale: new_scale,
                scroll: v.scroll.map(f64::from),
                flag_visible,
            },
        );
        out.push((
            v.id,
            Placed {
                rect,
                depth: depth.saturating_mul(DEPTH_STEP),
                visible: flag_visible && v.bounds[2] > 0 && v.bounds[3] > 0,
            },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_id(views: &[View]) -> HashMap<i32, Placed> {
        place(views).into_iter().collect()
    }

    fn view(id: i32, parent_id: i32, bounds: [i32; 4]) -> View {
        View {
            id,
            parent_id,
            bounds,
            scale: [1.0, 1.0],
            ..View::default()
        }
    }

    #[test]
    fn children_are_placed_in_their_scrolled_and_scaled_parent() {
        let root = View {
            scroll: [1, 2],
            ..view(0, -1, [0, 0, 10, 10])
        };
        let scaled = View {
            scale: [2.0, 2.0],
            ..view(1, 0, [3, 4, 2, 2])
        };
        let grandchild = View {
            translation: [1.0, 0.0],
            ..view(2, 1, [1, 1, 1, 1])
        };
        let placed = by_id(&[grandchild, scaled, root]);
        assert_eq!(placed[&0].rect, [0.0, 0.0, 10.0, 10.0]);
        // Shifted by the root's scroll, grown about its centre.
        assert_eq!(placed[&1].rect, [1.0, 1.0, 4.0, 4.0]);
        assert_eq!(placed[&1].depth, 4);
        // Inside its parent, at twice the size.
        assert_eq!(placed[&2].rect, [5.0, 3.0, 2.0, 2.0]);
        assert_eq!(placed[&2].depth, 8);
    }

    #[test]
    fn a_hidden_ancestor_or_no_size_hides_a_view() {
        let hidden = View {
            visibility: 8,
            ..view(1, 0, [0, 0, 5, 5])
        };
        let placed = by_id(&[
            view(0, -1, [0, 0, 10, 10]),
            hidden,
            view(2, 1, [0, 0, 5, 5]),
            view(3, 0, [0, 0, 0, 5]),
        ]);
        assert!(placed[&0].visible);
        assert!(!placed[&1].visible);
        assert!(!placed[&2].visible);
        assert!(!placed[&3].visible);
    }

    #[test]
    fn a_cycle_or_an_orphan_is_walked_at_most_once() {
        let placed = by_id(&[
            view(0, -1, [0, 0, 1, 1]),
            view(1, 0, [0, 0, 1, 1]),
            view(0, 1, [0, 0, 1, 1]),
            view(7, 9, [0, 0, 1, 1]),
        ]);
        assert_eq!(placed.len(), 2);
        assert!(!placed.contains_key(&7));
    }
}
