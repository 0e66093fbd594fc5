//! `shell_transition` (TracePacket field 96): each proto of a WindowManager
//! shell transition kept raw in
//! `__intrinsic_window_manager_shell_transition_protos` (a transition is
//! written in several protos, merged by its id), and each window or layer
//! it changed as a row of
//! `__intrinsic_window_manager_shell_transition_participants`, its bounds
//! in `__intrinsic_winscope_rect` (each distinct rectangle once). The
//! transitions table itself (times, type, handler, merged args) is not
//! built yet.

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::super::importer::Input;
use super::base64_proto_id;
use crate::tables::winscope::{
    ShellTransitionParticipantRow, ShellTransitionProtoRow, WinscopeRectRow,
};

/// ShellTransition's fields read here.
const ID: u32 = 1;
const CHANGES: u32 = 14;

/// Imports one transition proto.
pub(super) fn import(p: &mut Parser, input: &Input<'_>) {
    let bytes = input.bytes;
    let d = Decoder::new(bytes);
    let transition_id = d
        .find_last(ID)
        .and_then(|f| f.as_i32().ok())
        .map_or(0, i64::from);
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    p.storage
        .winscope
        .shell_transition_protos
        .push(ShellTransitionProtoRow {
            transition_id,
            base64_proto_id: Some(base64),
        });
    for f in Decoder::new(bytes).map_while(Result::ok) {
        if f.id != CHANGES {
            continue;
        }
        let FieldValue::Bytes(change) = f.value else {
            continue;
        };
        participant(p, transition_id, change);
    }
}

fn participant(p: &mut Parser, transition_id: i64, change: &[u8]) {
    let c = Decoder::new(change);
    let int = |id: u32| {
        c.find_last(id)
            .and_then(|f| f.as_i32().ok())
            .map(|v| v as u32)
    };
    let mut rect = |id: u32| -> Option<u32> {
        let FieldValue::Bytes(b) = c.find_last(id)?.value else {
            return None;
        };
        let r = Decoder::new(b);
        let side = |id: u32| r.find_last(id).and_then(|f| f.as_i32().ok()).unwrap_or(0);
        let (left, top) = (side(1), side(2));
        let row = WinscopeRectRow {
            x: f64::from(left),
            y: f64::from(top),
            w: f64::from(side(3)) - f64::from(left),
            h: f64::from(side(4)) - f64::from(top),
        };
        Some(p.winscope.rect_id(&mut p.storage.winscope.rects, row))
    };
    let start = rect(9);
    let end = rect(10);
    p.storage
        .winscope
        .shell_transition_participants
        .push(ShellTransitionParticipantRow {
            transition_id,
            layer_id: int(2),
            window_id: int(3),
            mode: int(1),
            flags: int(4),
            start_display_id: int(5),
            end_display_id: int(6),
            start_rotation: int(7),
            end_rotation: int(8),
            start_abs_bounds_rect_id: start,
            end_abs_bounds_rect_id: end,
        });
}
