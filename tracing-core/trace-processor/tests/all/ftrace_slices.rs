//! ftrace events that upstream makes slices of directly: kernel probes
//! (begin, end and instant probes on the probing thread's track) and
//! block device I/O (a `block_io` slice per request on its device's
//! track, its sector as an arg), interrupts and softirqs (on per-CPU
//! tracks), the kernel's own systrace events (`zero`) and system calls
//! (named by the trace's architecture; a write cut where atrace text it
//! carries begins or ends a slice).

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

/// A bundle of CPU `cpu` holding what `f` writes.
fn bundle(cpu: u32, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        let mut b = p.message().begin_nested(FTRACE_EVENTS);
        b.append_uint32(1, cpu);
        f(&mut b);
    })
}

#[test]
fn irqs_and_softirqs_are_slices_on_their_cpus_tracks() {
    let t = trace(&[
        bundle(1, |b| {
            // irq_handler_entry (36) {irq 1, name 2}, _exit (37) {irq 1, ret 2}.
            event(b, 100, 0, 36, |m| {
                m.append_int32(1, 10);
                m.append_string(2, "touch");
            });
            event(b, 150, 0, 37, |m| {
                m.append_int32(1, 10);
                m.append_int32(2, 1);
            });
            // softirq_entry (24) / _exit (25) {vec 1}: 3 is NET_RX.
            event(b, 200, 0, 24, |m| m.append_uint32(1, 3));
            event(b, 260, 0, 25, |m| m.append_uint32(1, 3));
            // A vector with no action name is dropped.
            event(b, 300, 0, 24, |m| m.append_uint32(1, 42));
        }),
        bundle(0, |b| {
            // local_timer_entry (559) never exits; an exit with nothing
            // open (on CPU 0's softirq track) is ignored.
            event(b, 400, 0, 559, |_| {});
            event(b, 450, 0, 25, |m| m.append_uint32(1, 1));
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, s.category, t.name, t.type, ct.cpu, \
             extract_arg(s.arg_set_id, 'ret'), extract_arg(s.arg_set_id, 'vec') \
             FROM slice s JOIN track t ON s.track_id = t.id \
             JOIN cpu_track ct ON ct.id = t.id ORDER BY s.ts"
        ),
        vec![
            vec![
                Value::Int(100),
                Value::Int(50),
                s("IRQ (touch)"),
                s("irq"),
                s("Irq Cpu 1"),
                s("cpu_irq"),
                Value::Int(1),
                s("handled"),
                Value::Null
            ],
            vec![
                Value::Int(200),
                Value::Int(60),
                s("NET_RX"),
                s("irq"),
                s("SoftIrq Cpu 1"),
                s("cpu_softirq"),
                Value::Int(1),
                Value::Null,
                Value::Int(3)
            ],
            vec![
                Value::Int(400),
                Value::Int(-1),
                s("IRQ (LocalTimer)"),
                s("irq"),
                s("Irq Cpu 0"),
                s("cpu_irq"),
                Value::Int(0),
                Value::Null,
                Value::Null
            ],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT cpu, type FROM cpu_track ORDER BY cpu, type"),
        vec![
            vec![Value::Int(0), s("cpu_irq")],
            vec![Value::Int(0), s("cpu_softirq")],
            vec![Value::Int(1), s("cpu_irq")],
            vec![Value::Int(1), s("cpu_softirq")],
        ]
    );
}

#[test]
fn kernel_systrace_zero_events_are_atrace_slices_and_counters() {
    let t = trace(&[bundle(0, |b| {
        // zero (331): {flag 1, name 2, pid 3, value 4}; flag 1 begins,
        // 2 ends, 4 is a counter of process `pid`, 0 is a failure.
        event(b, 100, 30, 331, |m| {
            m.append_int32(1, 1);
            m.append_string(2, "bottom half");
            m.append_int32(3, 0);
        });
        event(b, 150, 30, 331, |m| {
            m.append_int32(1, 2);
            m.append_string(2, "");
        });
        event(b, 160, 30, 331, |m| {
            m.append_int32(1, 4);
            m.append_string(2, "irq index");
            m.append_int32(3, 20);
            m.append_int64(4, 98756);
        });
        event(b, 170, 30, 331, |m| {
            m.append_int32(1, 0);
            m.append_string(2, "nothing");
        });
    })]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, th.tid FROM slice s \
             JOIN thread_track tt ON s.track_id = tt.id JOIN thread th USING (utid)"
        ),
        vec![vec![
            Value::Int(100),
            Value::Int(50),
            s("bottom half"),
            Value::Int(30)
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, c.value, t.name, p.pid FROM counter c \
             JOIN process_counter_track t ON c.track_id = t.id JOIN process p USING (upid)"
        ),
        vec![vec![
            Value::Int(160),
            Value::Real(98756.0),
            s("irq index"),
            Value::Int(20)
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'systrace_parse_failure'"
        ),
        vec![vec![Value::Int(1)]]
    );
}

/// `TracePacket.system_info`, naming machine `arch`.
fn system_info(arch: &str) -> Vec<u8> {
    packet(|p| {
        let mut si = p.message().begin_nested(45);
        let mut u = si.begin_nested(1);
        u.append_string(1, "Linux");
        u.append_string(4, arch);
    })
}

/// sys_enter (329) {id 1, args 2} / sys_exit (330) {id 1, ret 2} of `tid`.
fn syscall(b: &mut Message<'_>, ts: u64, tid: u32, enter: bool, id: i64, extra: &[u64]) {
    event(b, ts, tid, if enter { 329 } else { 330 }, |m| {
        m.append_int64(1, id);
        for v in extra {
            m.append_uint64(2, *v);
        }
    });
}

#[test]
fn syscalls_are_named_by_the_traces_architecture_and_carry_args() {
    let calls = |b: &mut Message<'_>| {
        // arm64's 63 is read, 139 rt_sigreturn; 300 has no name there.
        syscall(b, 100, 5, true, 63, &[3, 4096]);
        syscall(b, 140, 5, false, 63, &[17]);
        syscall(b, 200, 5, true, 139, &[]);
        syscall(b, 300, 5, true, 300, &[]);
        syscall(b, 310, 5, false, 300, &[]);
        // Past the table's bound: dropped.
        syscall(b, 400, 5, true, 600, &[]);
    };
    let t = trace(&[system_info("aarch64"), bundle(0, calls)]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, name, extract_arg(arg_set_id, 'args[1]'), \
             extract_arg(arg_set_id, 'ret') FROM slice ORDER BY ts"
        ),
        vec![
            vec![
                Value::Int(100),
                Value::Int(40),
                s("sys_read"),
                Value::Int(4096),
                Value::Int(17)
            ],
            vec![
                Value::Int(200),
                Value::Int(0),
                s("sys_rt_sigreturn"),
                Value::Null,
                Value::Null
            ],
            vec![
                Value::Int(300),
                Value::Int(10),
                s("sys_300"),
                Value::Null,
                Value::Null
            ],
        ]
    );
    // Each call's args are stored once, with its return value.
    assert_eq!(
        rows(&tp, "SELECT COUNT(*) FROM args WHERE key = 'args[1]'"),
        vec![vec![Value::Int(1)]]
    );
    // Without an architecture every call is named by its number.
    let tp = TraceProcessor::from_bytes(&trace(&[bundle(0, calls)])).expect("load");
    assert_eq!(
        rows(&tp, "SELECT name FROM slice ORDER BY ts"),
        vec![vec![s("sys_63")], vec![s("sys_139")], vec![s("sys_300")]]
    );
}

#[test]
fn an_atrace_write_truncates_the_ongoing_sys_write() {
    let t = trace(&[
        system_info("x86_64"),
        bundle(0, |b| {
            // x86-64's write is 1; print (3) {buf 2} is atrace text.
            syscall(b, 100, 42, true, 1, &[]);
            event(b, 150, 42, 3, |m| m.append_string(2, "B|42|work\n"));
            syscall(b, 200, 42, false, 1, &[]);
            syscall(b, 300, 42, true, 1, &[]);
            event(b, 350, 42, 3, |m| m.append_string(2, "E|42\n"));
            syscall(b, 400, 42, false, 1, &[]);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(&tp, "SELECT ts, dur, name, depth FROM slice ORDER BY ts"),
        vec![
            vec![
                Value::Int(100),
                Value::Int(50),
                s("sys_write"),
                Value::Int(0)
            ],
            vec![Value::Int(150), Value::Int(200), s("work"), Value::Int(0)],
            vec![
                Value::Int(300),
                Value::Int(50),
                s("sys_write"),
                Value::Int(1)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'truncated_sys_write_duration'"
        ),
        vec![vec![Value::Int(2)]]
    );
}

/// A TrackEvent of sequence 1 at `ts` on its default (thread) track: a
/// legacy begin or end (`phase`) of category `c`, named when `name` is.
fn legacy_on_thread(ts: u64, phase: u8, name: Option<&str>) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.add_categories("c");
        if let Some(name) = name {
            e.set_name(name);
        }
        e.begin_legacy_event().set_phase(i32::from(phase));
    })
}

/// An atrace mark and a TrackEvent of one thread land on the thread's one
/// track, as upstream interns it, so they share its slice stack: the
/// TrackEvent end names a category, skips the atrace slice (it has none)
/// and closes the TrackEvent slice under it; the atrace slice, still open
/// above a slice that ended, is cut at that end once the stack moves on
/// (a misplaced end), and its own end finds nothing left to close.
#[test]
fn atrace_marks_and_track_events_of_a_thread_share_its_stack() {
    let t = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            p.set_incremental_state_cleared(true);
            let mut td = p.begin_thread_descriptor();
            td.set_pid(60);
            td.set_tid(61);
        }),
        legacy_on_thread(1000, b'B', Some("outer")),
        bundle(0, |b| {
            event(b, 2000, 61, 3, |m| m.append_string(2, "B|60|mark\n"))
        }),
        legacy_on_thread(5000, b'E', None),
        bundle(0, |b| {
            event(b, 6000, 61, 3, |m| m.append_string(2, "E|60\n"))
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, name, depth, track_id FROM slice ORDER BY ts"
        ),
        vec![
            vec![
                Value::Int(1000),
                Value::Int(4000),
                s("outer"),
                Value::Int(0),
                Value::Int(0)
            ],
            vec![
                Value::Int(2000),
                Value::Int(3000),
                s("mark"),
                Value::Int(1),
                Value::Int(0)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'misplaced_end_event'"
        ),
        vec![vec![Value::Int(1)]]
    );
}

/// A thread's descriptor that disallows merging with the system's tracks
/// keeps its TrackEvents on a track of their own: an atrace mark of the
/// thread goes on the thread's default track, a stack apart, and lasts
/// until its own end.
#[test]
fn a_thread_descriptor_apart_from_system_tracks_keeps_atrace_apart() {
    let t = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            p.set_incremental_state_cleared(true);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(9);
            td.set_disallow_merging_with_system_tracks(true);
            let mut th = td.begin_thread();
            th.set_pid(60);
            th.set_tid(61);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1000);
            let mut e = p.begin_track_event();
            e.set_track_uuid(9);
            e.set_name("outer");
            e.set_type(zerotrace_protos::protos::track_event::Type::SliceBegin);
        }),
        bundle(0, |b| {
            event(b, 2000, 61, 3, |m| m.append_string(2, "B|60|mark\n"))
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(5000);
            let mut e = p.begin_track_event();
            e.set_track_uuid(9);
            e.set_type(zerotrace_protos::protos::track_event::Type::SliceEnd);
        }),
        bundle(0, |b| {
            event(b, 6000, 61, 3, |m| m.append_string(2, "E|60\n"))
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(&tp, "SELECT ts, dur, name, depth FROM slice ORDER BY ts"),
        vec![
            vec![
                Value::Int(1000),
                Value::Int(4000),
                s("outer"),
                Value::Int(0)
            ],
            vec![Value::Int(2000), Value::Int(4000), s("mark"), Value::Int(0)],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT COUNT(DISTINCT track_id) FROM slice"),
        vec![vec![Value::Int(2)]]
    );
}
