//! Winscope's packets (SurfaceFlinger transactions, the input method
//! dumps) into upstream's Winscope tables and the `android.winscope.*`
//! modules, checked against what the test wrote.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.surfaceflinger_transactions`.
const SF_TRANSACTIONS: u32 = 94;
/// `TracePacket.winscope_extensions`.
const WINSCOPE_EXTENSIONS: u32 = 112;

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

fn null() -> Value {
    Value::Null
}

/// One entry: a transaction changing layer 7 (position and alpha) and
/// display 2 (its layer stack), a transaction changing nothing, an added
/// layer, a destroyed layer and a removed display.
fn transactions_trace() -> TraceProcessor {
    load(&[packet(|p| {
        p.set_timestamp(1000);
        let mut e = p.message().begin_nested(SF_TRANSACTIONS);
        e.append_int64(2, 77); // vsync_id
        {
            let mut t = e.begin_nested(3);
            t.append_int32(1, 10); // pid
            t.append_int32(2, 20); // uid
            t.append_uint64(6, 5); // transaction_id
            t.append_uint64(10, 99); // apply_token
            {
                let mut l = t.begin_nested(7);
                l.append_uint32(1, 7); // layer_id
                l.append_uint64(2, 0x1 | 0x8 | (0x4 << 32)); // what
                l.append_float(3, 0.5); // x
            }
            {
                let mut d = t.begin_nested(8);
                d.append_int32(1, 2); // id
                d.append_uint32(2, 0x2); // what
            }
        }
        {
            let mut t = e.begin_nested(3);
            t.append_uint64(6, 6);
        }
        {
            let mut a = e.begin_nested(4);
            a.append_uint32(1, 8);
            a.append_string(3, "new layer");
        }
        e.append_uint32(5, 3); // destroyed_layers
        e.append_int32(7, 4); // removed_displays
    })])
}

#[test]
fn an_entry_becomes_a_row_and_each_change_a_row_with_its_flags() {
    let tp = transactions_trace();
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, vsync_id, base64_proto_id IS NOT NULL, arg_set_id IS NOT NULL
             FROM surfaceflinger_transactions"
        ),
        vec![vec![i(1000), i(77), i(1), i(1)]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.surfaceflinger;
             SELECT snapshot_id, transaction_id, pid, uid, layer_id, display_id,
                    flags_id, transaction_type
             FROM android_surfaceflinger_transaction ORDER BY id"
        ),
        vec![
            vec![
                i(0),
                i(5),
                i(10),
                i(20),
                i(7),
                null(),
                i(0),
                s("LAYER_CHANGED")
            ],
            vec![
                i(0),
                i(5),
                i(10),
                i(20),
                null(),
                i(2),
                i(1),
                s("DISPLAY_CHANGED")
            ],
            vec![i(0), i(6), i(0), i(0), null(), null(), null(), s("NOOP")],
            vec![
                i(0),
                null(),
                null(),
                null(),
                i(8),
                null(),
                null(),
                s("LAYER_ADDED")
            ],
            vec![
                i(0),
                null(),
                null(),
                null(),
                i(3),
                null(),
                null(),
                s("LAYER_DESTROYED")
            ],
            vec![
                i(0),
                null(),
                null(),
                null(),
                null(),
                i(4),
                null(),
                s("DISPLAY_REMOVED")
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.surfaceflinger;
             SELECT flags_id, flag FROM android_surfaceflinger_transaction_flag"
        ),
        vec![
            vec![i(0), s("ePositionChanged")],
            vec![i(0), s("eAlphaChanged")],
            vec![i(0), s("eBackgroundColorChanged")],
            vec![i(1), s("eLayerStackChanged")],
        ]
    );
}

#[test]
fn a_change_has_its_fields_and_its_transactions_apply_token_as_args() {
    let tp = transactions_trace();
    assert_eq!(
        rows(
            &tp,
            "SELECT a.key, a.display_value FROM __intrinsic_surfaceflinger_transaction t
             JOIN args a USING (arg_set_id)
             WHERE t.transaction_type = 'LAYER_CHANGED' ORDER BY a.key"
        ),
        vec![
            vec![s("apply_token"), s("99")],
            vec![s("layer_id"), s("7")],
            vec![s("what"), s("17179869193")],
            vec![s("x"), s("0.5")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT a.key, a.display_value FROM surfaceflinger_transactions t
             JOIN args a USING (arg_set_id)
             WHERE a.key LIKE 'transactions[0].layer_changes%' ORDER BY a.key"
        ),
        vec![
            vec![s("transactions[0].layer_changes[0].layer_id"), s("7")],
            vec![s("transactions[0].layer_changes[0].what"), s("17179869193")],
            vec![s("transactions[0].layer_changes[0].x"), s("0.5")],
        ]
    );
}

#[test]
fn input_method_dumps_become_rows_with_their_fields() {
    let tp = load(&[
        packet(|p| {
            p.set_timestamp(10);
            let mut w = p.message().begin_nested(WINSCOPE_EXTENSIONS);
            let mut c = w.begin_nested(1); // inputmethod_clients
            c.append_string(2, "a reason"); // where
        }),
        packet(|p| {
            p.set_timestamp(20);
            let mut w = p.message().begin_nested(WINSCOPE_EXTENSIONS);
            let mut c = w.begin_nested(2); // inputmethod_service
            c.append_string(2, "b reason");
        }),
        packet(|p| {
            p.set_timestamp(30);
            let mut w = p.message().begin_nested(WINSCOPE_EXTENSIONS);
            let mut c = w.begin_nested(3); // inputmethod_manager_service
            c.append_string(2, "c reason");
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.inputmethod;
             SELECT 'clients', ts, key, display_value FROM android_inputmethod_clients
               JOIN args USING (arg_set_id)
             UNION ALL
             SELECT 'service', ts, key, display_value FROM android_inputmethod_service
               JOIN args USING (arg_set_id)
             UNION ALL
             SELECT 'manager', ts, key, display_value FROM android_inputmethod_manager_service
               JOIN args USING (arg_set_id)"
        ),
        vec![
            vec![s("clients"), i(10), s("where"), s("a reason")],
            vec![s("service"), i(20), s("where"), s("b reason")],
            vec![s("manager"), i(30), s("where"), s("c reason")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT COUNT(*) FROM __intrinsic_inputmethod_clients WHERE base64_proto_id IS NOT NULL"
        ),
        vec![vec![i(1)]]
    );
}

#[test]
fn input_events_become_rows_of_their_kind_with_their_fields() {
    let ext = |ts: u64, kind: u32, f: &dyn Fn(&mut protozero::Message<'_>)| {
        packet(|p| {
            p.set_timestamp(ts);
            let mut w = p.message().begin_nested(WINSCOPE_EXTENSIONS);
            let mut e = w.begin_nested(5); // android_input_event
            let mut m = e.begin_nested(kind);
            f(&mut m);
        })
    };
    let tp = load(&[
        ext(100, 1, &|m| {
            m.append_fixed32(1, 11); // event_id
            m.append_uint32(3, 4098); // source
            m.append_int32(4, 2); // action
            m.append_sint32(6, -1); // display_id
        }),
        ext(200, 3, &|m| {
            m.append_fixed32(1, 12);
            m.append_int32(8, 29); // key_code
        }),
        ext(300, 5, &|m| {
            m.append_fixed32(1, 11);
            m.append_int64(2, 5000); // vsync_id
            m.append_int32(3, 42); // window_id
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.input;
             SELECT event_id, ts, source, action, device_id, display_id
             FROM android_motion_events"
        ),
        vec![vec![i(11), i(100), i(4098), i(2), i(0), i(-1)]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.input;
             SELECT event_id, ts, key_code FROM android_key_events"
        ),
        vec![vec![i(12), i(200), i(29)]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.input;
             SELECT d.event_id, d.vsync_id, d.window_id, a.key, a.display_value
             FROM android_input_event_dispatch d JOIN args a USING (arg_set_id)
             ORDER BY a.key"
        ),
        vec![
            vec![i(11), i(5000), i(42), s("event_id"), s("11")],
            vec![i(11), i(5000), i(42), s("vsync_id"), s("5000")],
            vec![i(11), i(5000), i(42), s("window_id"), s("42")],
        ]
    );
}

#[test]
fn a_layers_snapshot_becomes_a_row_and_each_layer_a_row() {
    let tp = load(&[packet(|p| {
        p.set_timestamp(500);
        let mut snap = p.message().begin_nested(93); // surfaceflinger_layers_snapshot
        snap.append_sfixed64(1, 123); // elapsed_realtime_nanos
        let mut layers = snap.begin_nested(3);
        {
            let mut l = layers.begin_nested(1);
            l.append_int32(1, 1); // id
            l.append_string(2, "root");
            l.append_uint32(22, 1); // flags: hidden
            l.append_float(41, 2.0); // corner_radius
        }
        {
            let mut l = layers.begin_nested(1);
            l.append_int32(1, 2);
            l.append_string(2, "child");
            l.append_int32(25, 1); // parent
            l.append_int32(26, 9); // z_order_relative_of: missing
        }
    })]);
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, has_invalid_elapsed_ts, base64_proto_id IS NOT NULL
             FROM surfaceflinger_layers_snapshot"
        ),
        vec![vec![i(500), i(0), i(1)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT snapshot_id, layer_id, layer_name, parent, corner_radius_tl,
                    is_hidden_by_policy, z_order_relative_of, is_missing_z_parent
             FROM surfaceflinger_layer ORDER BY id"
        ),
        vec![
            vec![
                i(0),
                i(1),
                s("root"),
                null(),
                Value::Real(2.0),
                i(1),
                null(),
                i(0)
            ],
            vec![
                i(0),
                i(2),
                s("child"),
                i(1),
                Value::Real(0.0),
                i(0),
                i(9),
                i(1)
            ],
        ]
    );
    // The snapshot's args leave its layers out; each layer has its own.
    assert_eq!(
        rows(
            &tp,
            "SELECT key FROM surfaceflinger_layers_snapshot JOIN args USING (arg_set_id)"
        ),
        vec![vec![s("elapsed_realtime_nanos")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT display_value FROM surfaceflinger_layer JOIN args USING (arg_set_id)
             WHERE layer_id = 2 AND key = 'name'"
        ),
        vec![vec![s("child")]]
    );
}

#[test]
fn raw_protos_flatten_again_with_their_defaults() {
    let tp = load(&[packet(|p| {
        p.set_timestamp(500);
        let mut snap = p.message().begin_nested(93);
        let mut layers = snap.begin_nested(3);
        let mut l = layers.begin_nested(1);
        l.append_int32(1, 4); // id
        l.append_int32(10, 3); // z
    })]);
    assert_eq!(
        rows(
            &tp,
            "SELECT key, int_value, string_value, real_value
             FROM __intrinsic_winscope_proto_to_args_with_defaults('surfaceflinger_layer')
             WHERE key IN ('id', 'z', 'name', 'is_opaque', 'children', 'transform',
                           'hwc_composition_type', 'corner_radius')
             ORDER BY key"
        ),
        vec![
            vec![s("children"), null(), null(), null()],
            vec![s("corner_radius"), null(), null(), Value::Real(0.0)],
            vec![
                s("hwc_composition_type"),
                null(),
                s("HWC_TYPE_UNSPECIFIED"),
                null()
            ],
            vec![s("id"), i(4), null(), null()],
            vec![s("is_opaque"), i(0), null(), null()],
            vec![s("name"), null(), null(), null()],
            vec![s("transform"), null(), null(), null()],
            vec![s("z"), i(3), null(), null()],
        ]
    );
    let err = tp
        .query("SELECT * FROM __intrinsic_winscope_proto_to_args_with_defaults('slice')")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Failed to find __intrinsic_slice table"),
        "{err}"
    );
}

#[test]
fn each_layers_path_from_the_root_is_answered() {
    let layer = |l: &mut protozero::Message<'_>, id: i32, parent: Option<i32>| {
        let mut m = l.begin_nested(1);
        m.append_int32(1, id);
        if let Some(p) = parent {
            m.append_int32(25, p);
        }
    };
    let tp = load(&[packet(|p| {
        p.set_timestamp(500);
        let mut snap = p.message().begin_nested(93);
        let mut layers = snap.begin_nested(3);
        layer(&mut layers, 1, None);
        layer(&mut layers, 2, Some(1));
        layer(&mut layers, 3, Some(2));
        // Two layers each the other's parent: the path stops.
        layer(&mut layers, 5, Some(6));
        layer(&mut layers, 6, Some(5));
    })]);
    // Rows are numbered as upstream numbers a table function's rows.
    assert_eq!(
        rows(
            &tp,
            "SELECT COUNT(*), MIN(id), MAX(id)
             FROM __intrinsic_winscope_surfaceflinger_hierarchy_path()"
        ),
        vec![vec![i(10), i(0), i(9)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT snapshot_id, layer_id, ancestor_id
             FROM __intrinsic_winscope_surfaceflinger_hierarchy_path()"
        ),
        vec![
            vec![i(0), i(1), i(1)],
            vec![i(0), i(2), i(1)],
            vec![i(0), i(2), i(2)],
            vec![i(0), i(3), i(1)],
            vec![i(0), i(3), i(2)],
            vec![i(0), i(3), i(3)],
            vec![i(0), i(5), i(6)],
            vec![i(0), i(5), i(5)],
            vec![i(0), i(6), i(5)],
            vec![i(0), i(6), i(6)],
        ]
    );
}

#[test]
fn fields_newer_than_perfettos_v51_schema_are_named() {
    // TransactionState.transaction_barriers (11) came after v51.
    let tp = load(&[packet(|p| {
        p.set_timestamp(1000);
        let mut e = p.message().begin_nested(SF_TRANSACTIONS);
        let mut t = e.begin_nested(3);
        t.append_uint64(6, 5);
        {
            let mut l = t.begin_nested(7);
            l.append_uint32(1, 7);
        }
        let mut b = t.begin_nested(11);
        b.append_string(1, "token");
        b.append_uint32(2, 1);
    })]);
    assert_eq!(
        rows(
            &tp,
            "SELECT a.key, a.display_value FROM __intrinsic_surfaceflinger_transaction t
             JOIN args a USING (arg_set_id) WHERE a.key LIKE 'transaction_barriers%'
             ORDER BY a.key"
        ),
        vec![
            vec![s("transaction_barriers[0].barrier_token"), s("token")],
            vec![s("transaction_barriers[0].kind"), s("1")],
        ]
    );
}

#[test]
fn shell_transitions_keep_their_protos_and_participants() {
    let transition = |id: i32, with_change: bool| {
        packet(move |p| {
            p.set_timestamp(10);
            let mut t = p.message().begin_nested(96); // shell_transition
            t.append_int32(1, id);
            if with_change {
                let mut c = t.begin_nested(14);
                c.append_int32(1, 1); // mode
                c.append_int32(2, 30); // layer_id
                let mut r = c.begin_nested(9); // start_absolute_bounds
                r.append_int32(1, 10);
                r.append_int32(2, 20);
                r.append_int32(3, 110);
                r.append_int32(4, 220);
            }
        })
    };
    let tp = load(&[transition(7, true), transition(7, false)]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.transitions;
             SELECT transition_id, COUNT(*) FROM android_window_manager_shell_transition_protos
             GROUP BY transition_id"
        ),
        vec![vec![i(7), i(2)]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.transitions;
             INCLUDE PERFETTO MODULE android.winscope.rect;
             SELECT p.transition_id, p.layer_id, p.mode, p.window_id, r.x, r.y, r.w, r.h,
                    p.end_abs_bounds_rect_id
             FROM android_window_manager_shell_transition_participants p
             JOIN android_winscope_rect r ON r.id = p.start_abs_bounds_rect_id"
        ),
        vec![vec![
            i(7),
            i(30),
            i(1),
            null(),
            Value::Real(10.0),
            Value::Real(20.0),
            Value::Real(100.0),
            Value::Real(200.0),
            null()
        ]]
    );
}

/// `WinscopeExtensionsImpl.windowmanager`.
const WINDOWMANAGER: u32 = 6;

#[test]
fn a_windowmanager_dump_is_a_row_without_its_container_tree() {
    let dump = |ts: u64, elapsed: u64, display: i32| {
        packet(|p| {
            p.set_timestamp(ts);
            let mut e = p.message().begin_nested(WINSCOPE_EXTENSIONS);
            let mut w = e.begin_nested(WINDOWMANAGER);
            if elapsed != 0 {
                w.append_fixed64(1, elapsed);
            }
            w.append_string(2, "trace.enable");
            let mut svc = w.begin_nested(3);
            svc.append_string(4, "com.example/.Main"); // focused_app
            svc.append_int32(9, display);
            let mut root = svc.begin_nested(2); // root_window_container
            root.begin_nested(1).append_bool(3, true);
        })
    };
    let tp = load(&[dump(100, 7, 0), dump(200, 0, 2)]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.windowmanager;
             SELECT id, ts, focused_display_id, has_invalid_elapsed_ts,
                    base64_proto_id IS NOT NULL
             FROM android_windowmanager ORDER BY id"
        ),
        vec![
            vec![i(0), i(100), i(0), i(0), i(1)],
            vec![i(1), i(200), i(2), i(1), i(1)]
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.windowmanager;
             SELECT a.key, a.display_value FROM android_windowmanager w
             JOIN args a USING (arg_set_id) WHERE w.id = 0 ORDER BY a.key"
        ),
        vec![
            vec![s("elapsed_realtime_nanos"), s("7")],
            vec![s("where"), s("trace.enable")],
            vec![
                s("window_manager_service.focused_app"),
                s("com.example/.Main")
            ],
            vec![s("window_manager_service.focused_display_id"), s("0")],
        ]
    );
}
