//! `android_system_property` (TracePacket field 86): the `debug.tracing.*`
//! system properties Android's probes read at the start of a trace, on
//! the global tracks atrace's events of the same meaning also fill: the
//! device state as an instant on the `DeviceStateChanged` track, the
//! screen state on the `ScreenState` counter, battery stats counters on
//! their `battery_stats.*` tracks, and the mcc, mnc, visible desktop tasks,
//! battery status and plug type as `sysprop_counter` tracks. Values that
//! are not integers are skipped, as upstream skips them.

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::args::ArgValue;
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.android_system_property.
const ANDROID_SYSTEM_PROPERTY: u32 = 86;

/// The prefix of the properties read.
const PREFIX: &str = "debug.tracing.";

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(ANDROID_SYSTEM_PROPERTY, import)];

/// The global `ScreenState` counter track.
pub fn screen_state_track(p: &mut Parser) -> u32 {
    let spec = TrackSpec::new(Some("ScreenState"), "screen_state", EventType::Counter);
    p.tracks.interned_counter(&mut p.storage, &spec)
}

/// The global counter track of a `battery_stats.*` counter.
pub fn battery_stats_track(p: &mut Parser, name: &str) -> u32 {
    let key = p.storage.strings.intern(name);
    let mut spec = TrackSpec::new(Some(name), "battery_stats", EventType::Counter);
    spec.dimensions = vec![("counter_key", ArgValue::String(key))];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

/// The global `DeviceStateChanged` slice track.
pub fn device_state_track(p: &mut Parser) -> u32 {
    let spec = TrackSpec::new(
        Some("DeviceStateChanged"),
        "android_device_state",
        EventType::Slice,
    );
    p.tracks.interned_counter(&mut p.storage, &spec)
}

fn push(p: &mut Parser, track: u32, ts: i64, value: i32) {
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value: f64::from(value),
        arg_set_id: OptU32::NONE,
    });
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let ts = input.ts;
    let values = Decoder::new(input.bytes)
        .map_while(Result::ok)
        .filter(|f| f.id == 1)
        .filter_map(|f| f.as_bytes().ok());
    for kv in values {
        let (mut name, mut value) = ("", "");
        for f in Decoder::new(kv).map_while(Result::ok) {
            match f.id {
                1 => name = f.as_str().unwrap_or(""),
                2 => value = f.as_str().unwrap_or(""),
                _ => {}
            }
        }
        property(p, ts, name, value);
    }
}

fn property(p: &mut Parser, ts: i64, name: &str, value: &str) {
    if name == "debug.tracing.device_state" {
        let track = device_state_track(p);
        let state = p.storage.strings.intern(value);
        p.slices.instant(
            &mut p.storage,
            SliceRow {
                ts,
                track_id: track,
                name: state,
                ..SliceRow::default()
            },
        );
        return;
    }
    let Ok(state) = value.trim().parse::<i32>() else {
        return;
    };
    let short = name.strip_prefix(PREFIX).unwrap_or(name);
    match name {
        "debug.tracing.screen_state" => {
            let track = screen_state_track(p);
            push(p, track, ts, state);
        }
        _ if short.starts_with("battery_stats.") && name.starts_with(PREFIX) => {
            let track = battery_stats_track(p, short);
            push(p, track, ts, state);
        }
        "debug.tracing.mcc" | "debug.tracing.mnc" | "debug.tracing.desktop_mode_visible_tasks" => {
            sysprop_counter(p, ts, name, short, state);
        }
        "debug.tracing.battery_status" => sysprop_counter(p, ts, name, "BatteryStatus", state),
        "debug.tracing.plug_type" => sysprop_counter(p, ts, name, "PlugType", state),
        _ => {}
    }
}

fn sysprop_counter(p: &mut Parser, ts: i64, property: &str, track_name: &str, value: i32) {
    let key = p.storage.strings.intern(property);
    let mut spec = TrackSpec::new(Some(track_name), "sysprop_counter", EventType::Counter);
    spec.dimensions = vec![("sysprop_name", ArgValue::String(key))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    push(p, track, ts, value);
}
