//! ETW's file I/O events as upstream imports them: an operation (create,
//! directory enumeration, information, read or write, simple operation,
//! path operation) opens a slice named by its opcode on the thread's
//! `etw_fileio` tracks, shared by I/O request packet (`irp_ptr`) as
//! upstream's track compressor shares them; the `OpEnd` of the same
//! request closes it and adds its extra info and status. What cannot be
//! paired is still kept, as upstream keeps it: an event without a request
//! packet is an instant of its own; an end without its start is an
//! `EndOperation` instant marked `Missing Event: Start`; a start whose
//! request packet is reused, or still open at the end of the trace, ends
//! where it began, marked `Missing Event: End`.

use std::collections::BTreeMap;

use super::super::Parser;
use super::super::fields::Fields;
use super::file_io_names::{self as names, CREATE_FILE, END_OPERATION};
use super::{add_args, arg_set};
use crate::column_store::strings::StrId;
use crate::storage::Storage;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec, TrackTracker};

/// The tracks' classification.
const CLASSIFICATION: &str = "etw_fileio";

/// Which file I/O message an event carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `FileIoCreateEtwEvent`.
    Create,
    /// `FileIoDirEnumEtwEvent`.
    DirEnum,
    /// `FileIoInfoEtwEvent`.
    Info,
    /// `FileIoReadWriteEtwEvent`.
    ReadWrite,
    /// `FileIoSimpleOpEtwEvent`.
    SimpleOp,
    /// `FileIoOpEndEtwEvent`.
    OpEnd,
    /// `FileIoPathOperationEtwEvent`.
    PathOperation,
}

/// An operation waiting for its end.
#[derive(Debug, Clone, Copy)]
struct Started {
    ts: i64,
    utid: u32,
}

/// The operations started and not ended, by request packet.
#[derive(Debug, Default)]
pub struct FileIoState {
    started: BTreeMap<u64, Started>,
}

/// A message's fields by number, per kind (0: the kind has none).
struct Layout {
    irp: u32,
    file_object: u32,
    file_key: u32,
    extra_info: u32,
    ttid: u32,
    info_class: u32,
    opcode: u32,
    fallback: &'static str,
}

fn layout(kind: Kind) -> Layout {
    let l = |irp, file_object, file_key, extra_info, ttid, info_class, opcode, fallback| Layout {
        irp,
        file_object,
        file_key,
        extra_info,
        ttid,
        info_class,
        opcode,
        fallback,
    };
    match kind {
        Kind::Create => l(1, 2, 0, 0, 3, 0, 0, ""),
        Kind::DirEnum => l(1, 2, 3, 0, 4, 6, 9, "DirEnum"),
        Kind::Info => l(1, 2, 3, 4, 5, 6, 7, "Info"),
        Kind::ReadWrite => l(2, 3, 4, 0, 5, 0, 8, "ReadOrWrite"),
        Kind::SimpleOp => l(1, 2, 3, 0, 4, 0, 5, "SimpleOp"),
        Kind::OpEnd => l(1, 0, 0, 2, 0, 0, 0, ""),
        Kind::PathOperation => l(1, 2, 3, 4, 5, 6, 8, "PathOperation"),
    }
}

/// A `uint32` field.
fn u32_field(f: &Fields<'_>, id: u32) -> Option<u64> {
    if id == 0 {
        return None;
    }
    f.uint(id).map(|v| v & 0xffff_ffff)
}

/// A `uint64` field.
fn u64_field(f: &Fields<'_>, id: u32) -> Option<u64> {
    if id == 0 {
        return None;
    }
    f.uint(id)
}

/// An information class as an arg: its name when known, else its value.
fn info_class_value(p: &mut Parser, value: u64) -> ArgValue {
    match names::info_class(value) {
        Some(n) => ArgValue::String(p.storage.strings.intern(n)),
        None => ArgValue::Uint(value),
    }
}

/// A string field as an interned arg value.
fn string_arg(p: &mut Parser, f: &Fields<'_>, id: u32) -> Option<ArgValue> {
    let s = f.str(id)?;
    Some(ArgValue::String(p.storage.strings.intern(&s)))
}

/// One file I/O message of an event on `utid`'s thread at `ts`.
pub fn parse(p: &mut Parser, ts: i64, utid: u32, kind: Kind, bytes: &[u8]) {
    let f = Fields::new(bytes);
    let lay = layout(kind);
    let irp = u64_field(&f, lay.irp);
    let mut args: Vec<(&str, ArgValue)> = Vec::new();
    // An operation's end names its request packet only to find its start;
    // the packet is an arg of the starting kinds alone.
    if kind != Kind::OpEnd {
        if let Some(v) = irp {
            args.push(("I/O Request Packet", ArgValue::Pointer(v)));
        }
    }
    if kind == Kind::OpEnd {
        if let Some(v) = u64_field(&f, lay.extra_info) {
            args.push(("Extra Info", ArgValue::Uint(v)));
        }
        if let Some(v) = u32_field(&f, 3) {
            args.push(("NT Status", ArgValue::Pointer(v)));
        }
        end_event(p, irp, ts, utid, &args);
        return;
    }
    if kind == Kind::ReadWrite {
        if let Some(v) = u64_field(&f, 1) {
            args.push(("Offset", ArgValue::Uint(v)));
        }
    }
    if let Some(v) = u64_field(&f, lay.file_object) {
        args.push(("File Object", ArgValue::Pointer(v)));
    }
    if let Some(v) = u64_field(&f, lay.file_key) {
        args.push(("File Key", ArgValue::Pointer(v)));
    }
    let info_class = u32_field(&f, lay.info_class);
    if let Some(v) = u64_field(&f, lay.extra_info) {
        // The information class says what the extra info is (Info events).
        let key = match info_class {
            Some(names::FILE_DISPOSITION_INFORMATION) if kind == Kind::Info => "Disposition",
            Some(c) if kind == Kind::Info && names::FILE_SIZE_INFORMATION.contains(&c) => {
                "File Size"
            }
            _ => "Extra Info",
        };
        args.push((key, ArgValue::Uint(v)));
    }
    if let Some(v) = u32_field(&f, lay.ttid) {
        args.push(("Thread ID", ArgValue::Uint(v)));
    }
    match kind {
        Kind::Create => {
            for (id, key) in [
                (4, "Create Options"),
                (5, "File Attributes"),
                (6, "Share Access"),
            ] {
                if let Some(v) = u32_field(&f, id) {
                    args.push((key, ArgValue::Pointer(v)));
                }
            }
            if let Some(v) = string_arg(p, &f, 7) {
                args.push(("Open Path", v));
            }
        }
        Kind::ReadWrite => {
            if let Some(v) = u32_field(&f, 6) {
                args.push(("I/O Size", ArgValue::Uint(v)));
            }
            if let Some(v) = u32_field(&f, 7) {
                args.push(("I/O Flags", ArgValue::Pointer(v)));
            }
        }
        _ => {
            if let Some(c) = info_class {
                let v = info_class_value(p, c);
                args.push(("Info Class", v));
            }
        }
    }
    match kind {
        Kind::DirEnum => {
            if let Some(v) = u32_field(&f, 7) {
                args.push(("File Index", ArgValue::Uint(v)));
            }
            if let Some(v) = string_arg(p, &f, 8) {
                args.push(("Enumeration Path", v));
            }
        }
        Kind::PathOperation => {
            if let Some(v) = string_arg(p, &f, 7) {
                args.push(("File Name", v));
            }
        }
        _ => {}
    }
    let name = if kind == Kind::Create {
        names::event_type(CREATE_FILE).flatten()
    } else {
        match u32_field(&f, lay.opcode) {
            Some(op) => match names::event_type(op as u32) {
                Some(n) => n,
                None => Some(lay.fallback),
            },
            None => Some(lay.fallback),
        }
    };
    let name = p.storage.strings.intern_opt(name);
    start_event(p, irp, name, ts, utid, &args);
}

/// The pool of `utid`'s file I/O tracks.
fn pool(utid: u32) -> String {
    format!("{CLASSIFICATION}:{utid}")
}

/// A new track of `utid`'s pool, at index `idx`.
fn create_track(tracks: &mut TrackTracker, storage: &mut Storage, utid: u32, idx: u32) -> u32 {
    let mut spec = TrackSpec::new(None, CLASSIFICATION, EventType::Slice);
    spec.utid = Some(utid);
    spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(i64::from(idx)))];
    tracks.create(storage, &spec)
}

/// An instant on `utid`'s first file I/O track free at `ts`.
fn instant(p: &mut Parser, name: StrId, ts: i64, utid: u32, args: &[(&str, ArgValue)]) {
    let key = pool(utid);
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    let track_id = async_tracks.scoped(&key, ts, 0, |idx| create_track(tracks, storage, utid, idx));
    let arg_set_id = arg_set(p, args);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur: 0,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}

fn start_event(
    p: &mut Parser,
    irp: Option<u64>,
    name: StrId,
    ts: i64,
    utid: u32,
    args: &[(&str, ArgValue)],
) {
    let Some(irp) = irp else {
        instant(p, name, ts, utid, args);
        return;
    };
    if let Some(prev) = p.etw_file_io.started.get(&irp).copied() {
        // The request packet is reused: its last operation must have
        // ended, its end lost.
        end_unmatched_start(p, irp, prev.ts, prev.utid);
    }
    let key = pool(utid);
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    let track_id = async_tracks.begin(&key, irp as i64, |idx| {
        create_track(tracks, storage, utid, idx)
    });
    let arg_set_id = arg_set(p, args);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur: -1,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
    p.etw_file_io.started.insert(irp, Started { ts, utid });
}

fn end_event(p: &mut Parser, irp: Option<u64>, ts: i64, utid: u32, args: &[(&str, ArgValue)]) {
    let end_name = names::event_type(END_OPERATION).flatten();
    let Some(irp) = irp else {
        let name = p.storage.strings.intern_opt(end_name);
        instant(p, name, ts, utid, args);
        return;
    };
    if !p.etw_file_io.started.contains_key(&irp) {
        let name = p.storage.strings.intern_opt(end_name);
        let mut all = args.to_vec();
        let start = p.storage.strings.intern("Start");
        all.push(("Missing Event", ArgValue::String(start)));
        instant(p, name, ts, utid, &all);
        return;
    }
    p.etw_file_io.started.remove(&irp);
    let Some(track) = p.async_tracks.end(&pool(utid), irp as i64) else {
        return;
    };
    let Some(id) = p.slices.end(&mut p.storage, track, ts, None) else {
        return;
    };
    let mut b = ArgSetBuilder::default();
    let existing = p
        .storage
        .slices
        .get(id as usize)
        .and_then(|s| s.arg_set_id.get());
    if let Some(set) = existing {
        let old: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in old {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    add_args(p, &mut b, args);
    let set = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}

/// Ends an operation where it began, marked as missing its end.
fn end_unmatched_start(p: &mut Parser, irp: u64, ts: i64, utid: u32) {
    let end = p.storage.strings.intern("End");
    end_event(
        p,
        Some(irp),
        ts,
        utid,
        &[("Missing Event", ArgValue::String(end))],
    );
}

/// The end of the trace: every operation still open ends where it began.
pub fn finish(p: &mut Parser) {
    while let Some((irp, s)) = p
        .etw_file_io
        .started
        .first_key_value()
        .map(|(k, v)| (*k, *v))
    {
        end_unmatched_start(p, irp, s.ts, s.utid);
        // end_event removed it; never loop on one that stayed.
        p.etw_file_io.started.remove(&irp);
    }
}
