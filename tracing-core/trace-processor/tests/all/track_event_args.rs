//! A TrackEvent's typed fields as args, as upstream adds them: a log
//! message with its interned body and source location (and its
//! `android_logs` entry), an interned
//! histogram name, and the fields upstream reflects (here a Chrome
//! histogram sample and Chrome's performance-mark extension), whose
//! hashes the translation tables then name.

use crate::common::{packet, rows, s, trace};
use protozero::Message;
use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// `TracePacket.interned_data`.
const INTERNED_DATA: u32 = 12;
/// `TracePacket.sequence_flags`.
const SEQUENCE_FLAGS: u32 = 13;

fn interned(m: &mut Message<'_>, field: u32, iid: u64, f: impl FnOnce(&mut Message<'_>)) {
    let mut e = m.begin_nested(field);
    e.append_uint64(1, iid);
    f(&mut e);
}

#[test]
fn typed_fields_become_args_before_debug_annotations() {
    let t = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            p.message().append_uint32(SEQUENCE_FLAGS, 1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(1);
            let mut th = td.begin_thread();
            th.set_pid(5);
            th.set_tid(6);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(100);
            p.message().append_uint32(SEQUENCE_FLAGS, 2);
            {
                let mut i = p.message().begin_nested(INTERNED_DATA);
                interned(&mut i, 20, 1, |m| m.append_string(2, "log message"));
                interned(&mut i, 4, 2, |m| {
                    m.append_string(2, "foo.cc");
                    m.append_string(3, "func");
                    m.append_uint32(4, 123);
                });
                interned(&mut i, 25, 3, |m| m.append_string(2, "Compositing.Display"));
            }
            let mut e = p.begin_track_event();
            e.set_track_uuid(1);
            e.set_name("slice1");
            e.set_type(track_event::Type::Instant);
            let m = e.message();
            {
                let mut log = m.begin_nested(21);
                log.append_uint64(1, 2);
                log.append_uint64(2, 1);
            }
            {
                // ChromeHistogramSample.name_iid.
                let mut h = m.begin_nested(28);
                h.append_uint64(4, 3);
            }
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    let args = rows(
        &tp,
        "SELECT key, int_value, string_value FROM slice JOIN args USING (arg_set_id) \
         ORDER BY args.id",
    );
    let int = |k: &str, v: i64| vec![s(k), Value::Int(v), Value::Null];
    let text = |k: &str, v: &str| vec![s(k), Value::Null, s(v)];
    assert_eq!(
        args,
        vec![
            text("track_event.log_message.message", "log message"),
            text("track_event.log_message.file_name", "foo.cc"),
            text("track_event.log_message.function_name", "func"),
            int("track_event.log_message.line_number", 123),
            text("chrome_histogram_sample.name", "Compositing.Display"),
            // Then the sample's own fields, reflected as upstream reflects
            // TrackEvent's Chrome messages.
            int("chrome_histogram_sample.name_iid", 3),
        ]
    );
    // The log message is a logcat entry of its thread, INFO without a
    // priority, tagged with its source location.
    assert_eq!(
        rows(
            &tp,
            "SELECT t.tid, l.prio, l.tag, l.msg FROM android_logs l JOIN thread t USING (utid)"
        ),
        vec![vec![
            Value::Int(6),
            Value::Int(4),
            s("foo.cc:123"),
            s("log message")
        ]]
    );
}
