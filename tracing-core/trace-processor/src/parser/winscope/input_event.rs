//! Android's input events (`WinscopeExtensionsImpl.android_input_event`,
//! field 5 of TracePacket field 112): each motion event, key event or
//! window dispatch of one as a row of its table, with its raw proto and its
//! fields as args; the event and down times (monotonic clock) are added in
//! trace time as `kernel_time` and `down_time`.

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::{base64_proto_id, flatten_into};
use crate::clock::machine_clock;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tables::winscope::{
    AndroidInputEventDispatchRow, AndroidKeyEventRow, AndroidMotionEventRow,
};

/// The stat counted when an event could not be flattened into args.
const PARSE_ERRORS: &str = "android_input_event_parse_errors";

/// The builtin MONOTONIC clock.
const MONOTONIC: u64 = 3;

/// AndroidInputEvent's fields, in the order upstream looks for them.
const MOTION: [u32; 2] = [1, 2];
const KEY: [u32; 2] = [3, 4];
const DISPATCH: [u32; 2] = [5, 6];

/// Imports one `AndroidInputEvent`: its first event of the kinds above.
pub(super) fn import(p: &mut Parser, ts: i64, bytes: &[u8]) {
    let d = Decoder::new(bytes);
    for id in MOTION.into_iter().chain(KEY).chain(DISPATCH) {
        let Some(f) = d.find_last(id) else {
            continue;
        };
        let FieldValue::Bytes(b) = f.value else {
            continue;
        };
        if MOTION.contains(&id) {
            motion(p, ts, b);
        } else if KEY.contains(&id) {
            key(p, ts, b);
        } else {
            dispatch(p, b);
        }
        return;
    }
}

fn varint(d: &Decoder<'_>, id: u32) -> Option<u64> {
    d.find_last(id).and_then(|f| match f.value {
        FieldValue::Varint(v) | FieldValue::Fixed64(v) => Some(v),
        FieldValue::Fixed32(v) => Some(u64::from(v)),
        _ => None,
    })
}

fn sint32(d: &Decoder<'_>, id: u32) -> Option<i64> {
    d.find_last(id)
        .and_then(|f| f.as_sint32().ok())
        .map(i64::from)
}

/// The event's fields as args, with its times in trace time.
fn event_args(
    p: &mut Parser,
    message: &str,
    bytes: &[u8],
    times: Option<(u32, u32)>,
) -> Option<u32> {
    let mut builder = ArgSetBuilder::default();
    if !flatten_into(&mut p.storage.strings, &mut builder, message, bytes, None) {
        p.storage.stats.incr(PARSE_ERRORS);
    }
    if let Some((event_time, down_time)) = times {
        let d = Decoder::new(bytes);
        for (field, key) in [(event_time, "kernel_time"), (down_time, "down_time")] {
            let raw = varint(&d, field).unwrap_or(0) as i64;
            let clock = machine_clock(MONOTONIC, p.machine);
            if let Ok(t) = p.clocks.trace_time(clock, raw) {
                let k = p.storage.strings.intern(key);
                builder.add(k, k, ArgValue::Int(t));
            }
        }
    }
    p.storage.args.add_set(&builder)
}

fn motion(p: &mut Parser, ts: i64, bytes: &[u8]) {
    let d = Decoder::new(bytes);
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    let arg_set_id = event_args(p, "AndroidMotionEvent", bytes, Some((2, 17)));
    p.storage
        .winscope
        .motion_events
        .push(AndroidMotionEventRow {
            event_id: varint(&d, 1).unwrap_or(0) as u32,
            ts,
            arg_set_id,
            base64_proto_id: Some(base64),
            source: Some(varint(&d, 3).unwrap_or(0) as u32),
            action: Some(i64::from(varint(&d, 4).unwrap_or(0) as i32)),
            device_id: Some(i64::from(varint(&d, 5).unwrap_or(0) as i32)),
            display_id: Some(sint32(&d, 6).unwrap_or(0)),
        });
}

fn key(p: &mut Parser, ts: i64, bytes: &[u8]) {
    let d = Decoder::new(bytes);
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    let arg_set_id = event_args(p, "AndroidKeyEvent", bytes, Some((2, 3)));
    p.storage.winscope.key_events.push(AndroidKeyEventRow {
        event_id: varint(&d, 1).unwrap_or(0) as u32,
        ts,
        arg_set_id,
        base64_proto_id: Some(base64),
        source: Some(varint(&d, 4).unwrap_or(0) as u32),
        action: Some(i64::from(varint(&d, 5).unwrap_or(0) as i32)),
        device_id: Some(i64::from(varint(&d, 6).unwrap_or(0) as i32)),
        display_id: Some(sint32(&d, 7).unwrap_or(0)),
        key_code: Some(i64::from(varint(&d, 8).unwrap_or(0) as i32)),
    });
}

fn dispatch(p: &mut Parser, bytes: &[u8]) {
    let d = Decoder::new(bytes);
    let base64 = base64_proto_id(&mut p.storage.strings, bytes);
    let arg_set_id = event_args(p, "AndroidWindowInputDispatchEvent", bytes, None);
    p.storage
        .winscope
        .input_event_dispatch
        .push(AndroidInputEventDispatchRow {
            event_id: varint(&d, 1).unwrap_or(0) as u32,
            arg_set_id,
            vsync_id: varint(&d, 2).unwrap_or(0) as i64,
            window_id: varint(&d, 3).unwrap_or(0) as i32,
            base64_proto_id: Some(base64),
        });
}
