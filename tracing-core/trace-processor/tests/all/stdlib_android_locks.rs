//! More of the standard library's `android.*` modules on traces built
//! here: Java monitor contention and its chains
//! (`android.monitor_contention`), an app startup's time to initial and
//! full display (`android.startup.time_to_display`), wakeups and failed
//! suspends (`android.wakeups`), a startup's opinionated breakdown
//! (`android.startup.startup_breakdowns`), blocking calls per CUJ frame
//! (`android.frame_blocking_calls.blocking_calls_aggregation`), the slices
//! inside a CUJ on each thread (`android.cujs.slices`) and a bug
//! report's `showmap` sections (`android.dumpsys.show_map`).

use zerotrace_protos::protos::{FtraceEvent, FtraceEventBundle};
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.ftrace_events`.
const FTRACE_EVENTS: u32 = 1;
/// `TracePacket.process_tree`.
const PROCESS_TREE: u32 = 2;

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

/// A process tree of (pid, name) and threads of (tid, pid, name).
fn processes(list: &[(i32, &str)], threads: &[(i32, i32, &str)]) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(1);
        let mut tree = p.message().begin_nested(PROCESS_TREE);
        for &(pid, name) in list {
            let mut proc_ = tree.begin_nested(1);
            proc_.append_int32(1, pid);
            proc_.append_int32(2, 1);
            proc_.append_string(3, name);
        }
        for &(tid, pid, name) in threads {
            let mut thread = tree.begin_nested(2);
            thread.append_int32(1, tid);
            thread.append_string(2, name);
            thread.append_int32(3, pid);
        }
    })
}

/// One ftrace bundle on CPU 0, written by `f`.
fn bundle(f: impl FnOnce(&mut FtraceEventBundle<'_>)) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        let mut b = FtraceEventBundle::from_message(p.message().begin_nested(FTRACE_EVENTS));
        b.set_cpu(0);
        f(&mut b);
    })
}

fn event<'a>(b: &'a mut FtraceEventBundle<'_>, ts: u64, pid: u32) -> FtraceEvent<'a> {
    let mut e = b.add_event();
    e.set_timestamp(ts);
    e.set_pid(pid);
    e
}

/// atrace lines as ftrace `print` events of (ts, tid, line).
fn prints(events: &[(u64, u32, &str)]) -> Vec<u8> {
    bundle(|b| {
        for &(ts, tid, line) in events {
            event(b, ts, tid)
                .begin_print()
                .set_buf(&format!("{line}\n"));
        }
    })
}

/// A context switch on CPU 0 at `ts` from `prev` (left in `prev_state`) to
/// `next`, each (comm, tid).
fn switch(
    b: &mut FtraceEventBundle<'_>,
    ts: u64,
    prev: (&str, i32),
    state: i64,
    next: (&str, i32),
) {
    let pid = u32::try_from(prev.1).expect("tid");
    event(b, ts, pid)
        .begin_sched_switch()
        .set_prev_comm(prev.0)
        .set_prev_pid(prev.1)
        .set_prev_prio(120)
        .set_prev_state(state)
        .set_next_comm(next.0)
        .set_next_pid(next.1)
        .set_next_prio(120);
}

const MAIN_BLOCKED: &str = "monitor contention with owner worker (21) at void com.a.B.run()(B.java:10) \
     waiters=0 blocking from void com.a.C.get()(C.java:20)";
const WORKER_BLOCKED: &str = "monitor contention with owner com.app (20) at int com.a.D.put(int)(D.java:5) \
     waiters=0 blocking from void com.a.E.go()(E.java:7)";

/// App com.app (pid 20): its main thread waits 100..400 on a lock the
/// worker (21) holds, inside `foo`'s acquire and held markers; the worker
/// waits 200..300 on a lock the main thread holds; the worker runs 100..250
/// and 350.. and sleeps between.
fn contention() -> TraceProcessor {
    let main_blocked = format!("B|20|{MAIN_BLOCKED}");
    let worker_blocked = format!("B|20|{WORKER_BLOCKED}");
    load(&[
        processes(
            &[(20, "com.app")],
            &[(20, 20, "com.app"), (21, 20, "worker")],
        ),
        prints(&[
            (50, 20, "B|20|foo_lock_acquire"),
            (60, 20, "E|20"),
            (100, 20, &main_blocked),
            (
                150,
                20,
                "B|20|Lock contention on a monitor lock (owner tid: 21)",
            ),
            (300, 20, "E|20"),
            (400, 20, "E|20"),
            (450, 20, "B|20|foo_lock_held"),
            (460, 20, "E|20"),
            (200, 21, &worker_blocked),
            (300, 21, "E|20"),
            // Not a contention: its child has a child.
            (
                500,
                20,
                "B|20|monitor contention with owner worker (21) at void a()(A.java:1) waiters=1 blocking from void b()(B.java:2)",
            ),
            (510, 20, "B|20|Lock contention on x"),
            (520, 20, "B|20|inner"),
            (530, 20, "E|20"),
            (540, 20, "E|20"),
            (550, 20, "E|20"),
        ]),
        bundle(|b| {
            switch(b, 100, ("swapper/0", 0), 0, ("worker", 21));
            switch(b, 250, ("worker", 21), 1, ("swapper/0", 0));
            switch(b, 350, ("swapper/0", 0), 0, ("worker", 21));
            switch(b, 1_000, ("worker", 21), 0, ("swapper/0", 0));
        }),
    ])
}

#[test]
fn contention_slice_names_are_read_into_their_parts() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    let got = rows(
        &tp,
        &format!(
            "INCLUDE PERFETTO MODULE android.monitor_contention;
             SELECT
               android_extract_android_monitor_contention_blocking_thread('{n}'),
               android_extract_android_monitor_contention_blocking_tid('{n}'),
               android_extract_android_monitor_contention_blocking_method('{n}'),
               android_extract_android_monitor_contention_short_blocking_method('{n}'),
               android_extract_android_monitor_contention_blocked_method('{n}'),
               android_extract_android_monitor_contention_short_blocked_method('{n}'),
               android_extract_android_monitor_contention_waiter_count('{n}'),
               android_extract_android_monitor_contention_blocking_src('{n}'),
               android_extract_android_monitor_contention_blocked_src('{n}')",
            n = WORKER_BLOCKED
        ),
    );
    assert_eq!(
        got,
        vec![vec![
            s("com.app"),
            i(20),
            s("int com.a.D.put(int)"),
            s("com.a.D.put"),
            s("void com.a.E.go()"),
            s("com.a.E.go"),
            i(0),
            s("D.java:5"),
            s("E.java:7"),
        ]]
    );
}

#[test]
fn contentions_name_both_threads_their_lock_and_their_chain() {
    let tp = contention();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.monitor_contention;
             SELECT ts, dur, monotonic_dur, short_blocking_method, short_blocked_method,
                    blocked_thread_name, blocked_thread_tid, is_blocked_thread_main,
                    blocking_thread_name, blocking_thread_tid, is_blocking_thread_main,
                    process_name, pid, waiter_count, lock_name
             FROM android_monitor_contention ORDER BY ts"
        ),
        vec![
            vec![
                i(100),
                i(300),
                Value::Null,
                s("com.a.B.run"),
                s("com.a.C.get"),
                s("com.app"),
                i(20),
                i(1),
                s("worker"),
                i(21),
                i(0),
                s("com.app"),
                i(20),
                i(0),
                s("foo"),
            ],
            vec![
                i(200),
                i(100),
                Value::Null,
                s("com.a.D.put"),
                s("com.a.E.go"),
                s("worker"),
                i(21),
                i(0),
                s("com.app"),
                i(20),
                i(1),
                s("com.app"),
                i(20),
                i(0),
                Value::Null,
            ],
        ]
    );
    // The worker's wait began while the main thread waited on the worker.
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, p.ts, k.ts FROM android_monitor_contention_chain c
             LEFT JOIN slice p ON p.id = c.parent_id
             LEFT JOIN slice k ON k.id = c.child_id ORDER BY c.ts"
        ),
        vec![
            vec![i(100), Value::Null, i(200)],
            vec![i(200), i(100), Value::Null],
        ]
    );
    // While the main thread waited, the worker ran, slept, then ran.
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, b.thread_state, b.thread_state_dur, b.thread_state_count
             FROM android_monitor_contention_chain_thread_state_by_txn b
             JOIN slice s USING (id) ORDER BY s.ts, b.thread_state"
        ),
        vec![
            vec![i(100), s("Running"), i(200), i(2)],
            vec![i(100), s("S"), i(100), i(1)],
        ]
    );
}

#[test]
fn time_to_display_ends_at_the_draw_of_the_first_and_the_fully_drawn_frame() {
    let tp = load(&[
        processes(&[(1, "system_server"), (20, "com.app")], &[]),
        prints(&[
            (1_000, 1, "S|1|launchingActivity#1|0"),
            (2_000, 20, "B|20|bindApplication"),
            (2_500, 20, "E|20"),
            (3_000, 20, "B|20|activityResume"),
            (3_100, 20, "E|20"),
            (4_100, 20, "B|20|Choreographer#doFrame"),
            (4_300, 20, "E|20"),
            (4_200, 22, "B|20|DrawFrame"),
            (4_500, 22, "E|20"),
            (4_000, 1, "B|1|launchingActivity#1:completed-cold:com.app"),
            (4_000, 1, "E|1"),
            (5_000, 1, "F|1|launchingActivity#1|0"),
            (6_000, 20, "B|20|reportFullyDrawn() for com.app"),
            (6_010, 20, "E|20"),
            (6_500, 20, "B|20|Choreographer#doFrame"),
            (6_600, 20, "E|20"),
            (6_550, 22, "B|20|DrawFrame"),
            (6_900, 22, "E|20"),
        ]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.startup.time_to_display;
             SELECT t.startup_id, time_to_initial_display, time_to_full_display,
                    ttid_frame_id, ttfd_frame_id, p.pid
             FROM android_startup_time_to_display t JOIN process p USING (upid)"
        ),
        vec![vec![i(1), i(3_500), i(5_900), i(1), i(2), i(20)]]
    );
}

/// `showmap`'s header and separator lines.
const SHOWMAP_HEAD: &str = " virtual                     shared   shared  private  private                   Anon      Shmem     File       Shared   Private
    size      RSS      PSS    clean    dirty    clean    dirty     swap  swapPSS HugePages PmdMapped PmdMapped  Hugetlb  Hugetlb    Locked   # object
-------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- ---- ------------------------------
";

#[test]
fn show_map_sections_give_each_processes_mappings() {
    let mut text = String::from(
        "========================================================\n\
         == dumpstate: 2024-01-01 00:00:00\n\
         ========================================================\n",
    );
    for (pid, name, first) in [
        (1835, "system_server", 7180),
        (2281, "systemui", 44),
        (3000, "last", 1),
    ] {
        text.push_str(&format!(
            "------ SHOW MAP {pid} ({name}) (showmap -q {pid}) ------\n{SHOWMAP_HEAD}"
        ));
        text.push_str(&format!(
            "    {first}     {first}     1469        0     5832        0     1348        0        0        0        0        0        0        0         1    1 [anon:dalvik-main space]\n"
        ));
        text.push_str("       4        4        2        0        4        0        0        0        0        0        0        0        0        0        0    1 /system/bin/app_process64\n");
        text.push_str("-------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- -------- ---- ------------------------------\n");
        text.push_str("    9999     9999     9999        0        0        0        0        0        0        0        0        0        0        0        0    2 TOTAL\n");
    }
    text.push_str("------ END ------\n");
    let tp = TraceProcessor::from_bytes(text.as_bytes()).expect("dumpstate");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.dumpsys.show_map;
             SELECT process_name, pid, vss_kb, rss_kb, pss_kb, shared_dirty_kb, private_dirty_kb,
                    locked_kb, mapping_count, mapped_object
             FROM android_dumpsys_show_map ORDER BY pid, vss_kb DESC"
        ),
        vec![
            vec![
                s("(system_server)"),
                i(1835),
                i(7180),
                i(7180),
                i(1469),
                i(5832),
                i(1348),
                i(1),
                i(1),
                s("[anon:dalvik-main"),
            ],
            vec![
                s("(system_server)"),
                i(1835),
                i(4),
                i(4),
                i(2),
                i(4),
                i(0),
                i(0),
                i(1),
                s("/system/bin/app_process64"),
            ],
            vec![
                s("(systemui)"),
                i(2281),
                i(44),
                i(44),
                i(1469),
                i(5832),
                i(1348),
                i(1),
                i(1),
                s("[anon:dalvik-main"),
            ],
            vec![
                s("(systemui)"),
                i(2281),
                i(4),
                i(4),
                i(2),
                i(4),
                i(0),
                i(0),
                i(1),
                s("/system/bin/app_process64"),
            ],
        ]
    );
}

#[test]
fn wakeups_take_their_attribution_backoff_and_one_row_per_cause() {
    let tp = load(&[
        processes(&[(1000, "system_server")], &[]),
        prints(&[
            (900, 1000, "N|1000|suspend_backoff|bad new short 1 1000"),
            (
                1_000,
                1000,
                "N|1000|wakeup_reason|1111 170 176a0000.mbox:440 dhdpcie_host_wake",
            ),
            (1_500, 1000, "N|1000|wakeup_attribution|1111 wifi"),
            (
                3_000,
                1000,
                "N|1000|wakeup_reason|2222 Abort: Pending Wakeup Sources: a b",
            ),
            (
                3_900,
                1000,
                "N|1000|suspend_backoff|good continue failed 2 0",
            ),
            (
                4_000,
                1000,
                "N|1000|wakeup_reason|3333 Abort: Last active Wakeup Source: wlan",
            ),
        ]),
    ]);
    let null = || Value::Null;
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.wakeups;
             SELECT ts, dur, on_device_attribution, type, item, suspend_quality,
                    backoff_state, backoff_reason, backoff_count, backoff_millis
             FROM android_wakeups"
        ),
        vec![
            vec![
                i(1_000),
                i(1_000_000_000),
                s("wifi"),
                s("normal"),
                s("176a0000.mbox"),
                s("bad"),
                s("new"),
                s("short"),
                i(1),
                i(1000),
            ],
            vec![
                i(3_000),
                i(0),
                null(),
                s("abort_pending"),
                s("a"),
                null(),
                null(),
                s("none"),
                null(),
                null(),
            ],
            vec![
                i(4_000),
                i(5_000_000_000),
                null(),
                s("abort_last_active"),
                s("wlan"),
                s("good"),
                s("continue"),
                s("failed"),
                i(2),
                i(0),
            ],
            vec![
                i(1_000),
                i(1_000_000_000),
                s("wifi"),
                s("normal"),
                s("dhdpcie_host_wake"),
                s("bad"),
                s("new"),
                s("short"),
                i(1),
                i(1000),
            ],
            vec![
                i(3_000),
                i(0),
                null(),
                s("abort_pending"),
                s("b"),
                null(),
                null(),
                s("none"),
                null(),
                null(),
            ],
        ]
    );
}

#[test]
fn a_startup_breaks_down_into_slices_thread_states_and_launch_delay() {
    let tp = load(&[
        processes(
            &[(1, "system_server"), (20, "com.app")],
            &[(20, 20, "com.app")],
        ),
        prints(&[
            (1_000, 1, "S|1|launchingActivity#1|0"),
            (2_000, 20, "B|20|bindApplication"),
            (2_100, 20, "B|20|binder transaction"),
            (2_200, 20, "E|20"),
            (2_500, 20, "E|20"),
            (3_000, 20, "B|20|activityStart"),
            (3_200, 20, "E|20"),
            (3_300, 20, "B|20|activityResume"),
            (3_400, 20, "E|20"),
            (4_000, 1, "B|1|launchingActivity#1:completed-cold:com.app"),
            (4_000, 1, "E|1"),
            (5_000, 1, "F|1|launchingActivity#1|0"),
        ]),
        bundle(|b| {
            switch(b, 1_500, ("swapper/0", 0), 0, ("com.app", 20));
            switch(b, 2_600, ("com.app", 20), 1, ("swapper/0", 0));
            switch(b, 2_900, ("swapper/0", 0), 0, ("com.app", 20));
            switch(b, 6_000, ("com.app", 20), 0, ("swapper/0", 0));
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.startup.startup_breakdowns;
             SELECT startup_id, ts, dur, reason, slice_id IS NOT NULL, thread_state_id IS NOT NULL
             FROM android_startup_opinionated_breakdown ORDER BY ts"
        ),
        vec![
            vec![i(1), i(1_000), i(500), s("launch_delay"), i(0), i(0)],
            vec![i(1), i(1_500), i(500), s("Running"), i(0), i(1)],
            vec![i(1), i(2_000), i(100), s("bind_application"), i(1), i(1)],
            vec![i(1), i(2_100), i(100), s("binder"), i(1), i(1)],
            vec![i(1), i(2_200), i(300), s("bind_application"), i(1), i(1)],
            vec![i(1), i(2_500), i(100), s("Running"), i(0), i(1)],
            vec![i(1), i(2_600), i(300), s("S"), i(0), i(1)],
            vec![i(1), i(2_900), i(100), s("Running"), i(0), i(1)],
            vec![i(1), i(3_000), i(200), s("activity_start"), i(1), i(1)],
            vec![i(1), i(3_200), i(100), s("Running"), i(0), i(1)],
            vec![i(1), i(3_300), i(100), s("activity_resume"), i(1), i(1)],
            vec![i(1), i(3_400), i(1_600), s("Running"), i(0), i(1)],
        ]
    );
}

/// A frame timeline packet at `ts` whose event is field `which` of
/// `FrameTimelineEvent`: (cookie, token, display token, pid, layer).
fn frame_timeline(ts: u64, which: u32, cookie: i64, token: i64, layer: &str) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        let mut e = p.message().begin_nested(76);
        let mut m = e.begin_nested(which);
        m.append_int64(1, cookie);
        m.append_int64(2, token);
        m.append_int64(3, token + 1000);
        m.append_int32(4, 10);
        m.append_string(5, layer);
    })
}

/// The end of frame timeline slice `cookie`.
fn frame_timeline_end(ts: u64, cookie: i64) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        p.message()
            .begin_nested(76)
            .begin_nested(5)
            .append_int64(1, cookie);
    })
}

/// SystemUI (pid 10, render thread 11) with jank CUJ `J<SHADE>` over two
/// frames (vsync 101 and 102, layer 3) on the frame timeline, an `inflate`
/// on the UI thread and a lock contention on the render thread.
fn cuj_with_frames() -> TraceProcessor {
    let mut packets = vec![
        processes(
            &[(10, "com.android.systemui")],
            &[(10, 10, "com.android.systemui"), (11, 10, "RenderThread")],
        ),
        prints(&[
            (1_000, 10, "S|10|J<SHADE>|1"),
            (1_100, 10, "B|10|J<SHADE>#FT#layerId#3"),
            (1_100, 10, "E|10"),
            (1_200, 10, "B|10|J<SHADE>#FT#beginVsync#100"),
            (1_200, 10, "E|10"),
            (1_300, 10, "B|10|J<SHADE>#FT#endVsync#120"),
            (1_300, 10, "E|10"),
            (1_400, 10, "B|10|J<SHADE>#UIThread"),
            (1_400, 10, "E|10"),
            (2_000, 10, "B|10|Choreographer#doFrame 101"),
            (2_800, 10, "B|10|postAndWait"),
            (2_900, 10, "E|10"),
            (3_000, 10, "E|10"),
            (2_500, 11, "B|10|DrawFrame 101"),
            (3_500, 11, "E|10"),
            (3_100, 10, "B|10|inflate"),
            (3_300, 10, "E|10"),
            (
                3_600,
                11,
                "B|10|Lock contention on thread list lock (owner tid: 12)",
            ),
            (4_100, 11, "E|10"),
            (4_000, 10, "B|10|Choreographer#doFrame 102"),
            (4_800, 10, "B|10|postAndWait"),
            (4_900, 10, "E|10"),
            (5_000, 10, "E|10"),
            (4_500, 11, "B|10|DrawFrame 102"),
            (5_500, 11, "E|10"),
            (9_000, 10, "F|10|J<SHADE>|1"),
        ]),
    ];
    for (cookie, token, start, end) in [(1, 101, 2_000, 3_500), (3, 102, 4_000, 5_500)] {
        packets.push(frame_timeline(start, 3, cookie, token, "app#3"));
        packets.push(frame_timeline_end(end, cookie));
        packets.push(frame_timeline(start, 4, cookie + 1, token, "app#3"));
        packets.push(frame_timeline_end(end, cookie + 1));
    }
    load(&packets)
}

#[test]
fn blocking_calls_count_in_each_cuj_frame_stretched_to_the_next() {
    let tp = cuj_with_frames();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.frame_blocking_calls.blocking_calls_aggregation;
             SELECT frame_id, ts, ts_end, layer_id, cuj_name FROM _extended_frame_boundary"
        ),
        vec![
            vec![i(101), i(2_000), i(4_000), i(3), s("SHADE")],
            vec![i(102), i(4_000), i(5_500), i(3), s("SHADE")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, ts, dur, frame_id, cuj_id FROM _blocking_calls_frame_cuj ORDER BY ts"
        ),
        vec![
            vec![s("postAndWait"), i(2_800), i(100), i(101), i(1)],
            vec![s("inflate"), i(3_100), i(200), i(101), i(1)],
            vec![
                s("Lock contention on thread list lock <...>"),
                i(3_600),
                i(400),
                i(101),
                i(1)
            ],
            vec![
                s("Lock contention on thread list lock <...>"),
                i(4_000),
                i(100),
                i(102),
                i(1)
            ],
            vec![s("postAndWait"), i(4_800), i(100), i(102), i(1)],
        ]
    );
}

#[test]
fn cuj_slices_are_those_overlapping_its_boundaries_on_each_thread() {
    let tp = cuj_with_frames();
    let names = |table: &str| {
        rows(
            &tp,
            &format!(
                "INCLUDE PERFETTO MODULE android.cujs.slices;
                 SELECT cuj_id, name, ts, ts_end FROM {table} ORDER BY ts, name"
            ),
        )
    };
    let row = |name: &str, ts: i64, end: i64| vec![i(1), s(name), i(ts), i(end)];
    assert_eq!(
        names("_android_jank_cuj_main_thread_slice"),
        vec![
            row("Choreographer#doFrame 101", 2_000, 3_000),
            row("postAndWait", 2_800, 2_900),
            row("inflate", 3_100, 3_300),
            row("Choreographer#doFrame 102", 4_000, 5_000),
            row("postAndWait", 4_800, 4_900),
        ]
    );
    let contention = "Lock contention on thread list lock (owner tid: 12)";
    assert_eq!(
        names("_android_jank_cuj_render_thread_slice"),
        vec![
            row("DrawFrame 101", 2_500, 3_500),
            row(contention, 3_600, 4_100),
            row("DrawFrame 102", 4_500, 5_500),
        ]
    );
    // Every thread of the app: both threads' slices.
    assert_eq!(names("_android_jank_cuj_slice").len(), 8);
    // No SurfaceFlinger in this trace.
    assert_eq!(
        names("_android_jank_cuj_sf_slice"),
        Vec::<Vec<Value>>::new()
    );
}
