//! Android's power data into counter tracks as upstream names and
//! dimensions them: the battery's gauges (`battery`, TracePacket field 38:
//! charge, capacity, currents, voltage and the power they give), the power
//! rails' energy (`power_rails`, 40: a track per rail and session, named
//! after the rail, well-known rails by their friendly name), the energy
//! estimation breakdown per consumer and per uid (`android_energy_
//! estimation_breakdown`, 77) and the power entities' state residency
//! (`entity_state_residency`, 91). Descriptors (rails, consumers, entity
//! states) are kept here for the data packets that refer to them, per
//! machine; data that refers to no descriptor is counted as upstream counts
//! it. The descriptors are read where they stand in the file, before the
//! sort (`read_descriptors`, called by the loader), as upstream reads them
//! while it tokenizes: a descriptor packet has no time of its own, so a
//! reading sorted before it still finds it.

use crate::hash::HashMap;

use protozero::{Decoder, Field};

use super::Parser;
use super::importer::{Importer, Input};
use crate::clock::{BOOTTIME, machine_clock};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::import_logs::LogPlace;
use crate::storage::rows::CounterRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.battery.
const BATTERY: u32 = 38;
/// TracePacket.power_rails.
const POWER_RAILS: u32 = 40;
/// TracePacket.android_energy_estimation_breakdown.
const ENERGY_BREAKDOWN: u32 = 77;
/// TracePacket.entity_state_residency.
const ENTITY_STATE_RESIDENCY: u32 = 91;

/// The payloads whose descriptors are read before the sort
/// ([`read_descriptors`]).
pub const DESCRIBED: [u32; 3] = [POWER_RAILS, ENERGY_BREAKDOWN, ENTITY_STATE_RESIDENCY];

/// The largest rail index kept (upstream skips larger ones).
const MAX_RAIL_INDEX: u32 = 256;

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (BATTERY, import_battery),
    (POWER_RAILS, import_power_rails),
    (ENERGY_BREAKDOWN, import_energy_breakdown),
    (ENTITY_STATE_RESIDENCY, import_entity_state_residency),
];

/// An energy consumer as its descriptor describes it.
#[derive(Debug, Clone)]
struct Consumer {
    name: String,
    kind: String,
    ordinal: i64,
}

/// What the power importers keep between packets.
#[derive(Debug, Default)]
pub struct PowerState {
    /// Each (machine, session)'s rail tracks by rail index: a machine's
    /// descriptors name its own rails, as upstream keeps them per machine.
    rails: HashMap<(u32, u64), Vec<Option<u32>>>,
    /// Energy consumers by (machine, id).
    consumers: HashMap<(u32, i32), Consumer>,
    /// Entity states by (machine, entity index, state index): entity and
    /// state names.
    entity_states: HashMap<(u32, i32, i32), (String, String)>,
}

/// The friendly name of a well-known rail, from its raw name's ending (the
/// first ending that matches, in this order).
fn friendly_rail_name(raw: &str) -> Option<&'static str> {
    const ENDINGS: &[(&str, &str)] = &[
        ("M_VDD_CPUCL0", "cpu.little"),
        ("M_VDD_CPUCL0_M", "cpu.little.mem"),
        ("M_VDD_CPUCL1", "cpu.mid"),
        ("M_VDD_CPUCL1_M", "cpu.mid.mem"),
        ("M_VDD_CPUCL2", "cpu.big"),
        ("M_VDD_INT", "system.fabric"),
        ("M_VDD_TPU", "tpu"),
        ("VSYS_PWR_DISP", "display"),
        ("VSYS_PWR_DISPLAY", "display"),
        ("M_DISP", "ldo.main.a.display"),
        ("VSYS_PWR_MODEM", "modem"),
        ("M_VDD_MIF", "memory.interface"),
        ("VSYS_PWR_WLAN_BT", "wifi.bt"),
        ("VSYS_PWR_MMWAVE", "mmwave"),
        ("S_VDD_AOC_RET", "aoc.memory"),
        ("S_VDD_AOC", "aoc.logic"),
        ("S_VDDQ_MEM", "ddr.a"),
        ("S_VDD2L", "ddr.b"),
        ("S_VDD2L_MEM", "ddr.b"),
        ("S_VDD2H_MEM", "ddr.c"),
        ("S_VDD_G3D", "gpu"),
        ("S_VDD_G3D_L2", "gpu.l2"),
        ("S_GNSS_CORE", "gps"),
        ("VSYS_PWR_RFFE", "radio.frontend"),
        ("VSYS_PWR_CAMERA", "camera"),
        ("S_VDD_CAM", "multimedia"),
        ("S_UDFPS", "udfps"),
        ("S_PLL_MIPI_UFS", "ufs"),
        ("M_LLDO1", "ldo.main.a"),
        ("M_LLDO2", "ldo.main.b"),
        ("S_LLDO1", "ldo.sub"),
    ];
    ENDINGS
        .iter()
        .find(|(end, _)| raw.ends_with(end))
        .map(|(_, name)| *name)
}

/// The well-formed fields of a message.
fn fields(bytes: &[u8]) -> impl Iterator<Item = Field<'_>> {
    Decoder::new(bytes).map_while(Result::ok)
}

fn push_counter(p: &mut Parser, track: u32, ts: i64, value: f64, arg_set_id: Option<u32>) {
    p.storage.counters.push(CounterRow {
        ts,
        track_id: track,
        value,
        arg_set_id: arg_set_id.into(),
    });
}

/// Battery gauges' readings, read as upstream reads them.
#[derive(Debug, Default)]
struct Battery<'a> {
    charge_uah: Option<i64>,
    capacity_percent: Option<f32>,
    current_ua: Option<i64>,
    current_avg_ua: Option<i64>,
    name: &'a str,
    energy_uwh: Option<i64>,
    voltage_uv: Option<i64>,
}

fn import_battery(p: &mut Parser, input: &Input<'_>) {
    let mut b = Battery::default();
    for f in fields(input.bytes) {
        match f.id {
            1 => b.charge_uah = f.as_i64().ok(),
            2 => b.capacity_percent = f.as_f32().ok(),
            3 => b.current_ua = f.as_i64().ok(),
            4 => b.current_avg_ua = f.as_i64().ok(),
            5 => b.name = f.as_str().unwrap_or(""),
            6 => b.energy_uwh = f.as_i64().ok(),
            7 => b.voltage_uv = f.as_i64().ok(),
            _ => {}
        }
    }
    let ts = input.ts;
    let name = b.name;
    let gauge = |p: &mut Parser, counter: &str, value: f64| {
        let track_name = if name.is_empty() {
            format!("batt.{counter}")
        } else {
            format!("batt.{name}.{counter}")
        };
        let battery = p.storage.strings.intern(name);
        let key = p.storage.strings.intern(counter);
        let mut spec = TrackSpec::new(Some(&track_name), "battery_counter", EventType::Counter);
        spec.dimensions = vec![
            ("battery_name", ArgValue::String(battery)),
            ("counter_name", ArgValue::String(key)),
        ];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push_counter(p, track, ts, value, None);
    };
    if let Some(charge) = b.charge_uah {
        gauge(p, "charge_uah", charge as f64);
    } else if let (Some(energy), Some(voltage)) = (b.energy_uwh, b.voltage_uv) {
        // The charge follows from the energy and the voltage.
        if voltage > 0 {
            let charge = energy.saturating_mul(1_000_000) / voltage;
            gauge(p, "charge_uah", charge as f64);
        }
    }
    if let Some(pct) = b.capacity_percent {
        gauge(p, "capacity_pct", f64::from(pct));
    }
    if let Some(current) = b.current_ua {
        gauge(p, "current_ua", current as f64);
    }
    if let Some(avg) = b.current_avg_ua {
        gauge(p, "current.avg_ua", avg as f64);
    }
    if let Some(voltage) = b.voltage_uv {
        gauge(p, "voltage_uv", voltage as f64);
    }
    if let (Some(current), Some(voltage)) = (b.current_ua, b.voltage_uv) {
        // Power in mW, positive whether charging or discharging (integer
        // arithmetic, as upstream computes it).
        let power = current.saturating_mul(voltage) / 1_000_000_000;
        gauge(p, "power_mw", (power as f64).abs());
    }
}

/// Reads the descriptors of a power packet (`field`: its TracePacket
/// field) of `machine` where the packet stands in the file: rails,
/// energy consumers and entity states.
pub fn read_descriptors(p: &mut Parser, field: u32, bytes: &[u8], machine: u32) {
    let before = p.machine;
    p.set_machine(machine);
    p.storage.set_machine(machine);
    match field {
        POWER_RAILS => {
            let session = Decoder::new(bytes)
                .find_last(3)
                .and_then(|f| f.as_u64().ok())
                .unwrap_or(0);
            for f in fields(bytes).filter(|f| f.id == 1) {
                if let Ok(desc) = f.as_bytes() {
                    rail_descriptor(p, session, desc);
                }
            }
        }
        ENERGY_BREAKDOWN => {
            if let Some(desc) = fields(bytes)
                .filter(|f| f.id == 1)
                .last()
                .and_then(|f| f.as_bytes().ok())
            {
                consumer_descriptor(p, desc);
            }
        }
        ENTITY_STATE_RESIDENCY => {
            for f in fields(bytes).filter(|f| f.id == 1) {
                if let Ok(desc) = f.as_bytes() {
                    entity_state_descriptor(p, desc);
                }
            }
        }
        _ => {}
    }
    p.storage.set_machine(0);
    p.set_machine(before);
}

fn import_power_rails(p: &mut Parser, input: &Input<'_>) {
    let session = Decoder::new(input.bytes)
        .find_last(3)
        .and_then(|f| f.as_u64().ok())
        .unwrap_or(0);
    // Its descriptors were read before the sort (`read_descriptors`).
    let has_data = fields(input.bytes).any(|f| f.id == 2);
    if !has_data {
        // Counted and logged with the packet's time, as upstream does (a
        // packet of descriptors alone: the device's writer sends them with
        // the first readings).
        p.storage.record_import_log(
            "power_rail_empty_packet",
            LogPlace {
                ts: Some(input.ts),
                byte_offset: None,
            },
            &[],
        );
        return;
    }
    for f in fields(input.bytes).filter(|f| f.id == 2) {
        let Ok(data) = f.as_bytes() else { continue };
        let (mut index, mut ts_ms, mut energy) = (0u32, None, 0u64);
        for d in fields(data) {
            match d.id {
                1 => index = d.as_u32().unwrap_or(0),
                2 => ts_ms = d.as_u64().ok(),
                3 => energy = d.as_u64().unwrap_or(0),
                _ => {}
            }
        }
        // A reading's own time is on the boot clock, in ms; the packet's
        // time stands in when it has none.
        let ts = match ts_ms {
            Some(ms) => {
                let ns = i64::try_from(ms)
                    .unwrap_or(i64::MAX)
                    .saturating_mul(1_000_000);
                match p.clocks.trace_time(machine_clock(BOOTTIME, p.machine), ns) {
                    Ok(t) => t,
                    Err(_) => {
                        p.storage.stats.incr("clock_sync_failure");
                        continue;
                    }
                }
            }
            None => input.ts,
        };
        let track = p
            .power
            .rails
            .get(&(p.machine, session))
            .and_then(|tracks| tracks.get(index as usize).copied().flatten());
        let Some(track) = track else {
            p.storage.stats.incr("power_rail_unknown_index");
            continue;
        };
        let mut args = ArgSetBuilder::default();
        let key = p.storage.strings.intern("packet_ts");
        args.add(key, key, ArgValue::Uint(input.ts as u64));
        let arg_set_id = p.storage.args.add_set(&args);
        push_counter(p, track, ts, energy as f64, arg_set_id);
    }
}

/// Makes (or finds) a rail's track and files it under its session and
/// index.
fn rail_descriptor(p: &mut Parser, session: u64, desc: &[u8]) {
    let (mut index, mut rail, mut subsys) = (0u32, "", "");
    for f in fields(desc) {
        match f.id {
            1 => index = f.as_u32().unwrap_or(0),
            2 => rail = f.as_str().unwrap_or(""),
            3 => subsys = f.as_str().unwrap_or(""),
            _ => {}
        }
    }
    if index > MAX_RAIL_INDEX {
        return;
    }
    let name = match friendly_rail_name(rail) {
        Some(friendly) => format!("power.rails.{friendly}"),
        None => format!("power.{rail}_uws"),
    };
    let rail_id = p.storage.strings.intern(rail);
    let subsys_id = p.storage.strings.intern(subsys);
    let mut spec = TrackSpec::new(Some(&name), "power_rails", EventType::Counter);
    spec.dimensions = vec![
        ("name", ArgValue::String(rail_id)),
        ("session_uuid", ArgValue::Uint(session)),
    ];
    spec.source_args = vec![
        ("raw_name", ArgValue::String(rail_id)),
        ("subsystem_name", ArgValue::String(subsys_id)),
    ];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    let tracks = p.power.rails.entry((p.machine, session)).or_default();
    let slot = index as usize;
    if tracks.len() <= slot {
        tracks.resize(slot + 1, None);
    }
    if let Some(s) = tracks.get_mut(slot) {
        *s = Some(track);
    }
}

fn import_energy_breakdown(p: &mut Parser, input: &Input<'_>) {
    let (mut consumer_id, mut energy) = (None, None);
    let mut per_uid = Vec::new();
    let mut descriptor = None;
    for f in fields(input.bytes) {
        match f.id {
            1 => descriptor = f.as_bytes().ok(),
            2 => consumer_id = f.as_i32().ok(),
            3 => energy = f.as_i64().ok(),
            4 => per_uid.extend(f.as_bytes().ok()),
            _ => {}
        }
    }
    // A packet with a descriptor is read for the descriptor only (before
    // the sort, `read_descriptors`), as upstream reads it.
    if descriptor.is_some() {
        return;
    }
    let (Some(id), Some(energy)) = (consumer_id, energy) else {
        p.storage.stats.incr("energy_breakdown_missing_values");
        return;
    };
    let Some(consumer) = p.power.consumers.get(&(p.machine, id)).cloned() else {
        p.storage.stats.incr("energy_breakdown_missing_values");
        return;
    };
    let kind = p.storage.strings.intern(&consumer.kind);
    let mut spec = TrackSpec::new(
        Some(&consumer.name),
        "android_energy_estimation_breakdown",
        EventType::Counter,
    );
    spec.dimensions = vec![("energy_consumer_id", ArgValue::Uint(id as u32 as u64))];
    spec.source_args = vec![
        ("consumer_type", ArgValue::String(kind)),
        ("ordinal", ArgValue::Int(consumer.ordinal)),
    ];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    push_counter(p, track, input.ts, energy as f64, None);
    for bytes in per_uid {
        let (mut uid, mut uws) = (None, None);
        for f in fields(bytes) {
            match f.id {
                1 => uid = f.as_i32().ok(),
                2 => uws = f.as_i64().ok(),
                _ => {}
            }
        }
        let (Some(uid), Some(uws)) = (uid, uws) else {
            p.storage.stats.incr("energy_uid_breakdown_missing_values");
            continue;
        };
        let mut spec = TrackSpec::new(
            Some(&consumer.name),
            "android_energy_estimation_breakdown_per_uid",
            EventType::Counter,
        );
        spec.dimensions = vec![
            ("energy_consumer_id", ArgValue::Uint(id as u32 as u64)),
            ("uid", ArgValue::Int(i64::from(uid as u32))),
        ];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push_counter(p, track, input.ts, uws as f64, None);
    }
}

fn consumer_descriptor(p: &mut Parser, desc: &[u8]) {
    for f in fields(desc).filter(|f| f.id == 1) {
        let Ok(bytes) = f.as_bytes() else { continue };
        let mut id = None;
        let mut c = Consumer {
            name: String::new(),
            kind: String::new(),
            ordinal: 0,
        };
        for g in fields(bytes) {
            match g.id {
                1 => id = g.as_i32().ok(),
                2 => c.ordinal = i64::from(g.as_i32().unwrap_or(0)),
                3 => c.kind = g.as_str().unwrap_or("").to_owned(),
                4 => c.name = g.as_str().unwrap_or("").to_owned(),
                _ => {}
            }
        }
        match id {
            Some(id) => {
                p.power.consumers.insert((p.machine, id), c);
            }
            None => p.storage.stats.incr("energy_descriptor_invalid"),
        }
    }
}

fn import_entity_state_residency(p: &mut Parser, input: &Input<'_>) {
    let mut residencies = Vec::new();
    for f in fields(input.bytes) {
        // Its descriptors (1) were read before the sort.
        if f.id == 2 {
            residencies.extend(f.as_bytes().ok());
        }
    }
    if residencies.is_empty() {
        p.storage.stats.incr("entity_state_residency_invalid");
        return;
    }
    for bytes in residencies {
        let (mut entity, mut state, mut time_ms) = (0i32, 0i32, 0u64);
        for f in fields(bytes) {
            match f.id {
                1 => entity = f.as_i32().unwrap_or(0),
                2 => state = f.as_i32().unwrap_or(0),
                3 => time_ms = f.as_u64().unwrap_or(0),
                _ => {}
            }
        }
        let Some((entity_name, state_name)) = p
            .power
            .entity_states
            .get(&(p.machine, entity, state))
            .cloned()
        else {
            p.storage.stats.incr("entity_state_residency_lookup_failed");
            // Upstream stops at the first reading it cannot place.
            return;
        };
        let name = format!("Entity residency: {entity_name} is {state_name}");
        let e = p.storage.strings.intern(&entity_name);
        let s = p.storage.strings.intern(&state_name);
        let mut spec = TrackSpec::new(Some(&name), "entity_state", EventType::Counter);
        spec.dimensions = vec![
            ("entity_name", ArgValue::String(e)),
            ("state_name", ArgValue::String(s)),
        ];
        let track = p.tracks.interned_counter(&mut p.storage, &spec);
        push_counter(p, track, input.ts, time_ms as f64, None);
    }
}

fn entity_state_descriptor(p: &mut Parser, bytes: &[u8]) {
    let (mut entity, mut state) = (None, None);
    let (mut entity_name, mut state_name) = ("", "");
    for f in fields(bytes) {
        match f.id {
            1 => entity = f.as_i32().ok(),
            2 => state = f.as_i32().ok(),
            3 => entity_name = f.as_str().unwrap_or(""),
            4 => state_name = f.as_str().unwrap_or(""),
            _ => {}
        }
    }
    let (Some(entity), Some(state)) = (entity, state) else {
        p.storage.stats.incr("energy_descriptor_invalid");
        return;
    };
    // The first descriptor of a pair stands.
    p.power
        .entity_states
        .entry((p.machine, entity, state))
        .or_insert_with(|| (entity_name.to_owned(), state_name.to_owned()));
}
