//! The TracePacket kinds imported last (statsd atoms, app wakelocks, the
//! legacy process descriptor, Chrome's legacy event bundles, Bluetooth,
//! Pixel modem events): hand-built packets into the rows and stats upstream
//! makes of them, checked value by value. Memory dumps and Vulkan memory
//! events are in `memory_importers.rs`.

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

/// `TracePacket.chrome_events`.
const CHROME_EVENTS: u32 = 5;

fn chrome_bundle(
    ts: u64,
    metadata: &[(&str, u32, &str)],
    system: &[&str],
    json: &[(u32, &str)],
) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        let mut m = p.message().begin_nested(CHROME_EVENTS);
        for (name, field, value) in metadata {
            let mut e = m.begin_nested(2);
            e.append_string(1, name);
            match field {
                3 => e.append_bool(3, *value == "true"),
                4 => e.append_int64(4, value.parse().unwrap_or(0)),
                0 => {}
                f => e.append_string(*f, value),
            }
        }
        for piece in system {
            m.append_string(4, piece);
        }
        for (kind, data) in json {
            let mut t = m.begin_nested(5);
            t.append_uint32(1, *kind);
            t.append_string(2, data);
        }
    })
}

#[test]
fn chrome_event_bundles_keep_their_metadata_and_legacy_traces() {
    let first = chrome_bundle(
        10,
        &[
            ("os", 2, "Linux"),
            ("num-cpus", 4, "8"),
            ("ok", 3, "true"),
            ("none", 0, ""),
        ],
        &["line 1\n", "line 2\n"],
        &[(0, "{\"traceEvents\":[]}"), (1, "system json")],
    );
    let second = chrome_bundle(20, &[("config", 5, "{\"a\":1}")], &[], &[]);
    let tp = load(&[first, second]);
    assert_eq!(
        rows(
            &tp,
            "SELECT r.ts, r.name, r.utid, a.key, a.value_type, a.display_value
             FROM __intrinsic_chrome_raw r JOIN args a USING (arg_set_id) ORDER BY r.id, a.id"
        ),
        vec![
            vec![
                i(10),
                s("chrome_event.metadata"),
                i(0),
                s("os"),
                s("string"),
                s("Linux")
            ],
            vec![
                i(10),
                s("chrome_event.metadata"),
                i(0),
                s("num-cpus"),
                s("int"),
                s("8")
            ],
            vec![
                i(10),
                s("chrome_event.metadata"),
                i(0),
                s("ok"),
                s("int"),
                s("1")
            ],
            vec![
                i(10),
                s("chrome_event.legacy_system_trace"),
                i(0),
                s("data"),
                s("string"),
                s("line 1\nline 2\n")
            ],
            vec![
                i(10),
                s("chrome_event.legacy_user_trace"),
                i(0),
                s("data"),
                s("string"),
                s("{\"traceEvents\":[]}")
            ],
            vec![
                i(20),
                s("chrome_event.metadata"),
                i(0),
                s("config"),
                s("json"),
                s("{\"a\":1}")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, key_type, int_value, str_value FROM metadata
             WHERE name GLOB 'cr-*' ORDER BY id"
        ),
        vec![
            vec![s("cr-os"), s("single"), Value::Null, s("Linux")],
            vec![s("cr-num-cpus"), s("single"), i(8), Value::Null],
            vec![s("cr-ok"), s("single"), i(1), Value::Null],
            vec![s("cr-2-config"), s("single"), Value::Null, s("{\"a\":1}")],
        ]
    );
    assert_eq!(stat(&tp, "empty_chrome_metadata"), 1);
}

/// `TracePacket.process_descriptor`.
const PROCESS_DESCRIPTOR: u32 = 43;

#[test]
fn a_legacy_process_descriptor_names_its_process_and_gives_its_labels() {
    let descriptor = packet(|p| {
        p.set_timestamp(5);
        let mut m = p.message().begin_nested(PROCESS_DESCRIPTOR);
        m.append_int32(1, 77);
        m.append_int32(3, 2);
        m.append_string(8, "labelled");
        m.append_string(8, "second");
        m.append_string(6, "Browser");
        m.append_int64(7, 3);
    });
    let empty_name = packet(|p| {
        p.set_timestamp(6);
        let mut m = p.message().begin_nested(PROCESS_DESCRIPTOR);
        m.append_int32(1, 78);
        m.append_string(6, "");
    });
    let tp = load(&[descriptor, empty_name]);
    assert_eq!(
        rows(
            &tp,
            "SELECT pid, name, start_ts FROM process WHERE pid IN (77, 78) ORDER BY pid"
        ),
        vec![
            vec![i(77), s("Browser"), i(3)],
            vec![i(78), Value::Null, Value::Null]
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT a.key, a.string_value FROM process p JOIN args a USING (arg_set_id)
             WHERE p.pid = 77 AND a.key GLOB 'chrome.process_label*' ORDER BY a.key"
        ),
        vec![
            vec![s("chrome.process_label[0]"), s("labelled")],
            vec![s("chrome.process_label[1]"), s("second")],
        ]
    );
}

/// `TracePacket.bluetooth_trace_event`.
const BLUETOOTH_TRACE_EVENT: u32 = 114;

#[test]
fn bluetooth_events_are_slices_of_their_duration_with_their_codes() {
    let event = |ts: u64, kind: u32, dur: u32| {
        packet(|p| {
            p.set_timestamp(ts);
            let mut m = p.message().begin_nested(BLUETOOTH_TRACE_EVENT);
            m.append_uint32(1, kind);
            m.append_uint32(2, 3);
            m.append_uint32(4, dur);
            m.append_uint32(5, 0x0c03);
            m.append_uint32(8, 64);
        })
    };
    let tp = load(&[event(100, 1, 20), event(200, 42, 0)]);
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.name, t.type, extract_arg(s.arg_set_id, 'TracePacketType'),
                    extract_arg(s.arg_set_id, 'Count'), extract_arg(s.arg_set_id, 'Op Code'),
                    extract_arg(s.arg_set_id, 'Handle'), extract_arg(s.arg_set_id, 'Length')
             FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts"
        ),
        vec![
            vec![
                i(100),
                i(20),
                s("BluetoothTraceEvent"),
                s("BluetoothTraceEvent"),
                s("bluetooth_trace_event"),
                s("HCI_CMD"),
                i(3),
                i(0x0c03),
                i(64),
                Value::Null
            ],
            vec![
                i(200),
                i(0),
                s("BluetoothTraceEvent"),
                s("BluetoothTraceEvent"),
                s("bluetooth_trace_event"),
                s("PBZERO_UNKNOWN_ENUM_VALUE"),
                i(3),
                i(0x0c03),
                i(64),
                Value::Null
            ],
        ]
    );
}

/// `TracePacket.pixel_modem_events`.
const PIXEL_MODEM_EVENTS: u32 = 110;
/// `TracePacket.pixel_modem_token_database`.
const PIXEL_MODEM_TOKEN_DATABASE: u32 = 111;

/// A Pigweed token database of live (token, format) entries.
fn token_database(entries: &[(u32, &str)]) -> Vec<u8> {
    let mut db = b"TOKENS\0\0".to_vec();
    db.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    db.extend_from_slice(&[0; 4]);
    for (token, _) in entries {
        db.extend_from_slice(&token.to_le_bytes());
        db.extend_from_slice(&u32::MAX.to_le_bytes());
    }
    for (_, format) in entries {
        db.extend_from_slice(format.as_bytes());
        db.push(0);
    }
    db
}

#[test]
fn pixel_modem_events_are_detokenized_into_instants_by_domain() {
    let db = packet(|p| {
        let mut m = p.message().begin_nested(PIXEL_MODEM_TOKEN_DATABASE);
        m.append_bytes(
            1,
            &token_database(&[(
                0x1234,
                "\u{25A0}domain\u{2666}LTE\u{25A0}format\u{2666}attach\u{25A0}cell\u{2666}%d %x",
            )]),
        );
    });
    let mut known = 0x1234u32.to_le_bytes().to_vec();
    known.extend_from_slice(&[10, 0xfe, 0x03]); // zigzag 5, zigzag 255
    let events = packet(|p| {
        p.set_timestamp(1000);
        let mut m = p.message().begin_nested(PIXEL_MODEM_EVENTS);
        m.append_bytes(1, &known);
        m.append_bytes(1, &9u32.to_le_bytes());
        m.append_bytes(1, &known);
        m.append_bytes(1, &[1, 2]);
        for delta in [100i64, 50, -200, 300] {
            m.append_uint64(2, delta as u64);
        }
    });
    let tp = load(&[db, events]);
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.name, t.type FROM slice s JOIN track t ON s.track_id = t.id
             ORDER BY s.ts"
        ),
        vec![
            vec![i(100), i(0), s("attach"), s("Pixel Modem Events: LTE"), s("pixel_modem_event")],
            vec![i(150), i(0), s("Token not found"), s("Pixel Modem Events"), s("pixel_modem_event")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT a.key, a.display_value FROM slice s JOIN args a USING (arg_set_id)
             WHERE s.ts = 100 ORDER BY a.key"
        ),
        vec![
            vec![s("packet_ts"), s("1000")],
            vec![s("pw_token_4660.arg_0"), s("5")],
            vec![s("pw_token_4660.arg_1"), s("255")],
            vec![
                s("raw_template"),
                s("\u{25A0}domain\u{2666}LTE\u{25A0}format\u{2666}attach\u{25A0}cell\u{2666}%d %x")
            ],
            vec![s("token_id"), s("4660")],
            vec![s("token_id_hex"), s("0x1234")],
        ]
    );
    assert_eq!(stat(&tp, "pixel_modem_negative_timestamp"), 1);
    // A database that does not read fails the load, as upstream's does.
    let bad = packet(|p| {
        let mut m = p.message().begin_nested(PIXEL_MODEM_TOKEN_DATABASE);
        m.append_bytes(1, b"NOT A TOKEN DATABASE");
    });
    assert!(TraceProcessor::from_bytes(&trace(&[bad])).is_err());
}
