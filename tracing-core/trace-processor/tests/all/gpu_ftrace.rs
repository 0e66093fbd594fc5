//! The GPU and video drivers' ftrace events on small synthetic traces:
//! DRM vblanks, scheduler jobs and DMA fences, V4L2 buffers and the
//! virtio video device, as upstream's queries read them.

use protozero::Message;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common::{i, packet, rows, s, trace};

const NULL: Value = Value::Null;

/// One ftrace event of CPU 0 at `ts` from `pid`: payload field `field`
/// written by `f`.
fn event(ts: u64, pid: u32, field: u32, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(move |p| {
        let mut b = p.message().begin_nested(1);
        b.append_uint32(1, 0);
        let mut e = b.begin_nested(2);
        e.append_uint64(1, ts);
        e.append_uint32(2, pid);
        let mut body = e.begin_nested(field);
        f(&mut body);
    })
}

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

/// A dma_fence event: context, timeline, seqno.
fn fence(ts: u64, pid: u32, field: u32, context: u32, timeline: &str, seqno: u32) -> Vec<u8> {
    let timeline = timeline.to_owned();
    event(ts, pid, field, move |m| {
        m.append_uint32(1, context);
        m.append_uint32(3, seqno);
        m.append_string(4, &timeline);
    })
}

#[test]
fn drm_vblanks_scheduler_jobs_and_fences_are_gpu_track_slices() {
    let tp = load(&[
        event(10, 5, 409, |m| {
            m.append_int32(1, 0);
            m.append_uint32(3, 7);
        }),
        event(11, 5, 410, |m| {
            m.append_int32(1, 0);
            m.append_uint32(3, 7);
        }),
        // Before 6.17: queued by thread 30 (job 1), run (fence 99), done.
        event(20, 30, 411, |m| {
            m.append_uint64(4, 1);
            m.append_string(6, "gfx");
        }),
        event(25, 0, 412, |m| {
            m.append_uint64(2, 99);
            m.append_uint64(4, 1);
            m.append_string(6, "gfx");
        }),
        event(40, 0, 413, |m| {
            m.append_uint64(1, 99);
        }),
        fence(50, 0, 414, 3, "tl", 1),
        fence(60, 0, 416, 3, "tl", 1),
        // Fence containers' timelines are left out.
        fence(61, 0, 414, 4, "unbound", 1),
        fence(70, 31, 417, 3, "tl", 2),
        fence(80, 31, 418, 3, "tl", 2),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, t.scope, s.ts, s.dur, s.name, \
             extract_arg(s.arg_set_id, 'vblank seqno'), \
             extract_arg(s.arg_set_id, 'gpu sched job'), \
             extract_arg(s.arg_set_id, 'fence seqno') \
             FROM gpu_track t JOIN slice s ON s.track_id = t.id ORDER BY s.ts"
        ),
        vec![
            vec![
                s("vblank-0"),
                s("drm_vblank"),
                i(10),
                i(0),
                s("signal"),
                i(7),
                NULL,
                NULL
            ],
            vec![
                s("vblank-0"),
                s("drm_vblank"),
                i(11),
                i(0),
                s("deliver"),
                i(7),
                NULL,
                NULL
            ],
            vec![
                s("sched-gfx"),
                s("drm_sched_ring"),
                i(25),
                i(15),
                s("job"),
                NULL,
                i(1),
                NULL
            ],
            vec![
                s("fence-tl-3"),
                s("drm_fence"),
                i(50),
                i(10),
                s("fence"),
                NULL,
                NULL,
                i(1)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.tid, s.ts, s.dur, s.name, \
             extract_arg(s.arg_set_id, 'gpu sched ring'), \
             extract_arg(s.arg_set_id, 'fence context') \
             FROM thread_track tt JOIN thread t USING (utid) \
             JOIN slice s ON s.track_id = tt.id ORDER BY s.ts"
        ),
        vec![
            vec![i(30), i(20), i(0), s("drm_sched_job_queue"), s("gfx"), NULL],
            vec![i(31), i(70), i(10), s("dma_fence_wait"), NULL, i(3)],
        ]
    );
    // The queueing flows to the job's run.
    assert_eq!(
        rows(
            &tp,
            "SELECT o.name, n.name FROM flow f JOIN slice o ON f.slice_out = o.id \
             JOIN slice n ON f.slice_in = n.id"
        ),
        vec![vec![s("drm_sched_job_queue"), s("job")]]
    );
}

/// A `v4l2_qbuf` (422) or `v4l2_dqbuf` (423) of buffer `index`.
fn v4l2(ts: u64, field: u32, index: u32, flags: u32) -> Vec<u8> {
    event(ts, 7, field, move |m| {
        m.append_uint32(3, flags);
        m.append_uint32(4, index);
        m.append_int32(5, 0);
        m.append_uint32(6, 2);
        m.append_uint32(18, 9);
    })
}

#[test]
fn v4l2_buffers_are_instants_named_by_ioctl_and_flow_from_queue_to_dequeue() {
    let tp = load(&[v4l2(10, 422, 19, 0x2003), v4l2(20, 423, 19, 0)]);
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.category, s.name, extract_arg(s.arg_set_id, 'type'), \
             extract_arg(s.arg_set_id, 'flags'), extract_arg(s.arg_set_id, 'timecode_flags') \
             FROM slice s ORDER BY s.ts"
        ),
        vec![
            vec![
                i(10),
                i(0),
                s("Video 4 Linux 2"),
                s("VIDIOC_QBUF minor=0 seq=2 type=9 index=19"),
                s("VIDEO_CAPTURE_MPLANE"),
                s("MAPPED|QUEUED|TIMESTAMP_MASK|TIMESTAMP_MONOTONIC"),
                s("USERBITS_USERDEFINED")
            ],
            vec![
                i(20),
                i(0),
                s("Video 4 Linux 2"),
                s("VIDIOC_DQBUF minor=0 seq=2 type=9 index=19"),
                s("VIDEO_CAPTURE_MPLANE"),
                s("TIMESTAMP_UNKNOWN|TSTAMP_SRC_EOF"),
                s("USERBITS_USERDEFINED")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT o.ts, n.ts FROM flow f JOIN slice o ON f.slice_out = o.id \
             JOIN slice n ON f.slice_in = n.id"
        ),
        vec![vec![i(10), i(20)]]
    );
}

/// A virtio video resource event (441 queued, 442 done).
fn resource(ts: u64, field: u32, resource: i32) -> Vec<u8> {
    event(ts, 1, field, move |m| {
        m.append_uint32(1, 4096);
        m.append_uint32(5, 0x101);
        m.append_int32(6, resource);
        m.append_int32(7, 4);
        m.append_uint64(8, 77);
    })
}

#[test]
fn virtio_video_resources_and_commands_are_slices_on_stream_tracks() {
    let tp = load(&[
        resource(10, 441, 102),
        resource(30, 442, 102),
        event(40, 1, 439, |m| {
            m.append_uint32(1, 4);
            m.append_uint32(2, 0x105);
        }),
        // Within the first command's 100 µs: a second Requests track.
        event(50, 1, 439, |m| {
            m.append_uint32(1, 4);
            m.append_uint32(2, 0x999);
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.name, extract_arg(s.arg_set_id, 'queue_type'), \
             extract_arg(s.arg_set_id, 'data_size0'), extract_arg(s.arg_set_id, 'timestamp') \
             FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts"
        ),
        vec![
            vec![
                i(10),
                i(20),
                s("Resource #102"),
                s("virtio_video stream #4 OUTPUT"),
                s("OUTPUT"),
                i(4096),
                i(77)
            ],
            vec![
                i(40),
                i(100_000),
                s("RESOURCE_QUEUE"),
                s("virtio_video stream #4 Requests"),
                NULL,
                NULL,
                NULL
            ],
            vec![
                i(50),
                i(100_000),
                s("Unknown"),
                s("virtio_video stream #4 Requests"),
                NULL,
                NULL,
                NULL
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT COUNT(DISTINCT track_id) FROM slice WHERE dur = 100000"
        ),
        vec![vec![i(2)]]
    );
}
