//! The standard library's Linux modules (`counters.intervals`,
//! `linux.cpu.*`, `linux.memory.*`, `linux.threads`, `sched.*`,
//! `std.*`) on traces built here, checked against an independent reading:
//! what the test wrote (switch times, frequencies, process stats) and sums
//! over the raw tables (`sched_slice`, `thread_state`, `counter`).

use zerotrace_protos::protos::{FtraceEvent, FtraceEventBundle, track_event};
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.ftrace_events`.
const FTRACE_EVENTS: u32 = 1;
/// `TracePacket.process_tree`.
const PROCESS_TREE: u32 = 2;
/// `TracePacket.process_stats`.
const PROCESS_STATS: u32 = 9;
/// The kernel's "left idle" `cpu_idle` state.
const EXIT_IDLE: u32 = 4_294_967_295;

fn bundle(cpu: u32, f: impl FnOnce(&mut FtraceEventBundle<'_>)) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        let mut b = FtraceEventBundle::from_message(p.message().begin_nested(FTRACE_EVENTS));
        b.set_cpu(cpu);
        f(&mut b);
    })
}

fn event<'a>(b: &'a mut FtraceEventBundle<'_>, ts: u64, pid: u32) -> FtraceEvent<'a> {
    let mut e = b.add_event();
    e.set_timestamp(ts);
    e.set_pid(pid);
    e
}

fn switch(b: &mut FtraceEventBundle<'_>, ts: u64, prev: i32, prev_state: i64, next: i32) {
    let comm = |pid: i32| match pid {
        0 => "swapper".to_owned(),
        p => format!("t{p}"),
    };
    event(b, ts, prev as u32)
        .begin_sched_switch()
        .set_prev_comm(&comm(prev))
        .set_prev_pid(prev)
        .set_prev_prio(120)
        .set_prev_state(prev_state)
        .set_next_comm(&comm(next))
        .set_next_pid(next)
        .set_next_prio(120);
}

fn freq(b: &mut FtraceEventBundle<'_>, ts: u64, cpu: u32, khz: u32) {
    event(b, ts, 0)
        .begin_cpu_frequency()
        .set_state(khz)
        .set_cpu_id(cpu);
}

fn idle(b: &mut FtraceEventBundle<'_>, ts: u64, cpu: u32, state: u32) {
    event(b, ts, 0)
        .begin_cpu_idle()
        .set_state(state)
        .set_cpu_id(cpu);
}

/// A process tree at ts 1: `app` (pid 100; threads 100, 101), `db` (pid
/// 200; threads 200, 201), kthreadd (pid 2) and its child kworker (30).
fn process_tree() -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(1);
        let mut tree = p.message().begin_nested(PROCESS_TREE);
        for (pid, ppid, name) in [
            (2, 0, "kthreadd"),
            (30, 2, "kworker"),
            (100, 1, "app"),
            (200, 1, "db"),
        ] {
            let mut proc_ = tree.begin_nested(1);
            proc_.append_int32(1, pid);
            proc_.append_int32(2, ppid);
            proc_.append_string(3, name);
        }
        for (tid, tgid) in [
            (2, 2),
            (30, 30),
            (100, 100),
            (101, 100),
            (200, 200),
            (201, 200),
        ] {
            let mut th = tree.begin_nested(2);
            th.append_int32(1, tid);
            th.append_int32(3, tgid);
        }
    })
}

/// Two CPUs. CPU 0 runs 100 [100, 200), 201 [200, 300), idles [300,
/// 400) (cpu_idle state 1), runs 101 [400, 500); its frequency is 1 GHz
/// from 50 and 2 GHz from 250. CPU 1 runs 200 [150, 450) after it was
/// woken at 120, at 500 MHz from 0. The trace ends at 500.
fn sched_packets() -> Vec<Vec<u8>> {
    let cpu0 = bundle(0, |b| {
        freq(b, 50, 0, 1_000_000);
        switch(b, 100, 0, 0, 100);
        switch(b, 200, 100, 1, 201);
        freq(b, 250, 0, 2_000_000);
        switch(b, 300, 201, 1, 0);
        idle(b, 300, 0, 1);
        idle(b, 400, 0, EXIT_IDLE);
        switch(b, 400, 0, 0, 101);
        switch(b, 500, 101, 1, 0);
    });
    let cpu1 = bundle(1, |b| {
        freq(b, 0, 1, 500_000);
        event(b, 120, 0)
            .begin_sched_waking()
            .set_comm("t200")
            .set_pid(200)
            .set_prio(120)
            .set_success(1)
            .set_target_cpu(1);
        switch(b, 150, 0, 0, 200);
        switch(b, 450, 200, 1, 0);
    });
    vec![process_tree(), cpu0, cpu1]
}

fn sched_trace() -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(&sched_packets())).expect("trace")
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(v) => *v,
        other => panic!("not an integer: {other:?}"),
    }
}

fn real(v: &Value) -> f64 {
    match v {
        Value::Real(v) => *v,
        Value::Int(v) => *v as f64,
        other => panic!("not a number: {other:?}"),
    }
}

#[test]
fn counter_leading_intervals_keeps_a_runs_ends_and_reaches_the_next_kept_sample() {
    let tp = sched_trace();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE counters.intervals;
         CREATE PERFETTO TABLE samples AS
         WITH d(id, ts, track_id, value) AS (VALUES
           (0, 10, 1, 5), (1, 20, 1, 5), (2, 30, 1, 5), (3, 40, 1, 5), (4, 50, 1, 7), (5, 60, 1, 7),
           (6, 10, 2, 1), (7, 20, 2, 1), (8, 30, 2, 1))
         SELECT * FROM d;
         SELECT id, ts, dur, track_id, value, next_value, delta_value
         FROM counter_leading_intervals!(samples)",
    );
    let r = Value::Real;
    let n = Value::Null;
    assert_eq!(
        got,
        vec![
            // A run of 5s: its first two samples and, since 7 follows, its
            // last; the third adds nothing.
            vec![i(0), i(10), i(10), i(1), r(5.0), r(5.0), n.clone()],
            vec![i(1), i(20), i(20), i(1), r(5.0), r(5.0), r(0.0)],
            vec![i(3), i(40), i(10), i(1), r(5.0), r(7.0), r(0.0)],
            vec![i(4), i(50), i(10), i(1), r(7.0), r(7.0), r(2.0)],
            // The last sample holds until the end of the trace (500).
            vec![i(5), i(60), i(440), i(1), r(7.0), n.clone(), r(0.0)],
            // A run at the end keeps only its first two samples.
            vec![i(6), i(10), i(10), i(2), r(1.0), r(1.0), n.clone()],
            vec![i(7), i(20), i(480), i(2), r(1.0), n, r(0.0)],
        ]
    );
}

#[test]
fn cpu_frequency_and_idle_are_intervals_per_cpu() {
    let tp = sched_trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.cpu.frequency;
             SELECT ts, dur, freq, cpu, ucpu IS NOT NULL FROM cpu_frequency_counters ORDER BY cpu, ts"
        ),
        vec![
            vec![i(50), i(200), i(1_000_000), i(0), i(1)],
            vec![i(250), i(250), i(2_000_000), i(0), i(1)],
            vec![i(0), i(500), i(500_000), i(1), i(1)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.cpu.idle_stats;
             SELECT c.ts, c.dur, c.idle, c.cpu FROM cpu_idle_counters c ORDER BY ts"
        ),
        vec![
            vec![i(300), i(100), i(1), i(0)],
            vec![i(400), i(100), i(-1), i(0)],
        ]
    );
    // State 2 (idle 1): entered once for 100 of the CPU's 200 counted.
    assert_eq!(
        rows(&tp, "SELECT * FROM cpu_idle_stats"),
        vec![vec![i(0), i(2), i(1), i(100), i(100), Value::Real(50.0)]]
    );
}

/// Process CPU time, cycles and utilization per period agree with sums
/// over `sched_slice` and with the frequencies the trace set.
#[test]
fn cpu_utilization_per_process_and_thread_agrees_with_sched_slice() {
    let tp = sched_trace();
    let by_module = rows(
        &tp,
        "INCLUDE PERFETTO MODULE linux.cpu.utilization.process;
         SELECT p.pid, c.runtime, c.millicycles, c.min_freq, c.max_freq
         FROM cpu_cycles_per_process c JOIN process p USING (upid) ORDER BY p.pid",
    );
    let by_sched = rows(
        &tp,
        "SELECT p.pid, sum(s.dur) FROM sched_slice s JOIN thread t USING (utid)
         JOIN process p USING (upid)
         WHERE NOT t.is_idle AND s.dur != -1 GROUP BY p.pid ORDER BY p.pid",
    );
    assert_eq!(
        by_module
            .iter()
            .map(|r| (int(&r[0]), int(&r[1])))
            .collect::<Vec<_>>(),
        by_sched
            .iter()
            .map(|r| (int(&r[0]), int(&r[1])))
            .collect::<Vec<_>>()
    );
    // app: 100 [100, 200) at 1 GHz, 101 [400, 500) at 2 GHz; db: 200
    // [150, 450) at 0.5 GHz, 201 [200, 250) at 1 GHz and [250, 300) at 2.
    assert_eq!(
        by_module,
        vec![
            vec![
                i(100),
                i(200),
                i(100 * 1000 + 100 * 2000),
                i(1_000_000),
                i(2_000_000)
            ],
            vec![
                i(200),
                i(400),
                i(300 * 500 + 50 * 1000 + 50 * 2000),
                i(500_000),
                i(2_000_000)
            ],
        ]
    );
    // Per thread, the same runtime as sched_slice's.
    let per_thread = rows(
        &tp,
        "INCLUDE PERFETTO MODULE linux.cpu.utilization.thread;
         SELECT t.tid, c.runtime FROM cpu_cycles_per_thread c JOIN thread t USING (utid)
         ORDER BY t.tid",
    );
    assert_eq!(
        per_thread,
        vec![
            vec![i(100), i(100)],
            vec![i(101), i(100)],
            vec![i(200), i(300)],
            vec![i(201), i(100)],
        ]
    );
    // Periods of 200 from the trace's start (0): each slice counts in the
    // period it starts in, up to that period's end; over 2 CPUs.
    let per_period = |pid: i64| {
        rows(
            &tp,
            &format!(
                "SELECT ts, utilization, unnormalized_utilization
                 FROM cpu_process_utilization_per_period(200,
                   (SELECT upid FROM process WHERE pid = {pid}))"
            ),
        )
        .iter()
        .map(|r| (int(&r[0]), real(&r[1]), real(&r[2])))
        .collect::<Vec<_>>()
    };
    assert_eq!(per_period(100), vec![(0, 0.25, 0.5), (400, 0.25, 0.5)]);
    assert_eq!(per_period(200), vec![(0, 0.125, 0.25), (200, 0.25, 0.5)]);
    // The whole system: every non-idle slice.
    let system = rows(
        &tp,
        "INCLUDE PERFETTO MODULE linux.cpu.utilization.system;
         SELECT ts, unnormalized_utilization FROM cpu_utilization_per_period(200)",
    );
    assert_eq!(
        system
            .iter()
            .map(|r| (int(&r[0]), real(&r[1])))
            .collect::<Vec<_>>(),
        vec![(0, 0.75), (200, 0.5), (400, 0.5)]
    );
    // Within [150, 350): app's 100 ran [150, 200) at 1 GHz; db's 200 ran
    // [150, 350) at 0.5 GHz, its 201 [200, 250) at 1 GHz, [250, 300) at 2.
    assert_eq!(
        rows(
            &tp,
            "SELECT p.pid, c.runtime, c.millicycles, c.min_freq, c.max_freq
             FROM cpu_cycles_per_process_in_interval(150, 200) c JOIN process p USING (upid)
             ORDER BY p.pid"
        ),
        vec![
            vec![i(100), i(50), i(50 * 1000), i(1_000_000), i(1_000_000)],
            vec![
                i(200),
                i(300),
                i(200 * 500 + 50 * 1000 + 50 * 2000),
                i(500_000),
                i(2_000_000)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.tid, c.cpu, c.runtime FROM cpu_cycles_per_thread_per_cpu_in_interval(150, 200) c
             JOIN thread t USING (utid) ORDER BY t.tid"
        ),
        vec![
            vec![i(100), i(0), i(50)],
            vec![i(200), i(1), i(200)],
            vec![i(201), i(0), i(100)],
        ]
    );
    // CPU 0 over [150, 450): 100 until 200 (left sleeping), 201 until 300
    // (sleeping), the swapper until 400 (runnable), 101 from 400.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE sched.time_in_state;
             SELECT end_state, dur FROM sched_time_in_state_for_cpu_in_interval(0, 150, 300)
             ORDER BY end_state"
        ),
        vec![vec![s("R"), i(100)], vec![s("S"), i(200)]]
    );
    // The periods: those covering the trace, never more than `sched`'s
    // 7 rows (upstream numbers them by its ids).
    assert_eq!(
        rows(&tp, "SELECT ts, ts_end FROM _partitions(200)"),
        vec![
            vec![i(0), i(200)],
            vec![i(200), i(400)],
            vec![i(400), i(600)]
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT count(*), max(ts) FROM _partitions(1)"),
        vec![vec![i(7), i(6)]]
    );
    let cycles = rows(&tp, "SELECT runtime, millicycles FROM cpu_cycles");
    assert_eq!(cycles, vec![vec![i(600), i(300_000 + 300_000)]]);
}

#[test]
fn sched_modules_name_states_and_measure_latency_and_time_in_state() {
    let tp = sched_trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE sched.states;
             SELECT sched_state_to_human_readable_string('R+'),
                    sched_state_to_human_readable_string('Running'),
                    sched_state_to_human_readable_string('?'),
                    sched_state_io_to_human_readable_string('D', 1),
                    sched_state_io_to_human_readable_string('S', NULL)"
        ),
        vec![vec![
            s("Runnable (Preempted)"),
            s("Running"),
            s("?"),
            s("Uninterruptible Sleep (IO)"),
            s("Sleeping"),
        ]]
    );
    // Thread 200 was runnable [120, 150) before it ran.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE sched.latency;
             SELECT t.tid, l.latency_dur, r.ts, r.state, s.ts
             FROM sched_latency_for_running_interval l
             JOIN thread t USING (utid)
             JOIN thread_state r ON r.id = l.runnable_latency_id
             JOIN sched s ON s.id = l.sched_id"
        ),
        vec![vec![i(200), i(30), i(120), s("R"), i(150)]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE sched.time_in_state;
             SELECT * FROM sched_time_in_state_for_thread_in_interval(
               100, 300, (SELECT utid FROM thread WHERE tid = 200))"
        ),
        vec![
            vec![s("Running"), Value::Null, Value::Null, i(250)],
            vec![s("R"), Value::Null, Value::Null, i(30)],
        ]
    );
    // Whole-thread shares agree with sums over thread_state.
    let pct = rows(
        &tp,
        "SELECT t.tid, x.total_runtime, x.time_in_state, x.percentage_in_state
         FROM sched_time_in_state_for_thread x JOIN thread t USING (utid)
         WHERE t.tid = 101 AND x.state = 'Running'",
    );
    let total = rows(
        &tp,
        "SELECT sum(dur) FROM thread_state JOIN thread t USING (utid) WHERE t.tid = 101",
    );
    assert_eq!(int(&pct[0][1]), int(&total[0][0]));
    assert_eq!(int(&pct[0][2]), 100);
    assert_eq!(int(&pct[0][3]), 100 * 100 / int(&total[0][0]));
    // Every sched slice with its thread and process.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE sched.with_context;
             SELECT ts, thread_name, process_name, cpu FROM sched_with_thread_process
             WHERE process_name IS NOT NULL ORDER BY ts"
        ),
        vec![
            vec![i(100), s("t100"), s("app"), i(0)],
            vec![i(150), s("t200"), s("db"), i(1)],
            vec![i(200), s("t201"), s("db"), i(0)],
            vec![i(400), s("t101"), s("app"), i(0)],
        ]
    );
    // Two CPUs busy over [150, 300), one elsewhere until 500.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE sched.thread_level_parallelism;
             SELECT ts, active_cpu_count FROM sched_active_cpu_count
             WHERE ts IN (100, 150, 300, 400, 450, 500) ORDER BY ts"
        ),
        vec![
            vec![i(100), i(1)],
            vec![i(150), i(2)],
            vec![i(300), i(1)],
            vec![i(400), i(2)],
            vec![i(450), i(1)],
            vec![i(500), i(0)],
        ]
    );
}

#[test]
fn kernel_threads_are_kthreadd_and_its_children() {
    let tp = sched_trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.threads;
             SELECT pid, tid, process_name FROM linux_kernel_threads ORDER BY tid"
        ),
        vec![
            vec![i(2), i(2), s("kthreadd")],
            vec![i(30), i(30), s("kworker")],
        ]
    );
}

/// `process_stats` for app (pid 100) at 10, 20 and 30: RSS parts and swap.
fn memory_trace() -> TraceProcessor {
    let stats = |ts: u64, anon: u64, file: u64, shmem: Option<u64>, swap: Option<u64>| {
        packet(|p| {
            p.set_timestamp(ts);
            let mut st = p.message().begin_nested(PROCESS_STATS);
            let mut proc_ = st.begin_nested(1);
            proc_.append_int32(1, 100);
            proc_.append_uint64(4, anon);
            proc_.append_uint64(5, file);
            if let Some(v) = shmem {
                proc_.append_uint64(6, v);
            }
            if let Some(v) = swap {
                proc_.append_uint64(7, v);
            }
        })
    };
    TraceProcessor::from_bytes(&trace(&[
        process_tree(),
        stats(10, 100, 50, None, None),
        stats(20, 120, 50, Some(10), None),
        stats(30, 90, 50, Some(10), Some(5)),
    ]))
    .expect("trace")
}

#[test]
fn memory_per_process_combines_the_rss_counters_and_their_high_watermark() {
    let tp = memory_trace();
    let kb = |v: i64| i(v * 1024);
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE linux.memory.high_watermark;
         SELECT ts, pid, anon_rss, file_rss, shmem_rss, swap, rss, rss_and_swap
         FROM memory_rss_and_swap_per_process ORDER BY ts",
    );
    assert_eq!(
        got,
        vec![
            vec![
                i(10),
                i(100),
                kb(100),
                kb(50),
                Value::Null,
                Value::Null,
                kb(150),
                kb(150)
            ],
            vec![
                i(20),
                i(100),
                kb(120),
                kb(50),
                kb(10),
                Value::Null,
                kb(180),
                kb(180)
            ],
            vec![
                i(30),
                i(100),
                kb(90),
                kb(50),
                kb(10),
                kb(5),
                kb(150),
                kb(155)
            ],
        ]
    );
    // The highest RSS so far: 150, then 180, which stays.
    let hwm = rows(
        &tp,
        "SELECT ts, rss_high_watermark FROM memory_rss_high_watermark_per_process ORDER BY ts",
    );
    assert_eq!(
        hwm,
        vec![
            vec![i(10), kb(150)],
            vec![i(20), kb(180)],
            vec![i(30), kb(180)]
        ]
    );
}

#[test]
fn metadata_for_primary_scope_keeps_one_entry_per_name() {
    let tp = sched_trace();
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE std.traceinfo.metadata_for_primary_scope;
         SELECT count(*), count(DISTINCT name) FROM _metadata_for_primary_scope",
    );
    let names = rows(&tp, "SELECT count(DISTINCT name) FROM metadata");
    assert_eq!(int(&got[0][0]), int(&names[0][0]));
    assert_eq!(int(&got[0][1]), int(&names[0][0]));
    rows(
        &tp,
        "INCLUDE PERFETTO MODULE std.traceinfo.trace; SELECT * FROM _metadata_by_trace",
    );
}

#[test]
fn block_device_ids_split_as_the_c_library_packs_them() {
    let tp = sched_trace();
    // makedev(8, 1) and makedev(8, 300) as glibc packs a dev_t.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.block_io;
             SELECT linux_device_major_id(2049), linux_device_minor_id(2049),
                    linux_device_major_id(1050668), linux_device_minor_id(1050668),
                    (SELECT count(*) FROM linux_active_block_io_operations_by_device)"
        ),
        vec![vec![i(8), i(1), i(8), i(300), i(0)]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.devfreq;
             SELECT count(*) FROM linux_devfreq_dsu_counter"
        ),
        vec![vec![i(0)]]
    );
}

/// A slice of thread 201 over [210, 290): it ran [210, 250) at 1 GHz and
/// [250, 290) at 2 GHz.
#[test]
fn cpu_cycles_per_thread_slice_sum_the_frequencies_its_thread_ran_at() {
    let descriptor = packet(|p| {
        p.set_trusted_packet_sequence_id(7);
        p.set_timestamp(0);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(77);
        let mut th = td.begin_thread();
        th.set_pid(200);
        th.set_tid(201);
    });
    let mark = |ts: u64, kind: track_event::Type| {
        packet(|p| {
            p.set_trusted_packet_sequence_id(7);
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_track_uuid(77);
            e.set_name("work");
            e.set_type(kind);
        })
    };
    let mut packets = sched_packets();
    packets.extend([
        descriptor,
        mark(210, track_event::Type::SliceBegin),
        mark(290, track_event::Type::SliceEnd),
    ]);
    let tp = TraceProcessor::from_bytes(&trace(&packets)).expect("trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.cpu.utilization.slice;
             SELECT name, thread_name, process_name, millicycles FROM cpu_cycles_per_thread_slice"
        ),
        vec![vec![
            s("work"),
            s("t201"),
            s("db"),
            i(40 * 1000 + 40 * 2000)
        ]]
    );
    // The slice's thread states: it ran throughout, on CPU 0.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE sched.thread_state_flattened;
             SELECT ts, dur, name, cpu, state
             FROM _get_flattened_thread_state((SELECT id FROM slice WHERE name = 'work'), NULL)"
        ),
        vec![vec![i(210), i(80), s("work"), i(0), s("Running")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT slice_name, running, sleeping, dur, depth
             FROM _get_flattened_thread_state_aggregated(NULL,
               (SELECT utid FROM thread WHERE tid = 201))"
        ),
        vec![vec![s("work"), i(80), Value::Null, i(80), i(0)]]
    );
    // Within [230, 330): the slice's part [230, 290).
    assert_eq!(
        rows(
            &tp,
            "SELECT name, millicycles FROM cpu_cycles_per_thread_slice_in_interval(230, 100)"
        ),
        vec![vec![s("work"), i(20 * 1000 + 40 * 2000)]]
    );
}

/// Every module here includes on one of our own recordings and on an empty
/// trace, and each public table reads.
#[test]
fn every_linux_module_includes_on_our_recording_and_on_an_empty_trace() {
    const TABLES: &[(&str, &str)] = &[
        ("counters.global_tracks", "SELECT 1"),
        (
            "linux.block_io",
            "linux_active_block_io_operations_by_device",
        ),
        ("linux.cpu.frequency", "cpu_frequency_counters"),
        ("linux.cpu.idle_stats", "cpu_idle_stats"),
        (
            "linux.cpu.idle_time_in_state",
            "linux_cpu_idle_time_in_state_counters",
        ),
        ("linux.cpu.utilization.process", "cpu_cycles_per_process"),
        ("linux.cpu.utilization.slice", "cpu_cycles_per_thread_slice"),
        ("linux.cpu.utilization.system", "cpu_utilization_per_second"),
        ("linux.cpu.utilization.thread", "cpu_cycles_per_thread"),
        ("linux.devfreq", "linux_devfreq_dsu_counter"),
        (
            "linux.memory.high_watermark",
            "memory_rss_high_watermark_per_process",
        ),
        ("linux.memory.process", "memory_rss_and_swap_per_process"),
        ("linux.threads", "linux_kernel_threads"),
        ("sched.latency", "sched_latency_for_running_interval"),
        (
            "sched.thread_level_parallelism",
            "sched_uninterruptible_sleep_thread_count",
        ),
        ("sched.thread_state_flattened", "__span_joined_thread"),
        ("sched.time_in_state", "sched_percentage_of_time_in_state"),
        ("sched.with_context", "sched_with_thread_process"),
        ("std.traceinfo.trace", "_metadata_by_trace"),
    ];
    let recording = TraceProcessor::from_bytes(include_bytes!(
        "../../../tests/vectors/genuine-session.pftrace"
    ))
    .expect("recording");
    let empty = TraceProcessor::from_bytes(&[]).expect("empty trace");
    for tp in [&recording, &empty] {
        for (module, table) in TABLES {
            let from = if table.starts_with("SELECT") {
                (*table).to_owned()
            } else {
                format!("SELECT count(*) FROM {table}")
            };
            if let Err(e) = tp.query(&format!("INCLUDE PERFETTO MODULE {module}; {from}")) {
                panic!("{module}: {e}");
            }
        }
    }
}
