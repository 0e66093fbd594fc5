//! `RUN_METRIC('android/android_jank_cuj.sql')` on an app trace built here:
//! the metric's CUJ, frame and slice tables, and the correlate functions
//! that cut a chosen set of slices to each CUJ frame's boundary and sum
//! them per frame in `<prefix>_slice_in_frame_agg`.

use protozero::Message;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common::{i, packet, s, trace};

/// `TracePacket.process_tree`.
const PROCESS_TREE: u32 = 2;
/// `TracePacket.frame_timeline_event`.
const FRAME_TIMELINE_EVENT: u32 = 76;
/// `FrameTimelineEvent.JankType.JANK_APP_DEADLINE_MISSED`.
const JANK_APP_DEADLINE_MISSED: i32 = 64;
/// `FrameTimelineEvent.JankType.JANK_NONE`.
const JANK_NONE: i32 = 1;

const MS: u64 = 1_000_000;

/// The app (pid 20: main thread 20, RenderThread 21, GPU completion 22).
fn app_process() -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(1);
        let mut tree = p.message().begin_nested(PROCESS_TREE);
        {
            let mut proc_ = tree.begin_nested(1);
            proc_.append_int32(1, 20);
            proc_.append_int32(2, 1);
            proc_.append_string(3, "com.android.app");
        }
        for (tid, name) in [(21, "RenderThread"), (22, "GPU completion")] {
            let mut t = tree.begin_nested(2);
            t.append_int32(1, tid);
            t.append_string(2, name);
            t.append_int32(3, 20);
        }
    })
}

/// atrace lines as ftrace `print` events of (ts, tid, line).
fn prints(events: &[(u64, u32, &str)]) -> Vec<u8> {
    let events = events.to_vec();
    packet(move |p| {
        let mut bundle = p.message().begin_nested(1);
        bundle.append_uint32(1, 0);
        for (ts, tid, line) in events {
            let mut e = bundle.begin_nested(2);
            e.append_uint64(1, ts);
            e.append_uint32(2, tid);
            e.begin_nested(3).append_string(2, &format!("{line}\n"));
        }
    })
}

/// A frame timeline packet at `ts` whose event is field `which`.
fn frame_event(ts: u64, which: u32, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(move |p| {
        p.set_timestamp(ts);
        let mut e = p.message().begin_nested(FRAME_TIMELINE_EVENT);
        let mut inner = e.begin_nested(which);
        f(&mut inner);
    })
}

/// The expected (`cookie`) and actual (`cookie + 1`) surface frames of
/// the app's frame `token` on layer `app#1`: expected over `expected`,
/// actual over `actual`, with the actual frame's jank type.
fn surface_frame(
    cookie: i64,
    token: i64,
    expected: (u64, u64),
    actual: (u64, u64),
    jank_type: i32,
) -> Vec<Vec<u8>> {
    let start = |m: &mut Message<'_>, cookie: i64| {
        m.append_int64(1, cookie);
        m.append_int64(2, token);
        m.append_int64(3, token + 100);
        m.append_int32(4, 20);
        m.append_string(5, "app#1");
    };
    let end = |ts: u64, cookie: i64| {
        frame_event(ts, 5, move |m| {
            m.append_int64(1, cookie);
        })
    };
    vec![
        frame_event(expected.0, 3, |m| start(m, cookie)),
        end(expected.1, cookie),
        frame_event(actual.0, 4, |m| {
            start(m, cookie + 1);
            // Present type: on time (1) or late (3).
            m.append_int32(6, if jank_type == JANK_NONE { 1 } else { 3 });
            m.append_int32(9, jank_type);
        }),
        end(actual.1, cookie + 1),
    ]
}

/// One CUJ of the app from 0 to 100 ms over frames 7 (on time) and 8
/// (the app missed its deadline), with binder transactions on the main
/// thread inside each frame's doFrame and one on the RenderThread between
/// the frames.
fn app_trace() -> TraceProcessor {
    let mut packets = vec![
        app_process(),
        prints(&[
            (0, 20, "S|20|J<SCROLL>|1"),
            // Frame 7: doFrame 10-20 ms, 2 ms binder calls at 12 and 18 ms.
            (10 * MS, 20, "B|20|Choreographer#doFrame 7"),
            (12 * MS, 20, "B|20|binder transaction"),
            (14 * MS, 20, "E|20"),
            (18 * MS, 20, "B|20|binder transaction"),
            (20 * MS, 20, "E|20"),
            (20 * MS, 20, "E|20"),
            (20 * MS, 21, "B|20|DrawFrame 7"),
            (21 * MS, 21, "B|20|Trace GPU completion fence 1"),
            (21 * MS, 21, "E|20"),
            (24 * MS, 21, "E|20"),
            // A binder call on the RenderThread from 24 to 32 ms, across
            // frame 7's end (26 ms) and frame 8's start (30 ms).
            (24 * MS, 21, "B|20|binder transaction"),
            (32 * MS, 21, "E|20"),
            (25 * MS, 22, "B|20|waiting for GPU completion 1"),
            (26 * MS, 22, "E|20"),
            // Frame 8: doFrame 30-50 ms, a 4 ms binder call at 40 ms.
            (30 * MS, 20, "B|20|Choreographer#doFrame 8"),
            (40 * MS, 20, "B|20|binder transaction"),
            (44 * MS, 20, "E|20"),
            (50 * MS, 20, "E|20"),
            (50 * MS, 21, "B|20|DrawFrame 8"),
            (51 * MS, 21, "B|20|Trace GPU completion fence 2"),
            (51 * MS, 21, "E|20"),
            (55 * MS, 21, "E|20"),
            (56 * MS, 22, "B|20|waiting for GPU completion 2"),
            (57 * MS, 22, "E|20"),
            (100 * MS, 20, "F|20|J<SCROLL>|1"),
        ]),
    ];
    packets.extend(surface_frame(
        1,
        7,
        (10 * MS, 26 * MS),
        (10 * MS, 26 * MS),
        JANK_NONE,
    ));
    packets.extend(surface_frame(
        3,
        8,
        (30 * MS, 46 * MS),
        (30 * MS, 60 * MS),
        JANK_APP_DEADLINE_MISSED,
    ));
    TraceProcessor::from_bytes(&trace(&packets)).expect("trace")
}

#[test]
fn the_jank_cuj_metric_publishes_the_cujs_and_their_frames() {
    let tp = app_trace();
    let out = tp
        .query_outputs(
            "SELECT RUN_METRIC('android/android_jank_cuj.sql');
             SELECT cuj_id, cuj_name FROM android_jank_cuj;
             SELECT cuj_id, frame_number, vsync, app_missed, dur_expected
             FROM android_jank_cuj_frame ORDER BY vsync;
             SELECT name, slice_table_name FROM android_jank_cuj_table_set
             WHERE name = 'MainThread'",
        )
        .expect("query");
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[0].rows, vec![vec![i(1), s("SCROLL")]]);
    assert_eq!(
        out[1].rows,
        vec![
            vec![i(1), i(1), i(7), i(0), i(16 * MS as i64)],
            vec![i(1), i(2), i(8), i(1), i(16 * MS as i64)],
        ]
    );
    assert_eq!(
        out[2].rows,
        vec![vec![
            s("MainThread"),
            s("android_jank_cuj_main_thread_slice")
        ]]
    );
}

#[test]
fn correlating_slices_cuts_them_to_each_frame_and_sums_them() {
    let tp = app_trace();
    let out = tp
        .query_outputs(
            "SELECT RUN_METRIC('android/android_jank_cuj.sql');
             CREATE PERFETTO VIEW binder AS
             SELECT * FROM android_jank_cuj_slice WHERE name = 'binder transaction';
             SELECT android_jank_correlate_frame_slice('MainThread', 'binder');
             SELECT cuj_id, frame_number, vsync, dur_expected, app_missed,
               slice_dur_div_frame_dur_expected, slice_dur_sum, slice_dur_max
             FROM jank_query_slice_in_frame_agg ORDER BY vsync;
             SELECT android_jank_correlate_frame_slice_impl(
               'App threads', 'binder', 'app');
             SELECT vsync, slice_dur_sum FROM app_slice_in_frame_agg ORDER BY vsync",
        )
        .expect("query");
    assert_eq!(out.len(), 2, "{out:?}");
    let ratio = |dur: u64| Value::Real(dur as f64 / (16 * MS) as f64);
    let expected = |vsync: i64, number: i64, missed: i64, sum: u64, max: u64| {
        vec![
            i(1),
            i(number),
            i(vsync),
            i(16 * MS as i64),
            i(missed),
            ratio(sum),
            i(sum as i64),
            i(max as i64),
        ]
    };
    // On the main thread: each doFrame's two calls; the RenderThread's
    // call is not the main thread's.
    assert_eq!(
        out[0].rows,
        vec![
            expected(7, 1, 0, 4 * MS, 2 * MS),
            expected(8, 2, 1, 4 * MS, 4 * MS),
        ]
    );
    // On all the app's threads, cut at the frames' own spans: the
    // RenderThread's call adds 24-26 ms to frame 7 and 30-32 ms to frame 8.
    assert_eq!(
        out[1].rows,
        vec![vec![i(7), i(6 * MS as i64)], vec![i(8), i(6 * MS as i64)]]
    );
}

#[test]
fn the_correlate_function_names_the_tables_it_made() {
    let tp = app_trace();
    tp.query("SELECT RUN_METRIC('android/android_jank_cuj.sql')")
        .expect("metric");
    let rows = tp
        .query(
            "SELECT android_jank_correlate_frame_slice_impl(
               'SF threads', 'android_jank_cuj_sf_slice', 'sf')",
        )
        .expect("query")
        .rows;
    assert_eq!(
        rows,
        vec![vec![s(
            "Query results in `sf_slice_in_frame_agg` and `sf_slice_in_frame`."
        )]]
    );
    // Without SurfaceFlinger in the trace there is no SF frame to match.
    let rows = tp
        .query("SELECT COUNT(*) FROM sf_slice_in_frame_agg")
        .expect("query")
        .rows;
    assert_eq!(rows, vec![vec![i(0)]]);
}
