//! The standard library's scroll jank modules on traces built here: the
//! jank tests and long task slices (`chrome.scroll_jank.utils`), scroll
//! offsets (`chrome.scroll_jank.scroll_offsets`), predictor jank
//! (`chrome.scroll_jank.predictor_error`), jank causes
//! (`chrome.scroll_jank.scroll_jank_v3_cause`), the v3 jank metric
//! (`chrome.scroll_jank.scroll_jank_v3`) and the threads a cause points at
//! (`chrome.scroll_jank.scroll_jank_cause_utils`), checked against what each
//! trace says.

use zerotrace_protos::protos::TrackEvent;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common::{i, rows, s};
use crate::stdlib_chrome_events::{load, process_track, slice, thread_track};

/// `TrackEvent.chrome_mojo_event_info`.
const MOJO_EVENT_INFO: u32 = 38;
/// `ChromeTrackEvent.event_latency`.
const EVENT_LATENCY: u32 = 1032;
/// `ChromeTrackEvent.scroll_deltas`.
const SCROLL_DELTAS: u32 = 1047;

#[test]
fn frames_are_janky_against_neighbours_of_their_gesture() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.scroll_jank.utils;
             SELECT _is_janky_frame(1, 1, 100, 50, 200, 3.0, 2.4),
                    _is_janky_frame(1, 1, 100, 50, 200, 3.0, 2.5),
                    _is_janky_frame(1, 2, 100, 50, 200, 3.0, 1.0),
                    _is_janky_frame(1, 1, NULL, 50, 200, 3.0, 1.0),
                    _is_janky_frame(1, 1, 300, 50, 200, 3.0, 1.0),
                    round(_jank_budget(3.0, 2.0, NULL), 6),
                    round(_jank_budget(3.0, 2.0, 1.0), 6),
                    round(_jank_budget(3.0, NULL, 2.5), 6)"
        ),
        vec![vec![
            i(1),
            i(0),
            i(0),
            i(0),
            i(0),
            Value::Real(0.5),
            Value::Real(1.5),
            Value::Real(0.0)
        ]]
    );
}

#[test]
fn long_tasks_name_their_mojo_interface() {
    let mojo = |tag: &'static str, hash: u32, reply: bool| {
        move |e: &mut TrackEvent<'_>| {
            let mut m = e.message().begin_nested(MOJO_EVENT_INFO);
            m.append_uint32(2, hash);
            m.append_string(3, tag);
            m.append_bool(5, reply);
        }
    };
    let cat = "disabled-by-default-scheduler.long_tasks";
    let mut packets = vec![thread_track(2, 10, 11, "CrRendererMain")];
    packets.extend(slice(100, 200, 2, cat, "LongTask", mojo("a.B", 7, false)));
    packets.extend(slice(300, 400, 2, cat, "LongTask", mojo("c.D", 9, true)));
    packets.extend(slice(
        500,
        600,
        2,
        "other",
        "LongTask",
        mojo("e.F", 1, false),
    ));
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.scroll_jank.utils;
             SELECT interface_name, ipc_hash, message_type
             FROM chrome_select_long_task_slices('LongTask') ORDER BY id"
        ),
        vec![
            vec![s("a.B"), i(7), s("message")],
            vec![s("c.D"), i(9), s("reply")],
        ]
    );
}

/// A frame of a scroll: (input time, EventLatency type, presentation time,
/// input delta, presented delta, visual offset).
type Frame = (u64, i32, u64, f32, f32, i64);

/// A trace of scroll updates 1.. (one per frame): each EventLatency on a
/// track of its own with its presentation stage inside it, the input and
/// presented deltas on the renderer's main thread.
fn scroll_trace(frames: &[Frame]) -> TraceProcessor {
    let latency = |kind: i32, id: i64| {
        move |e: &mut TrackEvent<'_>| {
            let mut m = e.message().begin_nested(EVENT_LATENCY);
            m.append_int32(1, kind);
            m.append_int64(4, id);
        }
    };
    let input = |id: i64, dy: f32| {
        move |e: &mut TrackEvent<'_>| {
            let mut m = e.message().begin_nested(SCROLL_DELTAS);
            m.append_int64(1, id);
            m.append_float(3, dy);
        }
    };
    let shown = |id: i64, dy: f32, offset: i64| {
        move |e: &mut TrackEvent<'_>| {
            let mut m = e.message().begin_nested(SCROLL_DELTAS);
            m.append_int64(1, id);
            m.append_float(6, dy);
            m.append_int64(8, offset);
        }
    };
    let cat = "input";
    let mut packets = vec![thread_track(3, 10, 12, "CrRendererMain")];
    for (k, &(ts, kind, presented, dy, shown_dy, offset)) in frames.iter().enumerate() {
        let id = k as i64 + 1;
        let track = 20 + k as u64;
        packets.push(thread_track(
            track,
            10,
            20 + k as i32,
            "VizCompositorThread",
        ));
        packets.extend(slice(
            ts,
            presented,
            track,
            cat,
            "EventLatency",
            latency(kind, id),
        ));
        packets.extend(slice(
            presented - 100,
            presented,
            track,
            cat,
            "SwapEndToPresentationCompositorFrame",
            |_| {},
        ));
        packets.extend(slice(
            ts + 10,
            ts + 20,
            3,
            cat,
            "TranslateAndScaleWebInputEvent",
            input(id, dy),
        ));
        packets.extend(slice(
            ts + 30,
            ts + 40,
            3,
            cat,
            "InputHandlerProxy::HandleGestureScrollUpdate_Result",
            shown(id, shown_dy, offset),
        ));
    }
    load(&packets)
}

#[test]
fn scroll_offsets_add_up_the_deltas_of_each_scroll() {
    // Scroll updates 1 and 2 (one scroll) presented together at 2_000,
    // update 3 (a new scroll) at 5_000.
    let tp = scroll_trace(&[
        (1_000, 21, 2_000, 10.0, 8.0, 80),
        (1_500, 10, 2_000, 5.0, 4.0, 120),
        (4_000, 21, 5_000, -2.0, -1.0, 110),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.scroll_jank.scroll_offsets;
             SELECT scroll_update_id, scroll_id, ts, delta_y, relative_offset_y
             FROM chrome_scroll_input_offsets ORDER BY ts"
        ),
        vec![
            vec![i(1), i(1), i(1_000), Value::Real(10.0), Value::Real(10.0)],
            vec![i(2), i(1), i(1_500), Value::Real(5.0), Value::Real(15.0)],
            vec![i(3), i(2), i(4_000), Value::Real(-2.0), Value::Real(-2.0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT scroll_update_id, delta_y, offset_y FROM chrome_scroll_presented_deltas
             ORDER BY scroll_update_id"
        ),
        vec![
            vec![i(1), Value::Real(8.0), i(80)],
            vec![i(2), Value::Real(4.0), i(120)],
            vec![i(3), Value::Real(-1.0), i(110)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT scroll_update_id, scroll_id, ts, delta_y, relative_offset_y
             FROM chrome_presented_scroll_offsets ORDER BY ts"
        ),
        vec![
            vec![i(1), i(1), i(2_000), Value::Real(12.0), Value::Real(12.0)],
            vec![i(3), i(2), i(5_000), Value::Real(-1.0), Value::Real(-1.0)],
        ]
    );
}

#[test]
fn a_presented_delta_out_of_proportion_to_its_neighbours_is_predictor_jank() {
    let tp = scroll_trace(&[
        (1_000, 21, 2_000, 10.0, 10.0, 10),
        (3_000, 10, 4_000, 20.0, 20.0, 30),
        (5_000, 10, 6_000, 10.0, 10.0, 40),
        (7_000, 10, 8_000, 10.0, 10.0, 50),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.scroll_jank.predictor_error;
             SELECT scroll_update_id, present_ts, delta_y, prev_delta, next_delta,
                    round(predictor_jank, 6), delta_threshold
             FROM chrome_predictor_error ORDER BY present_ts"
        ),
        vec![
            vec![
                i(2),
                i(4_000),
                Value::Real(20.0),
                Value::Real(10.0),
                Value::Real(10.0),
                Value::Real(0.8),
                Value::Real(1.2)
            ],
            vec![
                i(3),
                i(6_000),
                Value::Real(10.0),
                Value::Real(20.0),
                Value::Real(10.0),
                Value::Real(0.0),
                Value::Real(1.2)
            ],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT _get_scroll_jank_threshold(3.0, 7.0, 1.0)"),
        vec![vec![Value::Real(1.4)]]
    );
}

#[test]
fn a_jank_cause_is_the_child_that_grew_most_against_the_previous_frame() {
    // Janky frame: X 10, Y 10, Z 5; previous frame: X 9, Y 9 (no Z).
    let cat = "cc";
    let mut packets = vec![thread_track(2, 10, 11, "VizCompositorThread")];
    packets.extend(slice(0, 100, 2, cat, "previous", |_| {}));
    packets.extend(slice(0, 9, 2, cat, "X", |_| {}));
    packets.extend(slice(9, 18, 2, cat, "Y", |_| {}));
    packets.extend(slice(200, 300, 2, cat, "janky", |_| {}));
    packets.extend(slice(200, 210, 2, cat, "X", |_| {}));
    packets.extend(slice(210, 220, 2, cat, "Y", |_| {}));
    packets.extend(slice(220, 225, 2, cat, "Z", |_| {}));
    let tp = load(&packets);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.scroll_jank.scroll_jank_v3_cause;
             SELECT
               (SELECT name FROM slice WHERE id = chrome_get_v3_jank_cause_id(
                  (SELECT id FROM slice WHERE name = 'janky'),
                  (SELECT id FROM slice WHERE name = 'previous'))),
               (SELECT count(*) FROM _direct_children_slice(
                  (SELECT id FROM slice WHERE name = 'janky'))),
               chrome_get_v3_jank_cause_id((SELECT id FROM slice WHERE name = 'Z'), NULL)"
        ),
        vec![vec![s("Z"), i(3), Value::Null]]
    );
}

#[test]
fn a_frame_presented_late_for_its_input_is_janky_and_blamed_on_its_slowest_stage() {
    const MS: u64 = 1_000_000;
    let latency = |kind: i32, id: i64| {
        move |e: &mut TrackEvent<'_>| {
            let mut m = e.message().begin_nested(EVENT_LATENCY);
            m.append_int32(1, kind);
            m.append_int64(4, id);
            m.append_double(6, 10.0);
        }
    };
    let cat = "input";
    let mut packets = vec![thread_track(3, 10, 12, "CrRendererMain")];
    // Updates 1..3 presented at 20, 30 and 60 ms; update 4 (not presented)
    // is folded into 3. Stages: (start, end, name) in ms, nested in order.
    type Stage = (u64, u64, &'static str);
    /// (start, end, EventLatency type, presentation, stages), in ms.
    type Frame = (u64, u64, i32, Option<u64>, &'static [Stage]);
    let frames: [Frame; 4] = [
        (0, 20, 21, Some(20), &[]),
        (
            10,
            30,
            10,
            Some(30),
            &[
                (10, 11, "GenerationToBrowserMain"),
                (11, 13, "RendererCompositorQueueingDelay"),
                (11, 12, "SubStage"),
            ],
        ),
        (
            20,
            60,
            10,
            Some(60),
            &[
                (20, 21, "GenerationToBrowserMain"),
                (21, 41, "RendererCompositorQueueingDelay"),
                (21, 36, "SubStage"),
            ],
        ),
        (22, 25, 10, None, &[]),
    ];
    for (k, (ts, end, kind, presented, stages)) in frames.into_iter().enumerate() {
        let id = k as i64 + 1;
        let track = 20 + k as u64;
        packets.push(thread_track(
            track,
            10,
            20 + k as i32,
            "VizCompositorThread",
        ));
        packets.extend(slice(
            ts * MS,
            end * MS,
            track,
            cat,
            "EventLatency",
            latency(kind, id),
        ));
        for &(s0, s1, name) in stages {
            packets.extend(slice(s0 * MS, s1 * MS, track, cat, name, |_| {}));
        }
        if let Some(p) = presented {
            packets.extend(slice(
                (p - 5) * MS,
                p * MS,
                track,
                cat,
                "SubmitCompositorFrameToPresentationCompositorFrame",
                |_| {},
            ));
            packets.extend(slice(
                (p - 1) * MS,
                p * MS,
                track,
                cat,
                "SwapEndToPresentationCompositorFrame",
                |_| {},
            ));
        }
    }
    packets.extend(slice(
        MS,
        MS + 10,
        3,
        cat,
        "InputHandlerProxy::HandleGestureScrollUpdate_Result",
        |e| {
            let mut m = e.message().begin_nested(SCROLL_DELTAS);
            m.append_int64(1, 1);
            m.append_float(6, 5.0);
        },
    ));
    let tp = load(&packets);
    let ms = |v: u64| i((v * MS) as i64);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.scroll_jank.scroll_jank_v3;
             SELECT scroll_update_id, ts, last_presented_input_ts, presentation_timestamp
             FROM chrome_presented_gesture_scrolls ORDER BY ts"
        ),
        vec![
            vec![i(1), ms(0), ms(0), ms(20)],
            vec![i(2), ms(10), ms(10), ms(30)],
            vec![i(3), ms(20), ms(22), ms(60)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT scroll_update_id, encapsulated_scroll_ids, total_delta,
                    delay_since_last_frame, delay_since_last_input, scroll_id
             FROM chrome_frame_info_with_delay ORDER BY presentation_timestamp"
        ),
        vec![
            vec![
                i(1),
                s("1"),
                Value::Real(5.0),
                Value::Real(0.0),
                Value::Real(0.0),
                i(1)
            ],
            vec![
                i(2),
                s("2"),
                Value::Null,
                Value::Real(10.0),
                Value::Real(10.0),
                i(1)
            ],
            vec![
                i(3),
                s("3"),
                Value::Null,
                Value::Real(30.0),
                Value::Real(10.0),
                i(1)
            ],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT vsync_interval FROM chrome_vsyncs"),
        vec![vec![Value::Real(10.0)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT cause_of_jank, sub_cause_of_jank, delay_since_last_frame, vsync_interval,
                    hardware_class, scroll_id
             FROM chrome_janky_frames"
        ),
        vec![vec![
            s("RendererCompositorQueueingDelay"),
            s("SubStage"),
            Value::Real(30.0),
            Value::Real(10.0),
            Value::Null,
            i(1)
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT round(delayed_frame_percentage, 6) FROM chrome_janky_frames_percentage"
        ),
        vec![vec![Value::Real(33.333333)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT scroll_id, num_frames, num_janky_frames, round(scroll_jank_percentage, 6)
             FROM chrome_frames_per_scroll"
        ),
        vec![vec![i(1), i(3), i(1), Value::Real(33.333333)]]
    );
}

#[test]
fn jank_cause_threads_are_those_of_the_process_kind_busy_during_the_latency() {
    let cat = "cc";
    let mut packets = vec![
        process_track(1, 20, "Renderer"),
        thread_track(2, 20, 21, "Compositor"),
        process_track(5, 10, "Browser"),
        thread_track(3, 10, 11, "CrBrowserMain"),
        process_track(6, 30, "Gpu"),
        thread_track(4, 30, 31, "VizCompositorThread"),
    ];
    packets.extend(slice(1_000, 2_000, 1, cat, "EventLatency", |_| {}));
    packets.extend(slice(1_500, 1_600, 2, cat, "Work", |_| {}));
    packets.extend(slice(1_200, 1_300, 3, cat, "Work", |_| {}));
    packets.extend(slice(3_000, 3_100, 4, cat, "Work", |_| {}));
    let tp = load(&packets);
    let threads = |kind: &str, name: &str| {
        rows(
            &tp,
            &format!(
                "INCLUDE PERFETTO MODULE chrome.scroll_jank.scroll_jank_cause_utils;
                 SELECT t.tid FROM chrome_select_scroll_jank_cause_thread(
                   (SELECT id FROM slice WHERE name = 'EventLatency'), '{kind}', '{name}') c
                 JOIN thread t USING (utid)"
            ),
        )
    };
    assert_eq!(threads("Renderer", "Compositor"), vec![vec![i(21)]]);
    assert_eq!(threads("Browser", "CrBrowserMain"), vec![vec![i(11)]]);
    // The GPU thread only ran after the latency ended.
    assert_eq!(
        threads("GPU", "VizCompositorThread"),
        Vec::<Vec<Value>>::new()
    );
    assert_eq!(threads("Browser", "Compositor"), Vec::<Vec<Value>>::new());
}
