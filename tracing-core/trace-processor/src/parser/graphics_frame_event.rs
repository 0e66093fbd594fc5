//! `graphics_frame_event` (TracePacket field 57): a buffer's trip through
//! the app, the GPU, SurfaceFlinger and the display, as upstream draws it.
//! Each buffer event is a slice named by its type on the buffer's `Buffer:
//! <id> <layer>` track, with the frame number, the layer and the times
//! between its queue, acquire, latch and present as args; and the events
//! cut the buffer's life into phase slices: dequeue to queue on `APP_`,
//! queue to acquire on `GPU_`, latch to present on `SF_`, and present to
//! the layer's next present on `Display_`. A phase slice is named by its
//! frame number (the dequeue's once its queue tells it, "0" when the
//! buffer is dequeued again or latched first). All tracks are of type
//! `graphics_frame_event`, which `gpu_track` and `frame_slice` read.

use crate::hash::HashMap;

use super::Parser;
use super::fields::Fields;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.graphics_frame_event.
const GRAPHICS_FRAME_EVENT: u32 = 57;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(GRAPHICS_FRAME_EVENT, import)];

const DEQUEUE: u64 = 1;
const QUEUE: u64 = 2;
const ACQUIRE_FENCE: u64 = 4;
const LATCH: u64 = 5;
const PRESENT_FENCE: u64 = 8;

/// Event type names by value.
const EVENT_NAMES: [&str; 14] = [
    "unspecified_event",
    "Dequeue",
    "Queue",
    "Post",
    "AcquireFenceSignaled",
    "Latch",
    "HWCCompositionQueued",
    "FallbackComposition",
    "PresentFenceSignaled",
    "ReleaseFenceSignaled",
    "Modify",
    "Detach",
    "Attach",
    "Cancel",
];

/// A buffer's latest queue, acquire and latch times.
#[derive(Debug, Default)]
struct BufferTimes {
    queue_ts: i64,
    acquire_ts: i64,
    latch_ts: i64,
    /// Whether the buffer's latest event was a dequeue.
    last_was_dequeue: bool,
    /// The latest slice on the buffer's `Buffer:` track.
    last_slice: Option<u32>,
}

/// The phase a buffer is in.
#[derive(Debug, Default, Clone, Copy)]
enum Phase {
    #[default]
    None,
    /// Dequeued: its open `APP_` slice and when.
    Dequeued { slice: u32, ts: i64 },
    /// Queued: the `GPU_` track its open slice is on.
    Queued { track: u32 },
    /// Latched: the `SF_` track its open slice is on.
    Latched { track: u32 },
}

/// A buffer's phase state.
#[derive(Debug, Default)]
struct PhaseState {
    phase: Phase,
    last_acquire_ts: Option<i64>,
}

/// What the importer keeps between packets.
#[derive(Debug, Default)]
pub struct GraphicsFrameState {
    /// Per buffer (its id and layer).
    times: HashMap<String, BufferTimes>,
    phases: HashMap<String, PhaseState>,
    /// Per layer, the `Display_` track whose slice the next present ends.
    displays: HashMap<String, u32>,
}

/// One buffer event, decoded.
struct Event<'a> {
    ts: i64,
    kind: Option<u64>,
    frame_number: u32,
    buffer_id: u32,
    /// The layer as the track names write it ("" when absent).
    layer: std::borrow::Cow<'a, str>,
    /// The layer as the args write it.
    layer_arg: String,
    duration: i64,
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let Some(b) = Fields::new(input.bytes).bytes(1) else {
        return;
    };
    let e = Fields::new(b);
    let Some(buffer_id) = e.uint(5) else {
        p.storage.stats.incr("graphics_frame_event_parser_errors");
        return;
    };
    let layer = e.str(3);
    let ev = Event {
        ts: input.ts,
        kind: e.uint(2),
        frame_number: e.uint(1).unwrap_or(0) as u32,
        buffer_id: buffer_id as u32,
        layer_arg: layer
            .as_deref()
            .map_or_else(|| "no_layer_name".to_owned(), str::to_owned),
        layer: layer.unwrap_or_default(),
        duration: e.uint(4).unwrap_or(0) as i64,
    };
    let key = format!("{}{}", ev.buffer_id, ev.layer);
    buffer_event(p, &ev, &key);
    phase_event(p, &ev, &key);
}

/// The track of this name.
fn track(p: &mut Parser, name: &str) -> u32 {
    let name_id = p.storage.strings.intern(name);
    let mut spec = TrackSpec::new(Some(name), "graphics_frame_event", EventType::Slice);
    spec.dimensions = vec![("name", ArgValue::String(name_id))];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

fn add(p: &mut Parser, b: &mut ArgSetBuilder, key: &str, v: ArgValue) {
    let k = p.storage.strings.intern(key);
    b.add(k, k, v);
}

/// Sets a slice's `frame_number` arg, keeping its others.
fn set_frame_number(p: &mut Parser, slice: u32, n: i64) {
    let Some(set) = p
        .storage
        .slices
        .get(slice as usize)
        .and_then(|s| s.arg_set_id.get())
    else {
        return;
    };
    let key = p.storage.strings.intern("frame_number");
    let mut b = ArgSetBuilder::default();
    let old: Vec<_> = p.storage.args.set(set).cloned().collect();
    for a in old {
        let v = if a.key == key {
            ArgValue::Int(n)
        } else {
            a.value
        };
        b.add(a.flat_key, a.key, v);
    }
    let new = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(slice as usize) {
        s.arg_set_id = new.into();
    }
}

fn rename(p: &mut Parser, slice: u32, name: &str) {
    let name = p.storage.strings.intern(name);
    if let Some(s) = p.storage.slices.get_mut(slice as usize) {
        s.name = name;
    }
}

fn buffer_event(p: &mut Parser, ev: &Event<'_>, key: &str) {
    let times = p.graphics_frame.times.entry(key.to_owned()).or_default();
    match ev.kind {
        Some(DEQUEUE) => {}
        Some(ACQUIRE_FENCE) => times.acquire_ts = ev.ts,
        Some(QUEUE) => times.queue_ts = ev.ts,
        Some(LATCH) => times.latch_ts = ev.ts,
        _ => p.storage.stats.incr("graphics_frame_event_parser_errors"),
    }
    let Some(times) = p.graphics_frame.times.get_mut(key) else {
        return;
    };
    let prev_was_dequeue = times.last_was_dequeue;
    times.last_was_dequeue = ev.kind == Some(DEQUEUE);
    let (queue_ts, acquire_ts, latch_ts, last_slice) = (
        times.queue_ts,
        times.acquire_ts,
        times.latch_ts,
        times.last_slice,
    );
    let name = ev
        .kind
        .and_then(|k| usize::try_from(k).ok())
        .and_then(|k| EVENT_NAMES.get(k))
        .copied()
        .unwrap_or("unknown_event");
    let track = track(p, &format!("Buffer: {} {}", ev.buffer_id, ev.layer));
    // A queue after a dequeue tells the dequeue its frame number.
    if ev.kind == Some(QUEUE) && prev_was_dequeue {
        if let Some(s) = last_slice {
            set_frame_number(p, s, i64::from(ev.frame_number));
        }
    }
    let mut b = ArgSetBuilder::default();
    add(
        p,
        &mut b,
        "frame_number",
        ArgValue::Int(i64::from(ev.frame_number)),
    );
    let layer = p.storage.strings.intern(&ev.layer_arg);
    add(p, &mut b, "layer_name", ArgValue::String(layer));
    add(
        p,
        &mut b,
        "queue_to_acquire_time",
        ArgValue::Int(acquire_ts.saturating_sub(queue_ts).max(0)),
    );
    add(
        p,
        &mut b,
        "acquire_to_latch_time",
        ArgValue::Int(latch_ts.saturating_sub(acquire_ts)),
    );
    add(
        p,
        &mut b,
        "latch_to_present_time",
        ArgValue::Int(ev.ts.saturating_sub(latch_ts)),
    );
    let name = p.storage.strings.intern(name);
    let arg_set_id = p.storage.args.add_set(&b);
    let id = p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: ev.ts,
            dur: ev.duration.max(0),
            track_id: track,
            name,
            arg_set_id: arg_set_id.into(),
            ..SliceRow::default()
        },
    );
    if let Some(times) = p.graphics_frame.times.get_mut(key) {
        times.last_slice = id.or(times.last_slice);
    }
}

/// Opens a phase slice named by the frame number (or the time, without
/// one).
fn phase_slice(p: &mut Parser, ev: &Event<'_>, track: u32) -> Option<u32> {
    let name = if ev.frame_number != 0 {
        ev.frame_number.to_string()
    } else {
        ev.ts.to_string()
    };
    let mut b = ArgSetBuilder::default();
    add(
        p,
        &mut b,
        "frame_number",
        ArgValue::Int(i64::from(ev.frame_number)),
    );
    let layer = p.storage.strings.intern(&ev.layer_arg);
    add(p, &mut b, "layer_name", ArgValue::String(layer));
    let name = p.storage.strings.intern(&name);
    let arg_set_id = p.storage.args.add_set(&b);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: ev.ts,
            dur: -1,
            track_id: track,
            name,
            arg_set_id: arg_set_id.into(),
            ..SliceRow::default()
        },
    )
}

/// A dequeued buffer whose phase ends with no queue: its slice is named
/// "0", frame number 0, and stays open.
fn abandon_dequeue(p: &mut Parser, slice: u32) {
    rename(p, slice, "0");
    set_frame_number(p, slice, 0);
}

fn phase_event(p: &mut Parser, ev: &Event<'_>, key: &str) {
    let state = p.graphics_frame.phases.entry(key.to_owned()).or_default();
    let phase = state.phase;
    let last_acquire = state.last_acquire_ts;
    let set_phase = |p: &mut Parser, phase: Phase| {
        if let Some(s) = p.graphics_frame.phases.get_mut(key) {
            s.phase = phase;
        }
    };
    match ev.kind {
        Some(DEQUEUE) => {
            if let Phase::Dequeued { slice, .. } = phase {
                abandon_dequeue(p, slice);
                set_phase(p, Phase::None);
            }
            let t = track(p, &format!("APP_{} {}", ev.buffer_id, ev.layer));
            if let Some(slice) = phase_slice(p, ev, t) {
                set_phase(p, Phase::Dequeued { slice, ts: ev.ts });
            }
        }
        Some(QUEUE) => {
            if let Phase::Dequeued { slice, ts } = phase {
                let app_track = p.storage.slices.get(slice as usize).map(|s| s.track_id);
                if let Some(t) = app_track {
                    if let Some(ended) = p.slices.end(&mut p.storage, t, ev.ts, None) {
                        set_frame_number(p, ended, i64::from(ev.frame_number));
                    }
                }
                rename(p, slice, &ev.frame_number.to_string());
                // Acquired before this frame was even dequeued: no GPU
                // phase to show.
                if last_acquire.is_some_and(|a| a > ts) {
                    set_phase(p, Phase::None);
                    return;
                }
            }
            let t = track(p, &format!("GPU_{} {}", ev.buffer_id, ev.layer));
            phase_slice(p, ev, t);
            set_phase(p, Phase::Queued { track: t });
        }
        Some(ACQUIRE_FENCE) => {
            if let Phase::Queued { track } = phase {
                p.slices.end(&mut p.storage, track, ev.ts, None);
                set_phase(p, Phase::None);
            }
            if let Some(s) = p.graphics_frame.phases.get_mut(key) {
                s.last_acquire_ts = Some(ev.ts);
            }
        }
        Some(LATCH) => {
            if let Phase::Dequeued { slice, .. } = phase {
                abandon_dequeue(p, slice);
            }
            let t = track(p, &format!("SF_{} {}", ev.buffer_id, ev.layer));
            phase_slice(p, ev, t);
            set_phase(p, Phase::Latched { track: t });
        }
        Some(PRESENT_FENCE) => {
            if let Phase::Latched { track } = phase {
                p.slices.end(&mut p.storage, track, ev.ts, None);
                set_phase(p, Phase::None);
            }
            if let Some(&display) = p.graphics_frame.displays.get(ev.layer_arg.as_str()) {
                p.slices.end(&mut p.storage, display, ev.ts, None);
            }
            let t = track(p, &format!("Display_{}", ev.layer));
            phase_slice(p, ev, t);
            p.graphics_frame.displays.insert(ev.layer_arg.clone(), t);
        }
        _ => {}
    }
}
