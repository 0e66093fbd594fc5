//! The TracePacket kinds imported last (statsd atoms, app wakelocks, the
//! legacy process descriptor, Chrome's legacy JSON, Vulkan memory events,
//! Bluetooth): hand-built packets into the rows and stats upstream makes of
//! them, checked value by value.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

fn stat(tp: &TraceProcessor, name: &str) -> i64 {
    let r = rows(
        tp,
        &format!("SELECT SUM(value) FROM stats WHERE name = '{name}'"),
    );
    match r.first().and_then(|r| r.first()) {
        Some(Value::Int(v)) => *v,
        _ => 0,
    }
}

/// `TracePacket.statsd_atom`.
const STATSD_ATOM: u32 = 84;

#[test]
fn statsd_atoms_are_instants_at_their_own_times_with_args_by_wire_type() {
    // A packet at 500 with three atoms: two with times (300 and 100, out
    // of order) and one without (placed at the packet's time).
    let atoms = packet(|p| {
        p.set_timestamp(500);
        let mut m = p.message().begin_nested(STATSD_ATOM);
        {
            let mut atom = m.begin_nested(1);
            let mut body = atom.begin_nested(10);
            body.append_int64(1, 42);
            body.append_string(2, "hi");
        }
        {
            let mut atom = m.begin_nested(1);
            let mut body = atom.begin_nested(100_001);
            body.append_float(3, 1.5);
            body.append_double(4, 2.25);
        }
        {
            let mut atom = m.begin_nested(1);
            let mut body = atom.begin_nested(7);
            body.append_int64(1, -3);
        }
        m.append_int64(2, 300);
        m.append_int64(2, 100);
    });
    let tp = load(&[atoms]);
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, s.depth, t.name, t.type
             FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.id"
        ),
        vec![
            vec![
                i(100),
                i(0),
                s("atom_100001"),
                i(0),
                s("Statsd Atoms"),
                s("statsd_atoms")
            ],
            vec![
                i(300),
                i(0),
                s("atom_10"),
                i(0),
                s("Statsd Atoms"),
                s("statsd_atoms")
            ],
            vec![
                i(500),
                i(0),
                s("atom_7"),
                i(0),
                s("Statsd Atoms"),
                s("statsd_atoms")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.name, a.key, a.int_value, a.string_value, a.real_value
             FROM slice s JOIN args a USING (arg_set_id) ORDER BY s.id, a.key"
        ),
        vec![
            vec![
                s("atom_100001"),
                s("field_3_assuming_float"),
                Value::Null,
                Value::Null,
                Value::Real(1.5)
            ],
            vec![
                s("atom_100001"),
                s("field_4_assuming_double"),
                Value::Null,
                Value::Null,
                Value::Real(2.25)
            ],
            vec![s("atom_10"), s("field_1"), i(42), Value::Null, Value::Null],
            vec![
                s("atom_10"),
                s("field_2"),
                Value::Null,
                s("aGk="),
                Value::Null
            ],
            vec![s("atom_7"), s("field_1"), i(-3), Value::Null, Value::Null],
        ]
    );
    // The vendor atom (100001) is not counted as unknown.
    assert_eq!(stat(&tp, "atom_unknown"), 2);
    assert_eq!(stat(&tp, "atom_timestamp_missing"), 1);
}

/// `TracePacket.app_wakelock_bundle`.
const APP_WAKELOCK_BUNDLE: u32 = 116;
/// `InternedData.app_wakelock_info`.
const APP_WAKELOCK_INFO: u32 = 42;

/// Packed varints.
fn packed(values: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    for &v in values {
        let mut buf = [0u8; 10];
        let n = protozero::varint::encode_varint(v, &mut buf);
        out.extend_from_slice(&buf[..n]);
    }
    out
}

#[test]
fn app_wakelocks_pair_acquires_and_releases_by_their_description() {
    // Two wakelocks described in the interned data; events at offsets
    // from the packet's time 1000: A acquired at +10, B at +20, A released
    // at +30, B at +40, and one of an id nothing interned.
    let bundle = packet(|p| {
        p.set_timestamp(1000);
        p.set_trusted_packet_sequence_id(5);
        p.set_incremental_state_cleared(true);
        p.set_sequence_flags(2);
        {
            let mut interned = p.message().begin_nested(12);
            {
                let mut a = interned.begin_nested(APP_WAKELOCK_INFO);
                a.append_int32(1, 1);
                a.append_string(2, "*job*/sync");
                a.append_int32(3, 1);
                a.append_int32(5, 10_100);
            }
            let mut b = interned.begin_nested(APP_WAKELOCK_INFO);
            b.append_int32(1, 2);
            b.append_string(2, "audio");
            b.append_int32(3, 6);
            b.append_int32(4, 321);
            b.append_int32(5, 1_000);
            b.append_int32(6, 10_200);
        }
        let mut m = p.message().begin_nested(APP_WAKELOCK_BUNDLE);
        m.append_bytes(1, &packed(&[1, 2, 1, 2, 9]));
        m.append_bytes(
            2,
            &packed(&[10 << 1 | 1, 20 << 1 | 1, 30 << 1, 40 << 1, 50 << 1 | 1]),
        );
    });
    let tp = load(&[bundle]);
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.name, t.type
             FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts"
        ),
        vec![
            vec![
                i(1010),
                i(20),
                s("*job*/sync"),
                s("app_wakelock_events"),
                s("app_wakelock_events")
            ],
            vec![
                i(1020),
                i(20),
                s("audio"),
                s("app_wakelock_events"),
                s("app_wakelock_events")
            ],
        ]
    );
    // The two overlap, so they are on two tracks of the pool.
    assert_eq!(
        rows(&tp, "SELECT COUNT(DISTINCT track_id) FROM slice"),
        vec![vec![i(2)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.name, a.key, a.int_value
             FROM slice s JOIN args a USING (arg_set_id) ORDER BY s.ts, a.key"
        ),
        vec![
            vec![s("*job*/sync"), s("flags"), i(1)],
            vec![s("*job*/sync"), s("owner_uid"), i(10_100)],
            vec![s("audio"), s("flags"), i(6)],
            vec![s("audio"), s("owner_pid"), i(321)],
            vec![s("audio"), s("owner_uid"), i(1_000)],
            vec![s("audio"), s("work_uid"), i(10_200)],
        ]
    );
    assert_eq!(stat(&tp, "app_wakelock_unknown_id"), 1);
}
