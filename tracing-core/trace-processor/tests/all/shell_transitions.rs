//! WindowManager shell transitions written in several protos each, merged
//! into `window_manager_shell_transitions` with upstream's statuses, and
//! the handler mappings into `window_manager_shell_transition_handlers`,
//! checked against what the test wrote.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.shell_transition`.
const SHELL_TRANSITION: u32 = 96;
/// `TracePacket.shell_handler_mappings`.
const SHELL_HANDLER_MAPPINGS: u32 = 97;

fn transition(fields: &[(u32, i64)], change: bool) -> Vec<u8> {
    packet(|p| {
        let mut t = p.message().begin_nested(SHELL_TRANSITION);
        for (id, v) in fields {
            t.append_int64(*id, *v);
        }
        if change {
            let mut c = t.begin_nested(14);
            c.append_int32(1, 1); // mode
            c.append_int32(2, 30); // layer_id
        }
    })
}

fn transitions_trace() -> TraceProcessor {
    let bytes = trace(&[
        // Transition 7: created and sent (handler 2), then dispatched
        // and finished in a second proto.
        transition(&[(1, 7), (2, 5), (3, 10), (12, 2)], true),
        transition(&[(1, 7), (4, 20), (9, 50)], false),
        // Transition 8: sent, then merged.
        transition(&[(1, 8), (3, 15), (5, 30)], false),
        // Transition 9: aborted by WindowManager, never sent.
        transition(&[(1, 9), (8, 40)], false),
        packet(|p| {
            let mut m = p.message().begin_nested(SHELL_HANDLER_MAPPINGS);
            for (id, name) in [
                (1, "DefaultTransitionHandler"),
                (2, "RecentsTransitionHandler"),
            ] {
                let mut h = m.begin_nested(1);
                h.append_int32(1, id);
                h.append_string(2, name);
            }
        }),
    ]);
    TraceProcessor::from_bytes(&bytes).expect("trace")
}

#[test]
fn a_transition_s_protos_merge_into_one_row_with_its_status() {
    let tp = transitions_trace();
    let n = Value::Null;
    assert_eq!(
        rows(
            &tp,
            "SELECT id, ts, transition_id, send_time_ns, dispatch_time_ns, duration_ns,
                    finish_time_ns, wm_abort_time_ns, merge_time_ns, create_time_ns,
                    handler, status
             FROM window_manager_shell_transitions ORDER BY id"
        ),
        vec![
            vec![
                i(0),
                i(10),
                i(7),
                i(10),
                i(20),
                i(30),
                i(50),
                n.clone(),
                n.clone(),
                i(5),
                i(2),
                s("played")
            ],
            vec![
                i(1),
                i(15),
                i(8),
                i(15),
                n.clone(),
                n.clone(),
                n.clone(),
                n.clone(),
                i(30),
                n.clone(),
                n.clone(),
                s("merged")
            ],
            vec![
                i(2),
                i(0),
                i(9),
                n.clone(),
                n.clone(),
                n.clone(),
                n.clone(),
                i(40),
                n.clone(),
                n.clone(),
                n.clone(),
                s("aborted")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT a.key, a.display_value FROM window_manager_shell_transitions t
             JOIN args a USING (arg_set_id) WHERE t.transition_id = 7 ORDER BY a.key"
        ),
        vec![
            vec![s("changes[0].layer_id"), s("30")],
            vec![s("changes[0].mode"), s("1")],
            vec![s("create_time_ns"), s("5")],
            vec![s("dispatch_time_ns"), s("20")],
            vec![s("finish_time_ns"), s("50")],
            vec![s("handler"), s("2")],
            vec![s("id"), s("7")],
            vec![s("send_time_ns"), s("10")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT handler_id, handler_name, base64_proto_id IS NOT NULL
             FROM window_manager_shell_transition_handlers ORDER BY handler_id"
        ),
        vec![
            vec![i(1), s("DefaultTransitionHandler"), i(1)],
            vec![i(2), s("RecentsTransitionHandler"), i(1)],
        ]
    );
}

#[test]
fn a_change_s_displays_rotations_and_bounds_are_args() {
    let bytes = trace(&[packet(|p| {
        let mut t = p.message().begin_nested(SHELL_TRANSITION);
        t.append_int64(1, 3); // id
        let mut c = t.begin_nested(14);
        c.append_int32(5, 1); // start_display_id
        c.append_int32(8, 2); // end_rotation
        let mut r = c.begin_nested(9); // start_absolute_bounds
        for (field, v) in [(1, 10), (2, 20), (3, 110), (4, 120)] {
            r.append_int32(field, v);
        }
    })]);
    let tp = TraceProcessor::from_bytes(&bytes).expect("trace");
    assert_eq!(
        rows(
            &tp,
            "SELECT a.key, a.display_value FROM window_manager_shell_transitions t
             JOIN args a USING (arg_set_id) WHERE a.key GLOB 'changes*' ORDER BY a.key"
        ),
        vec![
            vec![s("changes[0].end_rotation"), s("2")],
            vec![s("changes[0].start_absolute_bounds.bottom"), s("120")],
            vec![s("changes[0].start_absolute_bounds.left"), s("10")],
            vec![s("changes[0].start_absolute_bounds.right"), s("110")],
            vec![s("changes[0].start_absolute_bounds.top"), s("20")],
            vec![s("changes[0].start_display_id"), s("1")],
        ]
    );
}
