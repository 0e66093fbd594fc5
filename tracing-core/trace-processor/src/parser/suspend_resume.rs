//! The kernel's suspend/resume ftrace events as upstream imports them:
//! `suspend_resume` (FtraceEvent 113) begins and ends slices named
//! `<action>(<val>)` (`timekeeping_freeze`'s val, a CPU number, read as 0)
//! on the `Suspend/Resume Latency` tracks, shared by the actions open at
//! once as async slices are, each with the emitting thread, the CPU and
//! the event type `Main Kernel Suspend Event` as args; and
//! `suspend_resume_minimal` (481) begins and ends `Suspended` slices on
//! the `Suspend/Resume Minimal` track, which `android.suspend` reads.
//! A device's PM callback (`device_pm_callback_start`/`_end`, 504/505) is
//! a `<device> <driver>` slice on the same latency tracks, with the event
//! type `Device PM Suspend Event`, the device, the driver and the callback
//! phase (the PM event, `suspend`/`resume`/..., with the `early`, `late` or
//! `noirq` its ops name starts with, or `prepare`/`complete` when the
//! kernel leaves the ops empty) as args.
//!
//! A kernel that fails in `suspend_prepare()` never ends its
//! `suspend_enter` action: a `thaw_processes` that ends while
//! `freeze_processes` runs inside `suspend_enter` ends it too, as
//! upstream works around it.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::column_store::strings::StrId;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

const SUSPEND_RESUME: u32 = 113;
const SUSPEND_RESUME_MINIMAL: u32 = 481;
/// {device 1, driver 2, pm_ops 4, event 5}.
const DEVICE_PM_CALLBACK_START: u32 = 504;
/// {device 1, driver 2}.
const DEVICE_PM_CALLBACK_END: u32 = 505;

/// The events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (SUSPEND_RESUME, suspend_resume),
    (SUSPEND_RESUME_MINIMAL, suspend_resume_minimal),
    (DEVICE_PM_CALLBACK_START, device_pm_callback_start),
    (DEVICE_PM_CALLBACK_END, device_pm_callback_end),
];

/// Where the kernel is in a suspend, for the `suspend_enter` workaround.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing seen, or the suspend ended.
    #[default]
    Initial,
    /// Inside `suspend_enter`.
    Enter,
    /// Inside `freeze_processes` within `suspend_enter`.
    Freeze,
}

/// What the suspend/resume events keep between events.
#[derive(Debug, Default)]
pub struct SuspendResumeState {
    phase: Phase,
    /// The open `suspend_enter` slice's cookie.
    enter_cookie: i64,
}

/// The async pool of the latency tracks on the current machine.
fn pool(p: &Parser) -> String {
    format!("suspend_resume:{}", p.machine)
}

/// The `Suspend/Resume Latency` track a slice of `cookie` begins on,
/// shared with the other open actions of `key`'s pool.
fn begin_on_track(p: &mut Parser, key: &str, cookie: i64) -> u32 {
    let Parser {
        async_tracks,
        tracks,
        storage,
        ..
    } = p;
    async_tracks.begin(key, cookie, |idx| {
        let mut spec = TrackSpec::new(
            Some("Suspend/Resume Latency"),
            "suspend_resume",
            EventType::Slice,
        );
        spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(i64::from(idx)))];
        tracks.create(storage, &spec)
    })
}

fn suspend_resume(p: &mut Parser, e: &FtraceInput<'_>) {
    let d = Decoder::new(e.body);
    let action = d
        .find_last(1)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let val = d.find_last(2).and_then(|f| f.as_i32().ok()).unwrap_or(0);
    let start = d.find_last(3).and_then(|f| f.as_u64().ok()).unwrap_or(0) != 0;
    let val = if action == "timekeeping_freeze" {
        0
    } else {
        val
    };
    let name = p.storage.strings.intern(&format!("{action}({val})"));
    let cookie = i64::from(name.0);
    let key = pool(p);
    if !start {
        end(p, &key, cookie, e.ts);
        if action == "suspend_enter" {
            p.suspend_resume.phase = Phase::Initial;
        } else if action == "thaw_processes" && p.suspend_resume.phase == Phase::Freeze {
            let enter = p.suspend_resume.enter_cookie;
            end(p, &key, enter, e.ts);
            p.suspend_resume.phase = Phase::Initial;
        }
        return;
    }
    if action == "suspend_enter" {
        p.suspend_resume.phase = Phase::Enter;
        p.suspend_resume.enter_cookie = cookie;
    } else if action == "freeze_processes" && p.suspend_resume.phase == Phase::Enter {
        p.suspend_resume.phase = Phase::Freeze;
    }
    let track_id = begin_on_track(p, &key, cookie);
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let main = p.storage.strings.intern("Main Kernel Suspend Event");
    let mut b = ArgSetBuilder::default();
    for (key, value) in [
        ("utid", ArgValue::Uint(u64::from(utid))),
        ("event_type", ArgValue::String(main)),
        ("cpu", ArgValue::Uint(u64::from(e.cpu))),
        // Not a device PM callback: no device, driver or phase.
        ("device_name", ArgValue::String(StrId::NULL)),
        ("driver_name", ArgValue::String(StrId::NULL)),
        ("callback_phase", ArgValue::String(StrId::NULL)),
    ] {
        let k = p.storage.strings.intern(key);
        b.add(k, k, value);
    }
    let arg_set_id = p.storage.args.add_set(&b);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}

/// Ends the slice of `cookie` on its latency track, if one is open.
fn end(p: &mut Parser, key: &str, cookie: i64, ts: i64) {
    if let Some(track) = p.async_tracks.end(key, cookie) {
        p.slices.end(&mut p.storage, track, ts, None);
    }
}

fn suspend_resume_minimal(p: &mut Parser, e: &FtraceInput<'_>) {
    let start = Decoder::new(e.body)
        .find_last(1)
        .and_then(|f| f.as_u64().ok())
        .unwrap_or(0)
        != 0;
    let spec = TrackSpec::new(
        Some("Suspend/Resume Minimal"),
        "suspend_resume_minimal",
        EventType::Slice,
    );
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    if start {
        let name = p.storage.strings.intern("Suspended");
        p.slices.begin(
            &mut p.storage,
            SliceRow {
                ts: e.ts,
                dur: -1,
                track_id,
                name,
                ..Default::default()
            },
        );
    } else {
        p.slices.end(&mut p.storage, track_id, e.ts, None);
    }
}

/// The kernel's PM event codes' names.
fn pm_event_name(event: i64) -> &'static str {
    match event {
        0x1 => "freeze",
        0x2 => "suspend",
        0x4 => "hibernate",
        0x8 => "quiesce",
        0x10 => "resume",
        0x20 => "thaw",
        0x40 => "restore",
        0x80 => "recover",
        _ => "(unknown PM event)",
    }
}

/// The callback's phase: the event, then the phase its ops name starts
/// with, or prepare/complete when the ops are empty.
fn callback_phase(pm_ops: &str, event: &str) -> String {
    if pm_ops.is_empty() {
        match event {
            "suspend" => return format!("{event}:prepare"),
            "resume" => return format!("{event}:complete"),
            _ => {}
        }
    }
    for phase in ["early", "late", "noirq"] {
        if pm_ops.starts_with(phase) {
            return format!("{event}:{phase}");
        }
    }
    event.to_owned()
}

/// The string field `id` of a payload.
fn text(body: &[u8], id: u32) -> String {
    Decoder::new(body)
        .find_last(id)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

fn device_pm_callback_start(p: &mut Parser, e: &FtraceInput<'_>) {
    let device = text(e.body, 1);
    let driver = text(e.body, 2);
    let pm_ops = text(e.body, 4);
    let event = Decoder::new(e.body)
        .find_last(5)
        .and_then(|f| f.as_i64().ok())
        .unwrap_or(0);
    let name = p.storage.strings.intern(&format!("{device} {driver}"));
    let cookie = i64::from(name.0);
    let key = pool(p);
    let track_id = begin_on_track(p, &key, cookie);
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    let kind = p.storage.strings.intern("Device PM Suspend Event");
    let device = p.storage.strings.intern(&device);
    let driver = p.storage.strings.intern(&driver);
    let phase = callback_phase(&pm_ops, pm_event_name(event));
    let phase = p.storage.strings.intern(&phase);
    let mut b = ArgSetBuilder::default();
    for (key, value) in [
        ("utid", ArgValue::Uint(u64::from(utid))),
        ("event_type", ArgValue::String(kind)),
        ("cpu", ArgValue::Uint(u64::from(e.cpu))),
        ("device_name", ArgValue::String(device)),
        ("driver_name", ArgValue::String(driver)),
        ("callback_phase", ArgValue::String(phase)),
    ] {
        let k = p.storage.strings.intern(key);
        b.add(k, k, value);
    }
    let arg_set_id = p.storage.args.add_set(&b);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id,
            name,
            arg_set_id: arg_set_id.into(),
            ..Default::default()
        },
    );
}

fn device_pm_callback_end(p: &mut Parser, e: &FtraceInput<'_>) {
    let device = text(e.body, 1);
    let driver = text(e.body, 2);
    let name = p.storage.strings.intern(&format!("{device} {driver}"));
    let key = pool(p);
    end(p, &key, i64::from(name.0), e.ts);
}
