//! SurfaceFlinger's layer and display dumps (`LayerProto`,
//! `DisplayProto`) read into plain structs holding what the visibility and
//! rectangle computations need, with the proto's presence and defaults,
//! and the transforms SurfaceFlinger's dump leaves to be rebuilt from a
//! rotation type and a position or display size.

use protozero::{Decoder, Field, FieldValue};

use super::geometry::{Radii, Rect, Transform};

/// The last value of a field.
fn last<'a>(d: &Decoder<'a>, id: u32) -> Option<Field<'a>> {
    d.find_last(id)
}

/// The last value of a message field.
fn msg<'a>(d: &Decoder<'a>, id: u32) -> Option<&'a [u8]> {
    match last(d, id)?.value {
        FieldValue::Bytes(b) => Some(b),
        _ => None,
    }
}

/// A float field (proto default 0).
fn float(d: &Decoder<'_>, id: u32) -> f64 {
    last(d, id)
        .and_then(|f| f.as_f32().ok())
        .map_or(0.0, f64::from)
}

/// An int32 field.
fn int(d: &Decoder<'_>, id: u32) -> Option<i32> {
    last(d, id).and_then(|f| f.as_i32().ok())
}

/// A uint32 field.
fn uint(d: &Decoder<'_>, id: u32) -> Option<u32> {
    last(d, id).and_then(|f| f.as_u32().ok())
}

/// A bool field.
fn boolean(d: &Decoder<'_>, id: u32) -> Option<bool> {
    last(d, id).and_then(|f| f.as_bool().ok())
}

/// Every value of a repeated message field.
fn repeated<'a>(d: &Decoder<'a>, id: u32) -> Vec<&'a [u8]> {
    Decoder::new(d.buffer())
        .map_while(Result::ok)
        .filter(|f| f.id == id)
        .filter_map(|f| match f.value {
            FieldValue::Bytes(b) => Some(b),
            _ => None,
        })
        .collect()
}

/// A `RectProto` (int sides, absent ones 0).
pub fn int_rect(bytes: &[u8]) -> Rect {
    let d = Decoder::new(bytes);
    let side = |id| f64::from(int(&d, id).unwrap_or(0));
    Rect::ltrb(side(1), side(2), side(3), side(4))
}

/// A `FloatRectProto`.
fn float_rect(bytes: &[u8]) -> Rect {
    let d = Decoder::new(bytes);
    Rect::ltrb(float(&d, 1), float(&d, 2), float(&d, 3), float(&d, 4))
}

/// A `RegionProto`'s rectangles.
fn region(bytes: &[u8]) -> Vec<Rect> {
    repeated(&Decoder::new(bytes), 2)
        .into_iter()
        .map(int_rect)
        .collect()
}

/// A `CornerRadiiProto`.
fn radii(bytes: &[u8]) -> Radii {
    let d = Decoder::new(bytes);
    Radii {
        tl: float(&d, 1),
        tr: float(&d, 2),
        bl: float(&d, 3),
        br: float(&d, 4),
    }
}

/// A `TransformProto`: the matrix entries and the rotation type flags.
#[derive(Debug, Clone, Copy, Default)]
pub struct TransformProto {
    /// dsdx.
    pub dsdx: f64,
    /// dtdx.
    pub dtdx: f64,
    /// dsdy.
    pub dsdy: f64,
    /// dtdy.
    pub dtdy: f64,
    /// The type flags, when written.
    pub kind: Option<i32>,
}

impl TransformProto {
    fn read(bytes: &[u8]) -> TransformProto {
        let d = Decoder::new(bytes);
        TransformProto {
            dsdx: float(&d, 1),
            dtdx: float(&d, 2),
            dsdy: float(&d, 3),
            dtdy: float(&d, 4),
            kind: int(&d, 5),
        }
    }

    /// The type flags (0 when absent).
    pub fn flags(&self) -> i32 {
        self.kind.unwrap_or(0)
    }
}

/// The rotation-type flags of `ui::Transform`.
pub mod flag {
    /// A scale.
    pub const SCALE: i32 = 0x0004;
    /// Horizontal flip.
    pub const FLIP_H: i32 = 0x0100;
    /// Vertical flip.
    pub const FLIP_V: i32 = 0x0200;
    /// A quarter turn.
    pub const ROT_90: i32 = 0x0400;
    /// Not a rotation the flags can describe.
    pub const ROT_INVALID: i32 = 0x8000;
}

fn all_set(flags: i32, mask: i32) -> bool {
    flags & mask == mask
}

/// Rotated by 270 degrees (a quarter turn and both flips).
pub fn rotated_270(flags: i32) -> bool {
    all_set(flags, flag::ROT_90 | flag::FLIP_H | flag::FLIP_V)
}

/// Rotated by 180 degrees (both flips).
pub fn rotated_180(flags: i32) -> bool {
    all_set(flags, flag::FLIP_H | flag::FLIP_V)
}

/// Rotated by 90 degrees.
pub fn rotated_90(flags: i32) -> bool {
    all_set(flags, flag::ROT_90)
}

/// Whether the type is a plain rotation or translation (no scale, valid).
fn simple(flags: i32) -> bool {
    flags & (flag::ROT_INVALID | flag::SCALE) == 0
}

/// The matrix of a rotation type at position `(x, y)`.
fn rotation(flags: i32, x: f64, y: f64) -> Transform {
    let m = |dsdx, dtdx, dtdy, dsdy| Transform {
        dsdx,
        dtdx,
        tx: x,
        dtdy,
        dsdy,
        ty: y,
    };
    if flags == 0 {
        Transform::translate(x, y)
    } else if rotated_270(flags) {
        m(0.0, -1.0, 1.0, 0.0)
    } else if rotated_180(flags) {
        m(-1.0, 0.0, 0.0, -1.0)
    } else if rotated_90(flags) {
        m(0.0, 1.0, -1.0, 0.0)
    } else {
        Transform::translate(x, y)
    }
}

/// A `ColorProto`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Color {
    /// Red.
    pub r: f64,
    /// Green.
    pub g: f64,
    /// Blue.
    pub b: f64,
    /// Alpha, when written.
    pub a: Option<f64>,
}

impl Color {
    /// Alpha (0 when absent).
    pub fn alpha(&self) -> f64 {
        self.a.unwrap_or(0.0)
    }
    /// No channel negative.
    pub fn valid_rgb(&self) -> bool {
        self.r >= 0.0 && self.g >= 0.0 && self.b >= 0.0
    }
}

/// An `InputWindowInfoProto`.
#[derive(Debug, Clone, Default)]
pub struct InputInfo {
    /// Its frame, in the layer's space.
    pub frame: Option<Rect>,
    /// Its touchable region, when written.
    pub touchable: Option<Vec<Rect>>,
    /// Its visibility, when written.
    pub visible: Option<bool>,
    /// `InputConfig` flags.
    pub config: u32,
}

/// One `LayerProto`, as far as the computations read it.
#[derive(Debug, Clone, Default)]
pub struct Layer {
    /// Its id, when written.
    pub id: Option<i32>,
    /// Its parent, when written.
    pub parent: Option<i32>,
    /// Its z order among its (relative) siblings.
    pub z: i32,
    /// The layer it is drawn relative to (0 when none).
    pub z_relative_of: i32,
    /// Its display's layer stack.
    pub layer_stack: u32,
    /// Its flags.
    pub flags: u32,
    /// Its colour, when written.
    pub color: Option<Color>,
    /// Whether it is marked opaque.
    pub is_opaque: bool,
    /// Its buffer (width, height, stride, format), when written.
    pub buffer: Option<(u32, u32, u32, i32)>,
    /// Its shadow's radius.
    pub shadow_radius: f64,
    /// Its background blur's radius.
    pub blur_radius: i32,
    /// The region Composition Engine computed visible, when written.
    pub visible_region: Option<Vec<Rect>>,
    /// Its bounds, when written.
    pub bounds: Option<Rect>,
    /// Its bounds on screen, when written.
    pub screen_bounds: Option<Rect>,
    /// Its position, when written.
    pub position: Option<(f64, f64)>,
    /// Its transform, when written.
    pub transform: Option<TransformProto>,
    /// Its corner radii.
    pub radii: Radii,
    /// Its input window, when written.
    pub input: Option<InputInfo>,
    /// Its border (stroke width, colour), when written.
    pub border: Option<(f64, u32)>,
}

/// LayerProto's flag that hides a layer.
const FLAG_HIDDEN: u32 = 0x01;
/// The id of the root of offscreen layers.
const OFFSCREEN_ROOT_ID: i32 = 0x7fff_fffd;

impl Layer {
    /// Reads a `LayerProto`.
    pub fn read(bytes: &[u8]) -> Layer {
        let d = Decoder::new(bytes);
        let color = msg(&d, 20).map(|b| {
            let c = Decoder::new(b);
            Color {
                r: float(&c, 1),
                g: float(&c, 2),
                b: float(&c, 3),
                a: last(&c, 4).and_then(|f| f.as_f32().ok()).map(f64::from),
            }
        });
        let buffer = msg(&d, 27).map(|b| {
            let a = Decoder::new(b);
            (
                uint(&a, 1).unwrap_or(0),
                uint(&a, 2).unwrap_or(0),
                uint(&a, 3).unwrap_or(0),
                int(&a, 4).unwrap_or(0),
            )
        });
        let position = msg(&d, 11).map(|b| {
            let p = Decoder::new(b);
            (float(&p, 1), float(&p, 2))
        });
        let input = msg(&d, 47).map(|b| {
            let i = Decoder::new(b);
            InputInfo {
                frame: msg(&i, 3).map(int_rect),
                touchable: msg(&i, 4).map(region),
                visible: boolean(&i, 6),
                config: uint(&i, 17).unwrap_or(0),
            }
        });
        let border = msg(&d, 66).and_then(|b| {
            let s = Decoder::new(b);
            let width = float(&s, 1);
            // The colour is an int32 ARGB value, kept as its bits.
            let color = int(&s, 2).unwrap_or(0) as u32;
            (width > 0.0).then_some((width, color))
        });
        Layer {
            id: int(&d, 1),
            parent: int(&d, 25),
            z: int(&d, 10).unwrap_or(0),
            z_relative_of: int(&d, 26).unwrap_or(0),
            layer_stack: uint(&d, 9).unwrap_or(0),
            flags: uint(&d, 22).unwrap_or(0),
            color,
            is_opaque: boolean(&d, 16).unwrap_or(false),
            buffer,
            shadow_radius: float(&d, 49),
            blur_radius: int(&d, 52).unwrap_or(0),
            visible_region: msg(&d, 7).map(region),
            bounds: msg(&d, 45).map(float_rect),
            screen_bounds: msg(&d, 46).map(float_rect),
            position,
            transform: msg(&d, 23).map(TransformProto::read),
            radii: corner_radii(&d),
            input,
            border,
        }
    }

    /// A root of the tree: no parent, or parent -1.
    pub fn is_root(&self) -> bool {
        self.parent.is_none_or(|p| p == -1)
    }

    /// Hidden by its own flag, or the offscreen root.
    pub fn hidden_by_policy(&self) -> bool {
        self.flags & FLAG_HIDDEN != 0 || self.id == Some(OFFSCREEN_ROOT_ID)
    }

    /// Its bounds (empty when absent).
    pub fn bounds_or_empty(&self) -> Rect {
        self.bounds.unwrap_or_default()
    }

    /// Its screen bounds cropped by `crop` when that is not empty.
    pub fn cropped_screen_bounds(&self, crop: Option<&Rect>) -> Option<Rect> {
        let b = self.screen_bounds?;
        Some(match crop {
            Some(c) if !c.is_empty() => b.crop(c),
            _ => b,
        })
    }

    /// Its transform, rebuilt from the rotation type and position; a
    /// matrix SurfaceFlinger's deprecated writer put down with its skews
    /// and scales crossed is read back uncrossed.
    pub fn matrix(&self) -> Transform {
        let (x, y) = self.position.unwrap_or((0.0, 0.0));
        let mut m = Transform::translate(x, y);
        if let Some(t) = self.transform {
            let flags = t.flags();
            if simple(flags) {
                m = rotation(flags, x, y);
            } else {
                m.dsdx = t.dsdx;
                m.dtdx = t.dsdy;
                m.dsdy = t.dtdy;
                m.dtdy = t.dtdx;
            }
        }
        m
    }

    /// Its transform's type flags (0 when absent).
    pub fn transform_flags(&self) -> i32 {
        self.transform.map_or(0, |t| t.flags())
    }
}

/// A layer's corner radii (tl, tr, bl, br): its per-corner radii when one
/// is positive, else its single radius, plus what the client draws.
pub fn corner_radii(d: &Decoder<'_>) -> Radii {
    let mut out = Radii::default();
    match msg(d, 61).map(radii) {
        Some(r) if r.tl > 0.0 || r.tr > 0.0 || r.bl > 0.0 || r.br > 0.0 => out = r,
        _ => {
            if let Some(r) = last(d, 41).and_then(|f| f.as_f32().ok()) {
                let r = f64::from(r);
                out = Radii {
                    tl: r,
                    tr: r,
                    bl: r,
                    br: r,
                };
            }
        }
    }
    if let Some(e) = msg(d, 67).map(radii) {
        out.tl += e.tl;
        out.tr += e.tr;
        out.bl += e.bl;
        out.br += e.br;
    }
    out
}

/// One `DisplayProto`.
#[derive(Debug, Clone, Default)]
pub struct Display {
    /// Its id.
    pub id: u64,
    /// Its name, when written.
    pub name: Option<String>,
    /// Its layer stack.
    pub layer_stack: u32,
    /// Its size (w, h), when written.
    pub size: Option<(f64, f64)>,
    /// Its layer stack space rectangle, when written.
    pub stack_rect: Option<Rect>,
    /// Its transform, when written.
    pub transform: Option<TransformProto>,
    /// Whether it is virtual.
    pub is_virtual: bool,
}

/// The layer stack of a display that is off.
pub const INVALID_LAYER_STACK: u32 = u32::MAX;

impl Display {
    /// Reads a `DisplayProto`.
    pub fn read(bytes: &[u8]) -> Display {
        let d = Decoder::new(bytes);
        Display {
            id: last(&d, 1).and_then(|f| f.as_u64().ok()).unwrap_or(0),
            name: msg(&d, 2).map(|b| String::from_utf8_lossy(b).into_owned()),
            layer_stack: uint(&d, 3).unwrap_or(0),
            size: msg(&d, 4).map(|b| {
                let s = Decoder::new(b);
                (
                    f64::from(int(&s, 1).unwrap_or(0)),
                    f64::from(int(&s, 2).unwrap_or(0)),
                )
            }),
            stack_rect: msg(&d, 5).map(int_rect),
            transform: msg(&d, 6).map(TransformProto::read),
            is_virtual: boolean(&d, 7).unwrap_or(false),
        }
    }

    /// Its layer stack space rectangle (empty when absent).
    pub fn stack_rect_or_empty(&self) -> Rect {
        self.stack_rect.unwrap_or_default()
    }

    /// Its size, turned when the display is rotated a quarter.
    pub fn rotated_size(&self) -> (f64, f64) {
        let Some((w, h)) = self.size else {
            return (0.0, 0.0);
        };
        let flags = self.transform.map_or(0, |t| t.flags());
        if rotated_90(flags) || rotated_270(flags) {
            (h, w)
        } else {
            (w, h)
        }
    }

    /// Its transform, rebuilt as the platform's `Transform::set` does from
    /// the rotation type and the layer stack space's size.
    pub fn matrix(&self) -> Transform {
        let Some(t) = self.transform else {
            return Transform::default();
        };
        let flags = t.flags();
        let mut m = if simple(flags) {
            rotation(flags, 0.0, 0.0)
        } else {
            Transform {
                dsdx: t.dsdx,
                dtdx: t.dtdx,
                tx: 0.0,
                dtdy: t.dtdy,
                dsdy: t.dsdy,
                ty: 0.0,
            }
        };
        if t.kind.is_some()
            && let Some(r) = self.stack_rect
        {
            if rotated_180(flags) {
                m.tx = r.w;
                m.ty = r.h;
            } else if rotated_270(flags) {
                m.tx = r.w;
            } else if rotated_90(flags) {
                m.ty = r.h;
            }
        }
        m
    }
}

/// A `LayersSnapshotProto`'s displays and layers, and whether it leaves
/// out the composition state.
pub struct Snapshot<'a> {
    /// Its displays, in order.
    pub displays: Vec<Display>,
    /// Its layers' bytes, in order.
    pub layer_bytes: Vec<&'a [u8]>,
    /// Whether the composition state (visible regions) is left out.
    pub excludes_composition_state: bool,
}

impl<'a> Snapshot<'a> {
    /// Reads a snapshot's displays and layer list.
    pub fn read(bytes: &'a [u8]) -> Snapshot<'a> {
        let d = Decoder::new(bytes);
        let displays = repeated(&d, 7).into_iter().map(Display::read).collect();
        let layer_bytes = msg(&d, 3).map_or_else(Vec::new, |l| repeated(&Decoder::new(l), 1));
        Snapshot {
            displays,
            layer_bytes,
            excludes_composition_state: boolean(&d, 5).unwrap_or(true),
        }
    }
}
