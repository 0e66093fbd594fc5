//! Android logcat packets as upstream imports them: each entry at its
//! REALTIME stamp converted to the trace clock, on its pid/tid's thread,
//! INFO without a priority, binary args written after the message, and
//! the packet's statistics as the `android_log_num_*` stats.

use crate::common::{packet, rows, s, trace};
use zerotrace_trace_processor::{TraceProcessor, Value};

/// `TracePacket.android_log`.
const ANDROID_LOG: u32 = 39;

#[test]
fn logcat_entries_are_rows_at_their_converted_times() {
    let t = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1000);
            let mut cs = p.begin_clock_snapshot();
            {
                // REALTIME 1_000_000 is BOOTTIME 1000.
                let mut c = cs.add_clocks();
                c.set_clock_id(1);
                c.set_timestamp(1_000_000);
            }
            let mut c = cs.add_clocks();
            c.set_clock_id(6);
            c.set_timestamp(1000);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(2000);
            let mut l = p.message().begin_nested(ANDROID_LOG);
            {
                let mut e = l.begin_nested(1);
                e.append_int32(2, 10);
                e.append_int32(3, 11);
                e.append_uint64(5, 1_000_500);
                e.append_string(6, "tag1");
                e.append_int32(7, 6);
                e.append_string(8, "hello");
            }
            {
                // A binary entry: no priority, no message, args only.
                let mut e = l.begin_nested(1);
                e.append_int32(2, 10);
                e.append_int32(3, 10);
                e.append_uint64(5, 1_000_200);
                let mut a = e.begin_nested(9);
                a.append_string(1, "count");
                a.append_int64(2, 3);
                drop(a);
                let mut a = e.begin_nested(9);
                a.append_string(1, "who");
                a.append_string(4, "me");
            }
            let mut st = l.begin_nested(2);
            st.append_uint64(1, 50);
            st.append_uint64(2, 1);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT l.ts, t.tid, p.pid, l.prio, l.tag, l.msg FROM android_logs l \
             JOIN thread t USING (utid) JOIN process p USING (upid) ORDER BY l.ts"
        ),
        vec![
            vec![
                Value::Int(1200),
                Value::Int(10),
                Value::Int(10),
                Value::Int(4),
                Value::Null,
                s("count=3 who=\"me\""),
            ],
            vec![
                Value::Int(1500),
                Value::Int(11),
                Value::Int(10),
                Value::Int(6),
                s("tag1"),
                s("hello"),
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, value FROM stats WHERE name LIKE 'android_log_num_%' AND value > 0 \
             ORDER BY name"
        ),
        vec![
            vec![s("android_log_num_failed"), Value::Int(1)],
            vec![s("android_log_num_total"), Value::Int(50)],
        ]
    );
}
