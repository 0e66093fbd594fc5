//! Whether each layer of a SurfaceFlinger snapshot is seen, as Winscope
//! decides it: a layer is visible in isolation when neither it nor an
//! ancestor is hidden, its alpha is positive, it has a buffer or an effect
//! (colour fill or shadow) and a visible region (or, when the dump leaves
//! out the composition state, non-empty bounds); walking the drawing order
//! from the top, a visible layer is then occluded when an opaque visible
//! layer above it on the same layer stack contains it, partially occluded
//! when one overlaps it, and covered when a translucent one overlaps it.
//! A layer not visible gets the reasons why.

use crate::hash::HashMap;

use super::geometry::Rect;
use super::sf_model::{Display, Layer, flag};

/// What was decided for one layer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Visibility {
    /// Whether it is seen.
    pub visible: bool,
    /// Why not (empty when visible).
    pub reasons: Vec<String>,
    /// The opaque layers above that hide it whole.
    pub occluded_by: Vec<i32>,
    /// The opaque layers above that hide part of it.
    pub partially_occluded_by: Vec<i32>,
    /// The translucent layers above that overlap it.
    pub covered_by: Vec<i32>,
}

/// The layers of one snapshot, by id (the first of each id).
pub struct Layers<'a> {
    /// The layers in dump order.
    pub all: &'a [Layer],
    /// Index into `all` by id.
    pub by_id: HashMap<i32, usize>,
}

impl<'a> Layers<'a> {
    /// Indexes a snapshot's layers.
    pub fn new(all: &'a [Layer]) -> Layers<'a> {
        let mut by_id = HashMap::default();
        for (i, l) in all.iter().enumerate() {
            if let Some(id) = l.id {
                by_id.entry(id).or_insert(i);
            }
        }
        Layers { all, by_id }
    }

    /// The layer of an id.
    pub fn get(&self, id: i32) -> Option<&'a Layer> {
        self.by_id.get(&id).map(|&i| &self.all[i])
    }

    /// Whether an ancestor hides the layer.
    fn hidden_by_parent(&self, layer: &Layer) -> bool {
        let mut current = layer;
        // Bounded by the number of layers, so a cycle cannot loop forever.
        for _ in 0..=self.all.len() {
            if current.is_root() {
                return false;
            }
            let Some(parent) = current.parent.and_then(|p| self.get(p)) else {
                return false;
            };
            if parent.hidden_by_policy() {
                return true;
            }
            current = parent;
        }
        false
    }
}

fn buffer_empty(l: &Layer) -> bool {
    l.buffer
        .is_none_or(|(w, h, stride, format)| format <= 0 && h == 0 && stride == 0 && w == 0)
}

fn has_effects(l: &Layer) -> bool {
    if l.shadow_radius > 0.0 {
        return true;
    }
    l.color.is_some_and(|c| c.alpha() > 0.0 && c.valid_rgb())
}

fn zero_alpha(l: &Layer) -> bool {
    l.color.is_none_or(|c| {
        let a = c.alpha();
        a <= 0.0 && a > -1.0
    })
}

fn empty_visible_region(l: &Layer) -> bool {
    l.visible_region
        .as_ref()
        .is_none_or(|r| r.iter().all(Rect::is_empty))
}

fn has_visible_region(l: &Layer, excludes_composition_state: bool) -> bool {
    if excludes_composition_state {
        // Without the composition state the bounds stand for the region.
        l.bounds.is_some_and(|b| !b.is_empty())
    } else {
        !empty_visible_region(l)
    }
}

fn opaque(l: &Layer) -> bool {
    l.color.is_some_and(|c| c.alpha() >= 1.0) && l.is_opaque
}

fn color_empty(l: &Layer) -> bool {
    zero_alpha(l) || l.color.is_none_or(|c| !c.valid_rgb())
}

/// Whether `outer` contains `inner` on screen. Upstream reads both
/// rotation types from `outer`; kept so.
fn contains(outer: &Layer, inner: &Layer, crop: Option<&Rect>) -> bool {
    let t = outer.transform_flags();
    if t & flag::ROT_INVALID == flag::ROT_INVALID {
        return false;
    }
    let (Some(mut a), Some(mut b)) = (
        outer.cropped_screen_bounds(crop),
        inner.cropped_screen_bounds(crop),
    ) else {
        return false;
    };
    a.radii = outer.radii;
    b.radii = inner.radii;
    a.contains(&b)
}

fn overlaps(a: &Layer, b: &Layer, crop: Option<&Rect>) -> bool {
    match (a.cropped_screen_bounds(crop), b.cropped_screen_bounds(crop)) {
        (Some(x), Some(y)) => x.intersects(&y),
        _ => false,
    }
}

/// The layer stack space rectangle of the (last) display showing the
/// layer's stack, else an empty one.
fn display_crop(l: &Layer, displays: &[Display]) -> Rect {
    displays
        .iter()
        .filter(|d| d.layer_stack == l.layer_stack)
        .filter_map(|d| d.stack_rect)
        .next_back()
        .unwrap_or_default()
}

/// Decides every drawn layer's visibility; `order` is the drawing order,
/// top first, as indices into `layers.all`. Keyed by layer id.
pub fn compute(
    layers: &Layers<'_>,
    order: &[usize],
    displays: &[Display],
    excludes_composition_state: bool,
) -> HashMap<i32, Visibility> {
    let mut out: HashMap<i32, Visibility> = HashMap::default();
    let mut opaque_above: Vec<&Layer> = Vec::new();
    let mut translucent_above: Vec<&Layer> = Vec::new();
    for &i in order {
        let l = &layers.all[i];
        let Some(id) = l.id else {
            continue;
        };
        let crop = display_crop(l, displays);
        let mut v = Visibility {
            visible: visible_alone(layers, l, excludes_composition_state),
            ..Visibility::default()
        };
        if v.visible {
            for o in &opaque_above {
                if o.layer_stack != l.layer_stack {
                    continue;
                }
                let oid = o.id.unwrap_or(0);
                if contains(o, l, Some(&crop)) {
                    v.visible = false;
                    v.occluded_by.push(oid);
                    continue;
                }
                if overlaps(o, l, Some(&crop)) && !v.occluded_by.contains(&oid) {
                    v.partially_occluded_by.push(oid);
                }
            }
            for t in &translucent_above {
                if t.layer_stack == l.layer_stack && overlaps(t, l, Some(&crop)) {
                    v.covered_by.push(t.id.unwrap_or(0));
                }
            }
            if opaque(l) {
                opaque_above.push(l);
            } else {
                translucent_above.push(l);
            }
        }
        if !v.visible {
            v.reasons = reasons(
                layers,
                l,
                excludes_composition_state,
                !v.occluded_by.is_empty(),
            );
        }
        out.insert(id, v);
    }
    out
}

fn visible_alone(layers: &Layers<'_>, l: &Layer, excludes_composition_state: bool) -> bool {
    if layers.hidden_by_parent(l) || l.hidden_by_policy() {
        return false;
    }
    if l.color.is_none_or(|c| c.alpha() <= 0.0) {
        return false;
    }
    if buffer_empty(l) && !has_effects(l) {
        return false;
    }
    has_visible_region(l, excludes_composition_state)
}

fn reasons(
    layers: &Layers<'_>,
    l: &Layer,
    excludes_composition_state: bool,
    occluded: bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: &str| out.push(s.to_owned());
    if l.hidden_by_policy() {
        add("flag is hidden");
    }
    if layers.hidden_by_parent(l) {
        out.push(format!("hidden by parent {}", l.parent.unwrap_or(0)));
    }
    let mut add = |s: &str| out.push(s.to_owned());
    if buffer_empty(l) {
        add("buffer is empty");
    }
    if zero_alpha(l) {
        add("alpha is 0");
    }
    if l.bounds.is_none_or(|b| b.is_empty()) {
        add("bounds is 0x0");
        if color_empty(l) {
            add("crop is 0x0");
        }
    }
    if !l.matrix().is_valid() {
        add("transform is invalid");
    }
    if buffer_empty(l) && !has_effects(l) && l.blur_radius <= 0 {
        add("does not have color fill, shadow or blur");
    }
    if l.visible_region.is_some() && empty_visible_region(l) {
        add("visible region calculated by Composition Engine is empty");
    }
    if l.visible_region.is_none() && !excludes_composition_state {
        add("null visible region");
    }
    if occluded {
        add("occluded");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::sf_model::Color;
    use super::*;

    fn shown(id: i32, z: i32, bounds: Rect, opaque: bool) -> Layer {
        Layer {
            id: Some(id),
            z,
            color: Some(Color {
                r: 0.0,
                g: 0.0,
                b: 0.0,
                a: Some(1.0),
            }),
            is_opaque: opaque,
            buffer: Some((1, 1, 1, 1)),
            bounds: Some(bounds),
            screen_bounds: Some(bounds),
            ..Layer::default()
        }
    }

    #[test]
    fn an_opaque_layer_above_occludes_one_it_contains() {
        let all = vec![
            shown(1, 1, Rect::ltrb(0.0, 0.0, 10.0, 10.0), true),
            shown(2, 0, Rect::ltrb(1.0, 1.0, 5.0, 5.0), false),
            shown(3, -1, Rect::ltrb(5.0, 5.0, 20.0, 20.0), false),
        ];
        let layers = Layers::new(&all);
        let v = compute(&layers, &[0, 1, 2], &[], true);
        assert!(v[&1].visible);
        assert!(!v[&2].visible);
        assert_eq!(v[&2].occluded_by, vec![1]);
        assert_eq!(v[&2].reasons, vec!["occluded".to_owned()]);
        assert!(v[&3].visible);
        assert_eq!(v[&3].partially_occluded_by, vec![1]);
    }

    #[test]
    fn a_layer_without_buffer_or_effects_is_not_visible() {
        let mut l = shown(1, 0, Rect::ltrb(0.0, 0.0, 1.0, 1.0), false);
        l.buffer = None;
        l.color = None;
        let all = vec![l];
        let layers = Layers::new(&all);
        let v = compute(&layers, &[0], &[], false);
        assert_eq!(
            v[&1].reasons,
            vec![
                "buffer is empty",
                "alpha is 0",
                "does not have color fill, shadow or blur",
                "null visible region"
            ]
        );
    }
}
