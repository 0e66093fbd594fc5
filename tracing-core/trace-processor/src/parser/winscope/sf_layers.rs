//! `surfaceflinger_layers_snapshot` (TracePacket field 93): one dump of
//! SurfaceFlinger's layer tree as a row of
//! `__intrinsic_surfaceflinger_layers_snapshot` (its own fields as args,
//! the layers left out), a row of `__intrinsic_surfaceflinger_display` per
//! display with its rectangle, and a row of `__intrinsic_surfaceflinger_layer`
//! per layer, with the layer's identity, hierarchy, corner radii, policy
//! and computed visibility columns, its bounds' and input window's
//! rectangles, and its fields as args followed by why it is not visible
//! and which layers hide or cover it.

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::super::importer::Input;
use super::geometry::Rect;
use super::sf_model::{Display, INVALID_LAYER_STACK, Layer, Snapshot};
use super::sf_rects::LayerRects;
use super::sf_visibility::Visibility;
use super::{base64_proto_id, flatten_into, sf_order, sf_rects, sf_visibility};
use crate::column_store::strings::StringPool;
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tables::winscope::{SfDisplayRow, SfLayerRow, SfLayersSnapshotRow};

/// The stat counted when a proto could not be flattened into args.
const PARSE_ERRORS: &str = "winscope_sf_layers_parse_errors";

/// The snapshot's fields kept as its args (all but its layers).
const SNAPSHOT_ARG_FIELDS: &[u32] = &[1, 2, 4, 5, 6, 7, 8];

/// LayerProto's fields read here (the rest in `sf_model`).
mod layer {
    pub const NAME: u32 = 2;
    pub const Z_ORDER_RELATIVE_OF: u32 = 26;
    pub const HWC_COMPOSITION_TYPE: u32 = 35;
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

    let snapshot = Snapshot::read(bytes);
    let mut stack_rects: HashMap<u32, Rect> = HashMap::default();
    for (index, display) in snapshot.displays.iter().enumerate() {
        stack_rects.insert(display.layer_stack, display.stack_rect_or_empty());
        import_display(p, snapshot_id, display, index);
    }

    let layers: Vec<Layer> = snapshot
        .layer_bytes
        .iter()
        .map(|b| Layer::read(b))
        .collect();
    let order = sf_order::top_to_bottom(&layers);
    let indexed = sf_visibility::Layers::new(&layers);
    let visibility = sf_visibility::compute(
        &indexed,
        &order,
        &snapshot.displays,
        snapshot.excludes_composition_state,
    );
    let mut sink = sf_rects::Sink {
        state: &mut p.winscope,
        rows: &mut p.storage.winscope,
    };
    let rects = sf_rects::compute(
        &mut sink,
        &layers,
        &order,
        &visibility,
        &snapshot.displays,
        &stack_rects,
    );
    for (bytes, layer) in snapshot.layer_bytes.iter().zip(&layers) {
        let (vis, rects) = match layer.id {
            Some(id) => (
                visibility.get(&id),
                rects.get(&id).copied().unwrap_or_default(),
            ),
            None => (None, LayerRects::default()),
        };
        import_layer(p, snapshot_id, bytes, layer, &indexed, vis, rects);
    }
}

/// A display's row and its rectangle.
fn import_display(p: &mut Parser, snapshot_id: u32, display: &Display, index: usize) {
    let mut sink = sf_rects::Sink {
        state: &mut p.winscope,
        rows: &mut p.storage.winscope,
    };
    let trace_rect_id = sf_rects::display_rect(&mut sink, display, index);
    let display_name = display
        .name
        .as_deref()
        .map(|n| p.storage.strings.intern(n))
        .unwrap_or_default();
    p.storage.winscope.sf_displays.push(SfDisplayRow {
        snapshot_id,
        is_on: i64::from(display.layer_stack != INVALID_LAYER_STACK),
        is_virtual: i64::from(display.is_virtual),
        trace_rect_id,
        // The id is a uint64 kept as its bits.
        display_id: display.id as i64,
        display_name,
    });
}

/// A layer's row and args.
fn import_layer(
    p: &mut Parser,
    snapshot_id: u32,
    bytes: &[u8],
    layer: &Layer,
    layers: &sf_visibility::Layers<'_>,
    visibility: Option<&Visibility>,
    rects: LayerRects,
) {
    let d = Decoder::new(bytes);
    let name = match d.find_last(layer::NAME).map(|f| f.value) {
        Some(FieldValue::Bytes(b)) => p.storage.strings.intern(&String::from_utf8_lossy(b)),
        _ => Default::default(),
    };
    let z_parent = d
        .find_last(layer::Z_ORDER_RELATIVE_OF)
        .and_then(|f| f.as_i32().ok());
    let radii = layer.radii;
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    let mut builder = ArgSetBuilder::default();
    if !flatten_into(
        &mut p.storage.strings,
        &mut builder,
        "LayerProto",
        bytes,
        None,
    ) {
        p.storage.stats.incr(PARSE_ERRORS);
    }
    if let Some(v) = visibility {
        add_visibility_args(&mut p.storage.strings, &mut builder, v);
    }
    let arg_set_id = p.storage.args.add_set(&builder);
    p.storage.winscope.sf_layers.push(SfLayerRow {
        snapshot_id,
        arg_set_id,
        base64_proto_id: Some(base64),
        layer_id: layer.id.map(i64::from),
        layer_name: name,
        is_visible: i64::from(visibility.is_some_and(|v| v.visible)),
        parent: layer.parent.map(i64::from),
        corner_radius_tl: Some(radii.tl),
        corner_radius_tr: Some(radii.tr),
        corner_radius_bl: Some(radii.bl),
        corner_radius_br: Some(radii.br),
        hwc_composition_type: d
            .find_last(layer::HWC_COMPOSITION_TYPE)
            .and_then(|f| f.as_i32().ok())
            .map(i64::from),
        is_hidden_by_policy: i64::from(layer.hidden_by_policy()),
        z_order_relative_of: z_parent.map(i64::from),
        is_missing_z_parent: i64::from(z_parent.is_some_and(|z| z > 0 && layers.get(z).is_none())),
        layer_rect_id: rects.layer,
        input_rect_id: rects.input,
    });
}

/// Why a layer is not visible and which layers hide or cover it, as
/// indexed args after its fields.
fn add_visibility_args(strings: &mut StringPool, builder: &mut ArgSetBuilder, v: &Visibility) {
    let flat = strings.intern("visibility_reason");
    for (i, reason) in v.reasons.iter().enumerate() {
        let key = strings.intern(&format!("visibility_reason[{i}]"));
        let value = ArgValue::String(strings.intern(reason));
        builder.add(flat, key, value);
    }
    for (name, ids) in [
        ("occluded_by", &v.occluded_by),
        ("partially_occluded_by", &v.partially_occluded_by),
        ("covered_by", &v.covered_by),
    ] {
        let flat = strings.intern(name);
        for (i, &id) in ids.iter().enumerate() {
            let key = strings.intern(&format!("{name}[{i}]"));
            builder.add(flat, key, ArgValue::Int(i64::from(id)));
        }
    }
}
