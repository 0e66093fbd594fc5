//! The kernel track event convention: a self-described ftrace event
//! (`ftrace_generic.rs`) whose fields carry these names becomes slices or
//! counters with no importer written for it, as upstream reads it.
//!
//! - `track_event_type` (a plain integer: `'B'` begin, `'E'` end, `'I'`
//!   instant) with `slice_name` (a string): a slice event;
//! - otherwise `counter_value` (a plain integer): a counter event;
//! - `track_name` (a string) names the track (the event's name if absent);
//! - the track is the emitting thread's, unless a scope field says
//!   otherwise: `scope_tgid` a process's, `scope_cpu` a CPU's, any other
//!   `scope_*` an arbitrary number's.
//!
//! Each track is one per (scope, event, track name), classified
//! `kernel_trackevent_{thread,process,cpu,custom}_{slice,counter}` with the
//! dimensions `utid`/`upid`/`cpu`/`scope`, `tracepoint` and `name`. An
//! event missing a field its convention needs, or with an unknown slice
//! type, counts `kernel_trackevent_format_error`.

use protozero::{Decoder, FieldValue};

use super::Parser;
use super::ftrace_described::{GenericEvent, ty};
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::args::ArgValue;
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// Whose track an event goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Thread,
    Process,
    Cpu,
    Custom,
}

/// Slices or a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Slice,
    Counter,
}

/// Where an event following the convention keeps its parts (field
/// numbers; 0 for absent).
#[derive(Debug, Clone, Copy)]
struct Convention {
    event_name: StrId,
    kind: Kind,
    scope: Scope,
    slice_type: u32,
    slice_name: u32,
    value: u32,
    track_name: u32,
    scope_field: u32,
}

/// The described events that follow the convention, by `FtraceEvent`
/// field number.
#[derive(Debug, Default)]
pub struct KernelTrackEvents {
    events: HashMap<u32, Convention>,
}

/// A varint type the convention accepts for its numbers.
fn plain_int(t: u8) -> bool {
    matches!(t, ty::INT64 | ty::UINT64 | ty::INT32 | ty::UINT32)
}

/// Remembers event `id` if its fields follow the convention.
pub fn match_convention(p: &mut Parser, id: u32, event: &GenericEvent) {
    let mut c = Convention {
        event_name: event.name,
        kind: Kind::Slice,
        scope: Scope::Thread,
        slice_type: 0,
        slice_name: 0,
        value: 0,
        track_name: 0,
        scope_field: 0,
    };
    for (n, field) in event.fields.iter().enumerate().skip(1) {
        let Some(field) = field else { continue };
        let n = n as u32;
        let name = p.storage.strings.get(field.name).unwrap_or("");
        let int = plain_int(field.ty);
        match name {
            "track_event_type" if int => c.slice_type = n,
            "slice_name" if field.ty == ty::STRING => c.slice_name = n,
            "track_name" if field.ty == ty::STRING => c.track_name = n,
            "counter_value" if int => c.value = n,
            "scope_tgid" if int => (c.scope_field, c.scope) = (n, Scope::Process),
            "scope_cpu" if int => (c.scope_field, c.scope) = (n, Scope::Cpu),
            s if int && s.starts_with("scope_") => (c.scope_field, c.scope) = (n, Scope::Custom),
            _ => {}
        }
    }
    if c.slice_type != 0 && c.slice_name != 0 {
        c.kind = Kind::Slice;
    } else if c.value != 0 {
        c.kind = Kind::Counter;
    } else {
        return;
    }
    p.ftrace_state.generic.tracks.events.insert(id, c);
}

/// The first occurrence of field `id`.
fn find(body: &[u8], id: u32) -> Option<FieldValue<'_>> {
    Decoder::new(body)
        .map_while(Result::ok)
        .find(|f| f.id == id)
        .map(|f| f.value)
}

fn as_int(v: FieldValue<'_>) -> i64 {
    match v {
        FieldValue::Varint(x) | FieldValue::Fixed64(x) => x as i64,
        FieldValue::Fixed32(x) => i64::from(x as i32),
        _ => 0,
    }
}

fn as_str(v: FieldValue<'_>) -> String {
    match v {
        FieldValue::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    }
}

fn format_error(p: &mut Parser) {
    p.storage.stats.incr("kernel_trackevent_format_error");
}

/// Imports event `id` as slices or a counter, if it follows the
/// convention.
pub fn parse(p: &mut Parser, id: u32, ts: i64, tid: i64, body: &[u8]) {
    let Some(c) = p.ftrace_state.generic.tracks.events.get(&id).copied() else {
        return;
    };
    let track_name = if c.track_name != 0 {
        let Some(v) = find(body, c.track_name) else {
            return format_error(p);
        };
        p.storage.strings.intern(&as_str(v))
    } else {
        c.event_name
    };
    let scope_value = if c.scope == Scope::Thread {
        0
    } else {
        let Some(v) = find(body, c.scope_field) else {
            return format_error(p);
        };
        as_int(v)
    };
    let kind = match c.kind {
        Kind::Slice => "slice",
        Kind::Counter => "counter",
    };
    let event_type = match c.kind {
        Kind::Slice => EventType::Slice,
        Kind::Counter => EventType::Counter,
    };
    let name = p.storage.strings.get(track_name).unwrap_or("").to_owned();
    let classification;
    let mut spec = TrackSpec::new(Some(&name), "", event_type);
    match c.scope {
        Scope::Thread => {
            classification = format!("kernel_trackevent_thread_{kind}");
            spec.utid = Some(p.processes.get_or_create_thread(&mut p.storage, tid));
        }
        Scope::Process => {
            classification = format!("kernel_trackevent_process_{kind}");
            spec.upid = Some(
                p.processes
                    .get_or_create_process(&mut p.storage, scope_value),
            );
        }
        Scope::Cpu => {
            classification = format!("kernel_trackevent_cpu_{kind}");
            let cpu = i64::from(scope_value as u32);
            spec.dimensions.push(("cpu", ArgValue::Int(cpu)));
        }
        Scope::Custom => {
            classification = format!("kernel_trackevent_custom_{kind}");
            spec.dimensions.push(("scope", ArgValue::Int(scope_value)));
        }
    }
    spec.classification = &classification;
    spec.dimensions
        .push(("tracepoint", ArgValue::String(c.event_name)));
    spec.dimensions.push(("name", ArgValue::String(track_name)));
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    match c.kind {
        Kind::Slice => {
            let (Some(t), Some(n)) = (find(body, c.slice_type), find(body, c.slice_name)) else {
                return format_error(p);
            };
            let slice_name = p.storage.strings.intern(&as_str(n));
            let row = SliceRow {
                ts,
                dur: -1,
                track_id: track,
                name: slice_name,
                ..SliceRow::default()
            };
            match as_int(t) as u8 {
                b'B' => {
                    p.slices.begin(&mut p.storage, row);
                }
                b'E' => {
                    p.slices.end(&mut p.storage, track, ts, None);
                }
                b'I' => {
                    p.slices.instant(&mut p.storage, row);
                }
                _ => format_error(p),
            }
        }
        Kind::Counter => {
            let Some(v) = find(body, c.value) else {
                return format_error(p);
            };
            p.storage.counters.push(CounterRow {
                ts,
                track_id: track,
                value: as_int(v) as f64,
                arg_set_id: OptU32::NONE,
            });
        }
    }
}
