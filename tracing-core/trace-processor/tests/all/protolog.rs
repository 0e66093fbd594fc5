//! ProtoLog: messages logged as a format id and arguments (strings
//! interned on their sequence), decoded with a viewer config written after
//! them into the `protolog` view, checked against what the test wrote.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.protolog_message`.
const PROTOLOG_MESSAGE: u32 = 104;
/// `TracePacket.protolog_viewer_config`.
const PROTOLOG_VIEWER_CONFIG: u32 = 105;

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// A message on sequence 1 at `ts`: id, interned string iids, integers,
/// doubles (with a `true` when there are some), stack trace iid.
fn message(
    ts: u64,
    id: u64,
    strs: &[u32],
    ints: &[i64],
    doubles: &[f64],
    stack: Option<u32>,
) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_sequence_flags(2);
        p.set_timestamp(ts);
        let mut m = p.message().begin_nested(PROTOLOG_MESSAGE);
        m.append_fixed64(1, id);
        for s in strs {
            m.append_uint32(2, *s);
        }
        for v in ints {
            m.append_uint64(3, zigzag(*v));
        }
        for d in doubles {
            m.append_double(4, *d);
        }
        if !doubles.is_empty() {
            m.append_int32(5, 1);
        }
        if let Some(st) = stack {
            m.append_uint32(6, st);
        }
    })
}

fn protolog_trace() -> TraceProcessor {
    load(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut d = p.message().begin_nested(12); // interned_data
            {
                let mut a = d.begin_nested(36); // protolog_string_args
                a.append_uint64(1, 1);
                a.append_string(2, "Window");
            }
            let mut st = d.begin_nested(37); // protolog_stacktrace
            st.append_uint64(1, 5);
            st.append_string(2, "at Foo.bar");
        }),
        message(100, 7, &[1], &[-3], &[2.5], Some(5)),
        // Two formats share id 8: the one taking one integer is chosen.
        message(200, 8, &[], &[255], &[], None),
        // An id no config has.
        message(300, 9, &[], &[], &[], None),
        // An uninterned string: upstream's marker, and a missing argument.
        message(400, 10, &[4], &[], &[], None),
        packet(|p| {
            let mut c = p.message().begin_nested(PROTOLOG_VIEWER_CONFIG);
            let mut msg = |id: u64, text: &str, level: u32, group: u32, loc: Option<&str>| {
                let mut m = c.begin_nested(1);
                m.append_fixed64(1, id);
                m.append_string(2, text);
                m.append_uint32(3, level);
                m.append_uint32(4, group);
                if let Some(l) = loc {
                    m.append_string(5, l);
                }
            };
            msg(
                7,
                "%s moved by %d (%f, %b) 100%%",
                4,
                1,
                Some("Foo.java:12"),
            );
            msg(8, "hex %x", 1, 1, None);
            msg(8, "text %s", 1, 1, None);
            msg(10, "%s and %s", 6, 2, None);
            let mut g = c.begin_nested(2);
            g.append_uint32(1, 1);
            g.append_string(2, "GROUP_ONE");
            g.append_string(3, "GroupOne");
        }),
    ])
}

#[test]
fn messages_are_decoded_with_a_config_written_after_them() {
    let tp = protolog_trace();
    assert_eq!(
        rows(
            &tp,
            "SELECT id, ts, level, tag, message, location, stacktrace FROM protolog ORDER BY id"
        ),
        vec![
            vec![
                i(0),
                i(100),
                s("WARN"),
                s("GroupOne"),
                s("Window moved by -3 (2.500000, true) 100%"),
                s("Foo.java:12"),
                s("at Foo.bar"),
            ],
            vec![
                i(1),
                i(200),
                s("DEBUG"),
                s("GroupOne"),
                s("hex ff"),
                Value::Null,
                Value::Null
            ],
            vec![
                i(2),
                i(300),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null
            ],
            vec![
                i(3),
                i(400),
                s("WTF"),
                s("UNKNOWN_GROUP"),
                s("<ERROR> and [MISSING_PARAM]"),
                Value::Null,
                Value::Null,
            ],
        ]
    );
    let stat = |name: &str| {
        rows(
            &tp,
            &format!("SELECT value FROM stats WHERE name = '{name}'"),
        )
    };
    assert_eq!(
        stat("winscope_protolog_message_collision_resolved"),
        vec![vec![i(1)]]
    );
    assert_eq!(
        stat("winscope_protolog_message_decoding_failed"),
        vec![vec![i(1)]]
    );
    assert_eq!(
        stat("winscope_protolog_missing_interned_arg_parse_errors"),
        vec![vec![i(1)]]
    );
    assert_eq!(
        stat("winscope_protolog_group_tag_missing"),
        vec![vec![i(1)]]
    );
    // The last message lacks an argument.
    assert_eq!(stat("winscope_protolog_param_mismatch"), vec![vec![i(1)]]);
}
