//! `shell_transition` (TracePacket field 96) and `shell_handler_mappings`
//! (field 97): WindowManager's shell writes a transition in several protos
//! as it goes (created, sent, dispatched, merged, aborted, finished), all
//! with the transition's id. Each proto is kept raw in
//! `__intrinsic_window_manager_shell_transition_protos` and each window or
//! layer it changed becomes a row of
//! `__intrinsic_window_manager_shell_transition_participants` (bounds in
//! `__intrinsic_winscope_rect`, each distinct rectangle once); the protos
//! of one id merge into one row of
//! `__intrinsic_window_manager_shell_transitions` (times, type, handler,
//! flags, one arg set of all their fields, a later value replacing an
//! earlier one), whose status and duration are decided at the end of the
//! trace as upstream decides them. The handler mappings name the handlers
//! in `__intrinsic_window_manager_shell_transition_handlers`.

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::super::importer::Input;
use super::super::proto_to_args::{self, ArgSink, FlatValue, Options};
use super::{SetSink, base64_proto_id, message_name, pool};
use crate::hash::HashMap;
use crate::storage::args::ArgSetBuilder;
use crate::tables::winscope::{
    ShellTransitionHandlerRow, ShellTransitionParticipantRow, ShellTransitionProtoRow,
    ShellTransitionRow, WinscopeRectRow,
};

/// ShellTransition's fields.
mod field {
    pub const ID: u32 = 1;
    pub const CREATE_TIME: u32 = 2;
    pub const SEND_TIME: u32 = 3;
    pub const DISPATCH_TIME: u32 = 4;
    pub const MERGE_TIME: u32 = 5;
    pub const SHELL_ABORT_TIME: u32 = 7;
    pub const WM_ABORT_TIME: u32 = 8;
    pub const FINISH_TIME: u32 = 9;
    pub const START_TRANSACTION: u32 = 10;
    pub const FINISH_TRANSACTION: u32 = 11;
    pub const HANDLER: u32 = 12;
    pub const TYPE: u32 = 13;
    pub const CHANGES: u32 = 14;
    pub const FLAGS: u32 = 16;
}

/// The transitions seen so far: their rows by id and their args.
#[derive(Debug, Default)]
pub struct ShellTransitionsState {
    rows: HashMap<i32, usize>,
    args: Vec<ArgSetBuilder>,
}

/// The name Android's newer schema gives the changes (v51's `targets`).
const CHANGES_KEY: &str = "changes";
const TARGETS_KEY: &str = "targets";

/// Flattened fields into a transition's set, keyed as Android's newer
/// schema keys them.
struct Renaming<'a>(SetSink<'a>);

/// A `ShellTransition` arg key as Android's newer schema names it: the
/// changed windows under `changes` (v51's `targets`).
pub fn newer_key(k: &str) -> std::borrow::Cow<'_, str> {
    match k.strip_prefix(TARGETS_KEY) {
        Some(rest) if rest.starts_with(['[', '.']) || rest.is_empty() => {
            std::borrow::Cow::Owned(format!("{CHANGES_KEY}{rest}"))
        }
        _ => std::borrow::Cow::Borrowed(k),
    }
}

impl ArgSink for Renaming<'_> {
    fn add(&mut self, flat_key: &str, key: &str, value: FlatValue<'_>) {
        self.0.add(&newer_key(flat_key), &newer_key(key), value);
    }
}

/// Imports one transition proto.
pub(super) fn import(p: &mut Parser, input: &Input<'_>) {
    let bytes = input.bytes;
    let d = Decoder::new(bytes);
    let last = |id: u32| d.find_last(id);
    let int = |id: u32| last(id).and_then(|f| f.as_i64().ok());
    let id = last(field::ID).and_then(|f| f.as_i32().ok()).unwrap_or(0);
    let transition_id = i64::from(id);
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    p.storage
        .winscope
        .shell_transition_protos
        .push(ShellTransitionProtoRow {
            transition_id,
            base64_proto_id: Some(base64),
        });
    let row = transition_row(p, id);
    if !flatten(p, row, bytes) {
        p.storage
            .stats
            .incr("winscope_shell_transitions_parse_errors");
    }
    let Some(t) = p.storage.winscope.shell_transitions.get_mut(row) else {
        return;
    };
    if let Some(v) = int(field::TYPE) {
        t.transition_type = Some(v as u32);
    }
    if let Some(v) = int(field::SEND_TIME) {
        t.send_time_ns = Some(v);
        t.ts = v;
    }
    if let Some(v) = int(field::DISPATCH_TIME) {
        t.dispatch_time_ns = Some(v);
        if t.ts == 0 {
            t.ts = v;
        }
    }
    let set = |id: u32, slot: &mut Option<i64>| {
        if let Some(v) = int(id) {
            *slot = Some(v);
        }
    };
    set(field::SHELL_ABORT_TIME, &mut t.shell_abort_time_ns);
    set(field::WM_ABORT_TIME, &mut t.wm_abort_time_ns);
    set(field::FINISH_TIME, &mut t.finish_time_ns);
    set(field::HANDLER, &mut t.handler);
    set(field::MERGE_TIME, &mut t.merge_time_ns);
    set(field::CREATE_TIME, &mut t.create_time_ns);
    if let Some(v) = int(field::FLAGS) {
        t.flags = Some(v as u32);
    }
    set(field::START_TRANSACTION, &mut t.start_transaction_id);
    set(field::FINISH_TRANSACTION, &mut t.finish_transaction_id);
    for f in Decoder::new(bytes).map_while(Result::ok) {
        if f.id != field::CHANGES {
            continue;
        }
        let FieldValue::Bytes(change) = f.value else {
            continue;
        };
        participant(p, transition_id, change);
    }
}

/// The row of transition `id`, added the first time.
fn transition_row(p: &mut Parser, id: i32) -> usize {
    let state = &mut p.winscope.shell_transitions;
    let rows = &mut p.storage.winscope.shell_transitions;
    if let Some(&row) = state.rows.get(&id) {
        return row;
    }
    rows.push(ShellTransitionRow {
        transition_id: i64::from(id),
        ..ShellTransitionRow::default()
    });
    state.args.push(ArgSetBuilder::default());
    state.rows.insert(id, rows.len() - 1);
    rows.len() - 1
}

/// Adds a proto's fields to its transition's args; false if it could not
/// be read whole.
fn flatten(p: &mut Parser, row: usize, bytes: &[u8]) -> bool {
    let Some(builder) = p.winscope.shell_transitions.args.get_mut(row) else {
        return false;
    };
    let Some(Ok(desc)) =
        pool().map(|pool| proto_to_args::find_message(pool, &message_name("ShellTransition")))
    else {
        return false;
    };
    let mut sink = Renaming(SetSink {
        strings: &mut p.storage.strings,
        builder,
    });
    let options = Options {
        allowed_fields: None,
        add_defaults: false,
    };
    proto_to_args::flatten(&desc, bytes, options, &mut sink).is_ok()
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

/// Imports the handler mappings: one row per handler.
pub(super) fn import_handlers(p: &mut Parser, input: &Input<'_>) {
    let base64 = base64_proto_id(&mut p.storage.strings, input.bytes);
    for f in Decoder::new(input.bytes).map_while(Result::ok) {
        let (1, FieldValue::Bytes(mapping)) = (f.id, f.value) else {
            continue;
        };
        let m = Decoder::new(mapping);
        let handler_id = m
            .find_last(1)
            .and_then(|f| f.as_i32().ok())
            .map_or(0, i64::from);
        let name = m
            .find_last(2)
            .and_then(|f| f.as_bytes().ok())
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        let handler_name = p.storage.strings.intern(&name);
        p.storage
            .winscope
            .shell_transition_handlers
            .push(ShellTransitionHandlerRow {
                handler_id,
                handler_name,
                base64_proto_id: Some(base64),
            });
    }
}

/// A time that was recorded (upstream counts 0 as none).
fn recorded(t: Option<i64>) -> bool {
    t.is_some_and(|t| t > 0)
}

/// The end of the trace: each transition's status, duration and args.
pub(super) fn finish(p: &mut Parser) {
    let state = std::mem::take(&mut p.winscope.shell_transitions);
    let (merged, played, aborted) = {
        let s = &mut p.storage.strings;
        (s.intern("merged"), s.intern("played"), s.intern("aborted"))
    };
    for t in &mut p.storage.winscope.shell_transitions {
        if recorded(t.merge_time_ns) {
            t.status = merged;
            continue;
        }
        let dispatched = recorded(t.dispatch_time_ns);
        if dispatched && recorded(t.finish_time_ns) {
            let (finish, dispatch) = (
                t.finish_time_ns.unwrap_or(0),
                t.dispatch_time_ns.unwrap_or(0),
            );
            t.duration_ns = Some(finish.saturating_sub(dispatch));
            t.status = played;
            continue;
        }
        if (recorded(t.shell_abort_time_ns) || recorded(t.wm_abort_time_ns)) && !dispatched {
            t.status = aborted;
        }
    }
    for (row, builder) in state.args.iter().enumerate() {
        let id = p.storage.args.add_set(builder);
        if let Some(t) = p.storage.winscope.shell_transitions.get_mut(row) {
            t.arg_set_id = id;
        }
    }
}
