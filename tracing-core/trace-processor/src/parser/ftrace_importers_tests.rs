//! Tests of the ftrace importers of self-described events, drivers'
//! tracing marks and the rule table (`ftrace_generic.rs`,
//! `ftrace_kernel_track.rs`, `ftrace_marks.rs`, `ftrace_rules.rs`,
//! `ftrace_rule_table.rs`), over traces built by `ftrace_trace_tests.rs`.

use super::ftrace_trace_tests::*;
use crate::Value;

#[test]
fn described_events_are_raw_rows_typed_by_their_descriptors() {
    let tp = trace(
        "6.1.0",
        3,
        &[
            descriptor(65536, "sched_wake_idle_without_ipi", &[("cpu", 1, 5)]),
            descriptor(
                65537,
                "hrtimer_init",
                &[("hrtimer", 1, 4), ("clockid", 2, 17), ("name", 3, 9)],
            ),
            event(100, 10, 65536, &[int(1, -7)]),
            event(
                200,
                10,
                65537,
                &[uint(1, 5), uint(2, 3), text(3, "x"), uint(9, 1)],
            ),
            // No descriptor: no row, an error.
            event(300, 10, 65540, &[uint(1, 1)]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, cpu, name, key, value_type, display_value FROM ftrace_event \
             JOIN args USING (arg_set_id) ORDER BY ts, key",
        ),
        vec![
            vec![
                Value::Int(100),
                Value::Int(3),
                s("sched_wake_idle_without_ipi"),
                s("cpu"),
                s("int"),
                s("-7")
            ],
            vec![
                Value::Int(200),
                Value::Int(3),
                s("hrtimer_init"),
                s("clockid"),
                s("int"),
                s("-2")
            ],
            vec![
                Value::Int(200),
                Value::Int(3),
                s("hrtimer_init"),
                s("hrtimer"),
                s("uint"),
                s("5")
            ],
            vec![
                Value::Int(200),
                Value::Int(3),
                s("hrtimer_init"),
                s("name"),
                s("string"),
                s("x")
            ],
        ]
    );
    // The undescribed field 9 and the undescribed event.
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'ftrace_generic_descriptor_errors'"
        ),
        vec![vec![Value::Int(2)]]
    );
}

#[test]
fn old_generic_events_name_their_fields() {
    let field = |name: &str, value: Vec<u8>| msg(2, &[text(1, name), value]);
    let tp = trace(
        "6.1.0",
        0,
        &[event(
            50,
            4,
            327,
            &[
                text(1, "my_event"),
                field("a", text(3, "hello")),
                field("b", int(4, -3)),
                field("c", uint(5, 9)),
            ],
        )],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, key, value_type, display_value FROM ftrace_event \
             JOIN args USING (arg_set_id) ORDER BY key",
        ),
        vec![
            vec![s("my_event"), s("a"), s("string"), s("hello")],
            vec![s("my_event"), s("b"), s("int"), s("-3")],
            vec![s("my_event"), s("c"), s("int"), s("9")],
        ]
    );
}

#[test]
fn kernel_track_events_become_slices_and_counters() {
    let tp = trace(
        "6.1.0",
        0,
        &[
            descriptor(
                65536,
                "my_slices",
                &[("track_event_type", 1, 5), ("slice_name", 2, 9)],
            ),
            descriptor(
                65537,
                "my_counter",
                &[
                    ("counter_value", 1, 3),
                    ("scope_cpu", 2, 13),
                    ("track_name", 3, 9),
                ],
            ),
            event(100, 42, 65536, &[uint(1, u64::from(b'B')), text(2, "work")]),
            event(150, 42, 65536, &[uint(1, u64::from(b'I')), text(2, "mark")]),
            event(200, 42, 65536, &[uint(1, u64::from(b'E')), text(2, "")]),
            event(250, 42, 65536, &[uint(1, u64::from(b'?')), text(2, "bad")]),
            event(300, 42, 65537, &[int(1, 12), uint(2, 2), text(3, "queue")]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, s.depth, t.name, t.type, tid FROM slice s \
             JOIN thread_track t ON s.track_id = t.id JOIN thread USING (utid) ORDER BY s.ts",
        ),
        vec![
            vec![
                Value::Int(100),
                Value::Int(100),
                s("work"),
                Value::Int(0),
                s("my_slices"),
                s("kernel_trackevent_thread_slice"),
                Value::Int(42)
            ],
            vec![
                Value::Int(150),
                Value::Int(0),
                s("mark"),
                Value::Int(1),
                s("my_slices"),
                s("kernel_trackevent_thread_slice"),
                Value::Int(42)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, c.value, t.name, t.type, extract_arg(t.dimension_arg_set_id, 'cpu') \
             FROM counter c JOIN track t ON c.track_id = t.id",
        ),
        vec![vec![
            Value::Int(300),
            Value::Real(12.0),
            s("queue"),
            s("kernel_trackevent_cpu_counter"),
            Value::Int(2)
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'kernel_trackevent_format_error'"
        ),
        vec![vec![Value::Int(1)]]
    );
}

#[test]
fn drivers_tracing_marks_are_atrace_points() {
    let tp = trace(
        "6.1.0",
        2,
        &[
            // dpu: a counter of the process the payload names.
            event(
                10,
                515,
                348,
                &[
                    int(1, 237),
                    text(4, "dpu_vote_clock"),
                    uint(5, 67),
                    int(6, 100),
                ],
            ),
            // sde: begin/end by flag, no letter.
            event(
                20,
                403,
                333,
                &[int(1, 403), text(2, "test_event"), uint(5, 1)],
            ),
            event(
                21,
                403,
                333,
                &[int(1, 403), text(2, "test_event"), uint(5, 0)],
            ),
            // mali: an instant.
            event(
                30,
                7,
                350,
                &[text(1, "tick"), int(2, 7), uint(3, u64::from(b'I'))],
            ),
            // lwis without a letter: a parse failure.
            event(40, 7, 467, &[int(3, 7), text(4, "f")]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.ts, t.name, c.value, pid FROM counter c JOIN process_counter_track t \
             ON c.track_id = t.id JOIN process USING (upid)",
        ),
        vec![vec![
            Value::Int(10),
            s("dpu_vote_clock"),
            Value::Real(100.0),
            Value::Int(237)
        ]]
    );
    assert_eq!(
        rows(&tp, "SELECT ts, dur, name FROM slice ORDER BY ts"),
        vec![
            vec![Value::Int(20), Value::Int(1), s("test_event")],
            vec![Value::Int(30), Value::Int(0), s("tick")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'systrace_parse_failure'"
        ),
        vec![vec![Value::Int(1)]]
    );
}

#[test]
fn rules_make_slices_instants_and_counters() {
    let tp = trace(
        "6.1.0",
        1,
        &[
            // workqueue_execute_start {function 2} / _end.
            event(100, 9, 58, &[uint(1, 1), uint(2, 0xabc)]),
            event(140, 9, 57, &[uint(1, 1)]),
            // mm_vmscan_direct_reclaim_begin / _end.
            event(200, 9, 46, &[int(1, 2), int(2, 1), uint(3, 0xcc0)]),
            event(260, 9, 47, &[uint(1, 33)]),
            // signal_generate {pid 4, sig 6}, on thread 77.
            event(300, 9, 325, &[int(4, 77), int(6, 9)]),
            // dcvsh_freq {cpu 1, freq 2}.
            event(400, 9, 508, &[uint(1, 4), uint(2, 1_800_000)]),
            // cpuhp_enter {cpu 1, idx 3} on CPU 1 for CPU 6 / cpuhp_exit.
            event(500, 9, 345, &[uint(1, 6), int(3, 12)]),
            event(520, 9, 343, &[uint(1, 6)]),
            // scm_call_start {x0 2} / _end.
            event(600, 9, 338, &[uint(2, 0x42)]),
            event(610, 9, 339, &[]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.category, s.name, t.name, \
             extract_arg(s.arg_set_id, 'cpu'), \
             extract_arg(s.arg_set_id, 'direct_reclaim_nr_reclaimed'), \
             extract_arg(s.arg_set_id, 'signal.sig'), extract_arg(s.arg_set_id, 'cpuhp_idx') \
             FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts",
        ),
        vec![
            vec![
                Value::Int(100),
                Value::Int(40),
                s("workqueue"),
                s("0xabc"),
                Value::Null,
                Value::Int(1),
                Value::Null,
                Value::Null,
                Value::Null
            ],
            vec![
                Value::Int(200),
                Value::Int(60),
                Value::Null,
                s("mm_vmscan_direct_reclaim"),
                Value::Null,
                Value::Null,
                Value::Int(33),
                Value::Null,
                Value::Null
            ],
            vec![
                Value::Int(300),
                Value::Int(0),
                Value::Null,
                s("signal_generate"),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Int(9),
                Value::Null
            ],
            vec![
                Value::Int(500),
                Value::Int(20),
                s("cpu"),
                s("cpuhp(12)"),
                s("CPU Hotplug 6"),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Int(12)
            ],
            vec![
                Value::Int(600),
                Value::Int(10),
                Value::Null,
                s("scm id=0x42"),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT tid FROM slice s JOIN thread_track t ON s.track_id = t.id \
             JOIN thread USING (utid) WHERE s.name = 'signal_generate'",
        ),
        vec![vec![Value::Int(77)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.value, t.name, t.type FROM counter c JOIN track t ON c.track_id = t.id"
        ),
        vec![vec![
            Value::Real(1_800_000.0),
            s("cpufreq_throttle"),
            s("cpu_frequency_throttle")
        ]]
    );
}

#[test]
fn rules_and_handlers_never_share_an_event() {
    for (field, _) in super::ftrace_rule_table::RULES {
        assert!(
            super::ftrace_registry::handler(*field).is_none(),
            "field {field} has a handler and a rule"
        );
    }
}

#[test]
fn mali_mcu_states_follow_each_other_and_interrupts_keep_the_last_value() {
    let tp = trace(
        "6.1.0",
        2,
        &[
            event(10, 1, 520, &[]),
            event(30, 1, 519, &[]),
            event(40, 1, 482, &[uint(3, 1)]),
            event(45, 1, 483, &[uint(3, 2)]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.name, t.type, extract_arg(s.arg_set_id, 'info_val') \
             FROM slice s JOIN track t ON s.track_id = t.id ORDER BY s.ts",
        ),
        vec![
            vec![
                Value::Int(10),
                Value::Int(20),
                s("ON"),
                Value::Null,
                s("mali_mcu_state"),
                Value::Null
            ],
            vec![
                Value::Int(30),
                Value::Int(-1),
                s("OFF"),
                Value::Null,
                s("mali_mcu_state"),
                Value::Null
            ],
            vec![
                Value::Int(40),
                Value::Int(5),
                s("mali_CSF_INTERRUPT"),
                s("Mali Irq Cpu 2"),
                s("cpu_mali_irq"),
                Value::Int(2)
            ],
        ]
    );
}

#[test]
fn pixel_display_events_go_on_a_track_per_panel() {
    let tp = trace(
        "6.1.0",
        0,
        &[
            // dpu_disp_frame_start_timeout {display_id 1, output_id 2,
            // frames_pending 3, te_count 4}.
            event(10, 1, 606, &[int(1, 0), uint(2, 1), int(3, 2), int(4, 7)]),
            // dpu_disp_vblank_irq_enable {id 1, output_id 2, enable 3}.
            event(20, 1, 550, &[int(1, 0), int(2, 0), int(3, 1)]),
            event(28, 1, 550, &[int(1, 0), int(2, 0), int(3, 0)]),
            // panel_settings_lite {panel_index 1, vrr 2, min_rr 3}.
            event(30, 1, 612, &[int(1, 0), uint(2, 1), uint(3, 60)]),
        ],
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, s.dur, s.name, t.name, extract_arg(s.arg_set_id, 'te_count'), \
             extract_arg(s.arg_set_id, 'min_rr') FROM slice s JOIN track t \
             ON s.track_id = t.id ORDER BY s.ts",
        ),
        vec![
            vec![
                Value::Int(10),
                Value::Int(0),
                s("frame_start_timeout"),
                s("frame_start_timeout[1]"),
                Value::Int(7),
                Value::Null
            ],
            vec![
                Value::Int(20),
                Value::Int(8),
                s("disp_vblank_irq_enable"),
                s("vblank_irq_en[0]"),
                Value::Null,
                Value::Null
            ],
            vec![
                Value::Int(30),
                Value::Int(0),
                s("panel_settings_lite"),
                s("panel_settings_lite[0]"),
                Value::Null,
                Value::Int(60)
            ],
        ]
    );
}
