//! The rectangles Winscope draws a SurfaceFlinger snapshot with: each
//! display's layer stack space (or its size), and, walking the layers in
//! drawing order from the bottom, each layer's bounds (unless it is hidden
//! and its screen bounds are one of the platform's "no bounds" sentinels)
//! and its input window's frame, moved into the layer's space, with the
//! touchable region as fill. Each layer stack counts its rects' depths
//! from 1, bounds and input windows apart. The rows go into the shared
//! Winscope rect, transform, trace-rect and fill-region tables.

use crate::hash::HashMap;
use crate::tables::winscope::{
    WinscopeFillRegionRow, WinscopeRectRow, WinscopeRows, WinscopeTraceRectRow,
    WinscopeTransformRow,
};

use super::WinscopeState;
use super::geometry::{Rect, Transform};
use super::near_rects::NearRects;
use super::sf_model::{Display, Layer};
use super::sf_visibility::Visibility;

/// `InputConfig` flags (the platform's `InputConfig.aidl`).
mod input_config {
    /// The window takes no touches.
    pub const NOT_TOUCHABLE: u32 = 1 << 3;
    /// A wallpaper.
    pub const IS_WALLPAPER: u32 = 1 << 6;
    /// A spy window.
    pub const SPY: u32 = 1 << 14;
}

/// The screen bounds SurfaceFlinger gives a layer without bounds.
const DEFAULT_INVALID_BOUNDS: Rect = Rect {
    x: -50000.0,
    y: -50000.0,
    w: 100_000.0,
    h: 100_000.0,
    radii: super::geometry::Radii {
        tl: 0.0,
        tr: 0.0,
        bl: 0.0,
        br: 0.0,
    },
};

/// Where the rows go, with the rect and transform de-duplication.
pub struct Sink<'a> {
    /// The de-duplication maps.
    pub state: &'a mut WinscopeState,
    /// The tables.
    pub rows: &'a mut WinscopeRows,
}

impl Sink<'_> {
    /// The row of a rectangle.
    fn rect(&mut self, r: &Rect) -> u32 {
        self.state.rect_id(
            &mut self.rows.rects,
            WinscopeRectRow {
                x: r.x,
                y: r.y,
                w: r.w,
                h: r.h,
            },
        )
    }

    /// The row of a transform.
    fn transform(&mut self, m: &Transform) -> u32 {
        self.state.transform_id(
            &mut self.rows.transforms,
            WinscopeTransformRow {
                dsdx: m.dsdx,
                dtdx: m.dtdx,
                tx: m.tx,
                dtdy: m.dtdy,
                dsdy: m.dsdy,
                ty: m.ty,
            },
        )
    }

    /// Adds a trace rect; its id.
    fn trace_rect(&mut self, row: WinscopeTraceRectRow) -> u32 {
        self.rows.trace_rects.push(row);
        u32::try_from(self.rows.trace_rects.len() - 1).unwrap_or(u32::MAX)
    }
}

/// A display's trace rect: its layer stack space, or its (rotated) size
/// when that is empty, at depth `index` in its layer stack's group.
pub fn display_rect(sink: &mut Sink<'_>, d: &Display, index: usize) -> u32 {
    let mut r = d.stack_rect_or_empty();
    if r.is_empty() {
        let (w, h) = d.rotated_size();
        r = Rect::ltrb(0.0, 0.0, w, h);
    }
    let rect_id = sink.rect(&r);
    sink.trace_rect(WinscopeTraceRectRow {
        rect_id,
        group_id: d.layer_stack,
        depth: u32::try_from(index).unwrap_or(u32::MAX),
        is_spy: 0,
        is_visible: 0,
        opacity: None,
        transform_id: 0,
        border_width: None,
        border_color: None,
    })
}

/// The bounds platform code gives layers without any: ten times each
/// display's size and the largest size, both ways round.
fn invalid_bounds(displays: &[Display]) -> NearRects {
    let of = |(w, h): (f64, f64)| {
        let (x, y) = (w * 10.0, h * 10.0);
        let b = Rect::ltrb(-x, -y, x, y);
        [b, Rect::ltrb(b.y, b.x, b.y + b.h, b.x + b.w)]
    };
    let mut out = Vec::new();
    if displays.is_empty() {
        return NearRects::default();
    }
    let mut max = (0.0_f64, 0.0_f64);
    for d in displays {
        let size = d.rotated_size();
        out.extend(of(size));
        max = (max.0.max(size.0), max.1.max(size.1));
    }
    out.extend(of(max));
    NearRects::new(out)
}

/// A layer's trace rect and input window trace rect.
#[derive(Debug, Clone, Copy, Default)]
pub struct LayerRects {
    /// Its bounds'.
    pub layer: Option<u32>,
    /// Its input window's.
    pub input: Option<u32>,
}

/// Computes every drawn layer's rects (keyed by id); `order` is the
/// drawing order, top first, indices into `layers`; `stack_rects` each
/// layer stack's display rectangle as dumped.
pub fn compute(
    sink: &mut Sink<'_>,
    layers: &[Layer],
    order: &[usize],
    visibility: &HashMap<i32, Visibility>,
    displays: &[Display],
    stack_rects: &HashMap<u32, Rect>,
) -> HashMap<i32, LayerRects> {
    let mut bounds_z: HashMap<u32, u32> = HashMap::default();
    let mut input_z: HashMap<u32, u32> = HashMap::default();
    for &stack in stack_rects.keys() {
        bounds_z.insert(stack, 1);
        input_z.insert(stack, 1);
    }
    let invalid = invalid_bounds(displays);
    let mut display_matrices: HashMap<u32, Transform> = HashMap::default();
    for d in displays {
        display_matrices.insert(d.layer_stack, d.matrix());
    }
    let mut out = HashMap::default();
    for &i in order.iter().rev() {
        let l = &layers[i];
        let Some(id) = l.id else {
            continue;
        };
        let visible = visibility.get(&id).is_some_and(|v| v.visible);
        let layer = bounds_rect(sink, l, visible, &invalid, &mut bounds_z);
        let input = input_rect(
            sink,
            l,
            visible,
            &invalid,
            &mut input_z,
            display_matrices.get(&l.layer_stack),
            stack_rects.get(&l.layer_stack),
        );
        out.insert(id, LayerRects { layer, input });
    }
    out
}

fn bounds_rect(
    sink: &mut Sink<'_>,
    l: &Layer,
    visible: bool,
    invalid: &NearRects,
    z: &mut HashMap<u32, u32>,
) -> Option<u32> {
    let screen = l.cropped_screen_bounds(None)?;
    let depth = z.entry(l.layer_stack).or_insert(0);
    let placeholder = invalid.any_almost_eq(&screen) || screen.almost_eq(&DEFAULT_INVALID_BOUNDS);
    if !visible && placeholder {
        return None;
    }
    let opacity = match l.color.and_then(|c| c.a) {
        Some(a) => Some(a),
        None if visible => Some(0.0),
        None => None,
    };
    let matrix = l.matrix();
    let rect_id = sink.rect(&l.bounds_or_empty());
    let transform_id = sink.transform(&matrix);
    let row = WinscopeTraceRectRow {
        rect_id,
        group_id: l.layer_stack,
        depth: *depth,
        is_spy: 0,
        is_visible: i64::from(visible),
        opacity,
        transform_id,
        border_width: l.border.map(|b| b.0),
        border_color: l.border.map(|b| b.1),
    };
    *depth += 1;
    Some(sink.trace_rect(row))
}

fn input_rect(
    sink: &mut Sink<'_>,
    l: &Layer,
    computed_visible: bool,
    invalid: &NearRects,
    z: &mut HashMap<u32, u32>,
    display_matrix: Option<&Transform>,
    display: Option<&Rect>,
) -> Option<u32> {
    let info = l.input.as_ref()?;
    let depth = z.entry(l.layer_stack).or_insert(0);
    let matrix = l.matrix();
    let inverse = matrix.inverse();
    // Frames and regions are in display space: into the layer's space.
    let to_layer = |r: &Rect| {
        let r = display_matrix.map_or(*r, |m| m.rect(r));
        inverse.rect(&r)
    };
    let mut frame = info.frame.as_ref().map_or_else(Rect::default, to_layer);
    let mut crop_to = None;
    if let Some(d) = display {
        let crop = frame.is_empty()
            || info.config & input_config::IS_WALLPAPER != 0
            || invalid.any_almost_eq(&frame);
        if crop {
            frame = frame.crop(d);
            crop_to = Some(d);
        }
    }
    let visible = info.visible.unwrap_or(computed_visible);
    let rect_id = sink.rect(&frame);
    let transform_id = sink.transform(&matrix);
    let trace_rect_id = sink.trace_rect(WinscopeTraceRectRow {
        rect_id,
        group_id: l.layer_stack,
        depth: *depth,
        is_spy: i64::from(info.config & input_config::SPY != 0),
        is_visible: i64::from(visible),
        opacity: None,
        transform_id,
        border_width: None,
        border_color: None,
    });
    let fill: Option<Vec<Rect>> = if info.config & input_config::NOT_TOUCHABLE != 0 {
        Some(Vec::new())
    } else {
        info.touchable.as_ref().map(|region| {
            region
                .iter()
                .map(|r| {
                    let r = to_layer(r);
                    crop_to.map_or(r, |d| r.crop(d))
                })
                .collect()
        })
    };
    if let Some(mut fill) = fill {
        if fill.is_empty() {
            fill.push(Rect::default());
        }
        for r in &fill {
            let rect_id = sink.rect(r);
            sink.rows.fill_regions.push(WinscopeFillRegionRow {
                trace_rect_id,
                rect_id,
            });
        }
    }
    *depth += 1;
    Some(trace_rect_id)
}
