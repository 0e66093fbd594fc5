//! The standard library's Android user-journey modules on atrace traces
//! built here: SystemUI's jank and latency CUJs (`android.cujs.*`), app
//! startups (`android.startup.startups`), Automotive user switches
//! (`android.auto.multiuser`) and ART garbage collections
//! (`android.garbage_collection`), checked against what each trace says.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.process_tree`.
const PROCESS_TREE: u32 = 2;

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

/// atrace lines as ftrace `print` events of (ts, tid, line).
fn prints(events: &[(u64, u32, &str)]) -> Vec<u8> {
    let events = events.to_vec();
    packet(move |p| {
        let m = p.message();
        let mut bundle = m.begin_nested(1);
        bundle.append_uint32(1, 0);
        for (ts, tid, line) in events {
            let mut e = bundle.begin_nested(2);
            e.append_uint64(1, ts);
            e.append_uint32(2, tid);
            e.begin_nested(3).append_string(2, &format!("{line}\n"));
        }
    })
}

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

/// SystemUI (pid 10) with three jank CUJs and one latency CUJ.
fn sysui() -> TraceProcessor {
    load(&[
        processes(&[(10, "com.android.systemui"), (30, "other.app")]),
        prints(&[
            // A completed CUJ with all its markers, on the UI thread 10.
            (1_000, 10, "S|10|J<SHADE>|1"),
            (1_000, 10, "B|10|J<SHADE>#FT#begin#0"),
            (1_000, 10, "E|10"),
            (1_100, 10, "B|10|J<SHADE>#FT#layerId#7"),
            (1_100, 10, "E|10"),
            (1_200, 10, "B|10|J<SHADE>#FT#beginVsync#100"),
            (1_200, 10, "E|10"),
            (1_300, 10, "B|10|J<SHADE>#FT#endVsync#120"),
            (1_300, 10, "E|10"),
            (1_400, 10, "B|10|J<SHADE>#UIThread"),
            (1_400, 10, "E|10"),
            (8_000, 10, "B|10|J<SHADE>#FT#end#0"),
            (8_000, 10, "E|10"),
            (9_000, 10, "F|10|J<SHADE>|1"),
            // The counts the jank tracker reports once the CUJ ended (the
            // one before it ended is not this CUJ's).
            (8_500, 10, "C|10|J<SHADE>#totalFrames|99"),
            (9_100, 10, "C|10|J<SHADE>#totalFrames|12"),
            (9_100, 10, "C|10|J<SHADE>#missedFrames|3"),
            (9_100, 10, "C|10|J<SHADE>#weightedJank|1500"),
            (9_100, 10, "C|10|J<SHADE>#maxFrameTimeMillis|40"),
            // A canceled one.
            (10_000, 10, "S|10|J<CANCELED>|2"),
            (15_000, 10, "B|10|J<CANCELED>#FT#cancel#0"),
            (15_000, 10, "E|10"),
            (20_000, 10, "F|10|J<CANCELED>|2"),
            // One from an old build: no markers, shorter than 4 ms.
            (30_000, 10, "S|10|J<OLD>|3"),
            (40_000, 10, "F|10|J<OLD>|3"),
            // Not an Android app's CUJ.
            (30_000, 30, "S|30|J<ELSEWHERE>|4"),
            (40_000, 30, "F|30|J<ELSEWHERE>|4"),
            // Latency CUJs: one times out, one completes.
            (50_000, 10, "S|10|L<OPEN_APP>|5"),
            (55_000, 10, "N|10|L<OPEN_APP>|timeout"),
            (60_000, 10, "F|10|L<OPEN_APP>|5"),
            (70_000, 10, "S|10|L<UNLOCK>|6"),
            (80_000, 10, "F|10|L<UNLOCK>|6"),
        ]),
    ])
}

#[test]
fn jank_cujs_are_numbered_and_read_their_markers() {
    let tp = sysui();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.cujs.base;
             SELECT c.cuj_id, c.cuj_slice_name, c.ts, c.dur, e.layer_id, e.begin_vsync,
               e.end_vsync, e.ui_thread IS NOT NULL
             FROM _jank_cujs_slices AS c JOIN _cuj_instant_events AS e USING (cuj_id)
             ORDER BY c.cuj_id",
        ),
        vec![
            vec![
                i(1),
                s("J<SHADE>"),
                i(1_000),
                i(8_000),
                i(7),
                i(100),
                i(120),
                i(1)
            ],
            vec![
                i(2),
                s("J<CANCELED>"),
                i(10_000),
                i(10_000),
                Value::Null,
                Value::Null,
                Value::Null,
                i(0)
            ],
            vec![
                i(3),
                s("J<OLD>"),
                i(30_000),
                i(10_000),
                Value::Null,
                Value::Null,
                Value::Null,
                i(0)
            ],
        ]
    );
    // Canceled CUJs and short ones without markers are not CUJs.
    assert_eq!(
        rows(
            &tp,
            "SELECT cuj_id, cuj_name, state, layer_id FROM android_jank_cuj",
        ),
        vec![vec![i(1), s("SHADE"), s("completed"), i(7)]]
    );
    assert_eq!(
        rows(&tp, "SELECT _extract_cuj_name_from_slice('L<X_Y>')"),
        vec![vec![s("X_Y")]]
    );
}

#[test]
fn the_trackers_own_counts_are_read_after_the_cuj_ends() {
    let tp = sysui();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.cujs.cuj_frame_counters;
             SELECT cuj_id, cuj_name, total_frames, missed_frames, missed_app_frames,
               weighted_missed_frames, frame_dur_max, sf_callback_missed_frames
             FROM _android_jank_cuj_counter_metrics",
        ),
        vec![vec![
            i(1),
            s("SHADE"),
            i(12),
            i(3),
            Value::Null,
            Value::Real(1.5),
            i(40_000_000),
            i(0)
        ]]
    );
}

#[test]
fn latency_cujs_take_their_state_from_markers_on_their_track() {
    let tp = sysui();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.cujs.sysui_cujs;
             SELECT cuj_id, process_name, cuj_name, ts, ts_end, dur, state
             FROM android_sysui_latency_cujs",
        ),
        vec![
            vec![
                i(1),
                s("com.android.systemui"),
                s("OPEN_APP"),
                i(50_000),
                i(60_000),
                i(10_000),
                s("timeout")
            ],
            vec![
                i(2),
                s("com.android.systemui"),
                s("UNLOCK"),
                i(70_000),
                i(80_000),
                i(10_000),
                s("completed")
            ],
        ]
    );
    // No frames in this trace: no jank CUJ has bounds; the latency ones
    // follow, renumbered, with the process as UI thread.
    assert_eq!(
        rows(
            &tp,
            "SELECT cuj_id, cuj_type, cuj_name, ui_thread = upid FROM android_jank_latency_cujs",
        ),
        vec![
            vec![i(1), s("latency"), s("OPEN_APP"), i(1)],
            vec![i(2), s("latency"), s("UNLOCK"), i(1)],
        ]
    );
}

/// system_server (pid 1) launching com.app (pid 20) cold, Android 13
/// style, with a user switch around it and a GC in the app.
fn startup() -> TraceProcessor {
    load(&[
        processes(&[(1, "system_server"), (20, "com.app")]),
        prints(&[
            (100, 1, "B|1|UserController.startUser-11-fg-start-mode-1"),
            (200, 1, "E|1"),
            (1_000, 1, "S|1|launchingActivity#1|0"),
            (2_000, 20, "B|20|bindApplication"),
            (2_500, 20, "E|20"),
            (3_000, 20, "B|20|activityStart"),
            (3_200, 20, "E|20"),
            (3_500, 20, "B|20|activityResume"),
            (3_700, 20, "E|20"),
            (4_000, 1, "B|1|launchingActivity#1:completed-cold:com.app"),
            (4_000, 1, "E|1"),
            (5_000, 1, "F|1|launchingActivity#1|0"),
            (6_000, 1, "B|1|finishUserStopped-10-[stopUser]"),
            (6_100, 1, "E|1"),
            // The app's heap and a young GC stretched by its compaction.
            (9_000, 21, "C|20|Heap size (KB)|5000"),
            (10_000, 21, "B|20|young concurrent copying GC"),
            (11_000, 21, "C|20|Heap size (KB)|6000"),
            (12_000, 21, "E|20"),
            (12_000, 21, "B|20|CompactionPhase"),
            (12_500, 21, "E|20"),
            (13_000, 21, "C|20|Heap size (KB)|3000"),
        ]),
    ])
}

#[test]
fn startups_come_from_launching_activity_slices_with_their_process() {
    let tp = startup();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.startup.startups;
             SELECT startup_id, ts, ts_end, dur, dur_without_trampoline, package, startup_type
             FROM android_startups",
        ),
        vec![vec![
            i(1),
            i(1_000),
            i(5_000),
            i(4_000),
            i(4_000),
            s("com.app"),
            s("cold")
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT p.startup_id, p.pid, p.startup_type FROM android_startup_processes AS p",
        ),
        vec![vec![i(1), i(20), s("cold")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT slice_name FROM android_thread_slices_for_all_startups ORDER BY slice_ts",
        ),
        vec![
            vec![s("bindApplication")],
            vec![s("activityStart")],
            vec![s("activityResume")]
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT android_sum_dur_on_main_thread_for_startup_and_slice(1, 'activity*')",
        ),
        vec![vec![i(400)]]
    );
}

#[test]
fn a_user_switch_ends_at_each_later_startup_or_user_stop() {
    let tp = startup();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.auto.multiuser;
             SELECT event_start_user_id, event_start_time, event_end_time, event_end_name,
               duration
             FROM android_auto_multiuser_timing",
        ),
        vec![
            vec![s("11"), i(100), i(5_000), s("com.app"), i(4_900)],
            vec![
                s("11"),
                i(100),
                i(6_100),
                s("finishUserStopped-10-[stopUser]"),
                i(6_000)
            ],
        ]
    );
}

#[test]
fn a_gc_reclaims_the_heap_between_its_peak_and_the_sample_after_it() {
    let tp = startup();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.garbage_collection;
             SELECT gc_type, is_mark_compact, gc_ts, gc_dur, min_heap_mb, max_heap_mb,
               reclaimed_mb, process_name
             FROM android_garbage_collection_events",
        ),
        vec![vec![
            s("young"),
            i(0),
            i(10_000),
            i(2_500),
            Value::Real(3.0),
            Value::Real(6.0),
            Value::Real(3.0),
            s("com.app")
        ]]
    );
    // The device summary is one row; the heap window spans the samples.
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*), max(ts), max(dur) FROM _android_garbage_collection_stats",
        ),
        vec![vec![i(1), i(9_000), i(4_000)]]
    );
}

#[test]
fn a_cujs_blocking_calls_are_cut_to_the_cuj() {
    let tp = load(&[
        processes(&[(10, "com.android.systemui")]),
        prints(&[
            (70_000, 10, "S|10|L<UNLOCK>|6"),
            (72_000, 10, "B|10|inflate"),
            (74_000, 10, "E|10"),
            (
                79_000,
                10,
                "B|10|Lock contention on thread list lock (owner tid: 12)",
            ),
            (80_000, 10, "F|10|L<UNLOCK>|6"),
            (85_000, 10, "E|10"),
            // Not a blocking call; a blocking call after the CUJ.
            (75_000, 10, "B|10|onDraw"),
            (76_000, 10, "E|10"),
            (90_000, 10, "B|10|inflate"),
            (91_000, 10, "E|10"),
        ]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.cujs.sysui_cujs;
             SELECT name, ts, dur, ts_end, cuj_id, cuj_name, process_name
             FROM android_cuj_blocking_calls ORDER BY ts",
        ),
        vec![
            vec![
                s("inflate"),
                i(72_000),
                i(2_000),
                i(74_000),
                i(1),
                s("UNLOCK"),
                s("com.android.systemui")
            ],
            vec![
                s("Lock contention on thread list lock <...>"),
                i(79_000),
                i(1_000),
                i(80_000),
                i(1),
                s("UNLOCK"),
                s("com.android.systemui")
            ],
        ]
    );
}
