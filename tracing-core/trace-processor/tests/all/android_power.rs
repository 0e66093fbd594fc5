//! Android's power packets (battery gauges, power rails, energy
//! breakdowns, entity state residency) into counter tracks named as
//! upstream names them, checked against what the test wrote.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.battery`.
const BATTERY: u32 = 38;
/// `TracePacket.power_rails`.
const POWER_RAILS: u32 = 40;
/// `TracePacket.android_energy_estimation_breakdown`.
const ENERGY_BREAKDOWN: u32 = 77;
/// `TracePacket.entity_state_residency`.
const ENTITY_STATE_RESIDENCY: u32 = 91;

fn r(v: f64) -> Value {
    Value::Real(v)
}

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

fn stat(tp: &TraceProcessor, name: &str) -> Vec<Vec<Value>> {
    rows(
        tp,
        &format!("SELECT value FROM stats WHERE name = '{name}' AND idx IS NULL"),
    )
}

#[test]
fn battery_gauges_become_batt_counters_and_power_follows_current_and_voltage() {
    let tp = load(&[
        packet(|p| {
            p.set_timestamp(1000);
            let mut b = p.message().begin_nested(BATTERY);
            b.append_int64(1, 3_000_000);
            b.append_float(2, 50.0);
            b.append_int64(3, -2_000_000);
            b.append_int64(7, 4_000_000);
        }),
        packet(|p| {
            p.set_timestamp(2000);
            let mut b = p.message().begin_nested(BATTERY);
            b.append_string(5, "BAT0");
            b.append_int64(6, 8_000_000);
            b.append_int64(7, 4_000_000);
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.type, c.ts, c.value FROM counter c
             JOIN counter_track t ON t.id = c.track_id ORDER BY t.name"
        ),
        vec![
            vec![
                s("batt.BAT0.charge_uah"),
                s("battery_counter"),
                i(2000),
                r(2_000_000.0)
            ],
            vec![
                s("batt.BAT0.voltage_uv"),
                s("battery_counter"),
                i(2000),
                r(4_000_000.0)
            ],
            vec![
                s("batt.capacity_pct"),
                s("battery_counter"),
                i(1000),
                r(50.0)
            ],
            vec![
                s("batt.charge_uah"),
                s("battery_counter"),
                i(1000),
                r(3_000_000.0)
            ],
            vec![
                s("batt.current_ua"),
                s("battery_counter"),
                i(1000),
                r(-2_000_000.0)
            ],
            vec![s("batt.power_mw"), s("battery_counter"), i(1000), r(8000.0)],
            vec![
                s("batt.voltage_uv"),
                s("battery_counter"),
                i(1000),
                r(4_000_000.0)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT extract_arg(dimension_arg_set_id, 'battery_name'),
                    extract_arg(dimension_arg_set_id, 'counter_name')
             FROM counter_track WHERE name = 'batt.BAT0.charge_uah'"
        ),
        vec![vec![s("BAT0"), s("charge_uah")]]
    );
}

fn rails(session: Option<u64>, descriptors: &[(u32, &str)], data: &[(u32, u64, u64)]) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(5_000_000);
        let mut m = p.message().begin_nested(POWER_RAILS);
        for (index, name) in descriptors {
            let mut d = m.begin_nested(1);
            d.append_uint32(1, *index);
            d.append_string(2, name);
            d.append_string(3, "subsys");
        }
        for (index, ms, energy) in data {
            let mut d = m.begin_nested(2);
            d.append_uint32(1, *index);
            d.append_uint64(2, *ms);
            d.append_uint64(3, *energy);
        }
        if let Some(uuid) = session {
            m.append_uint64(3, uuid);
        }
    })
}

#[test]
fn power_rails_are_tracks_per_rail_and_session_with_readings_at_their_own_time() {
    let tp = load(&[
        rails(None, &[(0, "S4M_VDD_CPUCL1"), (1, "RAIL_X")], &[]),
        rails(Some(7), &[(0, "RAIL_Y")], &[]),
        rails(None, &[], &[(0, 3, 100), (1, 3, 200), (5, 3, 1)]),
        rails(Some(7), &[], &[(0, 4, 300)]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.type, c.ts, c.value, extract_arg(c.arg_set_id, 'packet_ts'),
                    extract_arg(t.dimension_arg_set_id, 'session_uuid'),
                    extract_arg(t.source_arg_set_id, 'raw_name')
             FROM counter c JOIN track t ON t.id = c.track_id ORDER BY c.ts, t.name"
        ),
        vec![
            vec![
                s("power.RAIL_X_uws"),
                s("power_rails"),
                i(3_000_000),
                r(200.0),
                i(5_000_000),
                i(0),
                s("RAIL_X")
            ],
            vec![
                s("power.rails.cpu.mid"),
                s("power_rails"),
                i(3_000_000),
                r(100.0),
                i(5_000_000),
                i(0),
                s("S4M_VDD_CPUCL1")
            ],
            vec![
                s("power.RAIL_Y_uws"),
                s("power_rails"),
                i(4_000_000),
                r(300.0),
                i(5_000_000),
                i(7),
                s("RAIL_Y")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.power_rails;
             SELECT power_rail_name, raw_power_rail_name, friendly_name, subsystem_name
             FROM android_power_rails_metadata ORDER BY track_id"
        ),
        vec![
            vec![
                s("power.rails.cpu.mid"),
                s("S4M_VDD_CPUCL1"),
                s("cpu.mid"),
                s("subsys")
            ],
            vec![s("power.RAIL_X_uws"), s("RAIL_X"), Value::Null, s("subsys")],
            vec![s("power.RAIL_Y_uws"), s("RAIL_Y"), Value::Null, s("subsys")],
        ]
    );
    // Index 5 has no descriptor; the descriptor-only packets have no data.
    assert_eq!(stat(&tp, "power_rail_unknown_index"), vec![vec![i(1)]]);
    assert_eq!(stat(&tp, "power_rail_empty_packet"), vec![vec![i(2)]]);
    // Each is an import log too, at its packet's time, as upstream logs it.
    assert_eq!(
        rows(
            &tp,
            "SELECT name, ts, severity FROM _trace_import_logs ORDER BY ts"
        ),
        vec![vec![s("power_rail_empty_packet"), i(5_000_000), s("error")]; 2]
    );
}

#[test]
fn energy_breakdowns_and_entity_residency_are_named_after_their_descriptors() {
    let tp = load(&[
        packet(|p| {
            p.set_timestamp(10);
            let mut m = p.message().begin_nested(ENERGY_BREAKDOWN);
            let mut d = m.begin_nested(1);
            let mut c = d.begin_nested(1);
            c.append_int32(1, 4);
            c.append_int32(2, 1);
            c.append_string(3, "CPU_CLUSTER");
            c.append_string(4, "CPUCL0");
        }),
        packet(|p| {
            p.set_timestamp(20);
            let mut m = p.message().begin_nested(ENERGY_BREAKDOWN);
            m.append_int32(2, 4);
            m.append_int64(3, 900);
            let mut u = m.begin_nested(4);
            u.append_int32(1, 10_001);
            u.append_int64(2, 600);
        }),
        packet(|p| {
            p.set_timestamp(30);
            let mut m = p.message().begin_nested(ENTITY_STATE_RESIDENCY);
            let mut d = m.begin_nested(1);
            d.append_int32(1, 0);
            d.append_int32(2, 1);
            d.append_string(3, "Bluetooth");
            d.append_string(4, "Idle");
        }),
        packet(|p| {
            p.set_timestamp(40);
            let mut m = p.message().begin_nested(ENTITY_STATE_RESIDENCY);
            let mut r = m.begin_nested(2);
            r.append_int32(1, 0);
            r.append_int32(2, 1);
            r.append_uint64(3, 1234);
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.type, c.ts, c.value FROM counter c
             JOIN track t ON t.id = c.track_id ORDER BY c.ts, t.type"
        ),
        vec![
            vec![
                s("CPUCL0"),
                s("android_energy_estimation_breakdown"),
                i(20),
                r(900.0)
            ],
            vec![
                s("CPUCL0"),
                s("android_energy_estimation_breakdown_per_uid"),
                i(20),
                r(600.0)
            ],
            vec![
                s("Entity residency: Bluetooth is Idle"),
                s("entity_state"),
                i(40),
                r(1234.0)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.entity_state_residency;
             SELECT ts, entity_name, state_name, state_time_since_boot
             FROM android_entity_state_residency"
        ),
        vec![vec![i(40), s("Bluetooth"), s("Idle"), i(1_234_000_000)]]
    );
    // The descriptor-only residency packet is counted as upstream counts it.
    assert_eq!(
        stat(&tp, "entity_state_residency_invalid"),
        vec![vec![i(1)]]
    );
}

/// A machine's rail descriptors name its own rails: readings of the same
/// session and index on two machines go to each machine's track.
#[test]
fn power_rails_of_two_machines_are_tracks_of_their_own() {
    let on = |machine: u32, packet: Vec<u8>| {
        let mut bytes = packet;
        if machine != 0 {
            // TracePacket.machine_id (98), appended to the packet.
            bytes.extend_from_slice(&[0x90, 0x06]);
            let mut v = machine;
            while v >= 0x80 {
                bytes.push((v as u8) | 0x80);
                v >>= 7;
            }
            bytes.push(v as u8);
        }
        bytes
    };
    let tp = load(&[
        rails(None, &[(0, "RAIL_A")], &[]),
        on(0xbeef, rails(None, &[(0, "RAIL_A")], &[])),
        rails(None, &[], &[(0, 3, 100)]),
        on(0xbeef, rails(None, &[], &[(0, 4, 200)])),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value, m.raw_id FROM counter c
             JOIN counter_track t ON t.id = c.track_id
             JOIN machine m ON m.id = t.machine_id ORDER BY c.ts"
        ),
        vec![
            vec![s("power.RAIL_A_uws"), i(3_000_000), r(100.0), i(0)],
            vec![s("power.RAIL_A_uws"), i(4_000_000), r(200.0), i(0xbeef)],
        ]
    );
}
