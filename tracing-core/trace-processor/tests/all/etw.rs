//! Windows ETW events (`TracePacket.etw_events`) as upstream imports them:
//! file I/O operations paired by request packet into slices on the
//! thread's `etw_fileio` tracks (unpaired ones kept and marked), disk I/O
//! slices, context switches into `sched_slice` and `thread_state` with
//! wait reasons, and memory page counts as counters.

use crate::common::{i, packet, rows, s, trace};
use protozero::Message;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// `TracePacket.etw_events`.
const ETW_EVENTS: u32 = 95;

/// One `EtwTraceEvent` in a bundle: time, thread, and its member written
/// by `f` as field `member`.
fn event(b: &mut Message<'_>, ts: u64, tid: u32, member: u32, f: impl FnOnce(&mut Message<'_>)) {
    let mut e = b.begin_nested(2);
    e.append_uint64(1, ts);
    e.append_uint32(5, tid);
    let mut m = e.begin_nested(member);
    f(&mut m);
}

fn bundle(f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        let mut b = p.message().begin_nested(ETW_EVENTS);
        b.append_uint32(1, 0);
        f(&mut b);
    })
}

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

#[test]
fn file_operations_pair_by_request_packet_and_unpaired_ones_are_kept() {
    let tp = load(&[
        bundle(|b| {
            // CreateFile (irp 1) on thread 50, ended at 150.
            event(b, 100, 50, 7, |m| {
                m.append_uint64(1, 1);
                m.append_uint32(4, 44444);
                m.append_string(7, "C:\\a.txt");
            });
            event(b, 150, 50, 12, |m| {
                m.append_uint64(1, 1);
                m.append_uint64(2, 7);
                m.append_uint32(3, 0);
            });
            // A Flush (opcode 73) without a request packet: an instant.
            event(b, 200, 50, 11, |m| {
                m.append_uint32(5, 73);
            });
        }),
        bundle(|b| {
            // An end whose start was never seen.
            event(b, 300, 50, 12, |m| {
                m.append_uint64(1, 9);
            });
            // A WriteFile (opcode 68) never ended.
            event(b, 400, 50, 10, |m| {
                m.append_uint64(2, 2);
                m.append_uint32(8, 68);
            });
            // Info setting a disposition.
            event(b, 450, 50, 9, |m| {
                m.append_uint64(4, 1);
                m.append_uint32(6, 13);
                m.append_uint32(7, 69);
            });
        }),
    ]);
    let got = rows(
        &tp,
        "SELECT s.ts, s.dur, s.name, t.type, th.tid, \
         extract_arg(s.arg_set_id, 'Missing Event'), \
         extract_arg(s.arg_set_id, 'Create Options'), \
         extract_arg(s.arg_set_id, 'Extra Info'), \
         extract_arg(s.arg_set_id, 'Disposition') \
         FROM slice s JOIN track t ON s.track_id = t.id \
         JOIN thread th ON th.utid = extract_arg(t.dimension_arg_set_id, 'utid') \
         ORDER BY s.ts",
    );
    let n = || Value::Null;
    assert_eq!(
        got,
        vec![
            vec![
                i(100),
                i(50),
                s("CreateFile"),
                s("etw_fileio"),
                i(50),
                n(),
                i(44444),
                i(7),
                n()
            ],
            vec![
                i(200),
                i(0),
                s("Flush"),
                s("etw_fileio"),
                i(50),
                n(),
                n(),
                n(),
                n()
            ],
            vec![
                i(300),
                i(0),
                s("EndOperation"),
                s("etw_fileio"),
                i(50),
                s("Start"),
                n(),
                n(),
                n()
            ],
            vec![
                i(400),
                i(0),
                s("WriteFile"),
                s("etw_fileio"),
                i(50),
                s("End"),
                n(),
                n(),
                n()
            ],
            vec![
                i(450),
                i(0),
                s("SetInformation"),
                s("etw_fileio"),
                i(50),
                n(),
                n(),
                n(),
                i(1)
            ],
        ]
    );
    // The instant without a request packet sits on a track of its own,
    // not the one the paired operations share.
    let tracks = rows(
        &tp,
        "SELECT COUNT(DISTINCT track_id) FROM slice WHERE ts IN (100, 200)",
    );
    assert_eq!(tracks, vec![vec![i(2)]]);
}

#[test]
fn an_operation_end_does_not_name_its_request_packet() {
    let tp = load(&[bundle(|b| {
        // A CreateFile (irp 5) never ended, and an end (irp 6) never started.
        event(b, 100, 50, 7, |m| {
            m.append_uint64(1, 5);
        });
        event(b, 200, 50, 12, |m| {
            m.append_uint64(1, 6);
            m.append_uint64(2, 3);
        });
    })]);
    let got = rows(
        &tp,
        "SELECT s.name, extract_arg(s.arg_set_id, 'I/O Request Packet'), \
         extract_arg(s.arg_set_id, 'Extra Info') FROM slice s ORDER BY s.ts",
    );
    assert_eq!(
        got,
        vec![
            vec![s("CreateFile"), i(5), Value::Null],
            vec![s("EndOperation"), Value::Null, i(3)],
        ]
    );
}

#[test]
fn context_switches_fill_sched_and_thread_state_with_wait_reasons() {
    let tp = load(&[bundle(|b| {
        // Thread 10 runs from 500; leaves at 600 waiting on WrPageIn (9).
        event(b, 500, 0, 2, |m| {
            m.append_uint32(1, 10);
            m.append_uint32(2, 0);
            m.append_uint32(8, 2);
        });
        event(b, 600, 0, 2, |m| {
            m.append_uint32(1, 0);
            m.append_uint32(2, 10);
            m.append_uint32(8, 5);
            m.append_int32(11, 9);
        });
        // Thread 20 readies thread 10 at 700.
        event(b, 700, 20, 3, |m| {
            m.append_uint32(1, 10);
        });
        // A disk read of 20 us on thread 20.
        event(b, 800, 20, 15, |m| {
            m.append_uint32(9, 10);
            m.append_int64(7, 20);
        });
        // Memory page counts.
        event(b, 900, 0, 6, |m| {
            m.append_uint64(3, 1234);
            m.append_uint64(7, 5);
            m.append_uint64(7, 6);
        });
    })]);
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, cpu, t.tid, end_state FROM sched_slice JOIN thread t USING (utid) ORDER BY ts"
        ),
        vec![
            vec![i(500), i(100), i(0), i(10), s("Waiting")],
            vec![i(600), i(-1), i(0), i(0), Value::Null],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts.ts, ts.dur, ts.state, ts.io_wait, ts.blocked_function, w.tid \
             FROM thread_state ts JOIN thread t USING (utid) \
             LEFT JOIN thread w ON w.utid = ts.waker_utid \
             WHERE t.tid = 10 ORDER BY ts.ts"
        ),
        vec![
            vec![
                i(500),
                i(100),
                s("Running"),
                Value::Null,
                Value::Null,
                Value::Null
            ],
            vec![
                i(600),
                i(100),
                s("Waiting"),
                i(1),
                s("WrPageIn"),
                Value::Null
            ],
            vec![i(700), i(-1), s("R"), Value::Null, Value::Null, i(20)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.category, s.name, t.type FROM slice s \
             JOIN track t ON s.track_id = t.id"
        ),
        vec![vec![
            i(800),
            i(20),
            s("ETW Disk I/O"),
            s("DiskRead"),
            s("etw_diskio")
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.value FROM counter c JOIN counter_track t ON c.track_id = t.id \
             WHERE t.name IN ('Free Page Count', 'Standby Pri-1 Page Count', 'Bad Page Count') \
             ORDER BY t.name"
        ),
        vec![
            vec![s("Bad Page Count"), Value::Real(0.0)],
            vec![s("Free Page Count"), Value::Real(1234.0)],
            vec![s("Standby Pri-1 Page Count"), Value::Real(6.0)],
        ]
    );
}
