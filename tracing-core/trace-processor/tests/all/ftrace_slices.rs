//! ftrace events that upstream makes slices of directly: kernel probes
//! (begin, end and instant probes on the probing thread's track) and
//! block device I/O (a `block_io` slice per request on its device's
//! track, its sector as an arg).

use crate::common::{packet, rows, s, trace};
use protozero::Message;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// `TracePacket.ftrace_events`.
const FTRACE_EVENTS: u32 = 1;

/// One ftrace event of pid `pid` at `ts`: payload `field` written by `f`.
fn event(b: &mut Message<'_>, ts: u64, pid: u32, field: u32, f: impl FnOnce(&mut Message<'_>)) {
    let mut e = b.begin_nested(2);
    e.append_uint64(1, ts);
    e.append_uint32(2, pid);
    let mut m = e.begin_nested(field);
    f(&mut m);
}

#[test]
fn kprobes_and_block_io_are_slices() {
    let t = trace(&[packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        let mut b = p.message().begin_nested(FTRACE_EVENTS);
        b.append_uint32(1, 0);
        // kprobe_event (542): name 1, type 2.
        event(&mut b, 1000, 7, 542, |m| {
            m.append_string(1, "vfs_read");
            m.append_uint32(2, 1);
        });
        event(&mut b, 1200, 7, 542, |m| {
            m.append_string(1, "vfs_read");
            m.append_uint32(2, 2);
        });
        event(&mut b, 1500, 7, 542, |m| {
            m.append_string(1, "fuse_file_write_iter");
            m.append_uint32(2, 3);
        });
        // block_io_start (546) and block_io_done (547): dev 1, sector 2.
        event(&mut b, 2000, 8, 546, |m| {
            m.append_uint64(1, 45824);
            m.append_uint64(2, 44920176);
        });
        event(&mut b, 2400, 8, 547, |m| {
            m.append_uint64(1, 45824);
            m.append_uint64(2, 44920176);
        });
    })]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.type, extract_arg(s.arg_set_id, 'sector'), \
             extract_arg(t.dimension_arg_set_id, 'block_device') \
             FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts"
        ),
        vec![
            vec![
                Value::Int(1000),
                Value::Int(200),
                s("vfs_read"),
                s("thread"),
                Value::Null,
                Value::Null
            ],
            vec![
                Value::Int(1500),
                Value::Int(0),
                s("fuse_file_write_iter"),
                s("thread"),
                Value::Null,
                Value::Null
            ],
            vec![
                Value::Int(2000),
                Value::Int(400),
                s("block_io"),
                s("block_io"),
                Value::Int(44920176),
                Value::Int(45824)
            ],
        ]
    );
}
