//! TrackEvent's own callstacks: inline frames become callsites on the
//! `track_event_inline` dummy mapping (equal stacks share one), the frame's
//! source location a symbol, and `__intrinsic_track_event_callstacks` joins
//! them to the slice with the event's weight (an end event's callstack as
//! `end_callsite_id`); an interned callstack that does not resolve is a
//! parser error.

use crate::common;

use common::{packet, rows, s, trace};
use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::{TraceProcessor, Value};

fn event(
    ts: u64,
    ty: track_event::Type,
    name: &str,
    stack: &[(&str, &str, u32)],
    weight: Option<f64>,
    iid: Option<u64>,
) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.set_track_uuid(7);
        e.set_type(ty);
        if !name.is_empty() {
            e.set_name(name);
        }
        if let Some(w) = weight {
            e.set_callstack_weight(w);
        }
        if let Some(iid) = iid {
            e.set_callstack_iid(iid);
        }
        if !stack.is_empty() {
            let mut cs = e.begin_callstack();
            for (f, file, line) in stack {
                let mut fr = cs.add_frames();
                fr.set_function_name(f);
                fr.set_source_file(file);
                fr.set_line_number(*line);
            }
        }
    })
}

#[test]
fn inline_callstacks_become_shared_callsites_joined_to_their_slices() {
    use track_event::Type::{SliceBegin, SliceEnd};
    let stack = [("main", "m.rs", 3), ("work", "w.rs", 9)];
    let bytes = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(7);
            td.set_name("t");
        }),
        event(10, SliceBegin, "a", &stack, Some(1.5), None),
        event(20, SliceEnd, "", &[], None, None),
        event(30, SliceBegin, "b", &stack, None, None),
        event(40, SliceEnd, "", &[("main", "m.rs", 3)], Some(2.0), None),
        event(50, SliceBegin, "c", &[], None, Some(99)),
        event(60, SliceEnd, "", &[], None, None),
    ]);
    let tp = TraceProcessor::from_bytes(&bytes).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT s.name, f.name, sym.source_file, sym.line_number, t.weight, \
                    t.callsite_id IS NOT NULL, t.end_callsite_id IS NOT NULL \
             FROM __intrinsic_track_event_callstacks t JOIN slice s ON s.id = t.slice_id \
             JOIN stack_profile_callsite c ON c.id = COALESCE(t.callsite_id, t.end_callsite_id) \
             JOIN stack_profile_frame f ON f.id = c.frame_id \
             JOIN stack_profile_symbol sym ON sym.symbol_set_id = f.symbol_set_id \
             ORDER BY t.id"
        ),
        vec![
            vec![
                s("a"),
                s("work"),
                s("w.rs"),
                Value::Int(9),
                Value::Real(1.5),
                Value::Int(1),
                Value::Int(0)
            ],
            vec![
                s("b"),
                s("work"),
                s("w.rs"),
                Value::Int(9),
                Value::Null,
                Value::Int(1),
                Value::Int(0)
            ],
            vec![
                s("b"),
                s("main"),
                s("m.rs"),
                Value::Int(3),
                Value::Real(2.0),
                Value::Int(0),
                Value::Int(1)
            ],
        ]
    );
    // One stack of two frames and its one-frame prefix: two callsites.
    assert_eq!(
        rows(
            &tp,
            "SELECT COUNT(DISTINCT callsite_id) FROM __intrinsic_track_event_callstacks"
        ),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT m.name FROM stack_profile_frame f JOIN stack_profile_mapping m ON m.id = f.mapping GROUP BY m.name"
        ),
        vec![vec![s("track_event_inline")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'track_event_parser_errors'"
        ),
        vec![vec![Value::Int(1)]]
    );
}
