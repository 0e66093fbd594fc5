//! Power-related kernel events with a track of their own, as upstream's
//! ftrace parser imports them:
//!
//! - wakeup sources (`wakeup_source_activate`/`_deactivate`): a
//!   `Wakelock(<name>)` slice on the source's `wakesource_wakelock` track
//!   from its first activation to the deactivation that closes the last
//!   (activations nest by count; only the outermost pair is a slice);
//! - device runtime PM (`rpm_status`): the device's `linux_rpm` track shows
//!   its state (`Active`, `Resuming`, `Suspending`, `Invalid State`) as a
//!   slice until the next status; suspended is shown as no slice;
//! - devfreq (`devfreq_frequency`): a device's frequency on
//!   `devfreq_<device>` (the address the kernel puts before the name is
//!   cut);
//! - the PowerVR GPU's power state (`gpu_power_state`): `OFF`, `PG`, `ON`
//!   (else `Unknown`) slices one after another on one track;
//! - Pixel's battery current limiter (`bcl_irq_trigger`): its id, throttle,
//!   per-CPU/TPU/GPU limits (zero, the id -1, when not throttling), voltage
//!   and capacity, each a counter named by its key.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::ArgValue;
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.wakeup_source_activate` {name 1}.
const WAKEUP_SOURCE_ACTIVATE: u32 = 404;
/// `FtraceEvent.wakeup_source_deactivate` {name 1}.
const WAKEUP_SOURCE_DEACTIVATE: u32 = 405;
/// `FtraceEvent.rpm_status` {name 1, status 2}.
const RPM_STATUS: u32 = 489;
/// `FtraceEvent.bcl_irq_trigger` {id 1, throttle 2, cpu0_limit 3,
/// cpu1_limit 4, cpu2_limit 5, tpu_limit 6, gpu_limit 7, voltage 8,
/// capacity 9}.
const BCL_IRQ_TRIGGER: u32 = 533;
/// `FtraceEvent.devfreq_frequency` {dev_name 1, freq 2}.
const DEVFREQ_FREQUENCY: u32 = 541;
/// `FtraceEvent.gpu_power_state` {new_state 2}.
const GPU_POWER_STATE: u32 = 601;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (WAKEUP_SOURCE_ACTIVATE, wakeup_source_activate),
    (WAKEUP_SOURCE_DEACTIVATE, wakeup_source_deactivate),
    (RPM_STATUS, rpm_status),
    (BCL_IRQ_TRIGGER, bcl_irq_trigger),
    (DEVFREQ_FREQUENCY, devfreq_frequency),
    (GPU_POWER_STATE, gpu_power_state),
];

fn counter(p: &mut Parser, spec: &TrackSpec<'_>, ts: i64, value: f64) {
    let track_id = p.tracks.interned_counter(&mut p.storage, spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id,
        value,
        arg_set_id: OptU32::NONE,
    });
}

fn begin(p: &mut Parser, track_id: u32, ts: i64, name: &str) {
    let name = p.storage.strings.intern(name);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur: -1,
            track_id,
            name,
            ..SliceRow::default()
        },
    );
}

fn wakelock_track(p: &mut Parser, source: &str) -> u32 {
    let key = p.storage.strings.intern(source);
    let name = format!("Wakelock({source})");
    let mut spec = TrackSpec::new(Some(&name), "wakesource_wakelock", EventType::Slice);
    spec.dimensions = vec![("wakelock_event", ArgValue::String(key))];
    p.tracks.interned_counter(&mut p.storage, &spec)
}

fn wakeup_source_activate(p: &mut Parser, e: &FtraceInput<'_>) {
    let source = Fields::new(e.body).str(1).unwrap_or_default().into_owned();
    let count = p
        .ftrace_state
        .wakeup_sources
        .entry(source.clone())
        .or_insert(0);
    *count += 1;
    if *count > 1 {
        return;
    }
    let track = wakelock_track(p, &source);
    begin(p, track, e.ts, &format!("Wakelock({source})"));
}

fn wakeup_source_deactivate(p: &mut Parser, e: &FtraceInput<'_>) {
    let source = Fields::new(e.body).str(1).unwrap_or_default().into_owned();
    let count = p
        .ftrace_state
        .wakeup_sources
        .entry(source.clone())
        .or_insert(0);
    let was = *count;
    *count = was.saturating_sub(1);
    if was != 1 {
        return;
    }
    let track = wakelock_track(p, &source);
    p.slices.end(&mut p.storage, track, e.ts, None);
}

/// The kernel's runtime PM statuses (any other, -1 among them, is
/// invalid).
const RPM_ACTIVE: i32 = 0;
const RPM_RESUMING: i32 = 1;
const RPM_SUSPENDED: i32 = 2;
const RPM_SUSPENDING: i32 = 3;

fn rpm_status(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let device = f.str(1).unwrap_or_default();
    let device = p.storage.strings.intern(&device);
    let mut spec = TrackSpec::new(None, "linux_rpm", EventType::Counter);
    spec.dimensions = vec![("linux_device", ArgValue::String(device))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    // A new status ends the slice of the last, if one is open.
    p.slices.end(&mut p.storage, track, e.ts, None);
    let label = match f.int32(2).unwrap_or(0) {
        RPM_SUSPENDED => return,
        RPM_ACTIVE => "Active",
        RPM_RESUMING => "Resuming",
        RPM_SUSPENDING => "Suspending",
        _ => "Invalid State",
    };
    begin(p, track, e.ts, label);
}

fn bcl_irq_trigger(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let v = |id: u32| f.int32(id).unwrap_or(0);
    let throttle = v(2);
    let on = throttle != 0;
    let values = [
        ("bcl_irq_id", if on { v(1) } else { -1 }),
        ("bcl_irq_throttle", throttle),
        ("bcl_irq_cpu0", if on { v(3) } else { 0 }),
        ("bcl_irq_cpu1", if on { v(4) } else { 0 }),
        ("bcl_irq_cpu2", if on { v(5) } else { 0 }),
        ("bcl_irq_tpu", if on { v(6) } else { 0 }),
        ("bcl_irq_gpu", if on { v(7) } else { 0 }),
        ("bcl_irq_voltage", v(8)),
        ("bcl_irq_capacity", v(9)),
    ];
    for (key, value) in values {
        let key_id = p.storage.strings.intern(key);
        let mut spec = TrackSpec::new(Some(key), "bcl_irq", EventType::Counter);
        spec.dimensions = vec![("bcl_key", ArgValue::String(key_id))];
        counter(p, &spec, e.ts, f64::from(value));
    }
}

fn devfreq_frequency(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let device = f.str(1).unwrap_or_default();
    let name = match device.find("devfreq_") {
        Some(at) => device[at..].to_owned(),
        None => format!("devfreq_{device}"),
    };
    let device = p.storage.strings.intern(&device);
    let mut spec = TrackSpec::new(Some(&name), "linux_device_frequency", EventType::Counter);
    spec.dimensions = vec![("linux_device", ArgValue::String(device))];
    counter(p, &spec, e.ts, f.uint(2).unwrap_or(0) as f64);
}

fn gpu_power_state(p: &mut Parser, e: &FtraceInput<'_>) {
    let spec = TrackSpec::new(
        Some("powervr_gpu_power_state"),
        "powervr_gpu_power_state",
        EventType::Slice,
    );
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.slices.end(&mut p.storage, track, e.ts, None);
    let label = match Fields::new(e.body).int32(2).unwrap_or(0) {
        0 => "OFF",
        1 => "PG",
        2 => "ON",
        _ => "Unknown",
    };
    begin(p, track, e.ts, label);
}
