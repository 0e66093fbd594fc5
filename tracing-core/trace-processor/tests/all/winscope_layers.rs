//! What Winscope computes from the window dumps: SurfaceFlinger layers'
//! visibility (occlusion in drawing order, the reasons a layer is not
//! seen) and rectangles (bounds, input windows, displays), and
//! WindowManager's container tree as rows with their rectangles, checked
//! against what the test wrote.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.winscope_extensions`.
const WINSCOPE_EXTENSIONS: u32 = 112;

fn load(packets: &[Vec<u8>]) -> TraceProcessor {
    TraceProcessor::from_bytes(&trace(packets)).expect("trace")
}

fn null() -> Value {
    Value::Null
}

/// A layer with a colour, a buffer and bounds equal to its screen bounds
/// (left, top, right, bottom).
fn shown_layer(layers: &mut protozero::Message<'_>, id: i32, z: i32, ltrb: [f32; 4], opaque: bool) {
    let mut l = layers.begin_nested(1);
    l.append_int32(1, id);
    l.append_int32(10, z);
    l.append_bool(16, opaque); // is_opaque
    {
        let mut c = l.begin_nested(20); // color
        c.append_float(4, 1.0); // a
    }
    {
        let mut b = l.begin_nested(27); // active_buffer
        b.append_uint32(1, 1);
        b.append_uint32(2, 1);
    }
    for field in [45, 46] {
        // bounds, screen_bounds
        let mut r = l.begin_nested(field);
        for (side, v) in ltrb.iter().enumerate() {
            r.append_float(side as u32 + 1, *v);
        }
    }
    if id == 1 {
        let mut input = l.begin_nested(47); // input_window_info
        {
            let mut f = input.begin_nested(3); // frame
            f.append_int32(3, 5);
            f.append_int32(4, 5);
        }
        let mut region = input.begin_nested(4); // touchable_region
        let mut r = region.begin_nested(2);
        r.append_int32(3, 2);
        r.append_int32(4, 3);
    }
}

#[test]
fn layers_get_their_visibility_and_rects_from_the_drawing_order() {
    let tp = load(&[packet(|p| {
        p.set_timestamp(500);
        let mut snap = p.message().begin_nested(93); // surfaceflinger_layers_snapshot
        {
            let mut d = snap.begin_nested(7); // displays
            d.append_uint64(1, 4); // id
            d.append_string(2, "screen");
            let mut size = d.begin_nested(4);
            size.append_int32(1, 10);
            size.append_int32(2, 20);
        }
        let mut layers = snap.begin_nested(3);
        // Layer 1 (z 1) is opaque and above layer 2, which it contains, and
        // overlaps layer 3 (z -1); layer 4 has no colour, buffer or bounds.
        shown_layer(&mut layers, 1, 1, [0.0, 0.0, 10.0, 10.0], true);
        shown_layer(&mut layers, 2, 0, [2.0, 2.0, 4.0, 4.0], false);
        shown_layer(&mut layers, 3, -1, [5.0, 5.0, 15.0, 15.0], false);
        let mut l = layers.begin_nested(1);
        l.append_int32(1, 4);
    })]);
    assert_eq!(
        rows(
            &tp,
            "SELECT layer_id, l.is_visible, r.x, r.y, r.w, r.h, tr.depth
             FROM surfaceflinger_layer l
             LEFT JOIN __intrinsic_winscope_trace_rect tr ON tr.id = l.layer_rect_id
             LEFT JOIN __intrinsic_winscope_rect r ON r.id = tr.rect_id
             ORDER BY layer_id"
        ),
        vec![
            vec![
                i(1),
                i(1),
                Value::Real(0.0),
                Value::Real(0.0),
                Value::Real(10.0),
                Value::Real(10.0),
                i(3)
            ],
            vec![
                i(2),
                i(0),
                Value::Real(2.0),
                Value::Real(2.0),
                Value::Real(2.0),
                Value::Real(2.0),
                i(2)
            ],
            vec![
                i(3),
                i(1),
                Value::Real(5.0),
                Value::Real(5.0),
                Value::Real(10.0),
                Value::Real(10.0),
                i(1)
            ],
            vec![i(4), i(0), null(), null(), null(), null(), null()],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT layer_id, key, display_value FROM surfaceflinger_layer
             JOIN args USING (arg_set_id)
             WHERE key GLOB '*occluded_by*' OR key GLOB 'visibility_reason*'
             ORDER BY layer_id, key"
        ),
        vec![
            vec![i(2), s("occluded_by[0]"), s("1")],
            vec![i(2), s("visibility_reason[0]"), s("occluded")],
            vec![i(3), s("partially_occluded_by[0]"), s("1")],
            vec![i(4), s("visibility_reason[0]"), s("buffer is empty")],
            vec![i(4), s("visibility_reason[1]"), s("alpha is 0")],
            vec![i(4), s("visibility_reason[2]"), s("bounds is 0x0")],
            vec![i(4), s("visibility_reason[3]"), s("crop is 0x0")],
            vec![
                i(4),
                s("visibility_reason[4]"),
                s("does not have color fill, shadow or blur")
            ],
        ]
    );
    // The display's rect is its size (no layer stack space written); the
    // input window's frame and touchable region are in layer 1's space.
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.surfaceflinger;
             SELECT display_id, display_name, is_on, r.w, r.h
             FROM android_surfaceflinger_display d
             JOIN __intrinsic_winscope_trace_rect tr ON tr.id = d.trace_rect_id
             JOIN __intrinsic_winscope_rect r ON r.id = tr.rect_id"
        ),
        vec![vec![
            i(4),
            s("screen"),
            i(1),
            Value::Real(10.0),
            Value::Real(20.0)
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT r.w, r.h, fr.w, fr.h, tr.is_visible
             FROM surfaceflinger_layer l
             JOIN __intrinsic_winscope_trace_rect tr ON tr.id = l.input_rect_id
             JOIN __intrinsic_winscope_rect r ON r.id = tr.rect_id
             JOIN __intrinsic_winscope_fill_region f ON f.trace_rect_id = tr.id
             JOIN __intrinsic_winscope_rect fr ON fr.id = f.rect_id"
        ),
        vec![vec![
            Value::Real(5.0),
            Value::Real(5.0),
            Value::Real(2.0),
            Value::Real(3.0),
            i(1)
        ]]
    );
}

#[test]
fn a_window_manager_dumps_container_tree_becomes_rows() {
    let tp = load(&[packet(|p| {
        p.set_timestamp(700);
        let mut w = p.message().begin_nested(WINSCOPE_EXTENSIONS);
        let mut entry = w.begin_nested(6); // windowmanager
        entry.append_fixed64(1, 9); // elapsed_realtime_nanos
        let mut service = entry.begin_nested(3);
        let mut root = service.begin_nested(2); // root_window_container
        let mut root_wc = root.begin_nested(1);
        {
            let mut id = root_wc.begin_nested(6);
            id.append_int32(1, 1);
            id.append_string(3, "root");
        }
        let mut child = root_wc.begin_nested(5);
        let mut dc = child.begin_nested(3); // display_content
        dc.append_int32(2, 0); // id
        {
            let mut info = dc.begin_nested(10);
            info.append_int32(1, 100);
            info.append_int32(2, 200);
            info.append_string(5, "the display");
        }
        let mut area = dc.begin_nested(21); // root_display_area
        let mut area_wc = area.begin_nested(1);
        {
            let mut id = area_wc.begin_nested(6);
            id.append_int32(1, 2);
        }
        let mut window_child = area_wc.begin_nested(5);
        let mut ws = window_child.begin_nested(8); // window
        {
            let mut wc = ws.begin_nested(1);
            wc.append_bool(3, true);
            let mut id = wc.begin_nested(6);
            id.append_int32(1, 3);
            id.append_string(3, "Starting app");
        }
        {
            let mut attrs = ws.begin_nested(5);
            attrs.append_float(12, 0.5); // alpha
        }
        ws.append_bool(38, true); // is_visible
        let mut frames = ws.begin_nested(41);
        let mut frame = frames.begin_nested(5);
        frame.append_int32(3, 50);
        frame.append_int32(4, 60);
    })]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.winscope.windowmanager;
             SELECT container_type, title, token, parent_token, child_index, c.is_visible,
                    name_override, r.w, r.h, tr.depth, tr.opacity
             FROM android_windowmanager_windowcontainer c
             LEFT JOIN __intrinsic_winscope_trace_rect tr ON tr.id = c.window_rect_id
             LEFT JOIN __intrinsic_winscope_rect r ON r.id = tr.rect_id
             ORDER BY c.id"
        ),
        vec![
            vec![
                s("RootWindowContainer"),
                s("root"),
                i(1),
                null(),
                null(),
                i(0),
                null(),
                null(),
                null(),
                null(),
                null()
            ],
            vec![
                s("DisplayContent"),
                s("the display"),
                i(2),
                i(1),
                i(0),
                i(0),
                null(),
                Value::Real(100.0),
                Value::Real(200.0),
                i(0),
                null()
            ],
            vec![
                s("WindowState"),
                s("Starting app"),
                i(3),
                i(2),
                i(0),
                i(1),
                s("app"),
                Value::Real(50.0),
                Value::Real(60.0),
                i(1),
                Value::Real(0.5)
            ],
        ]
    );
    // Each container's args describe it alone: the root's children are cut.
    assert_eq!(
        rows(
            &tp,
            "SELECT COUNT(*) FROM __intrinsic_windowmanager_windowcontainer
             JOIN args USING (arg_set_id) WHERE title = 'root' AND key GLOB '*children*'"
        ),
        vec![vec![i(0)]]
    );
}
