//! The standard library's modules over Android's system services, on
//! traces built here and checked against what each trace says: thread
//! naming and creation spam (`android.thread`), the freezer
//! (`android.freezer`), broadcasts (`android.broadcasts`), jobs
//! (`android.job_scheduler`), service binds (`android.services`), app
//! process starts (`android.app_process_starts`), ProfilingManager's cold
//! starts (`android.profiling_manager.*`), screen, charging and doze
//! states (`android.screen_state`, `android.battery.*`), bitmaps
//! (`android.bitmaps`), f2fs IO (`android.io`), CPU per uid
//! (`android.cpu.cpu_per_uid`), statsd atoms (`android.statsd`) and
//! screenshots (`android.screenshots`).

use zerotrace_protos::protos::track_event;
use zerotrace_protos::protos::{FtraceEvent, FtraceEventBundle};
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.ftrace_events`.
const FTRACE_EVENTS: u32 = 1;
/// `TracePacket.process_tree`.
const PROCESS_TREE: u32 = 2;
/// `FtraceEvent.f2fs_write_end`.
const F2FS_WRITE_END: u32 = 273;
/// `TracePacket.packages_list`.
const PACKAGES_LIST: u32 = 47;
/// `TracePacket.cpu_per_uid_data`.
const CPU_PER_UID_DATA: u32 = 119;
/// `TracePacket.statsd_atom`.
const STATSD_ATOM: u32 = 84;

fn r(v: f64) -> Value {
    Value::Real(v)
}

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

/// A process tree of (pid, name).
fn processes(list: &[(i32, &str)]) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(1);
        let mut tree = p.message().begin_nested(PROCESS_TREE);
        for &(pid, name) in list {
            let mut proc_ = tree.begin_nested(1);
            proc_.append_int32(1, pid);
            proc_.append_int32(2, 1);
            proc_.append_string(3, name);
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

/// A track descriptor `uuid` of process `pid` called `name`.
fn process_track(uuid: u64, pid: i32, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(2);
        p.set_timestamp(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(uuid);
        td.begin_process().set_pid(pid).set_process_name(name);
    })
}

/// A track `uuid` called `name` under track `parent`.
fn child_track(uuid: u64, parent: u64, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(2);
        p.set_timestamp(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(uuid);
        td.set_parent_uuid(parent);
        td.set_name(name);
    })
}

/// A track event of `kind` on track `uuid` at `ts`.
fn track_event(ts: u64, uuid: u64, kind: track_event::Type, name: Option<&str>) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(2);
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.set_type(kind);
        e.set_track_uuid(uuid);
        if let Some(n) = name {
            e.set_name(n);
        }
    })
}

/// Slice `name` on track `uuid` from `ts` to `end`.
fn slice(ts: u64, end: u64, uuid: u64, name: &str) -> [Vec<u8>; 2] {
    [
        track_event(ts, uuid, track_event::Type::SliceBegin, Some(name)),
        track_event(end, uuid, track_event::Type::SliceEnd, None),
    ]
}

#[test]
fn thread_names_lose_their_numbers_and_creation_bursts_are_counted() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    for (name, want) in [
        ("RenderThread-1[123]", "RenderThread"),
        ("binder:5543_E", "binder"),
        ("pool-3-thread-5", "pool"),
        ("MainThread", "MainThread"),
        ("kworker/u16:3", "kworker"),
        ("Worker 0x1f2e3d", "Worker"),
    ] {
        assert_eq!(
            rows(
                &tp,
                &format!(
                    "INCLUDE PERFETTO MODULE android.thread;
                     SELECT android_standardize_thread_name('{name}')"
                )
            ),
            vec![vec![s(want)]],
            "{name}"
        );
    }
    // Process 10 starts three pool threads and a binder thread; within
    // 1000 ns of a start it starts at most two pool threads.
    let tp = load(&[
        processes(&[(10, "com.app")]),
        bundle(|b| {
            for (ts, tid, comm) in [
                (100u64, 11, "pool-1-thread-1"),
                (600, 12, "pool-1-thread-2"),
                (2_000, 13, "pool-2-thread-1"),
                (2_100, 14, "binder:10_1"),
            ] {
                event(b, ts, 10)
                    .begin_task_newtask()
                    .set_pid(tid)
                    .set_comm(comm)
                    .set_clone_flags(0x0001_0000);
            }
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.thread;
             SELECT process_name, thread_name_prefix, max_count_per_sec
             FROM _android_thread_creation_spam_per_thread(NULL, 1e3)
             ORDER BY thread_name_prefix"
        ),
        vec![
            vec![s("com.app"), s("binder"), i(1)],
            vec![s("com.app"), s("pool"), i(2)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT process_name, max_count_per_sec
             FROM _android_thread_creation_spam_per_process(NULL, 1e3)"
        ),
        vec![vec![s("com.app"), i(2)]]
    );
}

#[test]
fn a_freeze_lasts_until_the_processes_next_freezer_event() {
    let tp = load(&[
        processes(&[(1000, "system_server"), (20, "com.app")]),
        prints(&[
            (100, 1000, "B|1000|Freeze com.app:20"),
            (101, 1000, "E|1000"),
            (500, 1000, "B|1000|Unfreeze com.app:20 4"),
            (502, 1000, "E|1000"),
            (800, 1000, "B|1000|Freeze com.app:20"),
            (801, 1000, "E|1000"),
            // A pid no process had: left out.
            (850, 1000, "B|1000|Freeze gone:77"),
            (851, 1000, "E|1000"),
            (1_000, 1000, "B|1000|end"),
            (1_000, 1000, "E|1000"),
        ]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.freezer;
             SELECT p.pid, f.pid, ts, dur, unfreeze_reason_int, unfreeze_reason_str
             FROM android_freezer_events f JOIN process p USING (upid) ORDER BY ts"
        ),
        vec![
            vec![i(20), i(20), i(100), i(400), i(4), s("bind_service")],
            vec![i(20), i(20), i(800), i(200), Value::Null, Value::Null],
        ]
    );
}

#[test]
fn broadcasts_are_the_scheduled_slices_under_a_running_process_queue() {
    let mut packets = vec![
        processes(&[(1000, "system_server"), (20, "com.app")]),
        process_track(1, 1000, "system_server"),
        child_track(2, 1, "BroadcastQueue.mRunning[3]"),
    ];
    packets.extend(slice(100, 900, 2, "pq7 20:com.app/u0a55 running"));
    packets.extend(slice(
        200,
        300,
        2,
        "r1 android.intent.action.SCREEN_ON/u0 scheduled",
    ));
    packets.extend(slice(400, 450, 2, "r2 com.app.PING/u0 scheduled"));
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.broadcasts;
             SELECT record_id, intent_action, process_name, b.pid, p.name,
                    process_queue_id, queue_id, ts, dur
             FROM _android_broadcasts_minsdk_u b JOIN process p USING (upid) ORDER BY ts"
        ),
        vec![
            vec![
                s("r1"),
                s("android.intent.action.SCREEN_ON"),
                s("com.app"),
                i(20),
                s("com.app"),
                s("pq7"),
                i(3),
                i(200),
                i(100),
            ],
            vec![
                s("r2"),
                s("com.app.PING"),
                s("com.app"),
                i(20),
                s("com.app"),
                s("pq7"),
                i(3),
                i(400),
                i(50),
            ],
        ]
    );
}

#[test]
fn jobs_are_read_from_system_servers_job_scheduler_track() {
    let mut packets = vec![
        process_track(1, 1000, "system_server"),
        child_track(2, 1, "JobScheduler"),
        child_track(3, 1, "Other"),
    ];
    packets.extend(slice(100, 400, 2, "*job*<10050>com.app/.SyncService#7#"));
    packets.extend(slice(150, 160, 3, "*job*<10051>other/.Svc#8#"));
    // Still running at the end of the trace (1000).
    packets.push(track_event(
        600,
        2,
        track_event::Type::SliceBegin,
        Some("*job*<1000>android/.Idle#-3#"),
    ));
    packets.extend(slice(1_000, 1_000, 3, "end"));
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.job_scheduler;
             SELECT job_id, uid, package_name, job_service_name, ts, dur
             FROM android_job_scheduler_events ORDER BY ts"
        ),
        vec![
            vec![
                i(7),
                i(10_050),
                s("com.app"),
                s(".SyncService"),
                i(100),
                i(300)
            ],
            vec![i(-3), i(1000), s("android"), s(".Idle"), i(600), i(400)],
        ]
    );
}

#[test]
fn a_service_bind_joins_its_request_and_its_receipt_by_bind_sequence() {
    let tp = load(&[
        processes(&[(1000, "system_server"), (20, "com.app")]),
        prints(&[
            (100, 1001, "B|1000|requestServiceBinding: bindSeq=5 intent"),
            (100, 1001, "E|1000"),
            (110, 1001, "B|1000|binder transaction async"),
            (110, 1001, "E|1000"),
            // A request not followed by a transaction binds nothing.
            (120, 1001, "B|1000|requestServiceBinding: bindSeq=6 intent"),
            (120, 1001, "E|1000"),
            (
                200,
                20,
                "B|20|serviceBind: token=ServiceRecord{ab12 u0 com.app/.Svc} act=a.BIND \
                 cmp=com.app/.Svc flg=0x4 bindSeq=5}",
            ),
            (260, 20, "E|20"),
            (
                300,
                20,
                "B|20|serviceBind: token=ServiceRecord{cd34 u0 com.app/.Svc} act=a.BIND \
                 cmp=com.app/.Svc flg=0x4 bindSeq=6}",
            ),
            (310, 20, "E|20"),
        ]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.services;
             SELECT server_ts, server_dur, token, act, cmp, flg, bind_seq, client_process
             FROM android_service_bindings"
        ),
        vec![vec![
            i(200),
            i(60),
            s("ab12"),
            s("a.BIND"),
            s("com.app/.Svc"),
            s("0x4"),
            i(5),
            Value::Null,
        ]]
    );
}

#[test]
fn app_process_starts_say_what_the_process_was_started_for() {
    let tp = load(&[
        processes(&[(1000, "system_server"), (20, "com.app"), (30, "com.prov")]),
        prints(&[
            (50, 1000, "B|1000|Start proc: com.app"),
            (60, 1000, "E|1000"),
            (100, 1000, "B|1000|Start proc: com.app"),
            (150, 1000, "E|1000"),
            (120, 1000, "B|1000|Start proc: com.prov"),
            (130, 1000, "E|1000"),
            (200, 20, "B|20|bindApplication"),
            (300, 20, "E|20"),
            (310, 20, "B|20|performCreate:com.app.MainActivity"),
            (400, 20, "E|20"),
            (500, 30, "B|30|bindApplication"),
            (580, 30, "E|30"),
        ]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.app_process_starts;
             SELECT process_name, pid, intent, reason, proc_start_ts, proc_start_dur,
                    bind_app_ts, bind_app_dur, intent_ts, intent_dur, total_dur
             FROM android_app_process_starts ORDER BY process_name"
        ),
        vec![
            vec![
                s("com.app"),
                i(20),
                s("com.app.MainActivity"),
                s("activity"),
                i(100),
                i(50),
                i(200),
                i(100),
                i(310),
                i(90),
                i(300),
            ],
            vec![
                s("com.prov"),
                i(30),
                Value::Null,
                s("provider"),
                i(120),
                i(10),
                i(500),
                i(80),
                Value::Null,
                Value::Null,
                i(460),
            ],
        ]
    );
}

#[test]
fn cold_starts_run_from_bind_application_to_the_first_frame_and_full_draw() {
    let tp = load(&[
        processes(&[(20, "com.app")]),
        prints(&[
            (100, 20, "B|20|bindApplication"),
            (200, 20, "E|20"),
            (300, 20, "B|20|Choreographer#doFrame 1"),
            (350, 20, "E|20"),
            (400, 20, "B|20|Choreographer#doFrame 2"),
            (420, 20, "E|20"),
            (600, 20, "B|20|reportFullyDrawn() for com.app"),
            (610, 20, "E|20"),
        ]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.profiling_manager.startup;
             SELECT ts, name, dur, startup_checkpoint FROM android_profiling_manager_cold_startup
             ORDER BY name"
        ),
        vec![
            vec![i(100), s("app_startup_ttff"), i(250), s("TTFF")],
            vec![i(100), s("app_startup_tti"), i(510), s("TTI")],
        ]
    );
    // Not inclusive: to the end slice's start; no end: a NULL duration.
    assert_eq!(
        rows(
            &tp,
            "SELECT name, ts, dur FROM _android_generate_start_to_end_slices(
               'Choreographer#doFrame*', 'reportFullyDrawn*', FALSE) ORDER BY ts"
        ),
        vec![
            vec![s("Choreographer#doFrame 1"), i(300), i(300)],
            vec![s("Choreographer#doFrame 2"), i(400), i(200)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, dur FROM _android_generate_start_to_end_slices(
               'reportFullyDrawn*', 'bindApplication', TRUE)"
        ),
        vec![vec![s("reportFullyDrawn() for com.app"), Value::Null]]
    );
}

#[test]
fn screen_charging_and_doze_states_cover_the_trace() {
    let tp = load(&[prints(&[
        (100, 10, "C|10|ScreenState|2"),
        (300, 10, "C|10|ScreenState|1"),
        (200, 10, "C|10|BatteryStatus|2"),
        (400, 10, "C|10|BatteryStatus|5"),
        (150, 10, "C|10|DozeDeepState|0"),
        (700, 10, "C|10|DozeDeepState|5"),
        (150, 10, "C|10|DozeLightState|4"),
        (160, 10, "C|10|DozeLightState|3"),
        (1_000, 10, "C|10|other|1"),
    ])]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.screen_state;
             SELECT id, ts, dur, simple_screen_state, short_screen_state, screen_state
             FROM android_screen_state ORDER BY ts"
        ),
        vec![
            vec![i(1), i(100), i(200), s("on"), s("on"), s("Screen on")],
            vec![i(2), i(300), i(700), s("off"), s("off"), s("Screen off")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.battery.charging_states;
             SELECT id, ts, dur, short_charging_state, charging_state
             FROM android_charging_states ORDER BY ts"
        ),
        vec![
            vec![i(1), i(100), i(100), s("unknown"), s("Unknown")],
            vec![i(2), i(200), i(200), s("charging"), s("Charging")],
            vec![i(3), i(400), i(600), s("full"), s("Full")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.battery.doze;
             SELECT ts, dur, deep_idle_state FROM android_deep_idle_state ORDER BY ts"
        ),
        vec![
            vec![i(150), i(550), s("active")],
            vec![i(700), i(300), s("idle")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, light_idle_state FROM android_light_idle_state ORDER BY ts"
        ),
        vec![
            vec![i(150), i(10), s("idle")],
            vec![i(160), i(840), s("unmapped")],
        ]
    );
}

#[test]
fn bitmap_memory_and_count_are_held_per_process_and_intersected() {
    let tp = load(&[
        processes(&[(20, "com.app")]),
        prints(&[
            (100, 20, "C|20|Bitmap Memory|1000"),
            (105, 20, "C|20|Bitmap Count|1"),
            (200, 20, "C|20|Bitmap Memory|3000"),
            (205, 20, "C|20|Bitmap Count|2"),
            (1_000, 20, "C|20|other|0"),
        ]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.bitmaps;
             SELECT ts, dur, value FROM android_bitmap_memory ORDER BY ts"
        ),
        vec![
            vec![i(100), i(100), r(1000.0)],
            vec![i(200), i(800), r(3000.0)]
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT process_name, ts, dur, bitmap_memory, bitmap_count
             FROM android_bitmap_counters_per_process ORDER BY ts"
        ),
        vec![
            vec![s("com.app"), i(105), i(95), r(1000.0), r(1.0)],
            vec![s("com.app"), i(200), i(5), r(3000.0), r(1.0)],
            vec![s("com.app"), i(205), i(795), r(3000.0), r(2.0)],
        ]
    );
}

#[test]
fn f2fs_counters_and_writes_are_summed() {
    let tp = load(&[
        processes(&[(20, "com.app")]),
        prints(&[
            (100, 20, "C|20|f2fs[sda].write_bytes|10"),
            (300, 20, "C|20|f2fs[sda].write_bytes|30"),
        ]),
        bundle(|b| {
            for (ts, ino, copied) in [(400u64, 7u64, 4096u64), (500, 7, 100), (600, 8, 1)] {
                let mut e = event(b, ts, 20);
                let mut w = e.message().begin_nested(F2FS_WRITE_END);
                w.append_uint64(1, 42);
                w.append_uint64(2, ino);
                w.append_uint32(4, 4096);
                w.append_uint64(5, copied);
            }
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.io;
             SELECT name, sum, max, min, dur, count, avg FROM _android_io_f2fs_counter_stats"
        ),
        vec![vec![
            s("write_bytes"),
            r(40.0),
            r(30.0),
            r(10.0),
            i(200),
            i(2),
            r(20.0)
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT tid, process_name, ino, dev, bytes, write_count
             FROM _android_io_f2fs_write_stats ORDER BY ino"
        ),
        vec![
            vec![i(20), s("com.app"), i(7), i(42), i(4196), i(2)],
            vec![i(20), s("com.app"), i(8), i(42), i(1), i(1)],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT * FROM _android_io_f2fs_aggregate_write_stats"),
        vec![vec![i(3), i(1), i(4197), i(1), i(2), i(1)]]
    );
}

#[test]
fn cpu_per_uid_tracks_name_their_package_and_counters_give_cpu_shares() {
    let packages = packet(|p| {
        p.set_timestamp(1);
        let mut m = p.message().begin_nested(PACKAGES_LIST);
        let mut info = m.begin_nested(1);
        info.append_string(1, "com.app");
        info.append_uint64(2, 10_050);
    });
    let cpu = |ts: u64, clear: bool, times: &[u64]| {
        packet(|p| {
            p.set_timestamp(ts);
            p.set_trusted_packet_sequence_id(1);
            if clear {
                p.set_incremental_state_cleared(true);
            }
            let mut m = p.message().begin_nested(CPU_PER_UID_DATA);
            if clear {
                m.append_uint32(1, 1);
            }
            m.append_uint32(2, 1000);
            m.append_uint32(2, 1_010_050);
            for t in times {
                m.append_uint64(3, *t);
            }
        })
    };
    let tp = load(&[
        packages,
        cpu(1_000_000, true, &[10, 20]),
        cpu(3_000_000, false, &[1, 4]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.cpu.cpu_per_uid;
             SELECT uid, cluster, total_cpu_millis, package_name
             FROM android_cpu_per_uid_track ORDER BY uid"
        ),
        vec![
            vec![i(1000), i(0), i(1), Value::Null],
            vec![i(1_010_050), i(0), i(4), s("com.app")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.uid, c.ts, c.dur, c.diff_ms, c.cpu_ratio
             FROM android_cpu_per_uid_counter c
             JOIN android_cpu_per_uid_track t ON t.id = c.track_id ORDER BY t.uid"
        ),
        vec![
            vec![i(1000), i(1_000_000), i(2_000_000), r(1.0), r(0.5)],
            vec![i(1_010_050), i(1_000_000), i(2_000_000), r(4.0), r(2.0)],
        ]
    );
}

#[test]
fn statsd_atoms_and_screenshots_are_their_slices() {
    let atom = packet(|p| {
        p.set_timestamp(500);
        let mut m = p.message().begin_nested(STATSD_ATOM);
        let mut atom = m.begin_nested(1);
        atom.begin_nested(10).append_int64(1, 42);
    });
    // `TrackEvent.screenshot` (field 50) holds the image (field 1).
    let shot = |ts: u64, category: &str| {
        packet(|p| {
            p.set_trusted_packet_sequence_id(2);
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_type(track_event::Type::Instant);
            e.set_track_uuid(9);
            e.set_name("Screenshot");
            e.add_categories(category);
            e.message().begin_nested(50).append_bytes(1, &[0xff, 0xd8]);
        })
    };
    let tp = load(&[
        atom,
        child_track(9, 0, "Screenshots"),
        shot(700, "android_screenshot"),
        shot(800, "other"),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.statsd;
             SELECT ts, dur, name, extract_arg(arg_set_id, 'field_1')
             FROM android_statsd_atoms"
        ),
        vec![vec![i(500), i(0), s("atom_10"), i(42)]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.screenshots;
             SELECT ts, dur, name FROM android_screenshots"
        ),
        vec![vec![i(700), i(0), s("Screenshot")]]
    );
}
