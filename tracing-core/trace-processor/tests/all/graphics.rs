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

/// atrace `print` events at (ts, tid, text) as one ftrace bundle.
fn prints(events: &[(u64, u32, &str)]) -> Vec<u8> {
    let events = events.to_vec();
    packet(move |p| {
        let m = p.message();
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        for (ts, pid, buf) in events {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, ts);
            e.append_uint32(2, pid);
            e.begin_nested(3).append_string(2, buf);
        }
    })
}

#[test]
fn android_frames_match_the_apps_slices_to_the_frame_timeline() {
    let packets = [
        prints(&[
            (100, 20, "B|20|Choreographer#doFrame 7\n"),
            (150, 20, "E|20\n"),
            (160, 21, "B|20|DrawFrame 7\n"),
            (190, 21, "E|20\n"),
        ]),
        // Expected surface frame of token 7 from 90 to 120.
        frame_event(90, 3, |m| {
            m.append_int64(1, 1);
            m.append_int64(2, 7);
            m.append_int64(3, 8);
            m.append_int32(4, 20);
            m.append_string(5, "app#3");
        }),
        frame_end(120, 1),
        // Actual surface frame of token 7 from 100 to 200.
        frame_event(100, 4, |m| {
            m.append_int64(1, 2);
            m.append_int64(2, 7);
            m.append_int64(3, 8);
            m.append_int32(4, 20);
            m.append_string(5, "app#3");
        }),
        frame_end(200, 2),
    ];
    let tp = TraceProcessor::from_bytes(&trace(&packets)).unwrap();
    let r = tp
        .query(
            "INCLUDE PERFETTO MODULE android.frames.per_frame_metrics; \
             SELECT f.frame_id, f.ts, f.dur, f.actual_frame_timeline_count, f.draw_frame_count, \
               l.layer_id, o.overrun, v.app_vsync_delay, c.cpu_time \
             FROM android_frames f JOIN android_frames_layers l USING (frame_id) \
             JOIN android_frames_overrun o USING (frame_id) \
             JOIN android_app_vsync_delay_per_frame v USING (frame_id) \
             JOIN android_cpu_time_per_frame c USING (frame_id)",
        )
        .unwrap();
    // CPU time: vsync delay 10 + doFrame 50 + DrawFrame 30.
    assert_eq!(
        r.rows,
        vec![vec![
            i(7),
            i(100),
            i(100),
            i(1),
            i(1),
            i(3),
            i(80),
            i(10),
            i(90)
        ]]
    );
}

/// One ftrace event: (ts, pid, payload field, [(field, value)]).
type FtraceEvent = (u64, u32, u32, Vec<(u32, u64)>);

/// ftrace events as one bundle of CPU 0.
fn ftrace(events: &[FtraceEvent]) -> Vec<u8> {
    let events = events.to_vec();
    packet(move |p| {
        let m = p.message();
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        for (ts, pid, field, values) in events {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, ts);
            e.append_uint32(2, pid);
            let mut body = e.begin_nested(field);
            for (f, v) in values {
                body.append_uint64(f, v);
            }
        }
    })
}

/// A `GpuMemTotalEvent` packet.
fn gpu_mem_total(ts: u64, gpu: u32, pid: u32, size: u64) -> Vec<u8> {
    packet(move |p| {
        p.set_timestamp(ts);
        let mut e = p.message().begin_nested(71);
        e.append_uint32(1, gpu);
        e.append_uint32(2, pid);
        e.append_uint64(3, size);
    })
}

#[test]
fn gpu_frequency_and_memory_become_gpu_counters_and_the_android_gpu_modules_read_them() {
    let packets = [
        ftrace(&[
            (10, 1, 332, vec![(1, 0), (2, 585_000)]),
            (20, 1, 332, vec![(1, 1), (2, 400_000)]),
            (30, 1, 332, vec![(1, 0), (2, 0)]),
            // kgsl reports kHz / 1000.
            (40, 1, 509, vec![(1, 603), (2, 0)]),
            // A total of a thread the trace does not know: dropped.
            (45, 1, 340, vec![(1, 0), (2, 77), (3, 9)]),
        ]),
        gpu_mem_total(5, 0, 0, 123),
        gpu_mem_total(6, 0, 42, 100),
        gpu_mem_total(8, 0, 42, 233),
        // The generic packet of GPU frequency.
        packet(|p| {
            p.set_timestamp(50);
            let mut e = p.message().begin_nested(129);
            e.append_uint32(1, 1);
            e.append_uint32(2, 758_000);
        }),
    ];
    let tp = TraceProcessor::from_bytes(&trace(&packets)).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, gpu_id, value, unit FROM counter c JOIN gpu_counter_track t \
             ON c.track_id = t.id WHERE t.name = 'gpufreq' ORDER BY ts"
        ),
        vec![
            vec![i(10), i(0), Value::Real(585_000.0), s("kHz")],
            vec![i(20), i(1), Value::Real(400_000.0), s("kHz")],
            vec![i(30), i(0), Value::Real(0.0), s("kHz")],
            vec![i(40), i(0), Value::Real(603_000.0), s("kHz")],
            vec![i(50), i(1), Value::Real(758_000.0), s("kHz")],
        ]
    );
    let r = tp
        .query(
            "INCLUDE PERFETTO MODULE android.gpu.frequency; \
             SELECT ts, dur, gpu_id, gpu_freq FROM android_gpu_frequency ORDER BY gpu_id, ts",
        )
        .unwrap();
    assert_eq!(
        r.rows,
        vec![
            vec![i(10), i(20), i(0), i(585_000)],
            vec![i(30), i(10), i(0), i(0)],
            vec![i(40), i(10), i(0), i(603_000)],
            vec![i(20), i(30), i(1), i(400_000)],
            vec![i(50), i(0), i(1), i(758_000)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.type, extract_arg(t.dimension_arg_set_id, 'upid') IS NULL, c.ts, c.value \
             FROM counter c JOIN counter_track t \
             ON c.track_id = t.id WHERE t.name = 'GPU Memory' ORDER BY c.ts"
        ),
        vec![
            vec![s("gpu_memory"), i(1), i(5), Value::Real(123.0)],
            vec![s("process_gpu_memory"), i(0), i(6), Value::Real(100.0)],
            vec![s("process_gpu_memory"), i(0), i(8), Value::Real(233.0)],
        ]
    );
    let r = tp
        .query(
            "INCLUDE PERFETTO MODULE android.gpu.memory; \
             SELECT ts, gpu_memory FROM android_gpu_memory_per_process ORDER BY ts",
        )
        .unwrap();
    assert_eq!(r.rows, vec![vec![i(6), i(100)], vec![i(8), i(233)]]);
}

#[test]
fn gpu_log_lines_and_vulkan_queue_submits_are_gpu_slices_with_upstreams_args() {
    let packets = [
        packet(|p| {
            p.set_timestamp(1);
            let mut e = p.message().begin_nested(63);
            e.append_int32(1, 4);
            e.append_string(2, "tag0");
            e.append_string(3, "message0");
        }),
        packet(|p| {
            p.set_timestamp(2);
            p.message().begin_nested(63).append_int32(1, 99);
        }),
        packet(|p| {
            p.set_timestamp(10);
            let mut e = p.message().begin_nested(65);
            let mut s = e.begin_nested(2);
            s.append_uint64(1, 2);
            s.append_uint32(2, 42);
            s.append_uint32(3, 43);
            s.append_uint64(5, 200);
            s.append_uint64(5, 300);
            s.append_uint32(6, 7);
        }),
    ];
    let tp = TraceProcessor::from_bytes(&trace(&packets)).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT g.name, g.scope, s.ts, s.dur, s.name, extract_arg(s.arg_set_id, 'tag'), \
             extract_arg(s.arg_set_id, 'message'), s.command_buffer, \
             extract_arg(s.arg_set_id, 'command_buffers[1]'), s.submission_id, \
             extract_arg(s.arg_set_id, 'pid') \
             FROM gpu_track g JOIN gpu_slice s ON g.id = s.track_id ORDER BY s.ts"
        ),
        vec![
            vec![
                s("GPU Log"),
                s("gpu_log"),
                i(1),
                i(0),
                s("WARNING"),
                s("tag0"),
                s("message0"),
                NULL,
                NULL,
                NULL,
                NULL
            ],
            vec![
                s("GPU Log"),
                s("gpu_log"),
                i(2),
                i(0),
                s("UNKNOWN_SEVERITY"),
                NULL,
                NULL,
                NULL,
                NULL,
                NULL,
                NULL
            ],
            vec![
                s("Vulkan Events"),
                s("vulkan_events"),
                i(10),
                i(2),
                s("vkQueueSubmit"),
                NULL,
                NULL,
                i(200),
                i(300),
                i(7),
                i(42)
            ],
        ]
    );
}

/// A graphics frame event of `kind` for buffer 1 of layer "L".
fn buffer_event(ts: u64, kind: i32, frame: u32) -> Vec<u8> {
    packet(move |p| {
        p.set_timestamp(ts);
        let mut e = p.message().begin_nested(57);
        let mut b = e.begin_nested(1);
        b.append_uint32(1, frame);
        b.append_int32(2, kind);
        b.append_string(3, "L");
        b.append_uint32(5, 1);
    })
}

#[test]
fn graphics_frame_events_become_buffer_and_phase_slices() {
    let packets = [
        buffer_event(1, 1, 0),
        buffer_event(4, 2, 11),
        buffer_event(6, 4, 11),
        buffer_event(8, 5, 11),
        buffer_event(14, 8, 11),
        // Dequeued twice: the first dequeue's phase is named "0".
        buffer_event(20, 1, 0),
        buffer_event(25, 1, 0),
    ];
    let tp = TraceProcessor::from_bytes(&trace(&packets)).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, t.name, s.dur, s.name, s.frame_number, s.layer_name \
             FROM gpu_track t JOIN frame_slice s ON s.track_id = t.id \
             WHERE t.scope = 'graphics_frame_event' ORDER BY s.ts, t.name"
        ),
        vec![
            vec![i(1), s("APP_1 L"), i(3), s("11"), i(11), s("L")],
            vec![i(1), s("Buffer: 1 L"), i(0), s("Dequeue"), i(11), s("L")],
            vec![i(4), s("Buffer: 1 L"), i(0), s("Queue"), i(11), s("L")],
            vec![i(4), s("GPU_1 L"), i(2), s("11"), i(11), s("L")],
            vec![
                i(6),
                s("Buffer: 1 L"),
                i(0),
                s("AcquireFenceSignaled"),
                i(11),
                s("L")
            ],
            vec![i(8), s("Buffer: 1 L"), i(0), s("Latch"), i(11), s("L")],
            vec![i(8), s("SF_1 L"), i(6), s("11"), i(11), s("L")],
            vec![
                i(14),
                s("Buffer: 1 L"),
                i(0),
                s("PresentFenceSignaled"),
                i(11),
                s("L")
            ],
            vec![i(14), s("Display_L"), i(-1), s("11"), i(11), s("L")],
            vec![i(20), s("APP_1 L"), i(-1), s("0"), i(0), s("L")],
            vec![i(20), s("Buffer: 1 L"), i(0), s("Dequeue"), i(0), s("L")],
            vec![i(25), s("APP_1 L"), i(-1), s("25"), i(0), s("L")],
            vec![i(25), s("Buffer: 1 L"), i(0), s("Dequeue"), i(0), s("L")],
        ]
    );
}

/// A virtio GPU queue event (field 468 queue, 469 response) on queue
/// `name`.
fn virtgpu(ts: u64, field: u32, name: &str, seqno: u32, ty: u32, fence: u64) -> Vec<u8> {
    let name = name.to_owned();
    packet(move |p| {
        let m = p.message();
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        let mut e = b.begin_nested(2);
        e.append_uint64(1, ts);
        e.append_uint32(2, 1);
        let mut body = e.begin_nested(field);
        body.append_uint64(3, fence);
        body.append_string(5, &name);
        body.append_uint32(6, 60 + seqno);
        body.append_uint32(7, seqno);
        body.append_uint32(8, ty);
    })
}

#[test]
fn virtio_gpu_commands_are_slices_from_queueing_to_response_with_latency_and_free_slots() {
    let packets = [
        virtgpu(100, 468, "control", 1, 0x207, 0),
        virtgpu(110, 468, "control", 2, 0x203, 5),
        virtgpu(150, 469, "control", 1, 0x1100, 0),
        virtgpu(170, 469, "control", 2, 0x1100, 0),
        // Another queue than control or cursor: ignored.
        virtgpu(180, 468, "other", 3, 0x207, 0),
    ];
    let tp = TraceProcessor::from_bytes(&trace(&packets)).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.name FROM slice s JOIN track t \
             ON s.track_id = t.id ORDER BY s.ts"
        ),
        vec![
            vec![i(100), i(50), s("SUBMIT_3D"), s("Virtgpu Control Queue")],
            vec![
                i(110),
                i(60),
                s("CTX_DETACH_RESOURCE"),
                s("Virtgpu Control Queue")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, c.ts, c.value FROM counter c JOIN counter_track t \
             ON c.track_id = t.id ORDER BY t.name, c.ts"
        ),
        vec![
            vec![s("Virtgpu Control Free"), i(100), Value::Real(61.0)],
            vec![s("Virtgpu Control Free"), i(110), Value::Real(62.0)],
            vec![s("Virtgpu Control Free"), i(150), Value::Real(61.0)],
            vec![s("Virtgpu Control Free"), i(170), Value::Real(62.0)],
            vec![s("Virtgpu Control Latency"), i(150), Value::Real(50.0)],
        ]
    );
}
