//! The virtio video device's ftrace events as upstream tracks them: a
//! resource queued (`virtio_video_resource_queue`) opens a `Resource #<id>`
//! slice on a `virtio_video stream #<stream> INPUT|OUTPUT` track shared by
//! resource id, closed with the buffer's sizes, queue and timestamp as
//! args when it is done; commands and their responses
//! (`virtio_video_cmd`, `_done`) are 100 µs slices named by command on a
//! stream's `Requests` or `Responses` tracks, overlapping ones spread over
//! several tracks of the same name.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// FtraceEvent fields.
const VIRTIO_VIDEO_CMD: u32 = 439;
const VIRTIO_VIDEO_CMD_DONE: u32 = 440;
const VIRTIO_VIDEO_RESOURCE_QUEUE: u32 = 441;
const VIRTIO_VIDEO_RESOURCE_QUEUE_DONE: u32 = 442;

/// The ftrace events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (VIRTIO_VIDEO_CMD, cmd),
    (VIRTIO_VIDEO_CMD_DONE, cmd_done),
    (VIRTIO_VIDEO_RESOURCE_QUEUE, resource_queue),
    (VIRTIO_VIDEO_RESOURCE_QUEUE_DONE, resource_queue_done),
];

/// How long a command slice lasts (upstream's fixed 100 µs).
const CMD_DURATION: i64 = 100_000;

/// The command tracks of each (stream, is response), with the end of
/// their last slice.
#[derive(Debug, Default)]
pub struct VirtioVideoState {
    command_tracks: HashMap<(u32, bool), Vec<(u32, i64)>>,
}

fn queue_name(queue_type: u64) -> &'static str {
    match queue_type {
        0x100 => "INPUT",
        0x101 => "OUTPUT",
        _ => "Unknown",
    }
}

fn command_name(ty: u64) -> &'static str {
    const NAMES: [&str; 15] = [
        "QUERY_CAPABILITY",
        "STREAM_CREATE",
        "STREAM_DESTROY",
        "STREAM_DRAIN",
        "RESOURCE_CREATE",
        "RESOURCE_QUEUE",
        "RESOURCE_DESTROY_ALL",
        "QUEUE_CLEAR",
        "GET_PARAMS",
        "SET_PARAMS",
        "QUERY_CONTROL",
        "GET_CONTROL",
        "SET_CONTROL",
        "GET_PARAMS_EXT",
        "SET_PARAMS_EXT",
    ];
    ty.checked_sub(0x100)
        .and_then(|i| usize::try_from(i).ok())
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("Unknown")
}

/// The compressor's key of a stream queue's resource tracks.
fn pool_key(stream: u32, queue_type: u32) -> String {
    format!("virtio_video_queue_event|{stream}|{queue_type}")
}

fn resource_queue(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let stream = e.int32(7).unwrap_or(0) as u32;
    let queue_type = e.uint(5).unwrap_or(0) as u32;
    let resource = e.int32(6).unwrap_or(0);
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    let track = async_tracks.begin(
        &pool_key(stream, queue_type),
        i64::from(resource as u32),
        |idx| {
            let name = format!(
                "virtio_video stream #{stream} {}",
                queue_name(u64::from(queue_type))
            );
            let mut spec =
                TrackSpec::new(Some(&name), "virtio_video_queue_event", EventType::Slice);
            spec.dimensions = vec![
                ("virtio_stream_id", ArgValue::Int(i64::from(stream))),
                ("virtio_queue_type", ArgValue::Int(i64::from(queue_type))),
                ("track_compressor_idx", ArgValue::Int(i64::from(idx))),
            ];
            tracks.create(storage, &spec)
        },
    );
    let name = p.storage.strings.intern(&format!("Resource #{resource}"));
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: ev.ts,
            dur: -1,
            track_id: track,
            name,
            ..SliceRow::default()
        },
    );
}

fn add(p: &mut Parser, b: &mut ArgSetBuilder, key: &str, v: ArgValue) {
    let k = p.storage.strings.intern(key);
    b.add(k, k, v);
}

fn resource_queue_done(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let stream = e.int32(7).unwrap_or(0);
    let queue_type = e.uint(5).unwrap_or(0) as u32;
    let resource = e.int32(6).unwrap_or(0);
    let Some(track) = p.async_tracks.end(
        &pool_key(stream as u32, queue_type),
        i64::from(resource as u32),
    ) else {
        return;
    };
    let Some(slice) = p.slices.end(&mut p.storage, track, ev.ts, None) else {
        return;
    };
    let mut b = ArgSetBuilder::default();
    add(p, &mut b, "stream_id", ArgValue::Int(i64::from(stream)));
    add(p, &mut b, "resource_id", ArgValue::Int(i64::from(resource)));
    let q = p.storage.strings.intern(queue_name(u64::from(queue_type)));
    add(p, &mut b, "queue_type", ArgValue::String(q));
    for (i, key) in ["data_size0", "data_size1", "data_size2", "data_size3"]
        .iter()
        .enumerate()
    {
        let v = e.uint(i as u32 + 1).unwrap_or(0) as u32;
        add(p, &mut b, key, ArgValue::Int(i64::from(v)));
    }
    add(
        p,
        &mut b,
        "timestamp",
        ArgValue::Uint(e.uint(8).unwrap_or(0)),
    );
    let set = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(slice as usize) {
        s.arg_set_id = set.into();
    }
}

fn command(p: &mut Parser, ev: &FtraceInput<'_>, response: bool) {
    let e = Fields::new(ev.body);
    let stream = e.uint(1).unwrap_or(0) as u32;
    let ty = e.uint(2).unwrap_or(0) as u32;
    let end = ev.ts.saturating_add(CMD_DURATION);
    let pool = p
        .virtio_video
        .command_tracks
        .entry((stream, response))
        .or_default();
    let track = match pool.iter_mut().find(|(_, e)| *e <= ev.ts) {
        Some(slot) => {
            slot.1 = end;
            slot.0
        }
        None => {
            let name = format!(
                "virtio_video stream #{stream} {}",
                if response { "Responses" } else { "Requests" }
            );
            let mut spec = TrackSpec::new(Some(&name), "virtio_video_command", EventType::Slice);
            spec.dimensions = vec![
                ("virtio_stream_id", ArgValue::Int(i64::from(stream))),
                ("is_response", ArgValue::Int(i64::from(response))),
            ];
            let track = p.tracks.create(&mut p.storage, &spec);
            p.virtio_video
                .command_tracks
                .entry((stream, response))
                .or_default()
                .push((track, end));
            track
        }
    };
    let name = p.storage.strings.intern(command_name(u64::from(ty)));
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: ev.ts,
            dur: CMD_DURATION,
            track_id: track,
            name,
            ..SliceRow::default()
        },
    );
}

fn cmd(p: &mut Parser, ev: &FtraceInput<'_>) {
    command(p, ev, false);
}

fn cmd_done(p: &mut Parser, ev: &FtraceInput<'_>) {
    command(p, ev, true);
}
