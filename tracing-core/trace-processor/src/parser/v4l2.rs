//! Video4Linux2 buffer ftrace events as upstream tracks them: each
//! `v4l2_qbuf`/`v4l2_dqbuf` and videobuf2 `vb2_v4l2_*` event is an instant
//! of category `Video 4 Linux 2` on the emitting thread's track, named by
//! the ioctl and the buffer (`VIDIOC_QBUF minor=0 seq=0 type=9 index=19`),
//! with the buffer's fields as args (type, field and timecode type by
//! name, flags as `|`-joined names); a dequeue gets a flow from the
//! queueing of the same buffer (device, sequence, type and index).

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{FlowRow, SliceRow};

/// FtraceEvent fields.
const V4L2_QBUF: u32 = 422;
const V4L2_DQBUF: u32 = 423;
const VB2_V4L2_BUF_QUEUE: u32 = 424;
const VB2_V4L2_BUF_DONE: u32 = 425;
const VB2_V4L2_QBUF: u32 = 426;
const VB2_V4L2_DQBUF: u32 = 427;

/// The ftrace events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (V4L2_QBUF, qbuf),
    (V4L2_DQBUF, dqbuf),
    (VB2_V4L2_BUF_QUEUE, vb2_buf_queue),
    (VB2_V4L2_BUF_DONE, vb2_buf_done),
    (VB2_V4L2_QBUF, vb2_qbuf),
    (VB2_V4L2_DQBUF, vb2_dqbuf),
];

/// The queueing instants of buffers not yet dequeued, by (minor,
/// sequence, type, index).
#[derive(Debug, Default)]
pub struct V4l2State {
    queued: HashMap<(i32, u32, u32, u32), u32>,
}

/// One buffer event's fields.
#[derive(Debug, Default)]
struct Buffer {
    minor: i32,
    index: Option<u32>,
    buf_type: Option<u32>,
    bytesused: Option<u32>,
    flags: u32,
    field: u32,
    timestamp: i64,
    sequence: u32,
    /// flags, frames, hours, minutes, seconds, type, userbits 0 to 3.
    timecode: [u32; 10],
}

fn u(e: &Fields<'_>, id: u32) -> u32 {
    e.uint(id).unwrap_or(0) as u32
}

/// A `v4l2_qbuf`/`v4l2_dqbuf` event.
fn v4l2_buffer(e: &Fields<'_>) -> Buffer {
    let mut timecode = [0; 10];
    // flags 7, frames 8, hours 9, minutes 10, seconds 11, type 12,
    // userbits 13 to 16.
    for (i, t) in timecode.iter_mut().enumerate() {
        *t = u(e, 7 + i as u32);
    }
    Buffer {
        minor: e.int32(5).unwrap_or(0),
        index: Some(u(e, 4)),
        buf_type: Some(u(e, 18)),
        bytesused: Some(u(e, 1)),
        flags: u(e, 3),
        field: u(e, 2),
        timestamp: e.int(17).unwrap_or(0),
        sequence: u(e, 6),
        timecode,
    }
}

/// A `vb2_v4l2_*` event (no index, type or bytes used).
fn vb2_buffer(e: &Fields<'_>) -> Buffer {
    let mut timecode = [0; 10];
    for (i, t) in timecode.iter_mut().enumerate() {
        *t = u(e, 5 + i as u32);
    }
    Buffer {
        minor: e.int32(3).unwrap_or(0),
        flags: u(e, 2),
        field: u(e, 1),
        timestamp: e.int(15).unwrap_or(0),
        sequence: u(e, 4),
        timecode,
        ..Buffer::default()
    }
}

fn buffer_type(t: u32) -> Option<&'static str> {
    const TYPES: [&str; 14] = [
        "VIDEO_CAPTURE",
        "VIDEO_OUTPUT",
        "VIDEO_OVERLAY",
        "VBI_CAPTURE",
        "VBI_OUTPUT",
        "SLICED_VBI_CAPTURE",
        "SLICED_VBI_OUTPUT",
        "VIDEO_OUTPUT_OVERLAY",
        "VIDEO_CAPTURE_MPLANE",
        "VIDEO_OUTPUT_MPLANE",
        "SDR_CAPTURE",
        "SDR_OUTPUT",
        "META_CAPTURE",
        "META_OUTPUT",
    ];
    match t {
        0x80 => Some("PRIVATE"),
        1..=14 => TYPES.get(t as usize - 1).copied(),
        _ => None,
    }
}

fn field_name(f: u32) -> Option<&'static str> {
    const FIELDS: [&str; 10] = [
        "ANY",
        "NONE",
        "TOP",
        "BOTTOM",
        "INTERLACED",
        "SEQ_TB",
        "SEQ_BT",
        "ALTERNATE",
        "INTERLACED_TB",
        "INTERLACED_BT",
    ];
    FIELDS.get(f as usize).copied()
}

fn timecode_type(t: u32) -> Option<&'static str> {
    const TYPES: [&str; 5] = ["24FPS", "25FPS", "30FPS", "50FPS", "60FPS"];
    t.checked_sub(1)
        .and_then(|i| TYPES.get(i as usize))
        .copied()
}

/// The buffer flags' names, `|`-joined, in the kernel's order (masks and
/// the zero values named as upstream names them).
fn buffer_flags(flags: u32) -> String {
    const BITS: [(u32, &str); 13] = [
        (0x1, "MAPPED"),
        (0x2, "QUEUED"),
        (0x4, "DONE"),
        (0x8, "KEYFRAME"),
        (0x10, "PFRAME"),
        (0x20, "BFRAME"),
        (0x40, "ERROR"),
        (0x80, "IN_REQUEST"),
        (0x100, "TIMECODE"),
        (0x200, "M2M_HOLD_CAPTURE_BUF"),
        (0x400, "PREPARED"),
        (0x800, "NO_CACHE_INVALIDATE"),
        (0x1000, "NO_CACHE_CLEAN"),
    ];
    let mut out: Vec<&str> = BITS
        .iter()
        .filter(|(b, _)| flags & b != 0)
        .map(|(_, n)| *n)
        .collect();
    let rest: [(bool, &str); 9] = [
        (flags & 0xe000 != 0, "TIMESTAMP_MASK"),
        (flags == 0, "TIMESTAMP_UNKNOWN"),
        (flags & 0x2000 != 0, "TIMESTAMP_MONOTONIC"),
        (flags & 0x4000 != 0, "TIMESTAMP_COPY"),
        (flags & 0x70000 != 0, "TSTAMP_SRC_MASK"),
        (flags == 0, "TSTAMP_SRC_EOF"),
        (flags & 0x10000 != 0, "TSTAMP_SRC_SOE"),
        (flags & 0x100000 != 0, "LAST"),
        (flags & 0x800000 != 0, "REQUEST_FD"),
    ];
    out.extend(rest.iter().filter(|(on, _)| *on).map(|(_, n)| *n));
    out.join("|")
}

/// The timecode flags' names, `|`-joined.
fn timecode_flags(flags: u32) -> String {
    let rest: [(bool, &str); 7] = [
        (flags == 0, "USERBITS_USERDEFINED"),
        (flags & 0x1 != 0, "FLAG_DROPFRAME"),
        (flags & 0x2 != 0, "FLAG_COLORFRAME"),
        (flags & 0xc == 0x4, "USERBITS_field(01)"),
        (flags & 0xc == 0x8, "USERBITS_field(10)"),
        (flags & 0xc == 0xc, "USERBITS_field(11)"),
        (flags & 0x8 != 0, "USERBITS_8BITCHARS"),
    ];
    let names: Vec<&str> = rest.iter().filter(|(on, _)| *on).map(|(_, n)| *n).collect();
    names.join("|")
}

fn add(p: &mut Parser, b: &mut ArgSetBuilder, key: &str, v: ArgValue) {
    let k = p.storage.strings.intern(key);
    b.add(k, k, v);
}

fn add_str(p: &mut Parser, b: &mut ArgSetBuilder, key: &str, v: Option<&str>) {
    let v = p.storage.strings.intern_opt(v.filter(|v| !v.is_empty()));
    add(p, b, key, ArgValue::String(v));
}

/// The event's instant on its thread's track, with the buffer's args.
fn instant(p: &mut Parser, ev: &FtraceInput<'_>, name: &str, buf: &Buffer) -> Option<u32> {
    let mut b = ArgSetBuilder::default();
    add(p, &mut b, "minor", ArgValue::Int(i64::from(buf.minor)));
    if let Some(i) = buf.index {
        add(p, &mut b, "index", ArgValue::Int(i64::from(i)));
    }
    if let Some(t) = buf.buf_type {
        add_str(p, &mut b, "type", buffer_type(t));
    }
    if let Some(n) = buf.bytesused {
        add(p, &mut b, "bytesused", ArgValue::Int(i64::from(n)));
    }
    add_str(p, &mut b, "flags", Some(&buffer_flags(buf.flags)));
    add_str(p, &mut b, "field", field_name(buf.field));
    add(p, &mut b, "timestamp", ArgValue::Int(buf.timestamp));
    let [
        tc_flags,
        frames,
        hours,
        minutes,
        seconds,
        tc_type,
        u0,
        u1,
        u2,
        u3,
    ] = buf.timecode;
    add_str(p, &mut b, "timecode_type", timecode_type(tc_type));
    add_str(p, &mut b, "timecode_flags", Some(&timecode_flags(tc_flags)));
    for (key, v) in [
        ("timecode_frames", frames),
        ("timecode_seconds", seconds),
        ("timecode_minutes", minutes),
        ("timecode_hours", hours),
        ("timecode_userbits0", u0),
        ("timecode_userbits1", u1),
        ("timecode_userbits2", u2),
        ("timecode_userbits3", u3),
        ("sequence", buf.sequence),
    ] {
        add(p, &mut b, key, ArgValue::Int(i64::from(v)));
    }
    let utid = p.processes.get_or_create_thread(&mut p.storage, ev.tid);
    let track = p.tracks.thread_track(&mut p.storage, utid);
    let category = p.storage.strings.intern("Video 4 Linux 2");
    let name = p.storage.strings.intern(name);
    let arg_set_id = p.storage.args.add_set(&b);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: ev.ts,
            dur: 0,
            track_id: track,
            category,
            name,
            arg_set_id: arg_set_id.into(),
            ..SliceRow::default()
        },
    )
}

/// A `VIDIOC_*` event: its name and its buffer's key.
fn ioctl(ev: &FtraceInput<'_>, what: &str) -> (String, Buffer, (i32, u32, u32, u32)) {
    let e = Fields::new(ev.body);
    let buf = v4l2_buffer(&e);
    let (t, i) = (buf.buf_type.unwrap_or(0), buf.index.unwrap_or(0));
    let name = format!(
        "{what} minor={} seq={} type={t} index={i}",
        buf.minor, buf.sequence
    );
    let key = (buf.minor, buf.sequence, t, i);
    (name, buf, key)
}

fn qbuf(p: &mut Parser, ev: &FtraceInput<'_>) {
    let (name, buf, key) = ioctl(ev, "VIDIOC_QBUF");
    if let Some(id) = instant(p, ev, &name, &buf) {
        p.v4l2.queued.insert(key, id);
    }
}

fn dqbuf(p: &mut Parser, ev: &FtraceInput<'_>) {
    let (name, buf, key) = ioctl(ev, "VIDIOC_DQBUF");
    let id = instant(p, ev, &name, &buf);
    if let Some(from) = p.v4l2.queued.remove(&key)
        && let Some(to) = id
    {
        p.storage.flows.push(FlowRow {
            slice_out: from,
            slice_in: to,
            trace_id: None,
            arg_set_id: None,
        });
    }
}

/// A videobuf2 event, named as upstream names it (type and index 0).
fn vb2(p: &mut Parser, ev: &FtraceInput<'_>, what: &str) {
    let buf = vb2_buffer(&Fields::new(ev.body));
    let name = format!(
        "{what} minor={} seq={} type=0 index=0",
        buf.minor, buf.sequence
    );
    instant(p, ev, &name, &buf);
}

fn vb2_buf_queue(p: &mut Parser, ev: &FtraceInput<'_>) {
    vb2(p, ev, "vb2_v4l2_buf_queue");
}

fn vb2_buf_done(p: &mut Parser, ev: &FtraceInput<'_>) {
    vb2(p, ev, "vb2_v4l2_buf_done");
}

fn vb2_qbuf(p: &mut Parser, ev: &FtraceInput<'_>) {
    vb2(p, ev, "vb2_v4l2_qbuf");
}

/// Upstream names the dequeue as the queueing (`vb2_v4l2_qbuf`).
fn vb2_dqbuf(p: &mut Parser, ev: &FtraceInput<'_>) {
    vb2(p, ev, "vb2_v4l2_qbuf");
}
