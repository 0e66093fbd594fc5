//! WindowManager dumps (WinscopeExtensions field 6): each dump becomes a
//! row of `__intrinsic_windowmanager` with its focused display, whether it
//! lacked its elapsed time, and its fields as args, all without the window
//! container tree (`root_window_container`): the proto is kept and
//! flattened with that field cut out. The tree becomes rows of
//! `__intrinsic_windowmanager_windowcontainer`, one per container
//! (`windowmanager_tree.rs`'s walk), each with its children-less proto as
//! args and, for displays and windows, a rectangle.

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::windowmanager_prune::put_varint;
use super::windowmanager_tree::{self, Container, ContainerRect};
use super::{args_of, base64_proto_id};
use crate::tables::winscope::{
    WindowManagerRow, WindowManagerWindowContainerRow, WinscopeRectRow, WinscopeTraceRectRow,
    WinscopeTransformRow,
};

/// The stat counted when a dump could not be read whole.
const PARSE_ERRORS: &str = "winscope_windowmanager_parse_errors";

/// WindowManagerTraceEntry's fields read here.
const ELAPSED_REALTIME_NANOS: u32 = 1;
const WINDOW_MANAGER_SERVICE: u32 = 3;
/// WindowManagerServiceDumpProto's fields read here.
const ROOT_WINDOW_CONTAINER: u32 = 2;
const FOCUSED_DISPLAY_ID: u32 = 9;

/// `bytes` with every field `cut` of the message at field `at` removed
/// (field by field, as they were encoded).
fn without(bytes: &[u8], at: u32, cut: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut d = Decoder::new(bytes);
    let mut start = 0;
    while let Some(Ok(f)) = d.read_field() {
        let end = d.offset();
        let raw = bytes.get(start..end).unwrap_or_default();
        match f.value {
            FieldValue::Bytes(inner) if f.id == at => {
                let kept: Vec<u8> = Decoder::new(inner)
                    .map_while(Result::ok)
                    .zip(spans(inner))
                    .filter(|(g, _)| g.id != cut)
                    .flat_map(|(_, span)| span.iter().copied())
                    .collect();
                put_varint(&mut out, (u64::from(at) << 3) | 2);
                put_varint(&mut out, kept.len() as u64);
                out.extend_from_slice(&kept);
            }
            _ => out.extend_from_slice(raw),
        }
        start = end;
    }
    out
}

/// Each field's encoded bytes, in order.
fn spans(bytes: &[u8]) -> Vec<&[u8]> {
    let mut d = Decoder::new(bytes);
    let mut out = Vec::new();
    let mut start = 0;
    while let Some(Ok(_)) = d.read_field() {
        let end = d.offset();
        out.push(bytes.get(start..end).unwrap_or_default());
        start = end;
    }
    out
}

/// Imports one dump.
pub(super) fn import(p: &mut Parser, ts: i64, bytes: &[u8]) {
    let pruned = without(bytes, WINDOW_MANAGER_SERVICE, ROOT_WINDOW_CONTAINER);
    let d = Decoder::new(&pruned);
    let elapsed = d
        .find_last(ELAPSED_REALTIME_NANOS)
        .and_then(|f| f.as_fixed64().or_else(|_| f.as_u64()).ok())
        .unwrap_or(0);
    let focused_display_id = match d.find_last(WINDOW_MANAGER_SERVICE).map(|f| f.value) {
        Some(FieldValue::Bytes(service)) => Decoder::new(service)
            .find_last(FOCUSED_DISPLAY_ID)
            .and_then(|f| f.as_i32().ok())
            .map_or(0, |v| v as u32),
        _ => 0,
    };
    let base64 = base64_proto_id(&mut p.storage.strings, &pruned);
    let arg_set_id = args_of(p, "WindowManagerTraceEntry", &pruned, PARSE_ERRORS);
    let rows = &mut p.storage.winscope.windowmanager;
    let snapshot_id = u32::try_from(rows.len()).unwrap_or(u32::MAX);
    rows.push(WindowManagerRow {
        ts,
        arg_set_id,
        base64_proto_id: Some(base64),
        focused_display_id,
        has_invalid_elapsed_ts: i64::from(elapsed == 0),
    });
    match windowmanager_tree::walk(bytes, &mut p.winscope.wm_walk) {
        Ok(containers) => {
            for c in containers {
                import_container(p, snapshot_id, c);
            }
        }
        Err(_) => p.storage.stats.incr(PARSE_ERRORS),
    }
}

/// One container's row, args and rectangle.
fn import_container(p: &mut Parser, snapshot_id: u32, c: Container) {
    let window_rect_id = c.rect.map(|r| trace_rect(p, r));
    let strings = &mut p.storage.strings;
    let title = strings.intern(&c.title);
    let container_type = strings.intern(c.kind);
    let name_override = c
        .name_override
        .as_deref()
        .map(|n| strings.intern(n))
        .unwrap_or_default();
    let base64 = base64_proto_id(strings, &c.pruned);
    let message = if c.parent_token.is_none() {
        "RootWindowContainerProto"
    } else {
        "WindowContainerChildProto"
    };
    let arg_set_id = args_of(p, message, &c.pruned, PARSE_ERRORS);
    p.storage
        .winscope
        .windowmanager_containers
        .push(WindowManagerWindowContainerRow {
            snapshot_id,
            arg_set_id,
            base64_proto_id: Some(base64),
            title,
            token: i64::from(c.token),
            parent_token: c.parent_token.map(i64::from),
            child_index: c.child_index.map(i64::from),
            is_visible: Some(i64::from(c.visible)),
            window_rect_id,
            container_type,
            name_override,
        });
}

/// A container's trace rect: its own rectangle row (not shared with equal
/// ones, as upstream adds it) and the trace's one WindowManager transform
/// row, added the first time. That row is upstream's: its y-from-x entry
/// is 1 and its y scale 0.
fn trace_rect(p: &mut Parser, r: ContainerRect) -> u32 {
    let rows = &mut p.storage.winscope;
    let [x, y, w, h] = r.xywh.map(f64::from);
    rows.rects.push(WinscopeRectRow { x, y, w, h });
    let rect_id = u32::try_from(rows.rects.len() - 1).unwrap_or(u32::MAX);
    let transform_id = *p.winscope.wm_transform_id.get_or_insert_with(|| {
        rows.transforms.push(WinscopeTransformRow {
            dsdx: 1.0,
            dtdx: 0.0,
            tx: 0.0,
            dtdy: 1.0,
            dsdy: 0.0,
            ty: 0.0,
        });
        u32::try_from(rows.transforms.len() - 1).unwrap_or(u32::MAX)
    });
    rows.trace_rects.push(WinscopeTraceRectRow {
        rect_id,
        // The display id's bits.
        group_id: r.display_id as u32,
        depth: r.depth,
        is_spy: 0,
        is_visible: i64::from(r.visible),
        opacity: r.opacity,
        transform_id,
        border_width: None,
        border_color: None,
    });
    u32::try_from(rows.trace_rects.len() - 1).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_container_tree_is_cut_out_and_the_rest_kept_as_encoded() {
        // entry { 1: fixed64 5, 3: { 1: {..}, 2: {tree}, 9: 2 } }
        let service = [0x0a, 0x01, 0x08, 0x12, 0x02, 0x08, 0x01, 0x48, 0x02];
        let mut entry = vec![0x09, 5, 0, 0, 0, 0, 0, 0, 0, 0x1a, service.len() as u8];
        entry.extend_from_slice(&service);
        let pruned = without(&entry, 3, 2);
        assert_eq!(
            pruned,
            vec![
                0x09, 5, 0, 0, 0, 0, 0, 0, 0, 0x1a, 5, 0x0a, 0x01, 0x08, 0x48, 0x02
            ]
        );
    }
}
