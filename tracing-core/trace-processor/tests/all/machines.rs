//! Traces of several machines (a relay's): each machine's pids and tids
//! are its own, its timestamps reach the host's clock through the offsets
//! its `RemoteClockSync` exchanges give, and `machine` lists the host and
//! each remote machine with its `SystemInfo`. The host's rows name machine
//! 0; a machine without a `RemoteClockSync` shares the host's boot clock;
//! a machine that sends packets before the host sends any is the host.

use crate::common;

use common::{packet, rows, s, trace};
use zerotrace_trace_processor::{TraceProcessor, Value};

const REMOTE: u32 = 0xbeef;

/// A process (pid, name) in a process_tree packet of `machine`, at `ts`.
fn process(machine: u32, ts: u64, pid: i32, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        if machine != 0 {
            p.set_machine_id(machine);
        }
        let mut tree = p.message().begin_nested(2);
        let mut proc_ = tree.begin_nested(1);
        proc_.append_int32(1, pid);
        proc_.append_int32(2, 1);
        proc_.append_string(3, name);
    })
}

/// An atrace slice from `print` ftrace events of `machine`.
fn slice(machine: u32, begin: u64, end: u64) -> Vec<u8> {
    packet(|p| {
        if machine != 0 {
            p.set_machine_id(machine);
        }
        let mut b = p.message().begin_nested(1);
        b.append_uint32(1, 0);
        for (ts, buf) in [(begin, "B|7|work\n"), (end, "E|7\n")] {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, ts);
            e.append_uint32(2, 7);
            e.begin_nested(3).append_string(2, buf);
        }
    })
}

/// Two rounds of one exchange: the remote BOOTTIME runs `ahead` ns ahead
/// of the host's, messages take 10 ns.
fn clock_sync(ahead: u64) -> Vec<u8> {
    packet(|p| {
        p.set_machine_id(REMOTE);
        let mut sync = p.message().begin_nested(107);
        for (host, client) in [(1_010u64, 1_000 + ahead), (1_030, 1_020 + ahead)] {
            let mut round = sync.begin_nested(1);
            for (field, value) in [(2, client), (3, host)] {
                let mut snap = round.begin_nested(field);
                let mut c = snap.begin_nested(1);
                c.append_uint32(1, 6);
                c.append_uint64(2, value);
            }
        }
    })
}

#[test]
fn machines_keep_their_own_processes_and_clocks() {
    let t = trace(&[
        packet(|p| {
            p.begin_system_info()
                .begin_utsname()
                .set_sysname("Linux")
                .set_machine("x86_64");
        }),
        packet(|p| {
            p.set_machine_id(REMOTE);
            let mut si = p.begin_system_info();
            si.set_num_cpus(4);
            si.begin_utsname()
                .set_sysname("Linux")
                .set_machine("aarch64");
        }),
        clock_sync(1_000_000),
        process(0, 100, 7, "host_app"),
        process(REMOTE, 1_000_100, 7, "remote_app"),
        slice(0, 2_000, 3_000),
        // 1 ms ahead on the remote's clock: the same instants on the host's.
        slice(REMOTE, 1_002_000, 1_003_000),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT id, raw_id, sysname, arch, num_cpus, label_index FROM machine ORDER BY id"
        ),
        vec![
            vec![
                Value::Int(0),
                Value::Int(0),
                s("Linux"),
                s("x86_64"),
                Value::Null,
                Value::Int(0)
            ],
            vec![
                Value::Int(1),
                Value::Int(i64::from(REMOTE)),
                s("Linux"),
                s("aarch64"),
                Value::Int(4),
                Value::Int(1)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT pid, name, machine_id FROM process WHERE pid = 7 ORDER BY upid"
        ),
        vec![
            vec![Value::Int(7), s("host_app"), Value::Int(0)],
            vec![Value::Int(7), s("remote_app"), Value::Int(1)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT slice.ts, slice.dur, thread.machine_id FROM slice \
             JOIN thread_track tt ON slice.track_id = tt.id JOIN thread USING (utid) \
             ORDER BY slice.ts, thread.machine_id"
        ),
        vec![
            vec![Value::Int(2_000), Value::Int(1_000), Value::Int(0)],
            vec![Value::Int(2_000), Value::Int(1_000), Value::Int(1)],
        ]
    );
    // Each machine's system info is its own metadata row, as upstream
    // keeps these keys per machine.
    assert_eq!(
        rows(
            &tp,
            "SELECT str_value, machine_id FROM metadata WHERE name = 'system_machine' \
             ORDER BY machine_id"
        ),
        vec![
            vec![s("x86_64"), Value::Int(0)],
            vec![s("aarch64"), Value::Int(1)]
        ]
    );
}

#[test]
fn a_machine_without_a_clock_sync_shares_the_hosts_boot_clock() {
    let t = trace(&[slice(0, 2_000, 3_000), slice(REMOTE, 5_000, 9_000)]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT slice.ts, slice.dur, thread.machine_id FROM slice \
             JOIN thread_track tt ON slice.track_id = tt.id JOIN thread USING (utid) \
             ORDER BY slice.ts"
        ),
        vec![
            vec![Value::Int(2_000), Value::Int(1_000), Value::Int(0)],
            vec![Value::Int(5_000), Value::Int(4_000), Value::Int(1)],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT start_ts, end_ts FROM trace_bounds"),
        vec![vec![Value::Int(2_000), Value::Int(9_000)]]
    );
}

#[test]
fn a_machine_that_sends_before_the_host_is_the_host() {
    let t = trace(&[
        slice(REMOTE, 5_000, 9_000),
        process(REMOTE, 6_000, 7, "remote_app"),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(&tp, "SELECT id, raw_id FROM machine ORDER BY id"),
        vec![vec![Value::Int(0), Value::Int(i64::from(REMOTE))]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT slice.ts, slice.dur, track.machine_id FROM slice \
             JOIN track ON slice.track_id = track.id"
        ),
        vec![vec![Value::Int(5_000), Value::Int(4_000), Value::Int(0)]]
    );
    assert_eq!(
        rows(&tp, "SELECT name, machine_id FROM process WHERE pid = 7"),
        vec![vec![s("remote_app"), Value::Int(0)]]
    );
}
