//! The standard library's `chrome.*` modules of input, graphics and
//! benchmarks on track event traces built here: input latencies and scroll
//! updates (`chrome.event_latency`), the graphics pipeline's steps
//! (`chrome.graphics_pipeline`), Android input events on their way to
//! Chrome (`chrome.android_input`) and through its input pipeline
//! (`chrome.input`), and Speedometer's results (`chrome.speedometer*`),
//! checked against what each trace says.

use zerotrace_protos::protos::TrackEvent;
use zerotrace_trace_processor::Value;

use crate::common::{i, packet, rows, s};
use crate::stdlib_chrome_events::{load, process_track, slice, thread_track};

/// `ChromeTrackEvent.event_latency`.
const EVENT_LATENCY: u32 = 1032;
/// `ChromeTrackEvent.chrome_graphics_pipeline`.
const GRAPHICS_PIPELINE: u32 = 1052;
/// `ChromeTrackEvent.current_task`.
const CURRENT_TASK: u32 = 1071;

#[test]
fn event_latencies_read_their_stages_and_scroll_updates_are_numbered_by_scroll() {
    let latency = |kind: i32, id: i64, janky: bool| {
        move |e: &mut TrackEvent<'_>| {
            let mut m = e.message().begin_nested(EVENT_LATENCY);
            m.append_int32(1, kind);
            m.append_int64(4, id);
            if janky {
                m.append_bool(5, true);
            }
            m.append_double(6, 16.5);
            m.append_int64(7, id + 1000);
        }
    };
    let mut packets = vec![thread_track(2, 10, 11, "VizCompositorThread")];
    let cat = "cc,input";
    packets.extend(
        [
            slice(1_000, 2_000, 2, cat, "EventLatency", latency(21, 1, true)),
            slice(
                1_100,
                1_900,
                2,
                cat,
                "SubmitCompositorFrameToPresentationCompositorFrame",
                |_| {},
            ),
            slice(1_100, 1_200, 2, cat, "BufferAvailableToBufferReady", |_| {}),
            slice(1_200, 1_300, 2, cat, "BufferReadyToLatch", |_| {}),
            slice(1_300, 1_400, 2, cat, "LatchToSwapEnd", |_| {}),
            slice(
                1_400,
                1_900,
                2,
                cat,
                "SwapEndToPresentationCompositorFrame",
                |_| {},
            ),
        ]
        .into_iter()
        .flatten(),
    );
    // The loader orders events by time (ends at a shared time close the
    // innermost slice first).
    packets.extend(slice(
        3_000,
        3_500,
        2,
        cat,
        "EventLatency",
        latency(10, 2, false),
    ));
    packets.extend(slice(
        4_000,
        4_500,
        2,
        cat,
        "EventLatency",
        latency(21, 3, false),
    ));
    packets.extend(slice(
        5_000,
        5_100,
        2,
        cat,
        "EventLatency",
        latency(16, 4, false),
    ));
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.event_latency;
             SELECT ts, dur, scroll_update_id, surface_frame_trace_id, is_presented, event_type,
                    vsync_interval_ms, is_janky_scrolled_frame, buffer_available_timestamp,
                    buffer_ready_timestamp, latch_timestamp, swap_end_timestamp,
                    presentation_timestamp
             FROM chrome_event_latencies ORDER BY ts"
        ),
        vec![
            vec![
                i(1_000),
                i(1_000),
                i(1),
                i(1_001),
                i(1),
                s("FIRST_GESTURE_SCROLL_UPDATE"),
                Value::Real(16.5),
                i(1),
                i(1_100),
                i(1_200),
                i(1_300),
                i(1_400),
                i(1_900),
            ],
            vec![
                i(3_000),
                i(500),
                i(2),
                i(1_002),
                i(0),
                s("GESTURE_SCROLL_UPDATE"),
                Value::Real(16.5),
                i(0),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ],
            vec![
                i(4_000),
                i(500),
                i(3),
                i(1_003),
                i(0),
                s("FIRST_GESTURE_SCROLL_UPDATE"),
                Value::Real(16.5),
                i(0),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ],
            vec![
                i(5_000),
                i(100),
                i(4),
                i(1_004),
                i(0),
                s("GESTURE_TAP"),
                Value::Real(16.5),
                i(0),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT scroll_update_id, is_janky, scroll_id FROM chrome_gesture_scroll_updates
             ORDER BY ts"
        ),
        vec![
            vec![i(1), i(1), i(1)],
            vec![i(2), i(0), i(1)],
            vec![i(3), i(0), i(2)],
        ]
    );
}

#[test]
fn graphics_pipeline_steps_link_inputs_surface_frames_and_displays() {
    // (ts, step, surface frame, display frame, aggregated, latency ids).
    type Step = (
        u64,
        i32,
        Option<i64>,
        Option<i64>,
        &'static [i64],
        &'static [i64],
    );
    let steps: [Step; 6] = [
        (10_000, 9, Some(11), None, &[], &[5, 6]),
        (11_000, 5, Some(-1), None, &[], &[]),
        (12_000, 10, None, Some(100), &[11, 12], &[]),
        (13_000, 10, None, Some(101), &[11], &[]),
        (14_000, 21, None, Some(100), &[], &[]),
        (15_000, 21, None, Some(100), &[], &[]),
    ];
    let mut packets = vec![thread_track(2, 10, 11, "VizCompositorThread")];
    for (ts, step, surface, display, aggregated, latencies) in steps {
        packets.extend(slice(ts, ts + 100, 2, "gpu", "Graphics.Pipeline", |e| {
            {
                let mut m = e.message().begin_nested(GRAPHICS_PIPELINE);
                m.append_int32(1, step);
                if let Some(d) = display {
                    m.append_int64(3, d);
                }
                for a in aggregated {
                    m.append_int64(8, *a);
                }
                for l in latencies {
                    m.append_int64(9, *l);
                }
                if let Some(f) = surface {
                    m.append_int64(10, f);
                }
            }
            e.message().begin_nested(CURRENT_TASK).append_uint64(1, 2);
        }));
    }
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.graphics_pipeline;
             SELECT ts, step, surface_frame_trace_id, task_start_time_ts
             FROM chrome_graphics_pipeline_surface_frame_steps ORDER BY ts"
        ),
        vec![
            vec![
                i(10_000),
                s("STEP_SUBMIT_COMPOSITOR_FRAME"),
                i(11),
                i(8_000)
            ],
            vec![
                i(11_000),
                s("STEP_RECEIVE_COMPOSITOR_FRAME"),
                Value::Null,
                i(9_000)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, step, display_trace_id FROM chrome_graphics_pipeline_display_frame_steps
             ORDER BY ts"
        ),
        vec![
            vec![i(12_000), s("STEP_SURFACE_AGGREGATION"), i(100)],
            vec![i(13_000), s("STEP_SURFACE_AGGREGATION"), i(101)],
            vec![i(15_000), s("STEP_DRAW_AND_SWAP"), i(100)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT * FROM chrome_surface_frame_id_to_first_display_id
             ORDER BY surface_frame_trace_id"
        ),
        vec![vec![i(11), i(100)], vec![i(12), i(100)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT * FROM chrome_graphics_pipeline_inputs_to_surface_frames ORDER BY latency_id"
        ),
        vec![vec![i(5), i(11)], vec![i(6), i(11)]]
    );
}

/// `TracePacket.ftrace_events`.
const FTRACE_EVENTS: u32 = 1;

#[test]
fn android_input_events_are_followed_from_reader_to_chrome() {
    let prints = packet(|p| {
        let mut b = p.message().begin_nested(FTRACE_EVENTS);
        b.append_uint32(1, 0);
        for (ts, tid, line) in [
            (
                100u64,
                1001u32,
                "B|1000|UnwantedInteractionBlocker::notifyMotion(deviceId=4, id=0x7f)",
            ),
            (150, 1001, "E|1000"),
            (
                200,
                1002,
                "B|1000|prepareDispatchCycleLocked(inputChannel=ab com.android.chrome/Main, id=0x7f)",
            ),
            (260, 1002, "E|1000"),
            (300, 30, "B|30|deliverInputEvent id=0x7f"),
            (390, 30, "E|30"),
            (
                400,
                1001,
                "B|1000|UnwantedInteractionBlocker::notifyMotion(deviceId=4, id=0x80)",
            ),
            (420, 1001, "E|1000"),
        ] {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, ts);
            e.append_uint32(2, tid);
            e.begin_nested(3).append_string(2, &format!("{line}\n"));
        }
    });
    let tp = load(&[prints]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.android_input;
             SELECT android_input_id, input_reader_processing_start_ts,
                    input_reader_processing_end_ts, input_dispatcher_processing_start_ts,
                    input_dispatcher_processing_end_ts, deliver_input_event_start_ts,
                    deliver_input_event_end_ts
             FROM chrome_android_input ORDER BY input_reader_processing_start_ts"
        ),
        vec![
            vec![s("0x7f"), i(100), i(150), i(200), i(260), i(300), i(390)],
            vec![
                s("0x80"),
                i(400),
                i(420),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null
            ],
        ]
    );
}

#[test]
fn speedometer_scores_come_from_its_user_timing_slices() {
    const MS: u64 = 1_000_000;
    let timing = "blink.user_timing";
    // Speedometer 3: two iterations; in the first TodoMVC-Vue takes 3 ms
    // and Perf-Dashboard 12 ms (mean 6 ms), in the second TodoMVC-Vue 4 ms.
    let mut packets = vec![thread_track(2, 10, 11, "CrRendererMain")];
    for (ts, end, name) in [
        (MS, 20 * MS, "iteration-0"),
        (MS, MS, "TodoMVC-Vue.Adding100Items-sync-start"),
        (MS, 3 * MS, "TodoMVC-Vue.Adding100Items-sync"),
        (3 * MS, 4 * MS, "TodoMVC-Vue.Adding100Items-async"),
        (5 * MS, 13 * MS, "Perf-Dashboard.Render-sync"),
        (13 * MS, 17 * MS, "Perf-Dashboard.Render-async"),
        (30 * MS, 40 * MS, "iteration-1"),
        (30 * MS, 32 * MS, "TodoMVC-Vue.Adding100Items-sync"),
        (32 * MS, 34 * MS, "TodoMVC-Vue.Adding100Items-async"),
        (50 * MS, 60 * MS, "iteration-x"),
    ] {
        packets.extend(slice(ts, end, 2, timing, name, |_| {}));
    }
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.speedometer;
             SELECT iteration, suite_name, test_name, measure_type, dur
             FROM chrome_speedometer_measure ORDER BY ts"
        ),
        vec![
            vec![
                i(0),
                s("TodoMVC-Vue"),
                s("Adding100Items"),
                s("sync"),
                i((2 * MS) as i64)
            ],
            vec![
                i(0),
                s("TodoMVC-Vue"),
                s("Adding100Items"),
                s("async"),
                i(MS as i64)
            ],
            vec![
                i(0),
                s("Perf-Dashboard"),
                s("Render"),
                s("sync"),
                i((8 * MS) as i64)
            ],
            vec![
                i(0),
                s("Perf-Dashboard"),
                s("Render"),
                s("async"),
                i((4 * MS) as i64)
            ],
            vec![
                i(1),
                s("TodoMVC-Vue"),
                s("Adding100Items"),
                s("sync"),
                i((2 * MS) as i64)
            ],
            vec![
                i(1),
                s("TodoMVC-Vue"),
                s("Adding100Items"),
                s("async"),
                i((2 * MS) as i64)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, iteration, round(geomean, 6), round(score, 6)
             FROM chrome_speedometer_iteration ORDER BY iteration"
        ),
        vec![
            vec![
                s("iteration-0"),
                i(0),
                Value::Real(6.0),
                Value::Real(166.666667)
            ],
            vec![s("iteration-1"), i(1), Value::Real(4.0), Value::Real(250.0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT _chrome_speedometer_version(), round(chrome_speedometer_score(), 6),
                    chrome_speedometer_renderer_main_utid() = (SELECT utid FROM thread WHERE tid = 11)"
        ),
        vec![vec![s("3"), Value::Real(208.333333), i(1)]]
    );

    // Speedometer 2.1: marks only; the second iteration's test is twice as
    // slow. A test without its three marks has no measure.
    let mut packets = vec![thread_track(2, 10, 11, "CrRendererMain")];
    for (ts, name) in [
        (MS, "React-TodoMVC.Adding100Items-start"),
        (3 * MS, "React-TodoMVC.Adding100Items-sync-end"),
        (4 * MS, "React-TodoMVC.Adding100Items-async-end"),
        (10 * MS, "React-TodoMVC.Adding100Items-start"),
        (14 * MS, "React-TodoMVC.Adding100Items-sync-end"),
        (16 * MS, "React-TodoMVC.Adding100Items-async-end"),
        (20 * MS, "jQuery-TodoMVC.Adding100Items-start"),
    ] {
        packets.extend(slice(ts, ts, 2, timing, name, |_| {}));
    }
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.speedometer;
             SELECT name, iteration, ts, dur FROM chrome_speedometer_measure
             ORDER BY iteration, ts"
        ),
        vec![
            vec![
                s("React-TodoMVC.Adding100Items-sync"),
                i(1),
                i(MS as i64),
                i((2 * MS) as i64)
            ],
            vec![
                s("React-TodoMVC.Adding100Items-async"),
                i(1),
                i((3 * MS) as i64),
                i(MS as i64)
            ],
            vec![
                s("React-TodoMVC.Adding100Items-sync"),
                i(2),
                i((10 * MS) as i64),
                i((4 * MS) as i64)
            ],
            vec![
                s("React-TodoMVC.Adding100Items-async"),
                i(2),
                i((14 * MS) as i64),
                i((2 * MS) as i64)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, ts, dur, round(geomean, 6), round(score, 6)
             FROM chrome_speedometer_iteration ORDER BY iteration"
        ),
        vec![
            vec![
                s("iteration-1"),
                i(MS as i64),
                i((3 * MS) as i64),
                Value::Real(3.0),
                Value::Real(6666.666667)
            ],
            vec![
                s("iteration-2"),
                i((10 * MS) as i64),
                i((6 * MS) as i64),
                Value::Real(6.0),
                Value::Real(3333.333333)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT _chrome_speedometer_version(), round(chrome_speedometer_score(), 6)"
        ),
        vec![vec![s("2.1"), Value::Real(5000.0)]]
    );
}

/// `ChromeTrackEvent.chrome_latency_info` (`ChromeLatencyInfo2`).
const LATENCY_INFO: u32 = 1068;

#[test]
fn input_steps_link_touch_moves_scroll_updates_and_android_inputs() {
    // (ts, end, latency id, step, input type, coalesced ids).
    type Step = (u64, u64, i64, i32, Option<i32>, &'static [i64]);
    const UI: i32 = 3;
    const HANDLED: i32 = 12;
    const RESAMPLE: i32 = 14;
    const SCROLL_UPDATE: i32 = 14;
    const TOUCH_MOVE: i32 = 33;
    let steps: [Step; 7] = [
        (1_000, 2_000, 1, UI, Some(TOUCH_MOVE), &[]),
        (1_200, 1_500, 2, UI, Some(SCROLL_UPDATE), &[]),
        (3_000, 4_000, 3, HANDLED, Some(TOUCH_MOVE), &[]),
        (3_100, 3_200, 4, UI, Some(SCROLL_UPDATE), &[]),
        (5_000, 5_100, 4, RESAMPLE, Some(SCROLL_UPDATE), &[5, 4]),
        (6_000, 6_100, -1, UI, Some(TOUCH_MOVE), &[]),
        (7_000, 7_100, 6, UI, None, &[]),
    ];
    let mut packets = vec![
        process_track(1, 10, "Browser"),
        thread_track(2, 10, 11, "CrBrowserMain"),
    ];
    packets.extend(slice(
        900,
        2_500,
        2,
        "input",
        "deliverInputEvent id=0x9",
        |_| {},
    ));
    for (ts, end, id, step, kind, coalesced) in steps {
        packets.extend(slice(ts, end, 2, "input", "LatencyInfo.Flow", |e| {
            let mut m = e.message().begin_nested(LATENCY_INFO);
            m.append_int64(1, id);
            m.append_int32(2, step);
            if let Some(k) = kind {
                m.append_int32(8, k);
            }
            for c in coalesced {
                m.append_int64(10, *c);
            }
        }));
    }
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.input;
             SELECT latency_id, input_type FROM chrome_inputs ORDER BY latency_id"
        ),
        vec![
            vec![i(1), s("TOUCH_MOVE_EVENT")],
            vec![i(2), s("GESTURE_SCROLL_UPDATE_EVENT")],
            vec![i(3), s("TOUCH_MOVE_EVENT")],
            vec![i(4), s("GESTURE_SCROLL_UPDATE_EVENT")],
            vec![i(6), Value::Null],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT latency_id, ts, dur, step, input_type FROM chrome_input_pipeline_steps
             ORDER BY ts"
        ),
        vec![
            vec![
                i(1),
                i(1_000),
                i(1_000),
                s("STEP_SEND_INPUT_EVENT_UI"),
                s("TOUCH_MOVE_EVENT")
            ],
            vec![
                i(2),
                i(1_200),
                i(300),
                s("STEP_SEND_INPUT_EVENT_UI"),
                s("GESTURE_SCROLL_UPDATE_EVENT")
            ],
            vec![
                i(3),
                i(3_000),
                i(1_000),
                s("STEP_TOUCH_EVENT_HANDLED"),
                s("TOUCH_MOVE_EVENT")
            ],
            vec![
                i(4),
                i(3_100),
                i(100),
                s("STEP_SEND_INPUT_EVENT_UI"),
                s("GESTURE_SCROLL_UPDATE_EVENT")
            ],
            vec![
                i(4),
                i(5_000),
                i(100),
                s("STEP_RESAMPLE_SCROLL_EVENTS"),
                s("GESTURE_SCROLL_UPDATE_EVENT")
            ],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT * FROM chrome_coalesced_inputs"),
        vec![vec![i(5), i(4)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT * FROM chrome_touch_move_to_scroll_update ORDER BY scroll_update_latency_id"
        ),
        vec![vec![i(1), i(2)], vec![i(3), i(4)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT * FROM chrome_dispatch_android_input_event_to_touch_move"
        ),
        vec![vec![s("0x9"), i(1)]]
    );
}
