//! The kernel's thermal events as counters, as upstream's thermal tracker
//! imports them:
//!
//! - `thermal_temperature`: a zone's temperature on `<zone> Temperature`
//!   (`thermal_temperature`, dimension `thermal_zone`);
//! - `cdev_update`: a cooling device's target state on `<device> Cooling
//!   Device` (`cooling_device_counter`, dimension `linux_device`);
//! - Exynos ACPM (`thermal_exynos_acpm_bulk`, `_high_overhead`): a zone
//!   (by number: BIG, MID, LITTLE, GPU, ISP, TPU, AUR) temperature and
//!   cooling state on `<zone> Temperature` (`acpm_thermal_temperature`)
//!   and `Tj-<zone> Cooling Device` (`acpm_cooling_device_counter`), each
//!   value with the zone's number as its `thermal_zone_id` arg. A bulk
//!   event carries the time of its measurement, which its values take
//!   (its `ftrace_event` row keeps the event's own time). An unknown zone
//!   counts `ftrace_thermal_exynos_acpm_unknown_tz_id`.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::CounterRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.thermal_temperature` {temp 2, thermal_zone 4}.
const THERMAL_TEMPERATURE: u32 = 341;
/// `FtraceEvent.cdev_update` {target 1, type 2}.
const CDEV_UPDATE: u32 = 342;
/// `FtraceEvent.thermal_exynos_acpm_bulk` {tz_id 1, current_temp 2,
/// cdev_state 4, timestamp 11}.
const ACPM_BULK: u32 = 506;
/// `FtraceEvent.thermal_exynos_acpm_high_overhead` {tz_id 1,
/// current_temp 2, cdev_state 4}.
const ACPM_HIGH_OVERHEAD: u32 = 507;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (THERMAL_TEMPERATURE, thermal_temperature),
    (CDEV_UPDATE, cdev_update),
    (ACPM_BULK, acpm_bulk),
    (ACPM_HIGH_OVERHEAD, acpm_high_overhead),
];

/// The ACPM thermal zones, by `tz_id`.
const ACPM_ZONES: [&str; 7] = ["BIG", "MID", "LITTLE", "GPU", "ISP", "TPU", "AUR"];

/// A value on the counter track named `name`, of `classification`, whose
/// one dimension is (`key`, `value`).
fn push(
    p: &mut Parser,
    (name, classification): (&str, &str),
    (key, value): (&'static str, &str),
    ts: i64,
    v: f64,
    arg_set_id: Option<u32>,
) {
    let value = p.storage.strings.intern(value);
    let mut spec = TrackSpec::new(Some(name), classification, EventType::Counter);
    spec.dimensions = vec![(key, ArgValue::String(value))];
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id,
        value: v,
        arg_set_id: arg_set_id.into(),
    });
}

fn thermal_temperature(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let zone = f.str(4).unwrap_or_default();
    let name = format!("{zone} Temperature");
    let temp = f64::from(f.int32(2).unwrap_or(0));
    push(
        p,
        (&name, "thermal_temperature"),
        ("thermal_zone", &*zone),
        e.ts,
        temp,
        None,
    );
}

fn cdev_update(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let device = f.str(2).unwrap_or_default();
    let name = format!("{device} Cooling Device");
    let target = f.uint(1).unwrap_or(0) as f64;
    push(
        p,
        (&name, "cooling_device_counter"),
        ("linux_device", &*device),
        e.ts,
        target,
        None,
    );
}

/// One ACPM zone's temperature and cooling state at `ts`.
fn acpm(p: &mut Parser, f: &Fields<'_>, ts: i64) {
    let tz_id = f.uint(1).unwrap_or(0) as u32;
    let Some(&zone) = ACPM_ZONES.get(tz_id as usize) else {
        p.storage
            .stats
            .incr("ftrace_thermal_exynos_acpm_unknown_tz_id");
        return;
    };
    let key = p.storage.strings.intern("thermal_zone_id");
    let mut args = ArgSetBuilder::default();
    args.add(key, key, ArgValue::Int(i64::from(tz_id)));
    let temp = f64::from(f.uint(2).unwrap_or(0) as u32);
    let set = p.storage.args.add_set(&args);
    let name = format!("{zone} Temperature");
    push(
        p,
        (&name, "acpm_thermal_temperature"),
        ("thermal_zone", zone),
        ts,
        temp,
        set,
    );
    let state = f64::from(f.uint(4).unwrap_or(0) as u32);
    let set = p.storage.args.add_set(&args);
    let name = format!("Tj-{zone} Cooling Device");
    push(
        p,
        (&name, "acpm_cooling_device_counter"),
        ("thermal_zone", zone),
        ts,
        state,
        set,
    );
}

fn acpm_bulk(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    // `ftrace.rs` drops a bulk event without its time.
    let ts = f.uint(11).unwrap_or(0) as i64;
    acpm(p, &f, ts);
}

fn acpm_high_overhead(p: &mut Parser, e: &FtraceInput<'_>) {
    acpm(p, &Fields::new(e.body), e.ts);
}
