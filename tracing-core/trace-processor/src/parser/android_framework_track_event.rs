//! Android's framework TrackEvents about process lifecycles: the
//! `FrameworksBaseTrackEvent` extensions of `TrackEvent` (from
//! frameworks/base) that say a process started (`process_start_event`,
//! field 2010) or that its binder died (`binder_died_event`, field 2013).
//! Each process they name gets one row of
//! `__intrinsic_android_track_event_process`: the start's details (its
//! first start's time is kept), the binder death's time; a start also
//! names the process and sets its uid, and a binder death ends its thread.
//! The start's two enums are written by name when the trace's own
//! `extension_descriptor` packets (TracePacket field 72) declare them, by
//! number otherwise; those packets' enums are read here.

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::tables::android::AndroidTrackEventProcessRow;
use crate::tracker::process::NamePriority;

/// `TracePacket.extension_descriptor` (its TrackEvent extensions are
/// added to the reflected schema by the loader, as the packet is read).
pub const EXTENSION_DESCRIPTOR: u32 = 72;

/// The packet importers of this module.
pub const IMPORTERS: &[(u32, Importer)] = &[(EXTENSION_DESCRIPTOR, import_descriptor)];

/// The `TrackEvent` extension fields read here.
mod extension {
    pub const PROCESS_START_EVENT: u32 = 2010;
    pub const BINDER_DIED_EVENT: u32 = 2013;
}

/// `AndroidProcessStartEvent`'s fields.
mod start {
    pub const UID: u32 = 1;
    pub const PID: u32 = 2;
    pub const PROCESS_NAME: u32 = 3;
    pub const BIND_APPLICATION_DELAY_MS: u32 = 4;
    pub const PROCESS_START_DELAY_MS: u32 = 5;
    pub const HOSTING_NAME: u32 = 6;
    pub const HOSTING_TYPE: u32 = 7;
    pub const TRIGGER_TYPE: u32 = 8;
    pub const START_SEQ_ID: u32 = 10;
    pub const PACKAGE_UID: u32 = 11;
    pub const CALLER_UID: u32 = 12;
    pub const DEFINING_UID: u32 = 13;
}

/// `AndroidBinderDiedEvent.pid`.
const BINDER_DIED_PID: u32 = 2;

/// The full names of the start event's enums.
const HOSTING_TYPE_ENUM: &str = ".com.android.internal.HostingTypeId";
const TRIGGER_TYPE_ENUM: &str = ".com.android.internal.TriggerType";

/// What this module keeps while the trace is read.
#[derive(Debug, Default)]
pub struct FrameworkTrackEventState {
    /// Enum values' names by the enum's full name (`.pkg.Enum`) and number,
    /// as the trace's extension descriptors declare them.
    enums: HashMap<String, HashMap<i64, String>>,
    /// Each process's row.
    rows: HashMap<u32, usize>,
}

/// An `extension_descriptor` packet: the enums its files declare, at the
/// top level or inside messages.
fn import_descriptor(p: &mut Parser, input: &Input<'_>) {
    // ExtensionDescriptor.extension_set (1): FileDescriptorSet.file (1).
    for set in fields(input.bytes, 1) {
        for file in fields(set, 1) {
            let package = last_str(file, 2).unwrap_or_default();
            let scope = if package.is_empty() {
                String::new()
            } else {
                format!(".{package}")
            };
            // FileDescriptorProto: message_type = 4, enum_type = 5.
            for e in fields(file, 5) {
                read_enum(&mut p.framework_track_event.enums, &scope, e);
            }
            for m in fields(file, 4) {
                read_message_enums(&mut p.framework_track_event.enums, &scope, m, 0);
            }
        }
    }
}

/// How deep nested message types are followed.
const MAX_NESTING: u32 = 32;

/// The enums a `DescriptorProto` declares (nested_type = 3, enum_type = 4).
fn read_message_enums(
    enums: &mut HashMap<String, HashMap<i64, String>>,
    scope: &str,
    message: &[u8],
    depth: u32,
) {
    if depth > MAX_NESTING {
        return;
    }
    let scope = format!("{scope}.{}", last_str(message, 1).unwrap_or_default());
    for e in fields(message, 4) {
        read_enum(enums, &scope, e);
    }
    for m in fields(message, 3) {
        read_message_enums(enums, &scope, m, depth + 1);
    }
}

/// One `EnumDescriptorProto`: name = 1, value = 2 (name = 1, number = 2).
fn read_enum(enums: &mut HashMap<String, HashMap<i64, String>>, scope: &str, e: &[u8]) {
    let name = format!("{scope}.{}", last_str(e, 1).unwrap_or_default());
    let values = enums.entry(name).or_default();
    for v in fields(e, 2) {
        let d = Decoder::new(v);
        let number = d
            .find_last(2)
            .and_then(|f| f.as_u64().ok())
            .map_or(0, |n| i64::from(n as i32));
        if let Some(n) = last_str(v, 1) {
            values.insert(number, n);
        }
    }
}

/// The length-delimited occurrences of field `id` in `bytes`.
fn fields(bytes: &[u8], id: u32) -> impl Iterator<Item = &[u8]> {
    Decoder::new(bytes)
        .flatten()
        .filter(move |f| f.id == id)
        .filter_map(|f| f.as_bytes().ok())
}

/// The last string of field `id` in `bytes`.
fn last_str(bytes: &[u8], id: u32) -> Option<String> {
    Decoder::new(bytes)
        .find_last(id)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

/// The last integer of field `id` (an int32/int64 varint).
fn last_int(d: &Decoder<'_>, id: u32) -> Option<i64> {
    d.find_last(id)
        .and_then(|f| f.as_u64().ok())
        .map(|v| v as i64)
}

/// The last int32 of field `id` (a negative one is sign-extended on the
/// wire: its low 32 bits are its value).
fn last_i32(d: &Decoder<'_>, id: u32) -> Option<i64> {
    last_int(d, id).map(|v| i64::from(v as i32))
}

/// A TrackEvent became slice `slice_id`: its framework extensions, if any,
/// among the fields the loader left (`rest`).
pub fn on_slice(p: &mut Parser, rest: &[u8], slice_id: u32) {
    for f in Decoder::new(rest).flatten() {
        if f.id != extension::PROCESS_START_EVENT && f.id != extension::BINDER_DIED_EVENT {
            continue;
        }
        let Ok(body) = f.as_bytes() else {
            continue;
        };
        let Some(ts) = p.storage.slices.get(slice_id as usize).map(|s| s.ts) else {
            return;
        };
        if f.id == extension::PROCESS_START_EVENT {
            process_start(p, body, ts);
        } else {
            binder_died(p, body, ts);
        }
    }
}

/// The row of process `upid`, made on first use.
fn row(p: &mut Parser, upid: u32) -> usize {
    if let Some(&i) = p.framework_track_event.rows.get(&upid) {
        return i;
    }
    let rows = &mut p.storage.android.track_event_processes;
    let i = rows.len();
    rows.push(AndroidTrackEventProcessRow {
        upid,
        ..AndroidTrackEventProcessRow::default()
    });
    p.framework_track_event.rows.insert(upid, i);
    i
}

/// An enum value's name, or its number when the trace declared none.
fn enum_name(p: &mut Parser, enum_name: &str, value: i64) -> StrId {
    let name = p
        .framework_track_event
        .enums
        .get(enum_name)
        .and_then(|values| values.get(&value))
        .cloned()
        .unwrap_or_else(|| value.to_string());
    p.storage.strings.intern(&name)
}

/// `AndroidProcessStartEvent`: the process (by pid) named, its uid set,
/// and its row's details; the first start's time is kept.
fn process_start(p: &mut Parser, body: &[u8], ts: i64) {
    let d = Decoder::new(body);
    let Some(pid) = last_i32(&d, start::PID) else {
        return;
    };
    let upid = p.processes.get_or_create_process(&mut p.storage, pid);
    if let Some(uid) = last_i32(&d, start::UID) {
        // A uid is a uint32 upstream: a negative int32 wraps.
        let uid = i64::from(uid as u32);
        if let Some(proc_row) = p.storage.processes.get_mut(upid as usize) {
            proc_row.uid = Some(uid);
            proc_row.android_appid = Some(uid % 100_000);
            proc_row.android_user_id = Some(uid / 100_000);
        }
    }
    if let Some(name) = last_str(body, start::PROCESS_NAME) {
        let name = p.storage.strings.intern(&name);
        p.processes
            .set_process_name(&mut p.storage, upid, name, NamePriority::Other);
    }
    let trigger = last_i32(&d, start::TRIGGER_TYPE).map(|v| enum_name(p, TRIGGER_TYPE_ENUM, v));
    let hosting = last_i32(&d, start::HOSTING_TYPE).map(|v| enum_name(p, HOSTING_TYPE_ENUM, v));
    let hosting_name = last_str(body, start::HOSTING_NAME).map(|s| p.storage.strings.intern(&s));
    let i = row(p, upid);
    let Some(r) = p.storage.android.track_event_processes.get_mut(i) else {
        return;
    };
    if let Some(v) = last_int(&d, start::START_SEQ_ID) {
        r.start_seq_id = Some(v);
    }
    if let Some(v) = last_i32(&d, start::PACKAGE_UID) {
        r.package_uid = Some(v);
    }
    if let Some(v) = last_i32(&d, start::CALLER_UID) {
        r.caller_uid = Some(v);
    }
    if let Some(v) = last_i32(&d, start::DEFINING_UID) {
        r.defining_uid = Some(v);
    }
    if r.fw_start_ts.is_none() {
        r.fw_start_ts = Some(ts);
    }
    if let Some(v) = trigger {
        r.trigger_type = v;
    }
    if let Some(v) = hosting {
        r.hosting_type = v;
    }
    if let Some(v) = hosting_name {
        r.hosting_name = v;
    }
    if let Some(v) = last_int(&d, start::BIND_APPLICATION_DELAY_MS) {
        r.bind_application_delay_ms = Some(v);
    }
    if let Some(v) = last_int(&d, start::PROCESS_START_DELAY_MS) {
        r.process_start_delay_ms = Some(v);
    }
}

/// `AndroidBinderDiedEvent`: the process of the live thread with that pid
/// gets its end time, and the thread ends.
fn binder_died(p: &mut Parser, body: &[u8], ts: i64) {
    let d = Decoder::new(body);
    let Some(pid) = last_i32(&d, BINDER_DIED_PID) else {
        return;
    };
    let Some(utid) = p.processes.thread_or_null(&p.storage, pid) else {
        return;
    };
    let Some(upid) = p.storage.threads.get(utid as usize).and_then(|t| t.upid) else {
        return;
    };
    let i = row(p, upid);
    if let Some(r) = p.storage.android.track_event_processes.get_mut(i) {
        r.fw_end_ts = Some(ts);
    }
    p.processes.end_thread(&mut p.storage, ts, pid);
}
