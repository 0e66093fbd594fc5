//! ftrace's scheduler events end to end on traces built with
//! `zerotrace_protos`' writers: `sched_slice` closed by the next switch,
//! `thread_state` after a switch-out (`prev_state` as the kernel of the
//! trace lays it out, preemption as `R+`), wakeups turning a sleep into
//! `R`, `sched_blocked_reason`, `compact_sched`, the raw `ftrace_event`
//! table with its args, CPU frequency and idle counters, `ftrace_stats`,
//! and malformed bundles counted as stats without panicking.

use zerotrace_protos::protos::ftrace_event_bundle::CompactSched;
use zerotrace_protos::protos::{FtraceEvent, FtraceEventBundle};
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.ftrace_events`.
const FTRACE_EVENTS: u32 = 1;

/// A packet holding one bundle of CPU `cpu`, written by `f`.
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

#[allow(clippy::too_many_arguments)]
fn switch(
    b: &mut FtraceEventBundle<'_>,
    ts: u64,
    prev: (&str, i32),
    prev_state: i64,
    next: (&str, i32),
) {
    let mut e = event(b, ts, prev.1 as u32);
    e.begin_sched_switch()
        .set_prev_comm(prev.0)
        .set_prev_pid(prev.1)
        .set_prev_prio(120)
        .set_prev_state(prev_state)
        .set_next_comm(next.0)
        .set_next_pid(next.1)
        .set_next_prio(110);
}

fn waking(b: &mut FtraceEventBundle<'_>, ts: u64, waker: u32, comm: &str, pid: i32) {
    let mut e = event(b, ts, waker);
    e.begin_sched_waking()
        .set_comm(comm)
        .set_pid(pid)
        .set_prio(120)
        .set_success(1)
        .set_target_cpu(1);
}

fn release(r: &str) -> Vec<u8> {
    packet(|p| {
        p.begin_system_info()
            .begin_utsname()
            .set_sysname("Linux")
            .set_release(r);
    })
}

fn stat(tp: &TraceProcessor, name: &str) -> i64 {
    match rows(
        tp,
        &format!("SELECT SUM(value) FROM stats WHERE name = '{name}'"),
    )
    .first()
    .and_then(|r| r.first())
    {
        Some(Value::Int(v)) => *v,
        _ => 0,
    }
}

#[test]
fn slices_close_at_the_next_switch_with_the_state_left_in() {
    let bytes = trace(&[bundle(0, |b| {
        switch(b, 100, ("swapper/0", 0), 0, ("a", 10));
        switch(b, 200, ("a", 10), 1, ("b", 20));
        switch(b, 350, ("b", 20), 2, ("a", 10));
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, cpu, t.tid, end_state, priority FROM sched_slice JOIN thread t USING (utid) ORDER BY ts"
        ),
        vec![
            vec![i(100), i(100), i(0), i(10), s("S"), i(110)],
            vec![i(200), i(150), i(0), i(20), s("D"), i(110)],
            vec![i(350), i(-1), i(0), i(10), Value::Null, i(110)],
        ]
    );
    // `sched` adds ts_end; thread names come from the comms.
    assert_eq!(
        rows(&tp, "SELECT ts_end FROM sched WHERE ts = 200"),
        vec![vec![i(350)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name FROM thread WHERE tid IN (0, 10, 20) ORDER BY tid"
        ),
        vec![vec![s("swapper")], vec![s("a")], vec![s("b")]]
    );
    // Thread states: Running on the CPU, then the state left in; the
    // swapper has none.
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, t.tid, state, cpu FROM thread_state JOIN thread t USING (utid) ORDER BY ts, t.tid"
        ),
        vec![
            vec![i(100), i(100), i(10), s("Running"), i(0)],
            vec![i(200), i(150), i(10), s("S"), Value::Null],
            vec![i(200), i(150), i(20), s("Running"), i(0)],
            vec![i(350), i(-1), i(10), s("Running"), i(0)],
            vec![i(350), i(-1), i(20), s("D"), Value::Null],
        ]
    );
}

#[test]
fn preemption_is_r_plus_by_the_kernel_version() {
    // Before 4.14 preemption is bit 0x800 (4.4 assumed when unknown); from
    // 4.14 on it is 0x100, which older kernels use for TASK_WAKING.
    let run = |packets: Vec<Vec<u8>>| {
        let tp = TraceProcessor::from_bytes(&trace(&packets)).unwrap();
        rows(
            &tp,
            "SELECT end_state FROM sched_slice WHERE dur >= 0 ORDER BY ts",
        )
    };
    let switches = |b: &mut FtraceEventBundle<'_>| {
        switch(b, 100, ("swapper/0", 0), 0, ("a", 10));
        switch(b, 200, ("a", 10), 0x800, ("b", 20));
        switch(b, 300, ("b", 20), 0x100, ("a", 10));
        switch(b, 400, ("a", 10), 0x80, ("b", 20));
    };
    assert_eq!(
        run(vec![bundle(0, switches)]),
        vec![vec![s("R+")], vec![s("W")], vec![s("K")]]
    );
    assert_eq!(
        run(vec![release("6.1.0-13-amd64"), bundle(0, switches)]),
        vec![vec![Value::Null], vec![s("R+")], vec![s("I")]]
    );
    // 0x800 is no state a 4.14+ kernel reports.
    let tp = TraceProcessor::from_bytes(&trace(&[release("6.1"), bundle(0, switches)])).unwrap();
    assert_eq!(stat(&tp, "task_state_invalid"), 1);
}

#[test]
fn a_wakeup_turns_a_sleep_into_runnable_with_its_waker() {
    let bytes = trace(&[
        bundle(0, |b| {
            switch(b, 100, ("swapper/0", 0), 0, ("sleeper", 10));
            switch(b, 200, ("sleeper", 10), 1, ("swapper/0", 0));
        }),
        bundle(1, |b| {
            switch(b, 150, ("swapper/1", 0), 0, ("waker", 30));
            waking(b, 300, 30, "sleeper", 10);
            // Waking a thread that is not blocked changes nothing.
            waking(b, 310, 30, "sleeper", 10);
        }),
        bundle(0, |b| {
            switch(b, 400, ("swapper/0", 0), 0, ("sleeper", 10));
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ts.ts, ts.dur, ts.state, w.tid, ts.waker_id IS NOT NULL FROM thread_state ts
             JOIN thread t USING (utid) LEFT JOIN thread w ON w.utid = ts.waker_utid
             WHERE t.tid = 10 ORDER BY ts.ts"
        ),
        vec![
            vec![i(100), i(100), s("Running"), Value::Null, i(0)],
            vec![i(200), i(100), s("S"), Value::Null, i(0)],
            vec![i(300), i(100), s("R"), i(30), i(1)],
            vec![i(400), i(-1), s("Running"), Value::Null, i(0)],
        ]
    );
}

#[test]
fn blocked_reason_names_the_kernel_function_and_io_wait() {
    // sched_blocked_reason is FtraceEvent field 18: {pid 1, caller 2,
    // io_wait 3}; InternedData.kernel_symbols is 26: {iid 1, str 2}.
    let bytes = trace(&[packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_sequence_flags(1);
        {
            let mut i = p.message().begin_nested(12);
            let mut k = i.begin_nested(26);
            k.append_uint64(1, 7);
            k.append_string(2, "io_schedule");
        }
        let mut b = FtraceEventBundle::from_message(p.message().begin_nested(FTRACE_EVENTS));
        b.set_cpu(0);
        switch(&mut b, 100, ("swapper/0", 0), 0, ("reader", 10));
        switch(&mut b, 200, ("reader", 10), 2, ("swapper/0", 0));
        let mut e = event(&mut b, 210, 0);
        let mut r = e.message().begin_nested(18);
        r.append_int32(1, 10);
        r.append_uint64(2, 7);
        r.append_uint32(3, 1);
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, state, io_wait, blocked_function FROM thread_state WHERE state = 'D'"
        ),
        vec![vec![i(200), s("D"), i(1), s("io_schedule")]]
    );
    // Its raw row has the symbol for `caller`.
    assert_eq!(
        rows(
            &tp,
            "SELECT key, display_value FROM ftrace_event JOIN args USING (arg_set_id)
             WHERE name = 'sched_blocked_reason' ORDER BY key"
        ),
        vec![
            vec![s("caller"), s("io_schedule")],
            vec![s("io_wait"), s("1")],
            vec![s("pid"), s("10")],
        ]
    );
}

fn compact(b: &mut FtraceEventBundle<'_>, f: impl FnOnce(&mut CompactSched<'_>)) {
    let mut c = b.begin_compact_sched();
    f(&mut c);
}

#[test]
fn compact_sched_decodes_deltas_and_interned_comms() {
    let bytes = trace(&[bundle(2, |b| {
        compact(b, |c| {
            c.add_intern_table("a");
            c.add_intern_table("b");
            // Switches at 1000, 1100, 1300: the first only says who runs.
            c.set_switch_timestamp([1000, 100, 200]);
            c.set_switch_prev_state([0, 1, 0x800]);
            c.set_switch_next_pid([10, 20, 10]);
            c.set_switch_next_prio([120, 110, 120]);
            c.set_switch_next_comm_index([0, 1, 0]);
            // A waking at 1150 of tid 10 by the task on the CPU (20).
            c.set_waking_timestamp([1150]);
            c.set_waking_pid([10]);
            c.set_waking_target_cpu([2]);
            c.set_waking_prio([120]);
            c.set_waking_comm_index([0]);
            c.set_waking_common_flags([0x08]);
        });
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(stat(&tp, "compact_sched_switch_skipped"), 1);
    assert_eq!(stat(&tp, "compact_sched_has_parse_errors"), 0);
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, cpu, t.tid, t.name, end_state FROM sched JOIN thread t USING (utid) ORDER BY ts"
        ),
        vec![
            vec![i(1100), i(200), i(2), i(20), s("b"), s("R+")],
            vec![i(1300), i(-1), i(2), i(10), s("a"), Value::Null],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, state, irq_context, waker_utid IS NOT NULL FROM thread_state
             JOIN thread t USING (utid) WHERE t.tid = 10 ORDER BY ts"
        ),
        vec![
            vec![i(1100), s("S"), Value::Null, i(0)],
            vec![i(1150), s("R"), i(1), i(1)],
            vec![i(1300), s("Running"), Value::Null, i(0)],
        ]
    );
    // Raw rows: the switches (prev_* from the CPU's previous switch) and
    // the waking, emitted by the task that ran.
    assert_eq!(
        rows(
            &tp,
            "SELECT f.ts, f.name, t.tid, extract_arg(f.arg_set_id, 'prev_pid'),
             extract_arg(f.arg_set_id, 'next_pid'), extract_arg(f.arg_set_id, 'pid')
             FROM ftrace_event f JOIN thread t USING (utid) ORDER BY f.ts"
        ),
        vec![
            vec![i(1100), s("sched_switch"), i(10), i(10), i(20), Value::Null],
            vec![
                i(1150),
                s("sched_waking"),
                i(20),
                Value::Null,
                Value::Null,
                i(10)
            ],
            vec![i(1300), s("sched_switch"), i(20), i(20), i(10), Value::Null],
        ]
    );
}

#[test]
fn malformed_bundles_are_counted_never_trusted() {
    let bytes = trace(&[
        // An impossible CPU.
        bundle(5000, |b| {
            switch(b, 100, ("swapper", 0), 0, ("a", 10));
        }),
        // No CPU at all.
        packet(|p| {
            let mut b = FtraceEventBundle::from_message(p.message().begin_nested(FTRACE_EVENTS));
            b.add_event().set_timestamp(5);
        }),
        // An event without a timestamp; a comm index past the table; the
        // switch arrays of unequal length.
        bundle(1, |b| {
            b.add_event().set_pid(3);
            compact(b, |c| {
                c.add_intern_table("a");
                c.set_switch_timestamp([10, 10, 10]);
                c.set_switch_prev_state([0, 0]);
                c.set_switch_next_pid([1, 2, 3]);
                c.set_switch_next_prio([0, 0, 0]);
                c.set_switch_next_comm_index([0, 0, 0]);
                c.set_waking_timestamp([10]);
                c.set_waking_pid([1]);
                c.set_waking_target_cpu([0]);
                c.set_waking_prio([0]);
                c.set_waking_comm_index([9]);
            });
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(stat(&tp, "ftrace_bundle_tokenizer_errors"), 3);
    assert_eq!(stat(&tp, "compact_sched_has_parse_errors"), 2);
    assert_eq!(rows(&tp, "SELECT COUNT(*) FROM sched"), vec![vec![i(1)]]);
    // Truncated and garbled bundles load what they can.
    let good = trace(&[bundle(0, |b| {
        switch(b, 100, ("swapper/0", 0), 0, ("a", 10));
        switch(b, 200, ("a", 10), 1, ("b", 20));
    })]);
    for cut in 0..good.len() {
        let mut bad = good.clone();
        if let Some(x) = bad.get_mut(cut) {
            *x ^= 0x5a;
        }
        let _ = TraceProcessor::from_bytes(&bad).map(|tp| tp.query("SELECT * FROM thread_state"));
        let _ = TraceProcessor::from_bytes(&good[..cut]);
    }
}

#[test]
fn raw_events_keep_their_fields_as_typed_args() {
    let bytes = trace(&[bundle(3, |b| {
        event(b, 100, 42)
            .begin_cpu_frequency()
            .set_state(1_800_000)
            .set_cpu_id(3);
        event(b, 110, 42)
            .begin_cpu_idle()
            .set_state(2)
            .set_cpu_id(3);
        event(b, 120, 42)
            .begin_task_rename()
            .set_pid(42)
            .set_oldcomm("old")
            .set_newcomm("new")
            .set_oom_score_adj(-100);
        event(b, 130, 42).begin_sched_process_free().set_pid(42);
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT f.name, f.cpu, t.tid, a.key, a.value_type, a.display_value
             FROM ftrace_event f JOIN thread t USING (utid) JOIN args a USING (arg_set_id)
             WHERE f.name IN ('cpu_frequency', 'task_rename') ORDER BY f.ts, a.id"
        ),
        vec![
            vec![
                s("cpu_frequency"),
                i(3),
                i(42),
                s("state"),
                s("uint"),
                s("1800000")
            ],
            vec![
                s("cpu_frequency"),
                i(3),
                i(42),
                s("cpu_id"),
                s("uint"),
                s("3")
            ],
            vec![s("task_rename"), i(3), i(42), s("pid"), s("int"), s("42")],
            vec![
                s("task_rename"),
                i(3),
                i(42),
                s("oldcomm"),
                s("string"),
                s("old")
            ],
            vec![
                s("task_rename"),
                i(3),
                i(42),
                s("newcomm"),
                s("string"),
                s("new")
            ],
            vec![
                s("task_rename"),
                i(3),
                i(42),
                s("oom_score_adj"),
                s("int"),
                s("-100")
            ],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT name, end_ts FROM thread WHERE tid = 42"),
        vec![vec![s("new"), i(130)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.type, extract_arg(t.dimension_arg_set_id, 'cpu'), c.value
             FROM counter c JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts"
        ),
        vec![
            vec![
                s("cpufreq"),
                s("cpu_frequency"),
                i(3),
                Value::Real(1_800_000.0)
            ],
            vec![s("cpuidle"), s("cpu_idle"), i(3), Value::Real(2.0)],
        ]
    );
}

#[test]
fn ftrace_stats_become_upstreams_stats() {
    // TracePacket.ftrace_stats is 34: {phase 1, cpu_stats 2 {cpu 1,
    // entries 2, overrun 3}, ftrace_parse_errors 9}.
    let stats = |phase: u32, entries: u64, overrun: u64, errors: &[i32]| {
        packet(|p| {
            let mut st = p.message().begin_nested(34);
            st.append_uint32(1, phase);
            {
                let mut c = st.begin_nested(2);
                c.append_uint64(1, 1);
                c.append_uint64(2, entries);
                c.append_uint64(3, overrun);
            }
            for e in errors {
                st.append_int32(9, *e);
            }
        })
    };
    let bytes = trace(&[stats(1, 10, 2, &[]), stats(2, 25, 7, &[12, 12])]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT name, idx, value FROM stats WHERE name GLOB 'ftrace_cpu_overrun*' OR name GLOB 'ftrace_cpu_entries*' ORDER BY name"
        ),
        vec![
            vec![s("ftrace_cpu_entries_begin"), i(1), i(10)],
            vec![s("ftrace_cpu_entries_delta"), i(1), i(15)],
            vec![s("ftrace_cpu_entries_end"), i(1), i(25)],
            vec![s("ftrace_cpu_overrun_begin"), i(1), i(2)],
            vec![s("ftrace_cpu_overrun_delta"), i(1), i(5)],
            vec![s("ftrace_cpu_overrun_end"), i(1), i(7)],
        ]
    );
    assert_eq!(stat(&tp, "ftrace_abi_errors_skipped_zero_data_length"), 2);
}

#[test]
fn lost_events_mark_the_cpu() {
    let bytes = trace(&[bundle(4, |b| {
        b.set_lost_events(true);
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT idx, value FROM stats WHERE name = 'ftrace_cpu_has_data_loss'"
        ),
        vec![vec![i(4), i(1)]]
    );
}

#[test]
fn to_ftrace_prints_the_kernels_text_lines() {
    let bytes = trace(&[
        release("4.19.0"),
        bundle(1, |b| {
            switch(b, 1_500_000_123, ("swapper/1", 0), 0, ("my-task", 10));
            switch(b, 2_000_001_000, ("my-task", 10), 0x81, ("swapper/1", 0));
            event(b, 2_000_002_000, 10)
                .begin_cpu_frequency()
                .set_state(300)
                .set_cpu_id(1);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(&tp, "SELECT to_ftrace(id) FROM ftrace_event ORDER BY id"),
        vec![
            vec![s(
                "          <idle>-0     (-----) [001] .... 1.500000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my-task next_pid=10 next_prio=110"
            )],
            vec![s(
                "         my_task-10    (-----) [001] .... 2.000001: sched_switch: prev_comm=my-task prev_pid=10 prev_prio=120 prev_state=S|I ==> next_comm=swapper/1 next_pid=0 next_prio=110"
            )],
            vec![s(
                "         my_task-10    (-----) [001] .... 2.000002: cpu_frequency: state=300 cpu_id=1"
            )],
        ]
    );
    assert!(tp.query("SELECT to_ftrace(99)").is_err());
}

#[test]
fn events_the_generated_code_lacks_decode_by_upstreams_schema() {
    // cgroup_attach_task (FtraceEvent field 67: dst_root 1, dst_id 2,
    // pid 3, comm 4, cname 5, dst_level 6, dst_path 7) is not kept by the
    // generated code; a field number upstream does not declare is skipped.
    let bytes = trace(&[bundle(0, |b| {
        let mut e = event(b, 100, 5);
        let mut c = e.message().begin_nested(67);
        c.append_int32(1, -1);
        c.append_int32(3, 77);
        c.append_string(4, "worker");
        c.append_uint32(40, 9);
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT f.name, a.key, a.value_type, a.display_value FROM ftrace_event f
             JOIN args a USING (arg_set_id) ORDER BY a.id"
        ),
        vec![
            vec![s("cgroup_attach_task"), s("dst_root"), s("int"), s("-1")],
            vec![s("cgroup_attach_task"), s("pid"), s("int"), s("77")],
            vec![s("cgroup_attach_task"), s("comm"), s("string"), s("worker")],
        ]
    );
}

#[test]
fn a_new_task_starts_runnable_woken_by_its_creator() {
    let bytes = trace(&[bundle(0, |b| {
        switch(b, 100, ("swapper/0", 0), 0, ("parent", 10));
        event(b, 150, 10)
            .begin_task_newtask()
            .set_pid(11)
            .set_comm("child")
            .set_clone_flags(0);
        switch(b, 200, ("parent", 10), 1, ("child", 11));
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ts.ts, ts.dur, ts.state, w.tid, ts.irq_context, ts.waker_id IS NOT NULL
             FROM thread_state ts JOIN thread t USING (utid)
             LEFT JOIN thread w ON w.utid = ts.waker_utid WHERE t.tid = 11 ORDER BY ts.ts"
        ),
        vec![
            vec![i(150), i(50), s("R"), i(10), i(0), i(1)],
            vec![i(200), i(-1), s("Running"), Value::Null, Value::Null, i(0)],
        ]
    );
}

#[test]
fn ftrace_before_tracing_started_is_dropped_and_before_valid_data_raw_only() {
    // Tracing started at 150 (the service says so later in the stream);
    // CPU 1's data is valid from 250 (its first bundle's previous end).
    let bytes = trace(&[
        bundle(0, |b| {
            switch(b, 100, ("swapper/0", 0), 0, ("early", 10));
            switch(b, 200, ("early", 10), 1, ("mid", 20));
            event(b, 220, 20)
                .begin_cpu_frequency()
                .set_state(5)
                .set_cpu_id(0);
            switch(b, 300, ("mid", 20), 1, ("late", 30));
        }),
        bundle(1, |b| {
            b.set_previous_bundle_end_timestamp(250);
        }),
        packet(|p| {
            p.set_timestamp(150);
            p.begin_service_event().set_tracing_started(true);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(stat(&tp, "ftrace_packet_before_tracing_start"), 1);
    // Before 250 an event only gets its raw row (a typed sched_switch,
    // whose row its parser writes, not even that, as upstream); 300 opens
    // the one slice.
    assert_eq!(
        rows(&tp, "SELECT ts, name FROM ftrace_event ORDER BY ts"),
        vec![
            vec![i(220), s("cpu_frequency")],
            vec![i(300), s("sched_switch")]
        ]
    );
    assert_eq!(rows(&tp, "SELECT COUNT(*) FROM counter"), vec![vec![i(0)]]);
    assert_eq!(
        rows(&tp, "SELECT ts, dur FROM sched ORDER BY ts"),
        vec![vec![i(300), i(-1)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT int_value FROM metadata WHERE name = 'ftrace_latest_data_start_ns'"
        ),
        vec![vec![i(250)]]
    );
}
