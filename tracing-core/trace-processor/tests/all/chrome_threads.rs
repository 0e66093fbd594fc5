//! Chrome's sandboxed threads: a thread descriptor whose
//! `ChromeThreadDescriptor.is_sandboxed_tid` is set names a tid unique
//! only within its process, so its thread gets upstream's synthetic tid
//! (the pid in the high 32 bits) and stays apart from the same tid in
//! another process.

use crate::common::{packet, rows, s, trace};
use zerotrace_trace_processor::{TraceProcessor, Value};

/// `TrackDescriptor.chrome_thread`.
const CHROME_THREAD: u32 = 7;

#[test]
fn a_sandboxed_tid_is_made_unique_with_its_pid() {
    let descriptor = |seq: u32, uuid: u64, pid: i32, sandboxed: bool| {
        packet(move |p| {
            p.set_trusted_packet_sequence_id(seq);
            p.set_timestamp(0);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(uuid);
            {
                let mut th = td.begin_thread();
                th.set_pid(pid);
                th.set_tid(1);
                th.set_thread_name("thread1");
            }
            if sandboxed {
                let mut c = td.message().begin_nested(CHROME_THREAD);
                c.append_bool(3, true);
            }
        })
    };
    let tp = TraceProcessor::from_bytes(&trace(&[
        descriptor(1, 10, 1234, true),
        descriptor(2, 20, 99, false),
    ]))
    .expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT t.tid, t.name, p.pid FROM thread t JOIN process p USING (upid) \
             WHERE t.name = 'thread1' ORDER BY t.tid"
        ),
        vec![
            vec![Value::Int(1), s("thread1"), Value::Int(99)],
            vec![
                Value::Int((1234i64 << 32) | 1),
                s("thread1"),
                Value::Int(1234)
            ],
        ]
    );
}
