//! `frame_timeline_event` (TracePacket field 76): SurfaceFlinger's frame
//! timeline. Each expected or actual display or surface frame is a slice
//! named by its token on its process's `Expected Timeline` or `Actual
//! Timeline` track (pools of tracks shared by cookie, as upstream's
//! compressor shares them), ended by the `FrameEnd` of its cookie; what
//! upstream records of a frame (tokens, layer, present and prediction
//! types, jank types, tags and severity, ...) goes in the slice's args
//! under upstream's keys, which the `expected_frame_timeline_slice` and
//! `actual_frame_timeline_slice` views read. A surface frame's slice flows
//! to the actual display frame of its display token.

use std::collections::HashSet;

use super::Parser;
use super::fields::Fields;
use super::importer::{Importer, Input};
use crate::hash::HashMap;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{FlowRow, SliceRow};
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.frame_timeline_event.
const FRAME_TIMELINE_EVENT: u32 = 76;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(FRAME_TIMELINE_EVENT, import)];

/// The jank type bits, in the order upstream lists their names.
const JANK_BITS: &[(i32, &str)] = &[
    (2, "SurfaceFlinger Scheduling"),
    (4, "Prediction Error"),
    (8, "Display HAL"),
    (16, "SurfaceFlinger CPU Deadline Missed"),
    (32, "SurfaceFlinger GPU Deadline Missed"),
    (64, "App Deadline Missed"),
    (4096, "App Resynced Jitter"),
    (128, "Buffer Stuffing"),
    (256, "Unknown Jank"),
    (512, "SurfaceFlinger Stuffing"),
    (1024, "Dropped Frame"),
    (2048, "Non Animating"),
    (8192, "Display not ON"),
    (16384, "ModeChange in progress"),
    (32768, "PowerModeChange in progress"),
];

const JANK_UNSPECIFIED: i32 = 0;
const JANK_NONE: i32 = 1;
const JANK_BUFFER_STUFFING: i32 = 128;
const JANK_SF_STUFFING: i32 = 512;
const JANK_DROPPED: i32 = 1024;
const JANK_NON_ANIMATING: i32 = 2048;
const JANK_DISPLAY_NOT_ON: i32 = 8192;
const JANK_POWER_MODE_CHANGE: i32 = 32768;
/// The bits that make a display frame janky.
const DISPLAY_JANK_BITS: i32 = 2 | 4 | 8 | 16 | 32;
/// The bits that make a surface frame janky on its own.
const SURFACE_JANK_BITS: i32 = 64 | 4096 | 256;
const PRESENT_DROPPED: i32 = 4;

const PRESENT_TYPES: [&str; 6] = [
    "Unspecified Present",
    "On-time Present",
    "Late Present",
    "Early Present",
    "Dropped Frame",
    "Unknown Present",
];
const PREDICTION_TYPES: [&str; 4] = [
    "Unspecified Prediction",
    "Valid Prediction",
    "Expired Prediction",
    "Unknown Prediction",
];
const SEVERITY_TYPES: [&str; 4] = ["Unknown", "None", "Partial", "Full"];
const FENCE_STATES: [&str; 4] = [
    "Unknown",
    "Latched Signaled",
    "Latched Unsignaled",
    "Delayed Latch Fence Unsignaled",
];

/// A timestamp this close to the ends of `i64` is a producer's mistake.
const BAD_TIMESTAMP: i64 = i64::MAX - 10_000_000_000;

/// Which timeline a cookie's slice is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timeline {
    Expected,
    Actual,
}

impl Timeline {
    fn classification(self) -> &'static str {
        match self {
            Timeline::Expected => "android_expected_frame_timeline",
            Timeline::Actual => "android_actual_frame_timeline",
        }
    }

    fn track_name(self) -> &'static str {
        match self {
            Timeline::Expected => "Expected Timeline",
            Timeline::Actual => "Actual Timeline",
        }
    }
}

/// What the frame timeline keeps between packets.
#[derive(Debug, Default)]
pub struct FrameTimelineState {
    /// Open cookie → (process, timeline).
    cookies: HashMap<i64, (u32, Timeline)>,
    /// Surface tokens whose expected slice a process already has.
    expected_surface_tokens: HashSet<(u32, i64)>,
    /// Display token → the actual surface frame slices waiting for it.
    surfaces_of_display: HashMap<i64, Vec<u32>>,
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let ts = input.ts;
    if ts < 0 || ts.checked_abs().is_none_or(|a| a >= BAD_TIMESTAMP) {
        p.storage.stats.incr("frame_timeline_event_parser_errors");
        return;
    }
    let event = Fields::new(input.bytes);
    if let Some(b) = event.bytes(1) {
        expected_display_frame(p, ts, &Fields::new(b));
    } else if let Some(b) = event.bytes(2) {
        actual_display_frame(p, ts, &Fields::new(b));
    } else if let Some(b) = event.bytes(3) {
        expected_surface_frame(p, ts, &Fields::new(b));
    } else if let Some(b) = event.bytes(4) {
        actual_surface_frame(p, ts, &Fields::new(b));
    } else if let Some(b) = event.bytes(5) {
        frame_end(p, ts, &Fields::new(b));
    } else {
        p.storage.stats.incr("frame_timeline_event_parser_errors");
    }
}

/// The names of a jank type's bits, as upstream writes them.
fn jank_type_text(jank: i32) -> String {
    match jank {
        JANK_UNSPECIFIED => "Unspecified".to_owned(),
        JANK_NONE => "None".to_owned(),
        _ => JANK_BITS
            .iter()
            .filter(|(bit, _)| jank & bit != 0)
            .map(|(_, name)| *name)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn not_janky(jank: i32) -> bool {
    matches!(
        jank,
        JANK_UNSPECIFIED | JANK_NONE | JANK_NON_ANIMATING | JANK_DISPLAY_NOT_ON
    )
}

fn display_janky(jank: i32) -> bool {
    !not_janky(jank) && jank & DISPLAY_JANK_BITS != 0
}

fn surface_janky(jank: i32) -> bool {
    !not_janky(jank) && jank & SURFACE_JANK_BITS != 0
}

fn not_perceivable(jank: i32) -> bool {
    matches!(
        jank,
        JANK_NON_ANIMATING | JANK_DISPLAY_NOT_ON | JANK_POWER_MODE_CHANGE
    )
}

/// A display frame's jank tag.
fn display_jank_tag(jank: i32) -> &'static str {
    if jank == JANK_UNSPECIFIED {
        "Unspecified"
    } else if display_janky(jank) {
        "Self Jank"
    } else if jank == JANK_SF_STUFFING {
        "SurfaceFlinger Stuffing"
    } else if jank == JANK_DROPPED {
        "Dropped Frame"
    } else if not_perceivable(jank) {
        "Non-perceivable Jank"
    } else {
        "No Jank"
    }
}

/// A surface frame's jank tag (`present`: its valid present type).
fn surface_jank_tag(jank: i32, present: Option<i32>) -> &'static str {
    if jank == JANK_UNSPECIFIED {
        "Unspecified"
    } else if surface_janky(jank) {
        "Self Jank"
    } else if display_janky(jank) {
        "Other Jank"
    } else if jank == JANK_BUFFER_STUFFING {
        "Buffer Stuffing"
    } else if jank == JANK_SF_STUFFING {
        "SurfaceFlinger Stuffing"
    } else if present == Some(PRESENT_DROPPED) {
        "Dropped Frame"
    } else if not_perceivable(jank) {
        "Non-perceivable Jank"
    } else {
        "No Jank"
    }
}

/// A present type field: its valid value (1 to 5), counting an invalid
/// one as upstream does.
fn present_type(p: &mut Parser, f: &Fields<'_>, id: u32) -> Option<i32> {
    let v = f.int32(id)?;
    if (1..=5).contains(&v) {
        Some(v)
    } else {
        p.storage.stats.incr("frame_timeline_event_parser_errors");
        None
    }
}

fn prediction_type(p: &mut Parser, f: &Fields<'_>, id: u32) -> &'static str {
    match f.int32(id) {
        None => PREDICTION_TYPES[0],
        Some(v @ 1..=3) => PREDICTION_TYPES[v as usize],
        Some(_) => {
            p.storage.stats.incr("frame_timeline_event_parser_errors");
            PREDICTION_TYPES[0]
        }
    }
}

/// The severity field, or for older traces "None" without jank and
/// "Unknown" otherwise.
fn severity(p: &mut Parser, f: &Fields<'_>, id: u32, jank: i32) -> &'static str {
    match f.int32(id) {
        Some(v) => match usize::try_from(v).ok().and_then(|v| SEVERITY_TYPES.get(v)) {
            Some(s) => s,
            None => {
                p.storage.stats.incr("frame_timeline_event_parser_errors");
                SEVERITY_TYPES[0]
            }
        },
        None if jank == JANK_NONE => SEVERITY_TYPES[1],
        None => SEVERITY_TYPES[0],
    }
}

/// Args under upstream's keys.
struct Args<'p> {
    p: &'p mut Parser,
    b: ArgSetBuilder,
}

impl<'p> Args<'p> {
    fn new(p: &'p mut Parser) -> Self {
        Args {
            p,
            b: ArgSetBuilder::default(),
        }
    }

    fn add(&mut self, key: &str, v: ArgValue) -> &mut Self {
        let k = self.p.storage.strings.intern(key);
        self.b.add(k, k, v);
        self
    }

    fn int(&mut self, key: &str, v: i64) -> &mut Self {
        self.add(key, ArgValue::Int(v))
    }

    fn real(&mut self, key: &str, v: f64) -> &mut Self {
        self.add(key, ArgValue::Real(v))
    }

    fn text(&mut self, key: &str, v: &str) -> &mut Self {
        let s = self.p.storage.strings.intern(v);
        self.add(key, ArgValue::String(s))
    }

    fn finish(self) -> Option<u32> {
        self.p.storage.args.add_set(&self.b)
    }
}

/// The track a cookie's slice begins on.
fn begin_track(p: &mut Parser, timeline: Timeline, upid: u32, cookie: i64) -> u32 {
    let key = format!("{}|{upid}", timeline.classification());
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    async_tracks.begin(&key, cookie, |idx| {
        let mut spec = TrackSpec::new(
            Some(timeline.track_name()),
            timeline.classification(),
            EventType::Slice,
        );
        spec.upid = Some(upid);
        spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(i64::from(idx)))];
        tracks.create(storage, &spec)
    })
}

/// Opens the slice of a frame named by its token.
fn begin(
    p: &mut Parser,
    ts: i64,
    timeline: Timeline,
    upid: u32,
    cookie: i64,
    token: i64,
    args: Option<u32>,
) -> Option<u32> {
    let track = begin_track(p, timeline, upid, cookie);
    let name = p.storage.strings.intern(&token.to_string());
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur: -1,
            track_id: track,
            name,
            arg_set_id: args.into(),
            ..SliceRow::default()
        },
    )
}

/// The process of a frame's pid.
fn process(p: &mut Parser, pid: i64) -> u32 {
    p.processes
        .get_or_create_process(&mut p.storage, i64::from(pid as u32))
}

fn expected_display_frame(p: &mut Parser, ts: i64, e: &Fields<'_>) {
    let (Some(cookie), Some(token), Some(pid)) = (e.int(1), e.int(2), e.int(3)) else {
        p.storage.stats.incr("frame_timeline_event_parser_errors");
        return;
    };
    let upid = process(p, pid);
    p.frame_timeline
        .cookies
        .insert(cookie, (upid, Timeline::Expected));
    let mut a = Args::new(p);
    a.int("Display frame token", token);
    let args = a.finish();
    begin(p, ts, Timeline::Expected, upid, cookie, token, args);
}

fn actual_display_frame(p: &mut Parser, ts: i64, e: &Fields<'_>) {
    let (Some(cookie), Some(token), Some(pid)) = (e.int(1), e.int(2), e.int(3)) else {
        p.storage.stats.incr("frame_timeline_event_parser_errors");
        return;
    };
    let upid = process(p, pid);
    p.frame_timeline
        .cookies
        .insert(cookie, (upid, Timeline::Actual));
    let present = present_type(p, e, 4);
    let present_exp = present_type(p, e, 13);
    let jank = e.int32(7).unwrap_or(0);
    let jank_exp = e.int32(12).unwrap_or(0);
    let severity = severity(p, e, 9, jank);
    let prediction = prediction_type(p, e, 8);
    let mut a = Args::new(p);
    a.int("Display frame token", token)
        .real("Present Delay (ms)", e.real(10).unwrap_or(0.0))
        .text("Present type", PRESENT_TYPES[present.unwrap_or(0) as usize])
        .text(
            "Present type (experimental)",
            PRESENT_TYPES[present_exp.unwrap_or(0) as usize],
        )
        .int("On time finish", i64::from(e.bool(5).unwrap_or(false)))
        .int("GPU composition", i64::from(e.bool(6).unwrap_or(false)))
        .text("Jank type", &jank_type_text(jank))
        .text("Jank type (experimental)", &jank_type_text(jank_exp))
        .text("Jank severity type", severity)
        .real("Jank Severity Score", e.real(11).unwrap_or(0.0))
        .text("Prediction type", prediction)
        .text("Jank tag", display_jank_tag(jank))
        .text("Jank tag (experimental)", display_jank_tag(jank_exp))
        .real("Jank Metadata (debugging only)", e.real(14).unwrap_or(0.0));
    if let Some(n) = e.int(15) {
        a.int("Latched unsignaled count", n);
    }
    if let Some(n) = e.int(16) {
        a.int("Addressable unsignaled latch count", n);
    }
    let args = a.finish();
    let slice = begin(p, ts, Timeline::Actual, upid, cookie, token, args);
    // An app's surface frames come before the display frame that shows
    // them: each flows to it, once.
    let surfaces = p
        .frame_timeline
        .surfaces_of_display
        .remove(&token)
        .unwrap_or_default();
    if let Some(display) = slice {
        for surface in surfaces {
            p.storage.flows.push(FlowRow {
                slice_out: surface,
                slice_in: display,
                trace_id: None,
                arg_set_id: None,
            });
        }
    }
}

fn expected_surface_frame(p: &mut Parser, ts: i64, e: &Fields<'_>) {
    let (Some(cookie), Some(token), Some(display), Some(pid)) =
        (e.int(1), e.int(2), e.int(3), e.int(4))
    else {
        p.storage.stats.incr("frame_timeline_event_parser_errors");
        return;
    };
    let upid = process(p, pid);
    p.frame_timeline
        .cookies
        .insert(cookie, (upid, Timeline::Expected));
    // One expected slice per token and process: every frame of a token
    // expects the same.
    if !p
        .frame_timeline
        .expected_surface_tokens
        .insert((upid, token))
    {
        return;
    }
    let layer = e.str(5);
    let mut a = Args::new(p);
    a.int("Surface frame token", token)
        .int("Display frame token", display);
    if let Some(layer) = &layer {
        a.text("Layer name", layer);
    }
    let args = a.finish();
    begin(p, ts, Timeline::Expected, upid, cookie, token, args);
}

fn actual_surface_frame(p: &mut Parser, ts: i64, e: &Fields<'_>) {
    let (Some(cookie), Some(token), Some(display), Some(pid)) =
        (e.int(1), e.int(2), e.int(3), e.int(4))
    else {
        p.storage.stats.incr("frame_timeline_event_parser_errors");
        return;
    };
    let upid = process(p, pid);
    p.frame_timeline
        .cookies
        .insert(cookie, (upid, Timeline::Actual));
    let present = present_type(p, e, 6);
    let present_exp = present_type(p, e, 17);
    let jank = e.int32(9).unwrap_or(0);
    let jank_exp = e.int32(16).unwrap_or(0);
    let severity = severity(p, e, 12, jank);
    let prediction = prediction_type(p, e, 10);
    let fence = match e.int32(19) {
        None => None,
        Some(v) => match usize::try_from(v).ok().and_then(|v| FENCE_STATES.get(v)) {
            Some(s) => Some(*s),
            None => {
                p.storage.stats.incr("frame_timeline_event_parser_errors");
                Some(FENCE_STATES[0])
            }
        },
    };
    let is_buffer = match e.bool(11) {
        None => "Unspecified",
        Some(true) => "Yes",
        Some(false) => "No",
    };
    let layer = e.str(5);
    let mut a = Args::new(p);
    a.int("Surface frame token", token)
        .int("Display frame token", display);
    if let Some(ms) = e.real(20) {
        a.real("Animation Time (ms)", ms);
    }
    a.real("Present Delay (ms)", e.real(13).unwrap_or(0.0))
        .real("Vsync Resynced Jitter (ms)", e.real(14).unwrap_or(0.0));
    if let Some(layer) = &layer {
        a.text("Layer name", layer);
    }
    a.text("Present type", PRESENT_TYPES[present.unwrap_or(0) as usize])
        .text(
            "Present type (experimental)",
            PRESENT_TYPES[present_exp.unwrap_or(0) as usize],
        )
        .int("On time finish", i64::from(e.bool(7).unwrap_or(false)))
        .int("GPU composition", i64::from(e.bool(8).unwrap_or(false)))
        .text("Jank type", &jank_type_text(jank))
        .text("Jank type (experimental)", &jank_type_text(jank_exp))
        .text("Jank severity type", severity)
        .real("Jank Severity Score", e.real(15).unwrap_or(0.0))
        .text("Prediction type", prediction)
        .text("Jank tag", surface_jank_tag(jank, present))
        .text(
            "Jank tag (experimental)",
            surface_jank_tag(jank_exp, present_exp),
        )
        .text("Is Buffer?", is_buffer)
        .real("Jank Metadata (debugging only)", e.real(18).unwrap_or(0.0));
    if let Some(fence) = fence {
        a.text("Latched fence state", fence);
    }
    let args = a.finish();
    if let Some(slice) = begin(p, ts, Timeline::Actual, upid, cookie, token, args) {
        p.frame_timeline
            .surfaces_of_display
            .entry(display)
            .or_default()
            .push(slice);
    }
}

fn frame_end(p: &mut Parser, ts: i64, e: &Fields<'_>) {
    let Some(cookie) = e.int(1) else {
        p.storage.stats.incr("frame_timeline_event_parser_errors");
        return;
    };
    let Some((upid, timeline)) = p.frame_timeline.cookies.remove(&cookie) else {
        p.storage.stats.incr("frame_timeline_unpaired_end_event");
        return;
    };
    let key = format!("{}|{upid}", timeline.classification());
    // A duplicate expected surface frame opened nothing: its end closes
    // nothing either.
    if let Some(track) = p.async_tracks.end(&key, cookie) {
        p.slices.end(&mut p.storage, track, ts, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jank_texts_and_tags_follow_upstreams_rules() {
        assert_eq!(jank_type_text(0), "Unspecified");
        assert_eq!(jank_type_text(1), "None");
        assert_eq!(
            jank_type_text(2 | 16),
            "SurfaceFlinger Scheduling, SurfaceFlinger CPU Deadline Missed"
        );
        assert_eq!(display_jank_tag(512), "SurfaceFlinger Stuffing");
        assert_eq!(display_jank_tag(32768), "Non-perceivable Jank");
        assert_eq!(surface_jank_tag(2, Some(3)), "Other Jank");
        assert_eq!(surface_jank_tag(1024, Some(4)), "Dropped Frame");
        assert_eq!(surface_jank_tag(1, Some(4)), "Dropped Frame");
        assert_eq!(surface_jank_tag(256, None), "Self Jank");
    }
}
