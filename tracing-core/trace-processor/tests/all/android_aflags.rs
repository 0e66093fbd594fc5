//! Android's aconfig flag snapshots (`android_aflags` packets) into
//! `android.aflags`, and a snapshot that failed into the import logs,
//! checked against what the test wrote.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.android_aflags`.
const ANDROID_AFLAGS: u32 = 127;

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

#[test]
fn each_flag_of_a_snapshot_is_a_row_with_its_enums_named() {
    let tp = load(&[packet(|p| {
        p.set_timestamp(1000);
        let mut a = p.message().begin_nested(ANDROID_AFLAGS);
        {
            let mut f = a.begin_nested(1);
            f.append_string(1, "ns");
            f.append_string(2, "my_flag");
            f.append_string(3, "com.example");
            f.append_string(4, "system");
            f.append_string(5, "enabled");
            f.append_string(6, "disabled");
            f.append_uint32(7, 2); // READ_WRITE
            f.append_uint32(8, 3); // LOCAL
            f.append_uint32(9, 3); // DEVICE_CONFIG
            f.append_uint32(10, 2); // INTEGER
        }
        {
            // Nothing but a name: no staged value, every enum unspecified
            // (one of them a value the schema lacks).
            let mut f = a.begin_nested(1);
            f.append_string(2, "bare");
            f.append_uint32(7, 9);
        }
    })]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.aflags;
             SELECT ts, package, name, flag_namespace, container, value, staged_value,
                    permission, value_picked_from, storage_backend, type
             FROM android_aflags ORDER BY name DESC"
        ),
        vec![
            vec![
                i(1000),
                s("com.example"),
                s("my_flag"),
                s("ns"),
                s("system"),
                s("enabled"),
                s("disabled"),
                s("read-write"),
                s("local"),
                s("device_config"),
                s("integer"),
            ],
            vec![
                i(1000),
                Value::Null,
                s("bare"),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                s("unspecified"),
                s("unspecified"),
                s("unspecified"),
                s("unspecified"),
            ],
        ]
    );
}

#[test]
fn a_failed_snapshot_is_an_import_log_entry_with_its_error() {
    let tp = load(&[packet(|p| {
        p.set_timestamp(2000);
        let mut a = p.message().begin_nested(ANDROID_AFLAGS);
        a.append_string(2, "could not read");
        // Flags beside an error are not imported, as upstream.
        a.begin_nested(1).append_string(2, "ignored");
    })]);
    assert_eq!(
        rows(
            &tp,
            "SELECT l.ts, l.byte_offset, l.name, l.severity, a.key, a.display_value
             FROM _trace_import_logs AS l JOIN args AS a USING (arg_set_id)"
        ),
        vec![vec![
            i(2000),
            Value::Null,
            s("android_aflags_errors"),
            s("error"),
            s("error"),
            s("could not read"),
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'android_aflags_errors'"
        ),
        vec![vec![i(1)]]
    );
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM __intrinsic_android_aflags"),
        vec![vec![i(0)]]
    );
}
