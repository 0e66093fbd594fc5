//! ViewCapture (WinscopeExtensions field 4): a capture of an app window's
//! view tree, its strings interned on the packet's sequence. Each capture
//! becomes a row of `__intrinsic_viewcapture` and each view a row of
//! `__intrinsic_viewcapture_view`, with their fields as args in which an
//! `*_iid` field is replaced by the string it stands for (or upstream's
//! error text beside the iid, counted, when the sequence lacks it), each
//! resolved string also kept in `__intrinsic_viewcapture_interned_data`,
//! and each view's visibility and rectangle computed
//! (`viewcapture_geometry.rs`).

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::super::interned_strings::interned_str;
use super::super::proto_to_args::{self, ArgSink, FlatValue, Options};
use super::viewcapture_geometry::{self, View};
use super::{SetSink, base64_proto_id, message_name, pool};
use crate::column_store::strings::{StrId, StringPool};
use crate::sequence_state::Generation;
use crate::storage::args::ArgSetBuilder;
use crate::tables::winscope::{
    ViewCaptureInternedDataRow, ViewCaptureRow, ViewCaptureViewRow, WinscopeRectRow,
    WinscopeTraceRectRow,
};

/// What stands for a string the sequence did not intern.
const DEINTERNING_ERROR: &str = "STRING DE-INTERNING ERROR";
/// The capture's fields flattened into its args (not its views).
const SNAPSHOT_FIELDS: &[u32] = &[1, 2];
/// ViewCapture.views.
const VIEWS: u32 = 3;

/// The InternedData field of an `*_iid` arg, by the arg's name ending.
const INTERNED_KINDS: &[(&str, u32)] = &[
    ("class_name_iid", 41),
    ("package_name_iid", 38),
    ("view_id_iid", 40),
    ("window_name_iid", 39),
    ("content_description_iid", 45),
    ("text_iid", 46),
];

/// An arg sink resolving `*_iid` fields against the sequence's strings.
struct Deinterning<'a> {
    inner: SetSink<'a>,
    generation: &'a Generation,
    /// The resolved strings: (flat key of the iid, iid, string).
    resolved: Vec<(String, i64, String)>,
    /// iids the sequence lacked.
    missing: i64,
}

impl Deinterning<'_> {
    /// The string an `*_iid` arg stands for, if the sequence has it.
    fn lookup(&self, key: &str, iid: u64) -> Option<String> {
        let (_, field) = INTERNED_KINDS.iter().find(|(end, _)| key.ends_with(end))?;
        interned_str(self.generation, *field, iid).map(|s| s.into_owned())
    }
}

impl ArgSink for Deinterning<'_> {
    fn add(&mut self, flat_key: &str, key: &str, value: FlatValue<'_>) {
        let iid = match value {
            FlatValue::Int(v) => Some(v as u64),
            FlatValue::Uint(v) => Some(v),
            _ => None,
        };
        let (Some(iid), Some(short_key), Some(short_flat)) =
            (iid, key.strip_suffix("_iid"), flat_key.strip_suffix("_iid"))
        else {
            self.inner.add(flat_key, key, value);
            return;
        };
        match self.lookup(key, iid) {
            Some(text) => {
                self.inner
                    .add(short_flat, short_key, FlatValue::Str(text.as_str().into()));
                let entry = (flat_key.to_owned(), iid as i64, text);
                if !self
                    .resolved
                    .iter()
                    .any(|(f, i, _)| *f == entry.0 && *i == entry.1)
                {
                    self.resolved.push(entry);
                }
            }
            None => {
                self.missing += 1;
                self.inner.add(
                    short_flat,
                    short_key,
                    FlatValue::Str(DEINTERNING_ERROR.into()),
                );
                self.inner.add(flat_key, key, value);
            }
        }
    }
}

/// What flattening one message gave.
struct Flattened {
    arg_set_id: Option<u32>,
    resolved: Vec<(String, i64, String)>,
    ok: bool,
}

fn flatten(
    p: &mut Parser,
    generation: &Generation,
    short: &str,
    bytes: &[u8],
    allowed_fields: Option<&[u32]>,
) -> Flattened {
    let mut builder = ArgSetBuilder::default();
    let mut sink = Deinterning {
        inner: SetSink {
            strings: &mut p.storage.strings,
            builder: &mut builder,
        },
        generation,
        resolved: Vec::new(),
        missing: 0,
    };
    let ok = match pool().map(|pool| proto_to_args::find_message(pool, &message_name(short))) {
        Some(Ok(desc)) => {
            let options = Options {
                allowed_fields,
                add_defaults: false,
            };
            proto_to_args::flatten(&desc, bytes, options, &mut sink).is_ok()
        }
        _ => false,
    };
    let (resolved, missing) = (sink.resolved, sink.missing);
    p.storage.stats.add(
        "winscope_viewcapture_missing_interned_string_parse_errors",
        missing,
    );
    Flattened {
        arg_set_id: p.storage.args.add_set(&builder),
        resolved,
        ok,
    }
}

/// Keeps the strings a proto's iids stood for.
fn keep_interned(p: &mut Parser, base64: u32, resolved: &[(String, i64, String)]) {
    for (flat_key, iid, value) in resolved {
        let row = ViewCaptureInternedDataRow {
            base64_proto_id: base64,
            flat_key: p.storage.strings.intern(flat_key),
            iid: *iid,
            deinterned_value: p.storage.strings.intern(value),
        };
        p.storage.winscope.viewcapture_interned.push(row);
    }
}

fn intern_resolved(strings: &mut StringPool, f: &Flattened, name: &str) -> StrId {
    f.resolved
        .iter()
        .find(|(flat, _, _)| flat.strip_suffix("_iid") == Some(name))
        .map_or(StrId::NULL, |(_, _, s)| strings.intern(s))
}

/// Imports one capture.
pub(super) fn import(p: &mut Parser, ts: i64, bytes: &[u8], generation: &Generation) {
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    let flat = flatten(p, generation, "ViewCapture", bytes, Some(SNAPSHOT_FIELDS));
    keep_interned(p, base64, &flat.resolved);
    if !flat.ok {
        p.storage.stats.incr("winscope_viewcapture_parse_errors");
    }
    let row = ViewCaptureRow {
        ts,
        arg_set_id: flat.arg_set_id,
        base64_proto_id: Some(base64),
        package_name: intern_resolved(&mut p.storage.strings, &flat, "package_name"),
        window_name: intern_resolved(&mut p.storage.strings, &flat, "window_name"),
    };
    let snapshot_id = u32::try_from(p.storage.winscope.viewcapture.len()).unwrap_or(u32::MAX);
    p.storage.winscope.viewcapture.push(row);

    let views: Vec<&[u8]> = Decoder::new(bytes)
        .map_while(Result::ok)
        .filter(|f| f.id == VIEWS)
        .filter_map(|f| match f.value {
            FieldValue::Bytes(b) => Some(b),
            _ => None,
        })
        .collect();
    let decoded: Vec<View> = views.iter().map(|b| view(b)).collect();
    let alphas: crate::hash::HashMap<i32, f32> = views
        .iter()
        .zip(&decoded)
        .map(|(b, v)| (v.id, alpha(b)))
        .collect();
    // Rects in drawing order, as upstream adds them.
    let mut placed: crate::hash::HashMap<i32, (bool, u32)> = crate::hash::HashMap::default();
    for (id, place) in viewcapture_geometry::place(&decoded) {
        let opacity = alphas.get(&id).copied().unwrap_or(0.0);
        let trace_rect_id = trace_rect(p, Some(place), opacity);
        placed.insert(id, (place.visible, trace_rect_id));
    }
    for (bytes, v) in views.iter().zip(&decoded) {
        let (visible, trace_rect_id) = match placed.get(&v.id) {
            Some(&found) => found,
            None => (false, trace_rect(p, None, alpha(bytes))),
        };
        let base64 = base64_proto_id(&mut p.storage.strings, bytes);
        let flat = flatten(p, generation, "ViewCapture.View", bytes, None);
        keep_interned(p, base64, &flat.resolved);
        if !flat.ok {
            p.storage.stats.incr("winscope_viewcapture_parse_errors");
        }
        let strings = &mut p.storage.strings;
        let row = ViewCaptureViewRow {
            snapshot_id,
            arg_set_id: flat.arg_set_id,
            base64_proto_id: Some(base64),
            node_id: v.id as u32,
            hashcode: hashcode(bytes) as u32,
            is_visible: i64::from(visible),
            parent_id: v.parent_id as u32,
            view_id: intern_resolved(strings, &flat, "view_id"),
            class_name: intern_resolved(strings, &flat, "class_name"),
            trace_rect_id,
        };
        p.storage.winscope.viewcapture_views.push(row);
    }
}

/// The trace rect of a view (an empty, hidden one for a view the walk
/// from the root never reached).
fn trace_rect(p: &mut Parser, place: Option<viewcapture_geometry::Placed>, alpha: f32) -> u32 {
    let (rect, depth, visible) =
        place.map_or(([0.0; 4], 0, false), |pl| (pl.rect, pl.depth, pl.visible));
    let [x, y, w, h] = rect;
    let rect_id = p.winscope.rect_id(
        &mut p.storage.winscope.rects,
        WinscopeRectRow { x, y, w, h },
    );
    let rows = &mut p.storage.winscope.trace_rects;
    rows.push(WinscopeTraceRectRow {
        rect_id,
        group_id: 0,
        depth,
        is_spy: 0,
        is_visible: i64::from(visible),
        opacity: Some(f64::from(alpha)),
        transform_id: 0,
        border_width: None,
        border_color: None,
    });
    u32::try_from(rows.len() - 1).unwrap_or(u32::MAX)
}

fn last(bytes: &[u8], id: u32) -> Option<protozero::Field<'_>> {
    Decoder::new(bytes).find_last(id)
}

fn int(bytes: &[u8], id: u32) -> i32 {
    last(bytes, id).and_then(|f| f.as_i32().ok()).unwrap_or(0)
}

fn float(bytes: &[u8], id: u32) -> f32 {
    last(bytes, id).and_then(|f| f.as_f32().ok()).unwrap_or(0.0)
}

fn hashcode(bytes: &[u8]) -> i32 {
    int(bytes, 3)
}

fn alpha(bytes: &[u8]) -> f32 {
    float(bytes, 16)
}

/// The fields of a view the geometry reads.
fn view(bytes: &[u8]) -> View {
    View {
        id: int(bytes, 1),
        parent_id: int(bytes, 2),
        bounds: [int(bytes, 6), int(bytes, 7), int(bytes, 8), int(bytes, 9)],
        scroll: [int(bytes, 10), int(bytes, 11)],
        translation: [float(bytes, 12), float(bytes, 13)],
        scale: [float(bytes, 14), float(bytes, 15)],
        visibility: int(bytes, 19),
    }
}
