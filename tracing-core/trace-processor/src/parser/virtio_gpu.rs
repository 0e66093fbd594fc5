//! The `virtio_gpu_cmd_queue` and `virtio_gpu_cmd_response` ftrace events
//! of a virtual machine's GPU, as upstream shows them: per queue (the
//! `control` and `cursor` virtqueues, named `Control` and `Cursor`) each
//! command is a slice named by its type from its queueing to the response
//! of its sequence number, on `Virtgpu <queue> Queue` tracks shared by
//! sequence number; each event sets the queue's free slots (`Virtgpu
//! <queue> Free`), and a response to a command without a fence records
//! its latency (`Virtgpu <queue> Latency`). Other queues are ignored, as
//! upstream ignores them.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::hash::HashMap;
use crate::storage::args::ArgValue;
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// FtraceEvent.virtio_gpu_cmd_queue.
const CMD_QUEUE: u32 = 468;
/// FtraceEvent.virtio_gpu_cmd_response.
const CMD_RESPONSE: u32 = 469;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] =
    &[(CMD_QUEUE, cmd_queue), (CMD_RESPONSE, cmd_response)];

/// Command names from 0x100 (2D commands).
const CMDS_2D: [&str; 14] = [
    "GET_DISPLAY_INFO",
    "RESOURCE_CREATE_2D",
    "RESOURCE_UNREF",
    "SET_SCANOUT",
    "RESOURCE_FLUSH",
    "TRANSFER_TO_HOST_2D",
    "RESOURCE_ATTACH_BACKING",
    "RESOURCE_DETACH_BACKING",
    "GET_CAPSET_INFO",
    "GET_CAPSET",
    "GET_EDID",
    "RESOURCE_ASSIGN_UUID",
    "RESOURCE_CREATE_BLOB",
    "SET_SCANOUT_BLOB",
];
/// Command names from 0x200 (3D commands).
const CMDS_3D: [&str; 10] = [
    "CTX_CREATE",
    "CTX_DESTROY",
    "CTX_ATTACH_RESOURCE",
    "CTX_DETACH_RESOURCE",
    "RESOURCE_CREATE_3D",
    "TRANSFER_TO_HOST_3D",
    "TRANSFER_FROM_HOST_3D",
    "SUBMIT_3D",
    "RESOURCE_MAP_BLOB",
    "RESOURCE_UNMAP_BLOB",
];
/// Command names from 0x300 (cursor commands).
const CMDS_CURSOR: [&str; 2] = ["UPDATE_CURSOR", "MOVE_CURSOR"];

/// A command type's name ("" for an unknown one).
fn command_name(ty: u64) -> &'static str {
    let (base, names): (u64, &[&'static str]) = match ty {
        0x100..=0x1ff => (0x100, &CMDS_2D),
        0x200..=0x2ff => (0x200, &CMDS_3D),
        0x300..=0x3ff => (0x300, &CMDS_CURSOR),
        _ => return "",
    };
    usize::try_from(ty - base)
        .ok()
        .and_then(|i| names.get(i))
        .copied()
        .unwrap_or("")
}

/// Per queue, when each unfenced command was queued.
#[derive(Debug, Default)]
pub struct VirtioGpuState {
    starts: HashMap<(&'static str, u64), i64>,
}

/// The queue an event's name stands for.
fn queue(name: Option<&str>) -> Option<&'static str> {
    match name? {
        "control" => Some("Control"),
        "cursor" => Some("Cursor"),
        _ => None,
    }
}

/// A value on the queue's counter track of this kind.
fn counter(p: &mut Parser, ts: i64, queue: &'static str, what: &str, ty: &str, value: f64) {
    let name = format!("Virtgpu {queue} {what}");
    let q = p.storage.strings.intern(queue);
    let mut spec = TrackSpec::new(Some(&name), ty, EventType::Counter);
    spec.dimensions = vec![("virtgpu_name", ArgValue::String(q))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value,
        arg_set_id: OptU32::NONE,
    });
}

/// The compressor's key of a queue's command tracks.
fn pool_key(queue: &str) -> String {
    format!("virtgpu_queue_event|{queue}")
}

fn cmd_queue(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let Some(queue) = queue(e.str(5).as_deref()) else {
        return;
    };
    let num_free = e.uint(6).unwrap_or(0) as u32;
    counter(
        p,
        ev.ts,
        queue,
        "Free",
        "virtgpu_num_free",
        f64::from(num_free),
    );
    let seqno = e.uint(7).unwrap_or(0) as u32;
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    let track = async_tracks.begin(&pool_key(queue), i64::from(seqno), |idx| {
        let name = format!("Virtgpu {queue} Queue");
        let q = storage.strings.intern(queue);
        let mut spec = TrackSpec::new(Some(&name), "virtgpu_queue_event", EventType::Slice);
        spec.dimensions = vec![
            ("virtgpu_name", ArgValue::String(q)),
            ("track_compressor_idx", ArgValue::Int(i64::from(idx))),
        ];
        tracks.create(storage, &spec)
    });
    let name = p
        .storage
        .strings
        .intern(command_name(e.uint(8).unwrap_or(0)));
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
    // A fenced command's answer may come late: no latency from it.
    if e.uint(3).unwrap_or(0) == 0 {
        p.virtio_gpu.starts.insert((queue, u64::from(seqno)), ev.ts);
    }
}

fn cmd_response(p: &mut Parser, ev: &FtraceInput<'_>) {
    let e = Fields::new(ev.body);
    let Some(queue) = queue(e.str(5).as_deref()) else {
        return;
    };
    let num_free = e.uint(6).unwrap_or(0) as u32;
    counter(
        p,
        ev.ts,
        queue,
        "Free",
        "virtgpu_num_free",
        f64::from(num_free),
    );
    let seqno = e.uint(7).unwrap_or(0) as u32;
    if let Some(track) = p.async_tracks.end(&pool_key(queue), i64::from(seqno)) {
        p.slices.end(&mut p.storage, track, ev.ts, None);
    }
    if let Some(start) = p.virtio_gpu.starts.remove(&(queue, u64::from(seqno))) {
        let latency = ev.ts.saturating_sub(start) as f64;
        counter(p, ev.ts, queue, "Latency", "virtgpu_latency", latency);
    }
}
