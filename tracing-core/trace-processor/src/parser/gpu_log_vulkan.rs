//! Two GPU packets that become slices on one global track each, as
//! upstream records them: `gpu_log` (TracePacket field 63), a log line as
//! an instant named by its severity on the `GPU Log` track with its tag
//! and message as args; and `vulkan_api_event` (field 65), whose
//! `vkQueueSubmit` is a slice of its duration on the `Vulkan Events` track
//! with the pid, tid, command buffers and submission id as args (a debug
//! object name is kept for the render stages that name its handle).

use protozero::{Decoder, FieldValue};

use super::Parser;
use super::fields::Fields;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.gpu_log.
const GPU_LOG: u32 = 63;
/// TracePacket.vulkan_api_event.
const VULKAN_API_EVENT: u32 = 65;

/// The packets this module imports.
pub const IMPORTERS: &[(u32, Importer)] =
    &[(GPU_LOG, gpu_log), (VULKAN_API_EVENT, vulkan_api_event)];

/// Severity names by value; a value past the list is the last one.
const SEVERITIES: [&str; 7] = [
    "UNSPECIFIED",
    "VERBOSE",
    "DEBUG",
    "INFO",
    "WARNING",
    "ERROR",
    "UNKNOWN_SEVERITY",
];

/// The one slice track of this name and type.
fn global_track(p: &mut Parser, name: &str, classification: &str) -> u32 {
    let spec = TrackSpec::new(Some(name), classification, EventType::Slice);
    p.tracks.interned_counter(&mut p.storage, &spec)
}

/// A complete slice on `track`.
fn slice(p: &mut Parser, ts: i64, dur: i64, track: u32, name: &str, args: &ArgSetBuilder) {
    let name = p.storage.strings.intern(name);
    let arg_set_id = p.storage.args.add_set(args);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur,
            track_id: track,
            name,
            arg_set_id: arg_set_id.into(),
            ..SliceRow::default()
        },
    );
}

fn arg(p: &mut Parser, b: &mut ArgSetBuilder, key: &str, v: ArgValue) {
    let k = p.storage.strings.intern(key);
    b.add(k, k, v);
}

fn gpu_log(p: &mut Parser, input: &Input<'_>) {
    let e = Fields::new(input.bytes);
    let severity = usize::try_from(e.uint(1).unwrap_or(0))
        .ok()
        .and_then(|s| SEVERITIES.get(s))
        .copied()
        .unwrap_or(SEVERITIES[SEVERITIES.len() - 1]);
    let track = global_track(p, "GPU Log", "gpu_log");
    let mut b = ArgSetBuilder::default();
    if let Some(tag) = e.str(2) {
        let v = p.storage.strings.intern(&tag);
        arg(p, &mut b, "tag", ArgValue::String(v));
    }
    if let Some(msg) = e.str(3) {
        let v = p.storage.strings.intern(&msg);
        arg(p, &mut b, "message", ArgValue::String(v));
    }
    slice(p, input.ts, 0, track, severity, &b);
}

/// The values of a repeated `uint64` field, packed or not.
pub(super) fn repeated_u64(bytes: &[u8], id: u32) -> Vec<u64> {
    let mut out = Vec::new();
    for f in Decoder::new(bytes)
        .map_while(Result::ok)
        .filter(|f| f.id == id)
    {
        match f.value {
            FieldValue::Varint(v) => out.push(v),
            FieldValue::Bytes(_) => {
                if let Ok(packed) = f.packed_varints() {
                    out.extend(packed);
                }
            }
            _ => {}
        }
    }
    out
}

fn vulkan_api_event(p: &mut Parser, input: &Input<'_>) {
    let e = Fields::new(input.bytes);
    if let Some(named) = e.bytes(1) {
        // VkDebugUtilsObjectName: object_type (3), object (4), object_name
        // (5); the render stages show the names of their handles.
        let n = Fields::new(named);
        let key = (n.int32(3).unwrap_or(0), n.uint(4).unwrap_or(0));
        let name = n.str(5).unwrap_or_default().into_owned();
        p.gpu_render_stage.debug_names.insert(key, name);
    }
    let Some(submit) = e.bytes(2) else {
        return;
    };
    let s = Fields::new(submit);
    let track = global_track(p, "Vulkan Events", "vulkan_events");
    let mut b = ArgSetBuilder::default();
    arg(
        p,
        &mut b,
        "pid",
        ArgValue::Int(s.uint(2).unwrap_or(0) as u32 as i64),
    );
    arg(
        p,
        &mut b,
        "tid",
        ArgValue::Int(s.uint(3).unwrap_or(0) as u32 as i64),
    );
    let buffers = repeated_u64(submit, 5);
    if let Some(first) = buffers.first() {
        arg(p, &mut b, "command_buffer", ArgValue::Uint(*first));
    }
    let flat = p.storage.strings.intern("command_buffers");
    for (i, cb) in buffers.iter().enumerate() {
        let key = p.storage.strings.intern(&format!("command_buffers[{i}]"));
        b.add(flat, key, ArgValue::Uint(*cb));
    }
    arg(
        p,
        &mut b,
        "submission_id",
        ArgValue::Int(s.uint(6).unwrap_or(0) as u32 as i64),
    );
    let dur = s.uint(1).unwrap_or(0) as i64;
    slice(p, input.ts, dur, track, "vkQueueSubmit", &b);
}
