//! ftrace events our schema does not know, typed by the trace itself.
//!
//! Two encodings exist. The old one is `FtraceEvent.generic` (a
//! `GenericFtraceEvent`: the event's name and a list of named fields, each
//! a string, a signed or an unsigned value). The newer one (a recorder
//! with `denser_generic_event_encoding`) gives each such event a field
//! number of its own inside `FtraceEvent`, from 65536 up, and describes it
//! once per trace in the bundle (`FtraceEventBundle.generic_event_descriptors`:
//! the number and a serialised `DescriptorProto` of the event's message,
//! made from the kernel's `format` file). Both become `ftrace_event` rows
//! with the fields as args; the newer one's args are typed by the
//! descriptor's field types as the typed events' are (`ftrace_raw.rs`).
//!
//! An event whose fields follow the kernel track event convention (a
//! `track_event_type` and a `slice_name`, or a `counter_value`; optionally
//! `track_name` and a scope field) also becomes slices or counters:
//! `ftrace_kernel_track.rs`.
//!
//! A descriptor that does not fit (a field number of 32 or more, a type
//! past `sint64`), an event whose number has no descriptor, or a field the
//! descriptor lacks counts `ftrace_generic_descriptor_errors`.

use protozero::{Decoder, FieldValue};

use super::Parser;
use super::ftrace_described::{GenericEvent, GenericField, ty};
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::sched_rows::FtraceEventRow;

/// `FtraceEvent.generic`: the old self-describing event.
pub const LEGACY_GENERIC: u32 = 327;
/// The first `FtraceEvent` field number kept for events described by the
/// trace.
pub const FIRST_DESCRIBED: u32 = 65536;
/// `FtraceEventBundle.generic_event_descriptors`.
const BUNDLE_DESCRIPTORS: u32 = 11;
/// Field numbers a described event may use (more means a corrupt trace).
const MAX_FIELDS: u64 = 32;

/// The events the trace described so far, by `FtraceEvent` field number.
#[derive(Debug, Default)]
pub struct GenericEvents {
    events: HashMap<u32, GenericEvent>,
    /// The events that follow the kernel track event convention.
    pub(super) tracks: super::ftrace_kernel_track::KernelTrackEvents,
}

/// Reads the descriptors a bundle carries (the first description of a
/// number wins, as upstream keeps it).
pub fn add_descriptors(p: &mut Parser, bundle: &[u8]) {
    let d = Decoder::new(bundle);
    for f in d.map_while(Result::ok) {
        if f.id != BUNDLE_DESCRIPTORS {
            continue;
        }
        let Ok(body) = f.as_bytes() else { continue };
        let mut id = 0u32;
        let mut descriptor: &[u8] = &[];
        for g in Decoder::new(body).map_while(Result::ok) {
            match (g.id, g.value) {
                (1, FieldValue::Varint(v)) => id = v as u32,
                (2, FieldValue::Bytes(b)) => descriptor = b,
                _ => {}
            }
        }
        add_descriptor(p, id, descriptor);
    }
}

/// Reads one event's `DescriptorProto`: name 1, fields 2 (each a
/// `FieldDescriptorProto`: name 1, number 3, type 5).
fn add_descriptor(p: &mut Parser, id: u32, descriptor: &[u8]) {
    if p.ftrace_state.generic.events.contains_key(&id) {
        return;
    }
    let mut name = "";
    let mut fields: Vec<Option<GenericField>> = Vec::new();
    for f in Decoder::new(descriptor).map_while(Result::ok) {
        match (f.id, f.value) {
            (1, FieldValue::Bytes(b)) => name = std::str::from_utf8(b).unwrap_or(""),
            (2, FieldValue::Bytes(b)) => {
                let (mut fname, mut number, mut fty) = ("", 0u64, 0u64);
                for g in Decoder::new(b).map_while(Result::ok) {
                    match (g.id, g.value) {
                        (1, FieldValue::Bytes(s)) => fname = std::str::from_utf8(s).unwrap_or(""),
                        (3, FieldValue::Varint(v)) => number = v,
                        (5, FieldValue::Varint(v)) => fty = v,
                        _ => {}
                    }
                }
                if number >= MAX_FIELDS || fty > u64::from(ty::SINT64) {
                    p.storage.stats.incr("ftrace_generic_descriptor_errors");
                    return;
                }
                let slot = number as usize;
                if slot >= fields.len() {
                    fields.resize(slot + 1, None);
                }
                fields[slot] = Some(GenericField {
                    name: p.storage.strings.intern(fname),
                    ty: fty as u8,
                });
            }
            _ => {}
        }
    }
    let event = GenericEvent {
        name: p.storage.strings.intern(name),
        fields,
    };
    super::ftrace_kernel_track::match_convention(p, id, &event);
    p.ftrace_state.generic.events.insert(id, event);
}

/// Imports a self-described event (field `id` of `FtraceEvent`, bytes
/// `body`): its slices or counters when it follows the kernel track event
/// convention (only once every CPU's data is valid, `full`), and its
/// `ftrace_event` row.
pub fn parse(p: &mut Parser, cpu: u32, ts: i64, tid: i64, id: u32, body: &[u8], full: bool) {
    if id == LEGACY_GENERIC {
        legacy(p, cpu, ts, tid, body);
        return;
    }
    if full {
        super::ftrace_kernel_track::parse(p, id, ts, tid, body);
    }
    // The descriptor is read in place while the strings are interned.
    let Parser {
        ftrace_state,
        storage,
        ..
    } = p;
    let Some(event) = ftrace_state.generic.events.get(&id) else {
        storage.stats.incr("ftrace_generic_descriptor_errors");
        return;
    };
    let name = event.name;
    let mut args = ArgSetBuilder::default();
    for f in Decoder::new(body).map_while(Result::ok) {
        let Some(field) = event.fields.get(f.id as usize).copied().flatten() else {
            storage.stats.incr("ftrace_generic_descriptor_errors");
            continue;
        };
        if let Some(value) = typed_value(storage, field.ty, f.value) {
            args.add(field.name, field.name, value);
        }
    }
    push_row(p, cpu, ts, tid, name, &args);
}

/// A field's value as an arg of its declared type: signed types are
/// integers, unsigned ones unsigned, strings and bytes strings, floating
/// types reals; groups, messages and unknown types give none.
pub fn typed_value(storage: &mut Storage, t: u8, v: FieldValue<'_>) -> Option<ArgValue> {
    let int = match v {
        FieldValue::Varint(x) | FieldValue::Fixed64(x) => Some(x),
        FieldValue::Fixed32(x) => Some(u64::from(x)),
        _ => None,
    };
    Some(match t {
        ty::INT32 | ty::INT64 | ty::SFIXED64 | ty::BOOL | ty::ENUM => ArgValue::Int(int? as i64),
        ty::SFIXED32 => ArgValue::Int(i64::from(int? as u32 as i32)),
        ty::UINT32 | ty::UINT64 | ty::FIXED32 | ty::FIXED64 => ArgValue::Uint(int?),
        ty::SINT32 | ty::SINT64 => {
            let x = int?;
            ArgValue::Int(((x >> 1) as i64) ^ -((x & 1) as i64))
        }
        ty::STRING | ty::BYTES => match v {
            FieldValue::Bytes(b) => {
                ArgValue::String(storage.strings.intern(&String::from_utf8_lossy(b)))
            }
            _ => return None,
        },
        ty::DOUBLE => ArgValue::Real(f64::from_bits(int?)),
        ty::FLOAT => ArgValue::Real(f64::from(f32::from_bits(int? as u32))),
        _ => return None,
    })
}

/// `GenericFtraceEvent`: the event's name (1) and its fields (2: name 1,
/// then `str_value` 3, `int_value` 4 or `uint_value` 5), every number an
/// integer arg.
fn legacy(p: &mut Parser, cpu: u32, ts: i64, tid: i64, body: &[u8]) {
    let mut name = p.storage.strings.intern("");
    let mut args = ArgSetBuilder::default();
    for f in Decoder::new(body).map_while(Result::ok) {
        match (f.id, f.value) {
            (1, FieldValue::Bytes(b)) => {
                name = p.storage.strings.intern(&String::from_utf8_lossy(b));
            }
            (2, FieldValue::Bytes(b)) => {
                let mut key = "".into();
                let mut value = None;
                for g in Decoder::new(b).map_while(Result::ok) {
                    match (g.id, g.value) {
                        (1, FieldValue::Bytes(s)) => key = String::from_utf8_lossy(s),
                        (3, FieldValue::Bytes(s)) => value = Some(Err(s)),
                        (4 | 5, FieldValue::Varint(v)) => value = Some(Ok(v as i64)),
                        _ => {}
                    }
                }
                let value = match value {
                    Some(Ok(v)) => ArgValue::Int(v),
                    Some(Err(s)) => {
                        ArgValue::String(p.storage.strings.intern(&String::from_utf8_lossy(s)))
                    }
                    None => continue,
                };
                let key = p.storage.strings.intern(&key);
                args.add(key, key, value);
            }
            _ => {}
        }
    }
    push_row(p, cpu, ts, tid, name, &args);
}

fn push_row(p: &mut Parser, cpu: u32, ts: i64, tid: i64, name: StrId, args: &ArgSetBuilder) {
    let utid = p.processes.get_or_create_thread(&mut p.storage, tid);
    let arg_set_id = p.storage.args.add_set(args);
    p.storage.sched.ftrace_events.push(FtraceEventRow {
        ts,
        name,
        utid,
        arg_set_id,
        common_flags: 0,
        ucpu: cpu,
    });
}
