//! A TrackEvent's typed fields as args, as upstream's TrackEvent importer
//! adds them before the debug annotations: the interned source location
//! (`source.*`), the posted-from location of a task (`task.posted_from.*`),
//! a log message (`track_event.log_message.*`, `track_event.priority`, and
//! its `android_logs` entry), an interned histogram name
//! (`chrome_histogram_sample.name`) and correlation ids. An interned id
//! that resolves to nothing is counted in `track_event_parser_errors`.
//! Not yet: the fields upstream reflects into args through TrackEvent's
//! schema (Chrome's typed messages and TrackEvent extensions).

use std::borrow::Cow;

use protozero::{Decoder, FieldValue};

use super::debug_annotations::NameSource;
use super::interned_strings::SourceLocationIds;
use super::interned_strings::interned_str;
use crate::column_store::strings::StrId;
use crate::packet_fields::count_extra_track_event_walk;
use crate::sequence_state::Generation;
use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tables::logs::LogRow;

/// `TrackEvent`'s fields read here.
mod field {
    pub const TASK_EXECUTION: u32 = 5;
    pub const LOG_MESSAGE: u32 = 21;
    pub const CHROME_HISTOGRAM_SAMPLE: u32 = 28;
    pub const SOURCE_LOCATION_IID: u32 = 34;
    pub const CORRELATION_ID: u32 = 52;
    pub const CORRELATION_ID_STR: u32 = 53;
    pub const CORRELATION_ID_STR_IID: u32 = 54;
    /// All of the above.
    pub const READ: [u32; 7] = super::TYPED_FIELDS;
}

/// `TrackEvent`'s fields read here: the loader's walk notes whether an
/// event has any (`FieldKinds::TYPED`), and [`add_typed`] is called only
/// for those that do.
pub const TYPED_FIELDS: [u32; 7] = [
    field::TASK_EXECUTION,
    field::LOG_MESSAGE,
    field::CHROME_HISTOGRAM_SAMPLE,
    field::SOURCE_LOCATION_IID,
    field::CORRELATION_ID,
    field::CORRELATION_ID_STR,
    field::CORRELATION_ID_STR_IID,
];

/// `InternedData`'s fields read here.
mod interned {
    pub const SOURCE_LOCATIONS: u32 = 4;
    pub const LOG_MESSAGE_BODY: u32 = 20;
    pub const HISTOGRAM_NAMES: u32 = 25;
    pub const CORRELATION_ID_STR: u32 = 43;
}

fn add(storage: &mut Storage, args: &mut ArgSetBuilder, key: &str, value: ArgValue) {
    let k = storage.strings.intern(key);
    args.add(k, k, value);
}

fn add_str(storage: &mut Storage, args: &mut ArgSetBuilder, key: &str, value: &str) {
    let v = storage.strings.intern(value);
    add(storage, args, key, ArgValue::String(v));
}

/// An interned `SourceLocation`: (file name, function name, line).
fn source_location(generation: &Generation, iid: u64) -> Option<(String, String, u64)> {
    let bytes = generation.interned(interned::SOURCE_LOCATIONS, iid)?;
    let d = Decoder::new(bytes);
    let s = |n| {
        d.find_last(n)
            .and_then(|f| f.as_bytes().ok())
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    };
    let line = d.find_last(4).and_then(|f| f.as_u64().ok()).unwrap_or(0) & 0xffff_ffff;
    Some((s(2), s(3), line))
}

/// Adds the typed fields of an event at `ts` (`rest`: the fields the
/// loader left) to `args`, before its debug annotations; `utid`: the
/// event's thread (a log message needs one, and becomes its log entry).
pub fn add_typed(
    storage: &mut Storage,
    args: &mut ArgSetBuilder,
    names: &mut NameSource<'_>,
    rest: &[u8],
    ts: i64,
    utid: Option<u32>,
) {
    let generation = names.generation;
    let mut errors = 0u64;
    // The last value of each field read here, in one walk, without a
    // list per event.
    let mut last: [Option<FieldValue<'_>>; field::READ.len()] = [None; field::READ.len()];
    count_extra_track_event_walk();
    for f in Decoder::new(rest).map_while(Result::ok) {
        if let Some(i) = field::READ.iter().position(|&id| id == f.id) {
            if let Some(slot) = last.get_mut(i) {
                *slot = Some(f.value);
            }
        }
    }
    let get = |id: u32| {
        let i = field::READ.iter().position(|&r| r == id)?;
        last.get(i).copied().flatten()
    };
    let uint = |id: u32| match get(id) {
        Some(FieldValue::Varint(v)) => Some(v),
        _ => None,
    };
    let bytes = |id: u32| match get(id) {
        Some(FieldValue::Bytes(b)) => Some(b),
        _ => None,
    };

    if let Some(iid) = uint(field::SOURCE_LOCATION_IID) {
        // Kept from an earlier event of the sequence: the same args, and
        // their strings already pooled.
        let kept = names
            .cache
            .source_location(names.generation_idx, generation, iid)
            .filter(|_| iid != 0);
        match kept {
            Some(ids) => {
                args.add(ids.file.0, ids.file.0, ArgValue::String(ids.file.1));
                args.add(
                    ids.function.0,
                    ids.function.0,
                    ArgValue::String(ids.function.1),
                );
                args.add(ids.line.0, ids.line.0, ArgValue::Uint(ids.line.1));
            }
            None => match source_location(generation, iid).filter(|_| iid != 0) {
                Some((file, function, line)) => {
                    let file = file.replace('\\', "/");
                    add_str(storage, args, "source.file_name", &file);
                    add_str(storage, args, "source.function_name", &function);
                    add(storage, args, "source.line_number", ArgValue::Uint(line));
                    let id = |s: &str| storage.strings.find(s).unwrap_or(StrId::NULL);
                    let ids = SourceLocationIds {
                        file: (id("source.file_name"), id(&file)),
                        function: (id("source.function_name"), id(&function)),
                        line: (id("source.line_number"), line),
                    };
                    (names.cache).put_source_location(names.generation_idx, generation, iid, ids);
                }
                None => errors += 1,
            },
        }
    }
    if let Some(task) = bytes(field::TASK_EXECUTION) {
        let iid = Decoder::new(task)
            .find_last(1)
            .and_then(|f| f.as_u64().ok())
            .unwrap_or(0);
        match source_location(generation, iid).filter(|_| iid != 0) {
            Some((file, function, line)) => {
                add_str(
                    storage,
                    args,
                    "task.posted_from.file_name",
                    &file.replace('\\', "/"),
                );
                add_str(storage, args, "task.posted_from.function_name", &function);
                add(
                    storage,
                    args,
                    "task.posted_from.line_number",
                    ArgValue::Uint(line),
                );
            }
            None => errors += 1,
        }
    }
    if let Some(msg) = bytes(field::LOG_MESSAGE) {
        if log_message(storage, args, generation, msg, ts, utid).is_none() {
            errors += 1;
        }
    }
    if let Some(sample) = bytes(field::CHROME_HISTOGRAM_SAMPLE) {
        let d = Decoder::new(sample);
        if let Some(iid) = d.find_last(4).and_then(|f| f.as_u64().ok()) {
            if d.find_last(2).is_some() {
                // Only one of name and name_iid may be set.
                errors += 1;
            } else {
                match interned_str(generation, interned::HISTOGRAM_NAMES, iid) {
                    Some(name) => {
                        let name = name.into_owned();
                        add_str(storage, args, "chrome_histogram_sample.name", &name);
                    }
                    None => errors += 1,
                }
            }
        }
    }
    if let Some(id) = uint(field::CORRELATION_ID) {
        add_str(storage, args, "correlation_id", &format!("tp:#{id}"));
    }
    if let Some(b) = bytes(field::CORRELATION_ID_STR) {
        add_str(storage, args, "correlation_id", &String::from_utf8_lossy(b));
    }
    if let Some(iid) = uint(field::CORRELATION_ID_STR_IID) {
        if let Some(s) = interned_str(generation, interned::CORRELATION_ID_STR, iid) {
            let s = s.into_owned();
            add_str(storage, args, "correlation_id", &s);
        }
    }

    if errors > 0 {
        storage
            .stats
            .add("track_event_parser_errors", errors as i64);
    }
}

/// A `LogMessage`'s args, and its entry in `android_logs` (tagged
/// `file:line`; INFO when it gives no priority). None when its body or
/// source location does not resolve or the event has no thread.
fn log_message(
    storage: &mut Storage,
    args: &mut ArgSetBuilder,
    generation: &Generation,
    msg: &[u8],
    ts: i64,
    utid: Option<u32>,
) -> Option<()> {
    let utid = utid?;
    let d = Decoder::new(msg);
    let body_iid = d.find_last(2).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let body: Cow<'_, str> = interned_str(generation, interned::LOG_MESSAGE_BODY, body_iid)?;
    let body = body.into_owned();
    add_str(storage, args, "track_event.log_message.message", &body);
    let mut tag = StrId::NULL;
    if let Some(iid) = d.find_last(1).and_then(|f| f.as_u64().ok()) {
        let (file, function, line) = source_location(generation, iid)?;
        tag = storage.strings.intern(&format!("{file}:{line}"));
        add_str(storage, args, "track_event.log_message.file_name", &file);
        add_str(
            storage,
            args,
            "track_event.log_message.function_name",
            &function,
        );
        add(
            storage,
            args,
            "track_event.log_message.line_number",
            ArgValue::Int(line as i64),
        );
    }
    // The values are Android's log priorities (the same numbers).
    let mut prio = 4;
    if let Some(p) = d.find_last(3).and_then(|f| f.as_i64().ok()) {
        prio = if (0..=7).contains(&p) { p } else { 0 };
        add(storage, args, "track_event.priority", ArgValue::Int(prio));
    }
    let msg = storage.strings.intern(&body);
    let log_source = storage.strings.intern("android_logcat");
    storage.logs.push(LogRow {
        ts,
        utid: Some(utid),
        prio,
        log_source,
        tag,
        msg,
        arg_set_id: None,
    });
    Some(())
}
