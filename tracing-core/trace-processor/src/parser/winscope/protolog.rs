//! ProtoLog (TracePacket fields 104 and 105): Android's window manager
//! logs a message as the id of its format string and its arguments, and
//! writes the format strings, their levels, groups and source locations
//! once in a viewer config. Each message becomes a row of
//! `__intrinsic_protolog` (the `protolog` view) when parsed; the viewer
//! configs are read as the trace is read, before sorting, and the rows are
//! filled in at the end of the trace, so a config written after its
//! messages (as Android writes it) still decodes them. Several formats
//! sharing an id are told apart by the arguments' kinds, as upstream does,
//! with upstream's collision texts and stats.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use protozero::{Decoder, FieldValue};

use super::super::Parser;
use super::super::importer::Input;
use super::super::interned_strings::interned_str;
use super::protolog_format::{self, Params};
use crate::column_store::strings::StrId;
use crate::tables::winscope::ProtoLogRow;

/// TracePacket.protolog_message.
pub const PROTOLOG_MESSAGE: u32 = 104;
/// InternedData.protolog_string_args.
const INTERNED_STRING_ARGS: u32 = 36;
/// InternedData.protolog_stacktrace.
const INTERNED_STACKTRACE: u32 = 37;

/// The tag of a message whose group the configs lack.
const UNKNOWN_GROUP: &str = "UNKNOWN_GROUP";
/// The tag of a group or message whose id has several meanings.
const COLLISION_GROUP: &str = "COLLISION_GROUP";
/// What stands for a string argument whose interned text is missing.
const MISSING_STRING: &str = "<ERROR>";

/// One format string of a viewer config.
#[derive(Debug, Clone, PartialEq)]
struct Format {
    level: i64,
    group: u32,
    text: String,
    location: Option<String>,
}

/// A message parsed but not decoded yet.
#[derive(Debug)]
struct Pending {
    row: usize,
    message_id: u64,
    params: Params,
}

/// What ProtoLog keeps until the end of the trace.
#[derive(Debug, Default)]
pub struct ProtologState {
    /// Group tags by group id.
    groups: BTreeMap<u32, String>,
    /// The distinct formats of each message id.
    formats: BTreeMap<u64, Vec<Format>>,
    pending: Vec<Pending>,
}

fn fields(bytes: &[u8]) -> impl Iterator<Item = protozero::Field<'_>> {
    Decoder::new(bytes).map_while(Result::ok)
}

fn text(f: &protozero::Field<'_>) -> Option<String> {
    match f.value {
        FieldValue::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

/// Reads a viewer config as the trace is read.
pub fn on_viewer_config(p: &mut Parser, bytes: &[u8]) {
    let mut messages = Vec::new();
    for f in fields(bytes) {
        let FieldValue::Bytes(b) = f.value else {
            continue;
        };
        match f.id {
            1 => messages.push(b),
            2 => group(p, b),
            _ => {}
        }
    }
    for m in messages {
        let (mut id, mut format) = (
            0u64,
            Format {
                level: 0,
                group: 0,
                text: String::new(),
                location: None,
            },
        );
        for f in fields(m) {
            match f.id {
                1 => id = f.as_fixed64().or_else(|_| f.as_u64()).unwrap_or(0),
                2 => format.text = text(&f).unwrap_or_default(),
                3 => format.level = f.as_i64().unwrap_or(0),
                4 => format.group = f.as_u32().unwrap_or(0),
                5 => format.location = text(&f),
                _ => {}
            }
        }
        let known = p.winscope.protolog.formats.entry(id).or_default();
        if !known.contains(&format) {
            known.push(format);
        }
    }
}

fn group(p: &mut Parser, bytes: &[u8]) {
    let (mut id, mut tag) = (0u32, String::new());
    for f in fields(bytes) {
        match f.id {
            1 => id = f.as_u32().unwrap_or(0),
            3 => tag = text(&f).unwrap_or_default(),
            _ => {}
        }
    }
    match p.winscope.protolog.groups.entry(id) {
        Entry::Occupied(mut known) => {
            if *known.get() != tag {
                known.insert(COLLISION_GROUP.to_owned());
                p.storage
                    .stats
                    .incr("winscope_protolog_group_tag_collision");
            }
        }
        Entry::Vacant(slot) => {
            slot.insert(tag);
        }
    }
}

/// Parses one message: its row now, its text at the end of the trace.
pub(super) fn import(p: &mut Parser, input: &Input<'_>) {
    let mut params = Params::default();
    let (mut message_id, mut stacktrace_iid) = (0u64, None);
    let mut string_iids = Vec::new();
    for f in fields(input.bytes) {
        match (f.id, f.value) {
            (1, _) => message_id = f.as_fixed64().or_else(|_| f.as_u64()).unwrap_or(0),
            (2, _) => collect(&f, &mut string_iids, |v| v),
            (3, _) => collect(&f, &mut params.ints, zigzag),
            (4, FieldValue::Bytes(b)) => {
                params
                    .doubles
                    .extend(b.chunks_exact(8).map(|c| f64::from_le_bytes(eight(c))));
            }
            (4, _) => params.doubles.extend(f.as_f64().ok()),
            (5, _) => collect(&f, &mut params.bools, |v| v != 0),
            (6, _) => stacktrace_iid = f.as_u64().ok(),
            _ => {}
        }
    }
    for iid in string_iids {
        match interned_str(input.generation, INTERNED_STRING_ARGS, iid) {
            Some(s) => params.strings.push(s.into_owned()),
            None => {
                params.strings.push(MISSING_STRING.to_owned());
                p.storage
                    .stats
                    .incr("winscope_protolog_missing_interned_arg_parse_errors");
            }
        }
    }
    let mut stacktrace = StrId::NULL;
    if let Some(iid) = stacktrace_iid {
        match interned_str(input.generation, INTERNED_STACKTRACE, iid) {
            Some(s) => stacktrace = p.storage.strings.intern(&s),
            None => {
                // Upstream appends the marker to the string arguments.
                params.strings.push(MISSING_STRING.to_owned());
                p.storage
                    .stats
                    .incr("winscope_protolog_missing_interned_stacktrace_parse_errors");
            }
        }
    }
    let rows = &mut p.storage.winscope.protolog;
    p.winscope.protolog.pending.push(Pending {
        row: rows.len(),
        message_id,
        params,
    });
    rows.push(ProtoLogRow {
        ts: input.ts,
        stacktrace,
        ..ProtoLogRow::default()
    });
}

/// Eight bytes of a packed double.
fn eight(c: &[u8]) -> [u8; 8] {
    let mut out = [0u8; 8];
    out.copy_from_slice(c);
    out
}

fn zigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A repeated varint field's values, packed or not.
fn collect<T>(f: &protozero::Field<'_>, out: &mut Vec<T>, map: impl Fn(u64) -> T) {
    match f.packed_varints() {
        Ok(values) => out.extend(values.map(map)),
        Err(_) => out.extend(f.as_u64().ok().map(map)),
    }
}

/// Upstream's name of a level.
fn level_name(level: i64) -> &'static str {
    match level {
        1 => "DEBUG",
        2 => "VERBOSE",
        3 => "INFO",
        4 => "WARN",
        5 => "ERROR",
        6 => "WTF",
        _ => "UNKNOWN",
    }
}

/// A decoded message: level, tag, text, location.
type Decoded = (i64, String, String, Option<String>);

/// Decodes every message parsed, now that every config was read.
pub fn finish(p: &mut Parser) {
    let pending = std::mem::take(&mut p.winscope.protolog.pending);
    for m in pending {
        let Some(decoded) = decode(p, &m) else {
            p.storage
                .stats
                .incr("winscope_protolog_message_decoding_failed");
            continue;
        };
        let (level, tag, message, location) = decoded;
        let strings = &mut p.storage.strings;
        let level = strings.intern(level_name(level));
        let tag = strings.intern(&tag);
        let message = strings.intern(&message);
        let location = location.map_or(StrId::NULL, |l| strings.intern(&l));
        if let Some(row) = p.storage.winscope.protolog.get_mut(m.row) {
            row.level = level;
            row.tag = tag;
            row.message = message;
            row.location = location;
        }
    }
}

fn decode(p: &mut Parser, m: &Pending) -> Option<Decoded> {
    let state = &p.winscope.protolog;
    let formats = state.formats.get(&m.message_id)?;
    let stats = &mut p.storage.stats;
    let fitting: Vec<&Format> = if let [only] = formats.as_slice() {
        vec![only]
    } else {
        let fitting: Vec<&Format> = formats
            .iter()
            .filter(|f| protolog_format::fits(&f.text, &m.params))
            .collect();
        if fitting.len() == 1 {
            stats.incr("winscope_protolog_message_collision_resolved");
        }
        fitting
    };
    if let [only] = fitting.as_slice() {
        let text = fill(only, &m.params, stats);
        let tag = tag_of(&state.groups, only.group, stats);
        return Some((only.level, tag, text, only.location.clone()));
    }
    stats.incr("winscope_protolog_message_collision");
    let mut text = format!("<PROTOLOG COLLISION (id=0x{:x}) ", m.message_id);
    if fitting.is_empty() {
        text.push_str("NO TYPE MATCH>");
    } else {
        text.push_str("MULTIPLE TYPE MATCHES : ");
        let texts: Vec<String> = fitting
            .iter()
            .map(|f| format!("'{}'", fill(f, &m.params, stats)))
            .collect();
        text.push_str(&texts.join(",\n "));
        text.push('>');
    }
    Some((4, COLLISION_GROUP.to_owned(), text, None))
}

/// A format filled with a message's arguments (a mismatch counted).
fn fill(f: &Format, params: &Params, stats: &mut crate::storage::stats::Stats) -> String {
    let (text, mismatch) = protolog_format::format(&f.text, params);
    if mismatch {
        stats.incr("winscope_protolog_param_mismatch");
    }
    text
}

fn tag_of(
    groups: &BTreeMap<u32, String>,
    group: u32,
    stats: &mut crate::storage::stats::Stats,
) -> String {
    groups.get(&group).cloned().unwrap_or_else(|| {
        stats.incr("winscope_protolog_group_tag_missing");
        UNKNOWN_GROUP.to_owned()
    })
}
