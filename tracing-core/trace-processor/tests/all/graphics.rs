//! The GPU, graphics and frame timeline importers on small synthetic
//! traces: what each packet kind becomes in the tables and views
//! upstream's queries read.

use protozero::Message;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common::{i, packet, rows, s, trace};

const NULL: Value = Value::Null;

/// A frame timeline packet at `ts` whose event is field `which` of
/// `FrameTimelineEvent`, written by `f`.
fn frame_event(ts: u64, which: u32, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(move |p| {
        p.set_timestamp(ts);
        let mut e = p.message().begin_nested(76);
        let mut inner = e.begin_nested(which);
        f(&mut inner);
    })
}

fn frame_end(ts: u64, cookie: i64) -> Vec<u8> {
    frame_event(ts, 5, |m| {
        m.append_int64(1, cookie);
    })
}

#[test]
fn frame_timeline_slices_carry_upstreams_columns_and_flow_to_their_display_frame() {
    let packets = [
        // Expected display frame: cookie 1, token 2, pid 666.
        frame_event(20, 1, |m| {
            m.append_int64(1, 1);
            m.append_int64(2, 2);
            m.append_int32(3, 666);
        }),
        // Expected surface frame: cookie 2, token 1, display 2, pid 1000.
        frame_event(21, 3, |m| {
            m.append_int64(1, 2);
            m.append_int64(2, 1);
            m.append_int64(3, 2);
            m.append_int32(4, 1000);
            m.append_string(5, "Layer1");
        }),
        // The same token again: no second expected slice.
        frame_event(22, 3, |m| {
            m.append_int64(1, 3);
            m.append_int64(2, 1);
            m.append_int64(3, 2);
            m.append_int32(4, 1000);
            m.append_string(5, "Layer1");
        }),
        frame_end(26, 1),
        frame_end(36, 2),
        frame_end(37, 3),
        // Actual surface frame: late, app deadline missed, full severity.
        frame_event(41, 4, |m| {
            m.append_int64(1, 4);
            m.append_int64(2, 5);
            m.append_int64(3, 6);
            m.append_int32(4, 1000);
            m.append_string(5, "Layer1");
            m.append_int32(6, 2);
            m.append_int32(9, 64);
            m.append_int32(10, 1);
            m.append_int32(12, 3);
        }),
        // Actual display frame of token 6: SF scheduling and CPU deadline.
        frame_event(42, 2, |m| {
            m.append_int64(1, 5);
            m.append_int64(2, 6);
            m.append_int32(3, 666);
            m.append_int32(4, 2);
            m.append_bool(5, false);
            m.append_int32(7, 2 | 16);
            m.append_int32(8, 1);
        }),
        frame_end(47, 5),
        frame_end(74, 4),
        // An end with no begin is counted.
        frame_end(80, 99),
    ];
    let tp = TraceProcessor::from_bytes(&trace(&packets)).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, p.pid, display_frame_token, surface_frame_token, layer_name \
             FROM expected_frame_timeline_slice JOIN process p USING (upid) ORDER BY ts"
        ),
        vec![
            vec![i(20), i(6), i(666), i(2), NULL, NULL],
            vec![i(21), i(15), i(1000), i(2), i(1), s("Layer1")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, name, display_frame_token, surface_frame_token, present_type, \
             on_time_finish, jank_type, prediction_type, jank_tag, jank_severity_type \
             FROM actual_frame_timeline_slice ORDER BY ts"
        ),
        vec![
            vec![
                i(41),
                i(33),
                s("5"),
                i(6),
                i(5),
                s("Late Present"),
                i(0),
                s("App Deadline Missed"),
                s("Valid Prediction"),
                s("Self Jank"),
                s("Full"),
            ],
            vec![
                i(42),
                i(5),
                s("6"),
                i(6),
                NULL,
                s("Late Present"),
                i(0),
                s("SurfaceFlinger Scheduling, SurfaceFlinger CPU Deadline Missed"),
                s("Valid Prediction"),
                s("Self Jank"),
                s("Unknown"),
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT o.ts, i.ts FROM flow f JOIN slice o ON f.slice_out = o.id \
             JOIN slice i ON f.slice_in = i.id"
        ),
        vec![vec![i(41), i(42)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT DISTINCT name, type FROM process_track WHERE type GLOB 'android_*' ORDER BY name"
        ),
        vec![
            vec![s("Actual Timeline"), s("android_actual_frame_timeline")],
            vec![s("Expected Timeline"), s("android_expected_frame_timeline")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'frame_timeline_unpaired_end_event'"
        ),
        vec![vec![i(1)]]
    );
}
