//! `metadata` as upstream fills it: the trace's uuid (its TraceUuid
//! packet, else a hash of its first 4 KiB), size, type and clock, and
//! Chrome's metadata packets.

use crate::common;

use common::{packet, rows, s, trace};
use zerotrace_trace_processor::{TraceProcessor, Value};

fn meta(tp: &TraceProcessor, name: &str) -> Vec<Vec<Value>> {
    rows(
        tp,
        &format!("SELECT int_value, str_value FROM metadata WHERE name = '{name}'"),
    )
}

#[test]
fn the_trace_names_itself() {
    let plain = trace(&[packet(|p| {
        p.set_timestamp(5);
    })]);
    let tp = TraceProcessor::from_bytes(&plain).expect("load");
    assert_eq!(
        meta(&tp, "trace_size_bytes"),
        vec![vec![Value::Int(plain.len() as i64), Value::Null]]
    );
    assert_eq!(meta(&tp, "trace_type"), vec![vec![Value::Null, s("proto")]]);
    assert_eq!(
        meta(&tp, "trace_time_clock_id"),
        vec![vec![Value::Int(6), Value::Null]]
    );
    let hashed = meta(&tp, "trace_uuid");
    let Value::Text(uuid) = &hashed[0][1] else {
        panic!("uuid {hashed:?}");
    };
    assert!(uuid.starts_with("00000000-0000-0000-"), "{uuid}");

    let with_uuid = trace(&[packet(|p| {
        let mut u = p.message().begin_nested(89);
        u.append_int64(1, 0x0123_4567_89ab_cdef);
        u.append_int64(2, 42);
    })]);
    let tp = TraceProcessor::from_bytes(&with_uuid).expect("load");
    assert_eq!(
        meta(&tp, "trace_uuid"),
        vec![vec![Value::Null, s("01234567-89ab-cdef-0000-00000000002a")]]
    );
}

#[test]
fn chrome_metadata_packets_are_lettered() {
    let chrome = |version: i32| {
        packet(move |p| {
            let mut m = p.message().begin_nested(51);
            m.append_int32(2, version);
            m.append_string(8, "Linux");
            for (name, group) in [(1u32, 2u32), (3, 4), (5, 6)] {
                let mut h = m.begin_nested(4);
                h.append_uint32(1, name);
                h.append_uint32(2, group);
            }
        })
    };
    let tp = TraceProcessor::from_bytes(&trace(&[chrome(7), chrome(8)])).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT name, int_value, str_value FROM metadata WHERE name GLOB 'cr-*' ORDER BY name"
        ),
        vec![
            vec![
                s("cr-a-field_trial_hashes"),
                Value::Null,
                s("{ name: 1, group: 2 } { name: 3, group: 4 } \n{ name: 5, group: 6 } ")
            ],
            vec![s("cr-a-os-name"), Value::Null, s("Linux")],
            vec![s("cr-a-playstore_version_code"), Value::Int(7), Value::Null],
            vec![
                s("cr-b-field_trial_hashes"),
                Value::Null,
                s("{ name: 1, group: 2 } { name: 3, group: 4 } \n{ name: 5, group: 6 } ")
            ],
            vec![s("cr-b-os-name"), Value::Null, s("Linux")],
            vec![s("cr-b-playstore_version_code"), Value::Int(8), Value::Null],
        ]
    );
}
