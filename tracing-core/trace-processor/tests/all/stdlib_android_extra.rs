//! More of the standard library's `android.*` modules on traces built
//! here: slice names standardized for aggregation (`android.slices`),
//! ANRs from system_server's counters (`android.anrs`), and process memory
//! intervals with the forking zygote's share taken off
//! (`android.memory.memory_breakdown`), Pixel's touch frames joined to
//! their IRQ halves (`pixel.touch`) and its camera graph's slices split
//! into their parts (`pixel.camera`).

use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

#[test]
fn slice_names_lose_their_variable_parts() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    let cases = [
        (
            "Lock contention on thread list lock (owner tid: 1665)",
            "Lock contention on thread list lock <...>",
        ),
        (
            "monitor contention with owner Thread-3 (42)",
            "monitor contention with <...>",
        ),
        ("Choreographer#doFrame 123456", "Choreographer#doFrame"),
        ("/data/app/com.example-1/base.apk", "APK load"),
        (
            "android.os.Handler: com.android.systemui.qs.TileServiceManager$1",
            "Handler: com.android.systemui.qs.TileServiceManager",
        ),
        (
            "android.os.AsyncTask$InternalHandler: #1",
            "Handler: android.os.AsyncTask",
        ),
        (
            "Transaction (ptz-fgd-1-SYNC, 11910)",
            "Transaction (ptz-fgd-1-SYNC, <...>)",
        ),
        (
            "Transaction (Thread-12, 345)",
            "Transaction (Thread-<...>,, 345)",
        ),
        (
            "drawLayer [DoubleShadowNode] 55.0 x 55.0",
            "drawLayer [DoubleShadowNode]",
        ),
        (
            "Wakelock(epolld123:system_server)",
            "Wakelock(epolld<...>:system_server)",
        ),
        ("Choreographer#onVsync 12", "Choreographer#onVsync<...>"),
        ("StatsPull-10023", "StatsPull-10023"),
        ("kworker/12:1", "kworker/<num>:1"),
        ("Not changed at ALL 0", "Not changed at ALL 0"),
        ("buffer 0xdeadbeef", "buffer 0x<num>"),
    ];
    for (name, want) in cases {
        let got = rows(
            &tp,
            &format!(
                "INCLUDE PERFETTO MODULE android.slices;
                 SELECT android_standardize_slice_name('{}')",
                name.replace('\'', "''")
            ),
        );
        assert_eq!(got, vec![vec![s(want)]], "{name}");
    }
}

/// A track descriptor of process `pid` called `name`, uuid `uuid`.
fn process(uuid: u64, pid: i32, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(0);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(uuid);
        td.begin_process().set_pid(pid).set_process_name(name);
    })
}

/// A counter track `name` under track `parent`.
fn counter_track(uuid: u64, parent: u64, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(0);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(uuid);
        td.set_parent_uuid(parent);
        td.set_name(name);
        td.begin_counter();
    })
}

/// A slice `name` on track `uuid` from `ts` to `end`.
fn slice(ts: u64, end: u64, uuid: u64, name: &str) -> Vec<Vec<u8>> {
    let event = |t: u64, kind: track_event::Type, name: Option<&str>| {
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(t);
            let mut e = p.begin_track_event();
            e.set_type(kind);
            e.set_track_uuid(uuid);
            if let Some(n) = name {
                e.set_name(n);
            }
        })
    };
    vec![
        event(ts, track_event::Type::SliceBegin, Some(name)),
        event(end, track_event::Type::SliceEnd, None),
    ]
}

/// A counter value on track `uuid`.
fn value(ts: u64, uuid: u64, v: i64) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.set_type(track_event::Type::Counter);
        e.set_track_uuid(uuid);
        e.set_counter_value(v);
    })
}

#[test]
fn anrs_come_from_system_servers_error_counters_with_their_subject() {
    let tp = TraceProcessor::from_bytes(&trace(&[
        process(1, 1000, "system_server"),
        process(2, 4321, "com.example"),
        counter_track(10, 1, "ErrorId:com.example 4321#abc-1"),
        counter_track(
            11,
            1,
            "Subject(for ErrorId abc-1):Input dispatching timed out (com.example/Main, Waited 5001ms)",
        ),
        counter_track(12, 1, "ErrorId:system_server#abc-2"),
        value(5000, 10, 1),
        value(5000, 11, 1),
        value(9000, 12, 1),
    ]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.anrs;
             SELECT process_name, pid, upid IS NOT NULL, error_id, ts, anr_type, component,
                    default_anr_dur_ms
             FROM android_anrs ORDER BY ts",
        ),
        vec![
            vec![
                s("com.example"),
                i(4321),
                i(1),
                s("abc-1"),
                i(5000),
                s("INPUT_DISPATCHING_TIMEOUT"),
                s("Waited"),
                i(5000)
            ],
            // No subject: system_server's own, its watchdog's.
            vec![
                s("system_server"),
                Value::Null,
                i(0),
                s("abc-2"),
                i(9000),
                Value::Null,
                Value::Null,
                Value::Null
            ],
        ]
    );
}

/// `TracePacket.process_tree`.
const PROCESS_TREE: u32 = 2;
/// `TracePacket.process_stats`.
const PROCESS_STATS: u32 = 9;

/// Anon RSS readings in KB of (pid, kb) at `ts`.
fn anon_rss(ts: u64, readings: &[(i32, u64)]) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        let mut st = p.message().begin_nested(PROCESS_STATS);
        for &(pid, kb) in readings {
            let mut proc_ = st.begin_nested(1);
            proc_.append_int32(1, pid);
            proc_.append_uint64(4, kb);
        }
    })
}

#[test]
fn memory_intervals_take_off_the_forking_zygotes_average() {
    let tree = packet(|p| {
        p.set_timestamp(10);
        let mut tree = p.message().begin_nested(PROCESS_TREE);
        for (pid, ppid, name) in [(100, 1, "zygote64"), (200, 100, "com.app")] {
            let mut proc_ = tree.begin_nested(1);
            proc_.append_int32(1, pid);
            proc_.append_int32(2, ppid);
            proc_.append_string(3, name);
        }
    });
    let tp = TraceProcessor::from_bytes(&trace(&[
        tree,
        anon_rss(1000, &[(100, 100), (200, 300)]),
        anon_rss(2000, &[(100, 300), (200, 500)]),
    ]))
    .expect("trace");
    // The zygote's anon RSS averages 200 KB: the app's 300 KB count 100 KB
    // of its own; the zygote's own are not adjusted. The last readings last
    // until the trace's end, no time at all.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.memory_breakdown;
             SELECT process_name, ts, dur, memory_track_name, value, zygote_adjusted_value
             FROM android_process_memory_intervals ORDER BY process_name, ts",
        ),
        vec![
            vec![
                s("com.app"),
                i(1000),
                i(1000),
                s("mem.rss.anon"),
                i(307_200),
                i(102_400)
            ],
            vec![
                s("zygote64"),
                i(1000),
                i(1000),
                s("mem.rss.anon"),
                i(102_400),
                i(102_400)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT process_name, bucket FROM android_process_memory_intervals_by_oom_bucket
             ORDER BY process_name",
        ),
        vec![
            vec![s("com.app"), s("unknown")],
            vec![s("zygote64"), s("unknown")]
        ]
    );
}

#[test]
fn touch_frames_join_their_irq_halves_by_hardware_time_and_irq_index() {
    let mut packets = vec![
        process(1, 5, "touch"),
        counter_track(21, 1, "gti_th_irq_index"),
        counter_track(22, 1, "Resample latency offset"),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(20);
            td.set_parent_uuid(1);
            td.set_name("touch work");
        }),
        value(150, 21, 7),
        value(520, 22, 300),
    ];
    packets.extend(slice(100, 200, 20, "IRQ (touch)"));
    packets.extend(slice(300, 400, 20, "gti_irq_thread_fn: IRQ_IDX=7.0"));
    packets.extend(slice(
        310,
        320,
        20,
        "goog_offload_populate_frame: IN_TS=12345.6",
    ));
    packets.extend(slice(500, 600, 20, "algo->processFrame: IN_TS=12345.6"));
    let tp = TraceProcessor::from_bytes(&trace(&packets)).expect("trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE pixel.touch;
             SELECT in_ts, ts_pixel_touch_th, dur_pixel_touch_th, ts_pixel_touch_bh,
                    ts_pixel_touch, dur_pixel_touch, resample_latency_offset
             FROM pixel_touch_events",
        ),
        vec![vec![
            i(12345),
            i(100),
            i(100),
            i(300),
            i(500),
            i(100),
            i(300)
        ]]
    );
}

#[test]
fn camera_graph_slices_are_split_into_node_port_group_frame_and_camera() {
    let mut packets = vec![packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(0);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(30);
        let mut th = td.begin_thread();
        th.set_pid(5);
        th.set_tid(6);
        th.set_thread_name("camera worker");
    })];
    packets.extend(slice(100, 150, 30, "cam1_SensorNode:main (frame 42)"));
    packets.extend(slice(200, 210, 30, "not a camera slice"));
    let tp = TraceProcessor::from_bytes(&trace(&packets)).expect("trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE pixel.camera;
             SELECT ts, dur, thread_name, node, port_group, frame_number, cam_id
             FROM pixel_camera_frames",
        ),
        vec![vec![
            i(100),
            i(50),
            s("camera worker"),
            s("SensorNode"),
            s("main"),
            i(42),
            i(1)
        ]]
    );
    // No camera process: the memory spans are the (absent) DMA heap's.
    assert_eq!(
        rows(&tp, "SELECT COUNT(*) FROM pixel_camera_memory_span"),
        vec![vec![i(0)]]
    );
}
