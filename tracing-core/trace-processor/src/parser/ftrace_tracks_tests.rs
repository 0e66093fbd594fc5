//! Tests of the ftrace importers with tracks or state of their own
//! (`ftrace_memory.rs`, `ftrace_power.rs`, `ftrace_thermal.rs`,
//! `ftrace_i2c.rs`, `ftrace_trusty.rs`, `ftrace_funcgraph.rs`,
//! `ftrace_pixel.rs`, `ftrace_binder.rs`, and the CMA and device PM
//! additions), over traces built by `ftrace_trace_tests.rs`.

use super::ftrace_trace_tests::*;
use crate::Value;

#[test]
fn ion_fastrpc_and_dmabuf_counters() {
    let tp = trace(
        "6.1.0",
        0,
        &[
            // ion_heap_grow {heap_name 1, len 2, total_allocated 3}.
            event(
                10,
                5,
                315,
                &[text(1, "system"), uint(2, 100), uint(3, 1000)],
            ),
            // ion_stat {buffer_id 1, len 2, total_allocated 3}: a buffer.
            event(20, 5, 335, &[uint(1, 7), int(2, 4096), uint(3, 5000)]),
            event(30, 5, 335, &[uint(1, 7), int(2, -4096), uint(3, 904)]),
            // fastrpc_dma_stat {cid 1, len 2, total_allocated 3}.
            event(40, 5, 347, &[int(1, 1), int(2, -10), uint(3, 90)]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, t.name, t.type, c.value FROM counter c JOIN track t \
             ON c.track_id = t.id ORDER BY c.ts, t.name",
        ),
        vec![
            vec![
                Value::Int(10),
                s("mem.ion.system"),
                s("ion"),
                Value::Real(1100.0)
            ],
            vec![
                Value::Int(10),
                s("mem.ion_change.system"),
                s("ion_change"),
                Value::Real(100.0)
            ],
            vec![Value::Int(20), s("mem.ion"), s("ion"), Value::Real(5000.0)],
            vec![
                Value::Int(20),
                s("mem.ion_change"),
                s("ion_change"),
                Value::Real(4096.0)
            ],
            vec![Value::Int(30), s("mem.ion"), s("ion"), Value::Real(904.0)],
            vec![
                Value::Int(30),
                s("mem.ion_change"),
                s("ion_change"),
                Value::Real(-4096.0)
            ],
            vec![
                Value::Int(40),
                s("mem.fastrpc[MDSP]"),
                s("fastrpc"),
                Value::Real(90.0)
            ],
            vec![
                Value::Int(40),
                s("mem.fastrpc_change[MDSP]"),
                s("fastrpc_change"),
                Value::Real(-10.0)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.name FROM slice s JOIN track t ON s.track_id = t.id"
        ),
        vec![vec![
            Value::Int(20),
            Value::Int(10),
            s("4 kB"),
            s("mem.ion_buffer")
        ]]
    );
}

#[test]
fn power_events_have_their_own_tracks() {
    let tp = trace(
        "6.1.0",
        0,
        &[
            // Nested activations of one wakeup source: one slice.
            event(10, 1, 404, &[text(1, "wl")]),
            event(20, 1, 404, &[text(1, "wl")]),
            event(30, 1, 405, &[text(1, "wl")]),
            event(40, 1, 405, &[text(1, "wl")]),
            // rpm_status: active, then suspended (no slice).
            event(50, 1, 489, &[text(1, "dev"), int(2, 0)]),
            event(70, 1, 489, &[text(1, "dev"), int(2, 2)]),
            // gpu_power_state: ON then OFF.
            event(80, 1, 601, &[int(2, 2)]),
            event(90, 1, 601, &[int(2, 0)]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.type FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts"
        ),
        vec![
            vec![
                Value::Int(10),
                Value::Int(30),
                s("Wakelock(wl)"),
                s("wakesource_wakelock")
            ],
            vec![Value::Int(50), Value::Int(20), s("Active"), s("linux_rpm")],
            vec![
                Value::Int(80),
                Value::Int(10),
                s("ON"),
                s("powervr_gpu_power_state")
            ],
            vec![
                Value::Int(90),
                Value::Int(-1),
                s("OFF"),
                s("powervr_gpu_power_state")
            ],
        ]
    );
}

#[test]
fn cma_allocations_finish_with_their_migration_facts_from_6_1() {
    let events = [
        event(1000, 123, 465, &[uint(2, 1024), text(3, "test_cma")]),
        event(1050, 123, 577, &[uint(3, 10), uint(4, 1000), uint(5, 99)]),
        event(
            1100,
            123,
            576,
            &[text(1, "test_cma"), uint(2, 2048), uint(4, 1024)],
        ),
    ];
    let tp = trace("6.1.0", 2, &events);
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, name, extract_arg(arg_set_id, 'cma_name'), \
             extract_arg(arg_set_id, 'cma_pfn'), extract_arg(arg_set_id, 'cma_nr_migrated'), \
             extract_arg(arg_set_id, 'cma_nr_reclaimed'), extract_arg(arg_set_id, 'cma_nr_mapped') \
             FROM slice",
        ),
        vec![vec![
            Value::Int(1000),
            Value::Int(100),
            s("mm_cma_alloc"),
            s("test_cma"),
            Value::Int(2048),
            Value::Int(10),
            Value::Int(1000),
            Value::Int(99),
        ]]
    );
    // Before 6.1 the finish does not close it.
    let tp = trace("5.15.0", 2, &events);
    assert_eq!(
        rows(&tp, "SELECT dur FROM slice"),
        vec![vec![Value::Int(-1)]]
    );
}

#[test]
fn device_pm_callbacks_are_latency_slices() {
    let tp = trace(
        "6.1.0",
        0,
        &[
            event(
                10,
                3,
                504,
                &[text(1, "d"), text(2, "drv"), text(4, "noirq"), int(5, 2)],
            ),
            event(25, 3, 505, &[text(1, "d"), text(2, "drv")]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.name, extract_arg(arg_set_id, 'callback_phase') \
             FROM slice s JOIN track t ON s.track_id = t.id",
        ),
        vec![vec![
            Value::Int(10),
            Value::Int(15),
            s("d drv"),
            s("Suspend/Resume Latency"),
            s("suspend:noirq")
        ]]
    );
}

#[test]
fn binder_protobuf_events_make_transactions() {
    let tp = trace(
        "6.1.0",
        0,
        &[
            // Thread 10 calls process 20 (thread 21 replies).
            event(
                100,
                10,
                50,
                &[
                    int(1, 5),
                    int(2, 1),
                    int(3, 20),
                    int(4, 0),
                    int(5, 0),
                    uint(6, 3),
                    uint(7, 0),
                ],
            ),
            event(110, 21, 51, &[int(1, 5)]),
            event(
                150,
                21,
                50,
                &[
                    int(1, 6),
                    int(2, 0),
                    int(3, 10),
                    int(4, 10),
                    int(5, 1),
                    uint(6, 0),
                    uint(7, 0),
                ],
            ),
            event(160, 10, 51, &[int(1, 6)]),
        ],
    );
    let r = rows(&tp, "SELECT name FROM slice ORDER BY ts");
    assert!(r.contains(&vec![s("binder transaction")]), "{r:?}");
    assert!(r.contains(&vec![s("binder reply")]), "{r:?}");
}

#[test]
fn thermal_counters_and_acpm_zones() {
    let tp = trace(
        "6.1.0",
        0,
        &[
            // thermal_temperature {temp 2, thermal_zone 4}.
            event(10, 1, 341, &[int(2, 45), text(4, "cpu")]),
            // cdev_update {target 1, type 2}.
            event(20, 1, 342, &[uint(1, 3), text(2, "fan")]),
            // thermal_exynos_acpm_bulk: its values at its own timestamp.
            event(
                1_000,
                42,
                506,
                &[uint(1, 0), uint(2, 35), uint(4, 2), uint(11, 5_000)],
            ),
            // An unknown zone.
            event(1_100, 42, 507, &[int(1, 9), uint(2, 1)]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, t.name, t.type, c.value, extract_arg(c.arg_set_id, 'thermal_zone_id') \
             FROM counter c JOIN track t ON c.track_id = t.id ORDER BY c.ts, t.name",
        ),
        vec![
            vec![
                Value::Int(10),
                s("cpu Temperature"),
                s("thermal_temperature"),
                Value::Real(45.0),
                Value::Null
            ],
            vec![
                Value::Int(20),
                s("fan Cooling Device"),
                s("cooling_device_counter"),
                Value::Real(3.0),
                Value::Null
            ],
            vec![
                Value::Int(5_000),
                s("BIG Temperature"),
                s("acpm_thermal_temperature"),
                Value::Real(35.0),
                Value::Int(0)
            ],
            vec![
                Value::Int(5_000),
                s("Tj-BIG Cooling Device"),
                s("acpm_cooling_device_counter"),
                Value::Real(2.0),
                Value::Int(0)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts FROM ftrace_event WHERE name = 'thermal_exynos_acpm_bulk'"
        ),
        vec![vec![Value::Int(1_000)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'ftrace_thermal_exynos_acpm_unknown_tz_id'"
        ),
        vec![vec![Value::Int(1)]]
    );
}

#[test]
fn i2c_transfers_trusty_calls_and_funcgraph_are_slices() {
    let tp = trace(
        "6.1.0",
        5,
        &[
            // i2c_write msg 0 then msg 1 of adapter 3; the result for 2.
            event(10, 8, 28, &[int(1, 3), uint(2, 0)]),
            event(11, 8, 27, &[int(1, 3), uint(2, 1)]),
            event(12, 8, 29, &[int(1, 3), uint(2, 1)]),
            event(15, 8, 29, &[int(1, 3), uint(2, 2)]),
            // trusty_std_call32 / _done with an error.
            event(20, 8, 447, &[uint(1, 1)]),
            event(30, 8, 448, &[int(1, -5)]),
            // funcgraph of the idle task on CPU 5.
            event(40, 0, 437, &[int(1, 0), uint(2, 0x10)]),
            event(45, 0, 438, &[uint(3, 0x10)]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.category, s.name, t.name FROM slice s \
             JOIN track t ON s.track_id = t.id ORDER BY s.ts, s.name",
        ),
        vec![
            vec![
                Value::Int(10),
                Value::Int(5),
                Value::Null,
                s("i2c-3"),
                Value::Null
            ],
            vec![
                Value::Int(20),
                Value::Int(10),
                s("tipc"),
                s("trusty_std"),
                Value::Null
            ],
            vec![
                Value::Int(30),
                Value::Int(0),
                s("tipc"),
                s("trusty_err_std: err= -5"),
                Value::Null
            ],
            vec![
                Value::Int(40),
                Value::Int(5),
                Value::Null,
                s("0x10"),
                s("swapper5 -funcgraph")
            ],
        ]
    );
}

#[test]
fn pixel_firmware_points_and_kswapd_runs() {
    let tp = trace(
        "6.1.0",
        0,
        &[
            // fwtp_perfetto_counter {timestamp 1, name 4, value 5}.
            event(10, 1, 596, &[uint(1, 7), text(4, "fw"), uint(5, 3)]),
            // pixel_mm_kswapd_wake / _done {scanned 1, reclaimed 2}.
            event(20, 9, 538, &[int(1, 0)]),
            event(40, 9, 539, &[uint(1, 200), uint(2, 50)]),
            // google_icc_event {event 1}.
            event(50, 1, 502, &[text(1, "vote")]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, t.name, c.value FROM counter c JOIN track t ON c.track_id = t.id"
        ),
        vec![vec![Value::Int(7), s("fw"), Value::Real(3.0)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, category, name, extract_arg(arg_set_id, 'efficiency %'), \
             extract_arg(arg_set_id, 'pages allocated') FROM slice ORDER BY ts",
        ),
        vec![
            vec![
                Value::Int(20),
                Value::Int(20),
                Value::Null,
                s("kswapd_efficiency"),
                Value::Int(25),
                Value::Null
            ],
            vec![
                Value::Int(50),
                Value::Int(0),
                s("google_icc_event"),
                s("vote"),
                Value::Null,
                Value::Null
            ],
        ]
    );
}

#[test]
fn adreno_batches_are_placed_by_their_sync_in_either_order() {
    let queued = event(900_000_000, 100, 534, &[uint(1, 1), uint(2, 42)]);
    let sync = event(
        1_000_000_000,
        100,
        536,
        &[uint(1, 1), uint(2, 42), uint(3, 19_200_000)],
    );
    let retired = event(
        3_100_000_000,
        100,
        537,
        &[
            uint(1, 1),
            uint(2, 42),
            uint(6, 38_400_000),
            uint(7, 57_600_000),
            int(8, 0),
        ],
    );
    let expected = vec![vec![
        Value::Int(2_000_000_000),
        Value::Int(1_000_000_000),
        s("GPU"),
        s("GPU com.example.app (Ctx=1, Prio=0)"),
    ]];
    let query = "SELECT s.ts, s.dur, s.name, t.name FROM slice s JOIN track t \
                 ON s.track_id = t.id WHERE t.type = 'adreno_gpu_cmdbatch'";
    let in_order = trace_of(&[
        process_packet(100, "com.example.app"),
        bundle_packet(0, &[queued.clone(), sync.clone(), retired.clone()]),
    ]);
    assert_eq!(rows(&in_order, query), expected);
    // The retire recorded on another CPU, its bundle written before the
    // sync's.
    let crossed = trace_of(&[
        process_packet(100, "com.example.app"),
        bundle_packet(0, &[queued]),
        bundle_packet(3, &[retired]),
        bundle_packet(0, &[sync]),
    ]);
    assert_eq!(rows(&crossed, query), expected);
}

#[test]
fn gpu_work_periods_are_slices_on_monotonic_raw_time() {
    // MONOTONIC_RAW 500 is BOOTTIME 1000.
    let snapshot = msg(
        6,
        &[
            msg(1, &[uint(1, 6), uint(2, 1_000)]),
            msg(1, &[uint(1, 5), uint(2, 500)]),
        ],
    );
    let period = |start: u64, end: u64| {
        event(
            2_000,
            1,
            488,
            &[
                uint(1, 0),
                uint(2, 10_010),
                uint(3, start),
                uint(4, end),
                uint(5, 25),
            ],
        )
    };
    let tp = trace_of(&[
        snapshot,
        bundle_packet(0, &[period(600, 700), period(800, 790)]),
    ]);
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, s.thread_dur, t.type, \
             extract_arg(t.dimension_arg_set_id, 'uid') FROM slice s JOIN track t ON s.track_id = t.id",
        ),
        vec![vec![
            Value::Int(1_100),
            Value::Int(100),
            s("%25.00"),
            Value::Int(25),
            s("android_gpu_work_period"),
            Value::Int(10_010),
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'gpu_work_period_negative_duration'"
        ),
        vec![vec![Value::Int(1)]]
    );
}

#[test]
fn funcgraph_slices_take_the_interned_kernel_symbols() {
    let entry = |ts, depth, func| event(ts, 385_482, 437, &[int(1, depth), uint(2, func)]);
    let exit = |ts, depth, func| event(ts, 385_482, 438, &[int(2, depth), uint(3, func)]);
    let mut packet = bundle_packet(
        0,
        &[
            entry(1_000, 0, 1),
            entry(1_700, 1, 2),
            exit(3_400, 1, 2),
            exit(4_800, 0, 1),
        ],
    );
    packet.extend(uint(13, 1));
    packet.extend(msg(
        12,
        &[
            msg(26, &[uint(1, 1), text(2, "__handle_mm_fault")]),
            msg(26, &[uint(1, 2), text(2, "alloc_pages_vma")]),
        ],
    ));
    let tp = trace_of(&[packet]);
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, tid, s.name, depth FROM slices s \
             JOIN thread_track tt ON (s.track_id = tt.id) JOIN thread USING (utid) \
             WHERE tid = 385482",
        ),
        vec![
            vec![
                Value::Int(1_000),
                Value::Int(3_800),
                Value::Int(385_482),
                s("__handle_mm_fault"),
                Value::Int(0)
            ],
            vec![
                Value::Int(1_700),
                Value::Int(1_700),
                Value::Int(385_482),
                s("alloc_pages_vma"),
                Value::Int(1)
            ],
        ]
    );
}

#[test]
fn events_placed_at_their_own_time_are_dropped_without_it() {
    let tp = trace(
        "6.1.0",
        0,
        &[
            // thermal_exynos_acpm_bulk and fwtp_perfetto_counter, no time.
            event(1_000, 42, 506, &[uint(1, 0), uint(2, 35)]),
            event(1_100, 42, 596, &[text(4, "fw"), uint(5, 3)]),
        ],
    );
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM ftrace_event"),
        vec![vec![Value::Int(0)]]
    );
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM counter"),
        vec![vec![Value::Int(0)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'ftrace_bundle_tokenizer_errors'"
        ),
        vec![vec![Value::Int(2)]]
    );
}
