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
