//! `surfaceflinger_layers_snapshot` (TracePacket field 93): one dump of
//! SurfaceFlinger's layer tree as a row of
//! `__intrinsic_surfaceflinger_layers_snapshot` (its own fields as args,
//! the layers left out) and a row of `__intrinsic_surfaceflinger_layer`
//! per layer, with the layer's identity, hierarchy, corner radii and
//! policy columns and its fields as args. The layers' computed visibility
//! and rectangles (and the displays' rectangles) are not computed yet:
//! `is_visible` is 0 and the rect ids are NULL.

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::super::importer::Input;
use super::{args_of, base64_proto_id, flatten_into};
use crate::hash::HashSet;
use crate::storage::args::ArgSetBuilder;
use crate::tables::winscope::{SfLayerRow, SfLayersSnapshotRow};

/// The stat counted when a proto could not be flattened into args.
const PARSE_ERRORS: &str = "winscope_sf_layers_parse_errors";

/// The snapshot's fields kept as its args (all but its layers).
const SNAPSHOT_ARG_FIELDS: &[u32] = &[1, 2, 4, 5, 6, 7, 8];

/// LayerProto's flag that hides a layer.
const LAYER_FLAG_HIDDEN: u64 = 0x01;
/// The id of the root of offscreen layers.
const OFFSCREEN_LAYER_ROOT_ID: i64 = 0x7fff_fffd;

/// LayerProto's fields read here.
mod layer {
    pub const ID: u32 = 1;
    pub const NAME: u32 = 2;
    pub const FLAGS: u32 = 22;
    pub const PARENT: u32 = 25;
    pub const Z_ORDER_RELATIVE_OF: u32 = 26;
    pub const HWC_COMPOSITION_TYPE: u32 = 35;
    pub const CORNER_RADIUS: u32 = 41;
    pub const CORNER_RADII: u32 = 61;
    pub const EFFECTIVE_RADII: u32 = 67;
}

/// Imports one snapshot.
pub(super) fn import(p: &mut Parser, input: &Input<'_>) {
    let bytes = input.bytes;
    let d = Decoder::new(bytes);
    let elapsed = d
        .find_last(1)
        .and_then(|f| f.as_sfixed64().ok())
        .unwrap_or(0);
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    let mut builder = ArgSetBuilder::default();
    if !flatten_into(
        &mut p.storage.strings,
        &mut builder,
        "LayersSnapshotProto",
        bytes,
        Some(SNAPSHOT_ARG_FIELDS),
    ) {
        p.storage.stats.incr(PARSE_ERRORS);
    }
    let arg_set_id = p.storage.args.add_set(&builder);
    let rows = &mut p.storage.winscope.sf_snapshots;
    let snapshot_id = u32::try_from(rows.len()).unwrap_or(u32::MAX);
    rows.push(SfLayersSnapshotRow {
        ts: input.ts,
        arg_set_id,
        base64_proto_id: Some(base64),
        sequence_id: input.generation.sequence_id,
        has_invalid_elapsed_ts: Some(u32::from(elapsed == 0)),
    });

    let layers: Vec<&[u8]> = match d.find_last(3).map(|f| f.value) {
        Some(FieldValue::Bytes(b)) => Decoder::new(b)
            .map_while(Result::ok)
            .filter(|f| f.id == 1)
            .filter_map(|f| match f.value {
                FieldValue::Bytes(l) => Some(l),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let ids: HashSet<i64> = layers
        .iter()
        .filter_map(|l| int(&Decoder::new(l), layer::ID))
        .collect();
    for l in layers {
        import_layer(p, snapshot_id, l, &ids);
    }
}

/// An int32 field.
fn int(d: &Decoder<'_>, id: u32) -> Option<i64> {
    d.find_last(id).and_then(|f| f.as_i32().ok()).map(i64::from)
}

/// A float field.
fn float(d: &Decoder<'_>, id: u32) -> Option<f64> {
    d.find_last(id).and_then(|f| f.as_f32().ok()).map(f64::from)
}

/// A layer's corner radii (tl, tr, bl, br): its per-corner radii when one
/// is positive, else its single radius, plus what the client draws.
fn corner_radii(d: &Decoder<'_>) -> [f64; 4] {
    let radii = |id: u32| -> Option<[f64; 4]> {
        match d.find_last(id)?.value {
            FieldValue::Bytes(b) => {
                let r = Decoder::new(b);
                Some([1, 2, 3, 4].map(|i| float(&r, i).unwrap_or(0.0)))
            }
            _ => None,
        }
    };
    let mut out = [0.0; 4];
    match radii(layer::CORNER_RADII) {
        Some(r) if r.iter().any(|&v| v > 0.0) => out = r,
        _ => {
            if let Some(r) = float(d, layer::CORNER_RADIUS) {
                out = [r; 4];
            }
        }
    }
    if let Some(e) = radii(layer::EFFECTIVE_RADII) {
        for (o, v) in out.iter_mut().zip(e) {
            *o += v;
        }
    }
    out
}

fn import_layer(p: &mut Parser, snapshot_id: u32, bytes: &[u8], ids: &HashSet<i64>) {
    let d = Decoder::new(bytes);
    let layer_id = int(&d, layer::ID);
    let name = match d.find_last(layer::NAME).map(|f| f.value) {
        Some(FieldValue::Bytes(b)) => p.storage.strings.intern(&String::from_utf8_lossy(b)),
        _ => Default::default(),
    };
    let flags = d
        .find_last(layer::FLAGS)
        .and_then(|f| f.as_u64().ok())
        .unwrap_or(0);
    let z_parent = int(&d, layer::Z_ORDER_RELATIVE_OF);
    let [tl, tr, bl, br] = corner_radii(&d);
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    let arg_set_id = args_of(p, "LayerProto", bytes, PARSE_ERRORS);
    p.storage.winscope.sf_layers.push(SfLayerRow {
        snapshot_id,
        arg_set_id,
        base64_proto_id: Some(base64),
        layer_id,
        layer_name: name,
        is_visible: 0,
        parent: int(&d, layer::PARENT),
        corner_radius_tl: Some(tl),
        corner_radius_tr: Some(tr),
        corner_radius_bl: Some(bl),
        corner_radius_br: Some(br),
        hwc_composition_type: int(&d, layer::HWC_COMPOSITION_TYPE),
        is_hidden_by_policy: i64::from(
            flags & LAYER_FLAG_HIDDEN != 0 || layer_id.unwrap_or(0) == OFFSCREEN_LAYER_ROOT_ID,
        ),
        z_order_relative_of: z_parent,
        is_missing_z_parent: i64::from(z_parent.is_some_and(|z| z > 0 && !ids.contains(&z))),
        layer_rect_id: None,
        input_rect_id: None,
    });
}
