//! The standard library's Android user-journey modules on atrace traces
//! built here: SystemUI's jank and latency CUJs (`android.cujs.*`),
//! checked against what each trace says.

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
