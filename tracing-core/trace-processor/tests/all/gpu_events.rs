//! The GPU's own packets on small synthetic traces: counters with their
//! descriptors and groups, render stages with their queues, stages,
//! contexts, compute kernels and debug names, and the GPUs `gpu_info`
//! describes, as upstream's queries read them.

use protozero::Message;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common::{i, packet, rows, s, trace};

const NULL: Value = Value::Null;

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

/// A counter spec: id, name, description, numerator and denominator
/// units, groups, value direction.
fn spec(
    m: &mut Message<'_>,
    (id, name, desc): (u32, &str, &str),
    num: &[i32],
    den: &[i32],
    groups: &[i32],
    direction: Option<i32>,
) {
    let mut s = m.begin_nested(1);
    s.append_uint32(1, id);
    s.append_string(2, name);
    s.append_string(3, desc);
    for u in num {
        s.append_int32(7, *u);
    }
    for u in den {
        s.append_int32(8, *u);
    }
    for g in groups {
        s.append_int32(10, *g);
    }
    if let Some(d) = direction {
        s.append_int32(11, d);
    }
}

/// A `GpuCounterEvent` packet at `ts` on sequence `seq`.
fn counters(ts: u64, seq: u32, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(move |p| {
        p.set_timestamp(ts);
        p.set_trusted_packet_sequence_id(seq);
        let mut e = p.message().begin_nested(52);
        f(&mut e);
    })
}

fn sample(e: &mut Message<'_>, id: u32, value: i64) {
    let mut c = e.begin_nested(2);
    c.append_uint32(1, id);
    c.append_int64(2, value);
}

#[test]
fn gpu_counters_get_tracks_units_groups_and_backwards_looking_values() {
    let tp = load(&[
        counters(1, 1, |e| {
            let mut d = e.begin_nested(1);
            // VERTEX per SECOND, groups VERTICES and a custom group 100.
            spec(
                &mut d,
                (1, "Vertices", "per second"),
                &[25],
                &[22],
                &[2],
                None,
            );
            // NONE over MILLISECOND and MILLISECOND, no groups.
            spec(&mut d, (2, "Rate", "ratio"), &[0], &[21, 0, 21], &[], None);
            // No unit at all; forwards-looking.
            spec(&mut d, (3, "Fwd", "ahead"), &[], &[], &[], Some(2));
            let mut g = d.begin_nested(6);
            g.append_uint32(1, 100);
            g.append_string(2, "Custom");
            g.append_string(3, "custom group");
            g.append_uint32(4, 1);
            g.append_uint32(4, 9);
            drop(g);
            drop(d);
            e.append_int32(3, 1);
        }),
        counters(10, 1, |e| {
            sample(e, 1, 5);
            sample(e, 3, 7);
            sample(e, 42, 1);
        }),
        counters(20, 1, |e| {
            sample(e, 1, 6);
            sample(e, 3, 8);
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, c.value, t.name, t.gpu_id, t.description, t.unit \
             FROM counter c JOIN gpu_counter_track t ON c.track_id = t.id ORDER BY c.ts, t.name"
        ),
        vec![
            vec![i(10), Value::Real(7.0), s("Fwd"), i(1), s("ahead"), NULL],
            vec![
                i(10),
                Value::Real(6.0),
                s("Vertices"),
                i(1),
                s("per second"),
                s("Vertex/s")
            ],
            vec![i(20), Value::Real(8.0), s("Fwd"), i(1), s("ahead"), NULL],
            vec![
                i(20),
                Value::Real(0.0),
                s("Vertices"),
                i(1),
                s("per second"),
                s("Vertex/s")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT unit FROM gpu_counter_track WHERE name = 'Rate'"
        ),
        vec![vec![s("/ms:ms")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT g.group_id, g.name, g.description, t.name FROM gpu_counter_group g \
             JOIN gpu_counter_track t ON g.track_id = t.id ORDER BY g.group_id, t.name"
        ),
        vec![
            vec![i(0), NULL, NULL, s("Fwd")],
            vec![i(0), NULL, NULL, s("Rate")],
            vec![i(2), NULL, NULL, s("Vertices")],
            vec![i(100), s("Custom"), s("custom group"), s("Vertices")],
        ]
    );
    assert_eq!(
        rows(&tp, "SELECT ugpu, gpu, machine_id FROM gpu"),
        vec![vec![i(0), i(1), i(0)]]
    );
}

/// A packet on `seq` that clears its state and interns a descriptor of
/// one counter named `name` as iid 1.
fn interned_descriptor(seq: u32, name: &str, direction: Option<i32>) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(1);
        p.set_trusted_packet_sequence_id(seq);
        p.message().append_uint32(13, 1);
        let mut interned = p.message().begin_nested(12);
        let mut d = interned.begin_nested(47);
        d.append_uint64(1, 1);
        let mut desc = d.begin_nested(2);
        spec(&mut desc, (7, name, ""), &[], &[], &[], direction);
    })
}

#[test]
fn interned_counter_descriptors_belong_to_their_sequence() {
    let tp = load(&[
        interned_descriptor(1, "A", None),
        interned_descriptor(2, "B", Some(2)),
        counters(10, 1, |e| {
            e.append_uint64(4, 1);
            sample(e, 7, 100);
        }),
        counters(10, 2, |e| {
            e.append_uint64(4, 1);
            sample(e, 7, 200);
        }),
        counters(20, 1, |e| {
            e.append_uint64(4, 1);
            sample(e, 7, 150);
            // No spec of this id: counted.
            sample(e, 8, 1);
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, c.value, t.name FROM counter c \
             JOIN gpu_counter_track t ON c.track_id = t.id ORDER BY t.name, c.ts"
        ),
        vec![
            vec![i(10), Value::Real(150.0), s("A")],
            vec![i(20), Value::Real(0.0), s("A")],
            vec![i(10), Value::Real(200.0), s("B")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'gpu_counters_invalid_spec'"
        ),
        vec![vec![i(1)]]
    );
}

/// A render stage event at `ts` lasting 5, written by `f` after its id.
fn stage(ts: u64, f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    packet(move |p| {
        p.set_timestamp(ts);
        p.set_trusted_packet_sequence_id(1);
        let mut e = p.message().begin_nested(53);
        e.append_uint64(1, ts);
        e.append_uint64(2, 5);
        f(&mut e);
    })
}

#[test]
fn render_stages_are_slices_on_their_queues_tracks_with_upstreams_args() {
    let tp = load(&[
        // A queue no specification named yet.
        stage(0, |e| {
            e.append_int32(3, 1);
            e.append_int32(4, 0);
        }),
        stage(10, |e| {
            let mut spec = e.begin_nested(7);
            for (n, d) in [("queue 0", "first"), ("queue 1", "")] {
                let mut q = spec.begin_nested(2);
                q.append_string(1, n);
                q.append_string(2, d);
            }
            let mut st = spec.begin_nested(3);
            st.append_string(1, "stage 0");
            st.append_string(2, "stage desc");
            drop(st);
            drop(spec);
            e.append_int32(3, 0);
            e.append_int32(4, 0);
            e.append_uint64(5, 42);
            let mut x = e.begin_nested(6);
            x.append_string(1, "key1");
            x.append_string(2, "value1");
            drop(x);
            e.append_uint64(15, 0b1001);
            e.append_uint64(16, 7);
        }),
        // Overlaps the stage at 10 on queue 0: a second track.
        stage(12, |e| {
            e.append_int32(3, 0);
            e.append_int32(4, 3);
            e.append_uint64(18, 10);
        }),
        packet(|p| {
            p.set_timestamp(15);
            let mut v = p.message().begin_nested(65);
            let mut n = v.begin_nested(1);
            n.append_int32(3, 24);
            n.append_uint64(4, 16);
            n.append_string(5, "framebuffer");
        }),
        stage(20, |e| {
            e.append_int32(3, 1);
            e.append_int32(4, 0);
            e.append_uint64(8, 16);
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT g.name, g.description, s.ts, s.name, s.depth, s.context_id, \
             s.render_target_name, s.hw_queue_id, s.render_subpasses, \
             extract_arg(s.arg_set_id, 'description'), extract_arg(s.arg_set_id, 'key1'), \
             extract_arg(s.arg_set_id, 'correlation_id') \
             FROM gpu_track g JOIN gpu_slice s ON g.id = s.track_id ORDER BY s.ts"
        ),
        vec![
            vec![
                s("queue 1"),
                NULL,
                i(0),
                s("render stage(0)"),
                i(0),
                i(0),
                NULL,
                i(1),
                NULL,
                NULL,
                NULL,
                NULL
            ],
            vec![
                s("queue 0"),
                s("first"),
                i(10),
                s("stage 0"),
                i(0),
                i(42),
                NULL,
                i(0),
                s("0,3"),
                s("stage desc"),
                s("value1"),
                s("rp:#7")
            ],
            vec![
                s("queue 0"),
                s("first"),
                i(12),
                s("render stage(3)"),
                i(0),
                i(0),
                NULL,
                i(0),
                NULL,
                NULL,
                NULL,
                NULL
            ],
            vec![
                s("queue 1"),
                NULL,
                i(20),
                s("stage 0"),
                i(0),
                i(0),
                s("framebuffer"),
                i(1),
                NULL,
                s("stage desc"),
                NULL,
                NULL
            ],
        ]
    );
    // The two stages of queue 0 overlap: two tracks.
    assert_eq!(
        rows(
            &tp,
            "SELECT COUNT(DISTINCT track_id) FROM gpu_slice WHERE hw_queue_id = 0"
        ),
        vec![vec![i(2)]]
    );
    // The stage at 12 waits on event 10.
    assert_eq!(
        rows(
            &tp,
            "SELECT o.ts, n.ts FROM flow f JOIN slice o ON f.slice_out = o.id \
             JOIN slice n ON f.slice_in = n.id"
        ),
        vec![vec![i(10), i(12)]]
    );
}

#[test]
fn interned_specs_contexts_and_compute_kernels_become_tracks_rows_and_args() {
    let tp = load(&[
        packet(|p| {
            p.set_timestamp(1);
            p.set_trusted_packet_sequence_id(1);
            p.message().append_uint32(13, 1);
            let mut interned = p.message().begin_nested(12);
            let mut c = interned.begin_nested(23);
            c.append_uint64(1, 5);
            c.append_int32(2, 200);
            c.append_int32(3, 4);
            drop(c);
            for (iid, name, desc, cat) in
                [(1, "compute", "compute queue", 0), (2, "k", "kernel", 2)]
            {
                let mut g = interned.begin_nested(24);
                g.append_uint64(1, iid);
                g.append_string(2, name);
                g.append_string(3, desc);
                g.append_int32(4, cat);
            }
            let mut k = interned.begin_nested(1000);
            k.append_uint64(1, 3);
            k.append_string(2, "_Z3addv");
            k.append_string(3, "add()");
            k.append_string(4, "sm_80");
            let mut a = k.begin_nested(5);
            a.append_uint64(1, 4);
            a.append_uint64(4, 32);
            drop(a);
            drop(k);
            let mut n = interned.begin_nested(1001);
            n.append_uint64(1, 4);
            n.append_string(2, "registers");
        }),
        stage(10, |e| {
            e.append_uint64(5, 5);
            e.append_uint64(13, 1);
            e.append_uint64(14, 2);
            e.append_uint64(19, 3);
            let mut l = e.begin_nested(21);
            let mut g = l.begin_nested(1);
            g.append_uint32(1, 256);
            g.append_uint32(2, 1);
            drop(g);
            let mut a = l.begin_nested(3);
            a.append_string(2, "shared");
            a.append_int64(3, 4096);
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT g.name, g.description, s.name, s.render_stage_category, \
             extract_arg(s.arg_set_id, 'description'), \
             extract_arg(s.arg_set_id, 'kernel_name'), \
             extract_arg(s.arg_set_id, 'kernel_demangled_name'), \
             extract_arg(s.arg_set_id, 'arch'), \
             extract_arg(s.arg_set_id, 'registers'), \
             extract_arg(s.arg_set_id, 'launch.grid_size.x'), \
             extract_arg(s.arg_set_id, 'launch.grid_size.z'), \
             extract_arg(s.arg_set_id, 'shared'), s.hw_queue_id \
             FROM gpu_track g JOIN gpu_slice s ON g.id = s.track_id"
        ),
        vec![vec![
            s("compute"),
            s("compute queue"),
            s("k"),
            i(2),
            s("kernel"),
            s("_Z3addv"),
            s("add()"),
            s("sm_80"),
            i(32),
            i(256),
            NULL,
            i(4096),
            i(1)
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE std.gpu.context; \
             SELECT context_id, pid, api FROM gpu_context"
        ),
        vec![vec![i(5), i(200), s("CUDA")]]
    );
}

#[test]
fn gpu_info_describes_each_gpu_by_its_place_in_the_list() {
    let tp = load(&[packet(|p| {
        p.set_timestamp(1);
        let mut info = p.message().begin_nested(128);
        let mut g = info.begin_nested(1);
        g.append_string(1, "Big GPU");
        g.append_string(2, "Vendor");
        g.append_bytes(5, &[0x01, 0xab]);
        g.append_string(7, "0000:01:00.0");
        let mut kv = g.begin_nested(6);
        kv.append_string(1, "driver_version");
        kv.append_string(2, "1.2");
        drop(kv);
        drop(g);
        let mut g = info.begin_nested(1);
        g.append_string(4, "Arch");
    })]);
    assert_eq!(
        rows(
            &tp,
            "SELECT gpu, name, vendor, architecture, uuid, pci_bdf, \
             extract_arg(arg_set_id, 'driver_version') FROM gpu ORDER BY gpu"
        ),
        vec![
            vec![
                i(0),
                s("Big GPU"),
                s("Vendor"),
                NULL,
                s("01ab"),
                s("0000:01:00.0"),
                s("1.2")
            ],
            vec![i(1), NULL, NULL, s("Arch"), NULL, NULL, NULL],
        ]
    );
}

#[test]
fn track_events_correlated_with_render_stages_flow_to_and_from_them() {
    let descriptor = packet(|p| {
        p.message().append_uint32(10, 2);
        p.message().begin_nested(60).append_uint64(1, 7);
    });
    // A TrackEvent complete slice on track 7 whose gpu_correlation
    // (extension 3000) lists submission ids (1) and wait ids (2).
    let te = |ts: u64, name: &str, field: u32, id: u64| {
        let name = name.to_owned();
        packet(move |p| {
            p.set_timestamp(ts);
            p.message().append_uint32(10, 2);
            let mut e = p.message().begin_nested(11);
            e.append_int32(9, 3);
            e.append_uint64(11, 7);
            e.append_string(23, &name);
            e.begin_nested(3000).append_uint64(field, id);
        })
    };
    let tp = load(&[
        descriptor,
        te(5, "HostSubmit", 1, 10),
        stage(10, |e| {
            e.append_string(17, "softmax");
        }),
        te(30, "HostWait", 2, 10),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT o.name, n.name FROM flow f JOIN slice o ON f.slice_out = o.id \
             JOIN slice n ON f.slice_in = n.id ORDER BY o.ts"
        ),
        vec![
            vec![s("HostSubmit"), s("softmax")],
            vec![s("softmax"), s("HostWait")],
        ]
    );
}

#[test]
fn a_track_events_gpu_api_is_its_slices_arg() {
    let descriptor = packet(|p| {
        p.message().append_uint32(10, 2);
        p.message().begin_nested(60).append_uint64(1, 7);
    });
    // Complete slices on track 7 with extension 3001 (GpuApi) and an
    // annotation of their own.
    let te = |ts: u64, name: &str, api: i32| {
        let name = name.to_owned();
        packet(move |p| {
            p.set_timestamp(ts);
            p.message().append_uint32(10, 2);
            let mut e = p.message().begin_nested(11);
            e.append_int32(9, 3);
            e.append_uint64(11, 7);
            e.append_string(23, &name);
            let mut a = e.begin_nested(4);
            a.append_string(10, "n");
            a.append_int64(4, 1);
            drop(a);
            e.append_int32(3001, api);
        })
    };
    let tp = load(&[
        descriptor,
        te(5, "cuLaunchKernel", 4),
        te(6, "vkCmdDispatch", 2),
        te(7, "future", 9),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT name, extract_arg(arg_set_id, 'gpu_api'), \
             extract_arg(arg_set_id, 'debug.n') FROM slice ORDER BY ts"
        ),
        vec![
            vec![s("cuLaunchKernel"), s("GPU_API_CUDA"), i(1)],
            vec![s("vkCmdDispatch"), s("GPU_API_VULKAN"), i(1)],
            vec![s("future"), i(9), i(1)],
        ]
    );
}

#[test]
fn the_android_gpu_and_frames_modules_read_their_tracks_and_jank_types() {
    // A counter track named as the Mali power state's, with three values.
    let descriptor = packet(|p| {
        p.message().append_uint32(10, 2);
        let mut d = p.message().begin_nested(60);
        d.append_uint64(1, 9);
        d.append_string(2, "mali_gpu_power_state");
        d.begin_nested(8);
    });
    let value = |ts: u64, v: i64| {
        packet(move |p| {
            p.set_timestamp(ts);
            p.message().append_uint32(10, 2);
            let mut e = p.message().begin_nested(11);
            e.append_int32(9, 4);
            e.append_uint64(11, 9);
            e.append_int64(30, v);
        })
    };
    let tp = load(&[descriptor, value(10, 1), value(20, 3), value(35, 0)]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.gpu.mali_power_state; \
             SELECT ts, dur, power_state FROM android_mali_gpu_power_state ORDER BY ts"
        ),
        vec![
            vec![i(10), i(10), i(1)],
            vec![i(20), i(15), i(3)],
            vec![i(35), i(0), i(0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.frames.jank_type; \
             SELECT android_is_sf_jank_type('App Deadline Missed, Display HAL'), \
             android_is_app_jank_type('App Deadline Missed, Display HAL'), \
             android_is_app_jank_type('Prediction Error'), \
             android_is_missed_frame_type('Dropped Frame'), \
             android_is_missed_frame_type('Buffer Stuffing')"
        ),
        vec![vec![i(1), i(1), i(0), i(1), i(0)]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.gpu.work_period; \
             SELECT COUNT(*) FROM android_gpu_work_period_track"
        ),
        vec![vec![i(0)]]
    );
}

#[test]
fn an_untimed_counter_packet_keeps_its_descriptor_and_drops_its_samples() {
    let untimed = |f: fn(&mut Message<'_>)| {
        packet(move |p| {
            p.set_trusted_packet_sequence_id(1);
            let mut e = p.message().begin_nested(52);
            f(&mut e);
        })
    };
    let tp = load(&[
        untimed(|e| {
            let mut d = e.begin_nested(1);
            spec(&mut d, (1, "A", "a"), &[], &[], &[], Some(2));
        }),
        counters(10, 1, |e| sample(e, 1, 100)),
        untimed(|e| sample(e, 1, 200)),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, c.value, t.name FROM counter c \
             JOIN gpu_counter_track t ON c.track_id = t.id"
        ),
        vec![vec![i(10), Value::Real(100.0), s("A")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'gpu_counters_missing_timestamp'"
        ),
        vec![vec![i(1)]]
    );
}
