//! WindowManager dumps (WinscopeExtensions field 6): each dump becomes a
//! row of `__intrinsic_windowmanager` with its focused display, whether it
//! lacked its elapsed time, and its fields as args, all without the window
//! container tree (`root_window_container`), which upstream lays out as
//! rows of their own: the proto is kept and flattened with that field cut
//! out. The container rows themselves (upstream's hierarchy walk) are not
//! imported yet.

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::{args_of, base64_proto_id};
use crate::tables::winscope::WindowManagerRow;

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

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
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
    let arg_set_id = args_of(
        p,
        "WindowManagerTraceEntry",
        &pruned,
        "winscope_windowmanager_parse_errors",
    );
    p.storage.winscope.windowmanager.push(WindowManagerRow {
        ts,
        arg_set_id,
        base64_proto_id: Some(base64),
        focused_display_id,
        has_invalid_elapsed_ts: i64::from(elapsed == 0),
    });
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
