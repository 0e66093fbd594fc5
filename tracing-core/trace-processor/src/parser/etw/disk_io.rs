//! ETW's disk I/O events as upstream imports them: each is a slice
//! (category `ETW Disk I/O`) named by its opcode (`DiskRead`,
//! `DiskWriteInit`, ...), as long as its response time says, on the
//! issuing thread's `etw_diskio` tracks (shared by time, as upstream's
//! track compressor places slices of known extent), with its fields as
//! args. An event without an opcode is ignored, one with an opcode
//! upstream does not name is counted (`missing_disk_io_event_name`), and
//! one with a negative response time (no slice can end before it starts)
//! is counted in `slice_negative_duration`.

use super::super::Parser;
use super::super::fields::Fields;
use super::arg_set;
use crate::storage::args::ArgValue;
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// The tracks' classification.
const CLASSIFICATION: &str = "etw_diskio";

/// `DiskIoEtwEvent`'s fields.
mod field {
    pub const DISK_NUMBER: u32 = 1;
    pub const IRP_FLAGS: u32 = 2;
    pub const TRANSFER_SIZE: u32 = 3;
    pub const BYTE_OFFSET: u32 = 4;
    pub const FILE_OBJECT: u32 = 5;
    pub const IRP_PTR: u32 = 6;
    pub const RESPONSE_TIME: u32 = 7;
    pub const ISSUING_THREAD_ID: u32 = 8;
    pub const OPCODE: u32 = 9;
}

/// An opcode's name.
fn event_name(opcode: u64) -> Option<&'static str> {
    Some(match opcode {
        10 => "DiskRead",
        11 => "DiskWrite",
        12 => "DiskReadInit",
        13 => "DiskWriteInit",
        14 => "DiskFlush",
        15 => "DiskFlushInit",
        _ => return None,
    })
}

/// One disk I/O event of `utid`'s thread at `ts`.
pub fn parse(p: &mut Parser, ts: i64, utid: u32, bytes: &[u8]) {
    let f = Fields::new(bytes);
    let Some(opcode) = f.uint(field::OPCODE) else {
        return;
    };
    let u32f = |id| f.uint(id).map(|v| v & 0xffff_ffff);
    let mut args: Vec<(&str, ArgValue)> = Vec::new();
    if let Some(v) = f.uint(field::IRP_PTR) {
        args.push(("Irp Ptr", ArgValue::Pointer(v)));
    }
    if let Some(v) = u32f(field::DISK_NUMBER) {
        args.push(("Disk Number", ArgValue::Uint(v)));
    }
    if let Some(v) = u32f(field::IRP_FLAGS) {
        args.push(("Irp Flags", ArgValue::Pointer(v)));
    }
    if let Some(v) = u32f(field::TRANSFER_SIZE) {
        args.push(("Transfer Size", ArgValue::Uint(v)));
    }
    if let Some(v) = f.int(field::BYTE_OFFSET) {
        args.push(("Byte Offset", ArgValue::Int(v)));
    }
    if let Some(v) = f.uint(field::FILE_OBJECT) {
        args.push(("File Object", ArgValue::Pointer(v)));
    }
    let response_time = f.int(field::RESPONSE_TIME);
    if let Some(v) = response_time {
        args.push(("Response Time (microseconds)", ArgValue::Int(v)));
    }
    if let Some(v) = u32f(field::ISSUING_THREAD_ID) {
        args.push(("Issuing Thread ID", ArgValue::Uint(v)));
    }
    let Some(name) = event_name(opcode & 0xffff_ffff) else {
        p.storage.stats.incr("missing_disk_io_event_name");
        return;
    };
    // Upstream takes the response time as the slice's duration.
    let dur = response_time.unwrap_or(0);
    if dur < 0 {
        p.storage.stats.incr("slice_negative_duration");
        return;
    }
    let key = format!("{CLASSIFICATION}:{utid}");
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    let track_id = async_tracks.scoped(&key, ts, dur, |idx| {
        let mut spec = TrackSpec::new(None, CLASSIFICATION, EventType::Slice);
        spec.utid = Some(utid);
        spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(i64::from(idx)))];
        tracks.create(storage, &spec)
    });
    let arg_set_id = arg_set(p, &args);
    let category = p.storage.strings.intern("ETW Disk I/O");
    let name = p.storage.strings.intern(name);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur,
            track_id,
            category,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}
