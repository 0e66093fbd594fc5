//! ViewCapture: app windows' view trees, their strings interned on the
//! sequence, into `android.winscope.viewcapture` with each view's
//! visibility and rectangle, checked against what the test wrote.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.winscope_extensions`.
const WINSCOPE_EXTENSIONS: u32 = 112;
/// `WinscopeExtensionsImpl.viewcapture`.
const VIEWCAPTURE: u32 = 4;

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

/// A view: id, parent, class iid, left, top, width, height, scale,
/// visibility flag.
#[allow(clippy::too_many_arguments)]
fn view(
    m: &mut protozero::Message<'_>,
    id: i32,
    parent: i32,
    class_iid: i32,
    bounds: [i32; 4],
    scale: f32,
    visibility: i32,
) {
    let mut v = m.begin_nested(3);
    v.append_int32(1, id);
    v.append_int32(2, parent);
    v.append_int32(3, 100 + id); // hashcode
    v.append_int32(5, class_iid);
    for (n, b) in (6..).zip(bounds) {
        v.append_int32(n, b);
    }
    v.append_float(14, scale);
    v.append_float(15, scale);
    v.append_float(16, 0.5); // alpha
    v.append_int32(19, visibility);
}

fn viewcapture_trace() -> TraceProcessor {
    load(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut d = p.message().begin_nested(12); // interned_data
            for (field, iid, text) in [(38, 1, "com.example"), (41, 2, "DecorView")] {
                let mut s = d.begin_nested(field);
                s.append_uint64(1, iid);
                s.append_string(2, text);
            }
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(2);
            p.set_timestamp(1000);
            let mut e = p.message().begin_nested(WINSCOPE_EXTENSIONS);
            let mut c = e.begin_nested(VIEWCAPTURE);
            c.append_int32(1, 1); // package_name_iid
            c.append_int32(2, 9); // window_name_iid: not interned
            view(&mut c, 0, -1, 2, [0, 0, 100, 200], 1.0, 0);
            // Twice the size about its centre, inside its parent.
            view(&mut c, 1, 0, 7, [10, 20, 10, 10], 2.0, 0);
            // Hidden by its flag.
            view(&mut c, 2, 0, 2, [0, 0, 5, 5], 1.0, 4);
        }),
    ])
}

#[test]
fn a_capture_and_its_views_resolve_their_interned_strings() {
    let tp = viewcapture_trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.viewcapture;
             SELECT id, ts, package_name, window_name FROM android_viewcapture"
        ),
        vec![vec![i(0), i(1000), s("com.example"), Value::Null]]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.viewcapture;
             SELECT a.key, a.display_value FROM android_viewcapture v
             JOIN args a USING (arg_set_id) ORDER BY a.key"
        ),
        vec![
            vec![s("package_name"), s("com.example")],
            vec![s("window_name"), s("STRING DE-INTERNING ERROR")],
            vec![s("window_name_iid"), s("9")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.viewcapture;
             SELECT node_id, hashcode, is_visible, parent_id, class_name,
                    extract_arg(arg_set_id, 'class_name')
             FROM android_viewcapture_view ORDER BY id"
        ),
        vec![
            vec![
                i(0),
                i(100),
                i(1),
                i(4294967295),
                s("DecorView"),
                s("DecorView")
            ],
            vec![
                i(1),
                i(101),
                i(1),
                i(0),
                Value::Null,
                s("STRING DE-INTERNING ERROR")
            ],
            vec![i(2), i(102), i(0), i(0), s("DecorView"), s("DecorView")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.viewcapture;
             INCLUDE PERFETTO MODULE android.winscope.rect;
             SELECT v.node_id, t.depth, t.is_visible, t.opacity, r.x, r.y, r.w, r.h
             FROM android_viewcapture_view v
             JOIN android_winscope_trace_rect t ON t.id = v.trace_rect_id
             JOIN android_winscope_rect r ON r.id = t.rect_id ORDER BY v.node_id"
        ),
        vec![
            vec![
                i(0),
                i(0),
                i(1),
                Value::Real(0.5),
                Value::Real(0.0),
                Value::Real(0.0),
                Value::Real(100.0),
                Value::Real(200.0)
            ],
            vec![
                i(1),
                i(4),
                i(1),
                Value::Real(0.5),
                Value::Real(5.0),
                Value::Real(15.0),
                Value::Real(20.0),
                Value::Real(20.0)
            ],
            vec![
                i(2),
                i(4),
                i(0),
                Value::Real(0.5),
                Value::Real(0.0),
                Value::Real(0.0),
                Value::Real(5.0),
                Value::Real(5.0)
            ],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT flat_key, iid, deinterned_value FROM __intrinsic_viewcapture_interned_data
             ORDER BY flat_key"
        ),
        vec![
            vec![s("class_name_iid"), i(2), s("DecorView")],
            vec![s("class_name_iid"), i(2), s("DecorView")],
            vec![s("package_name_iid"), i(1), s("com.example")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats
             WHERE name = 'winscope_viewcapture_missing_interned_string_parse_errors'"
        ),
        vec![vec![i(2)]]
    );
}

#[test]
fn a_view_s_content_description_and_text_are_de_interned_into_its_args() {
    let tp = load(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut d = p.message().begin_nested(12); // interned_data
            for (field, iid, text) in [(45, 1, "Description"), (46, 1, "Hello")] {
                let mut s = d.begin_nested(field);
                s.append_uint64(1, iid);
                s.append_string(2, text);
            }
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(2);
            p.set_timestamp(1000);
            let mut e = p.message().begin_nested(WINSCOPE_EXTENSIONS);
            let mut c = e.begin_nested(VIEWCAPTURE);
            let mut v = c.begin_nested(3);
            v.append_int32(2, -1); // parent_id: the root
            v.append_int32(21, 1); // content_description_iid
            v.append_int32(22, 1); // text_iid
        }),
    ]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.viewcapture;
             SELECT a.key, a.display_value FROM android_viewcapture_view v
             JOIN args a USING (arg_set_id)
             WHERE a.key IN ('content_description', 'text') ORDER BY a.key"
        ),
        vec![
            vec![s("content_description"), s("Description")],
            vec![s("text"), s("Hello")],
        ]
    );
}
