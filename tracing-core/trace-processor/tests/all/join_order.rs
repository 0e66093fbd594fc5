//! A join without an `ORDER BY` gives its rows in the order SQLite plans
//! it, and SQLite plans by the virtual tables' estimates: ours follow
//! upstream's cost model, so the rows come in upstream's order. A few
//! tracks go outside and their samples (or slices) are read track by
//! track; with a hundred tracks, the samples go outside and each finds its
//! track by id.

use crate::common;

use common::{packet, rows, s, trace};
use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// `tracks` counter tracks, and `per_track` samples on each, the tracks
/// taking turns in time.
fn counters(tracks: u64, per_track: u64) -> TraceProcessor {
    let mut packets = Vec::new();
    for uuid in 1..=tracks {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(uuid);
            td.set_name(&format!("c{uuid}"));
            td.begin_counter();
        }));
    }
    for i in 0..tracks * per_track {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(1000 + 10 * i);
            let mut e = p.begin_track_event();
            e.set_track_uuid(1 + i % tracks);
            e.set_type(track_event::Type::Counter);
            e.set_double_counter_value(i as f64);
        }));
    }
    TraceProcessor::from_bytes(&trace(&packets)).expect("load")
}

const TRACKS_JOIN_SAMPLES: &str = "SELECT ct.name, CAST(c.value AS INT) FROM counter_track ct JOIN counter c ON ct.id = c.track_id";

#[test]
fn few_tracks_are_read_track_by_track() {
    let tp = counters(3, 2);
    assert_eq!(
        rows(&tp, TRACKS_JOIN_SAMPLES),
        vec![
            vec![s("c1"), Value::Int(0)],
            vec![s("c1"), Value::Int(3)],
            vec![s("c2"), Value::Int(1)],
            vec![s("c2"), Value::Int(4)],
            vec![s("c3"), Value::Int(2)],
            vec![s("c3"), Value::Int(5)],
        ]
    );
}

/// With a hundred tracks, a pass over the samples per track costs more than
/// a probe by id per sample: the samples go outside, in their order.
#[test]
fn many_tracks_have_their_samples_read_in_their_order() {
    let tp = counters(100, 12);
    let got = rows(&tp, TRACKS_JOIN_SAMPLES);
    assert_eq!(got.len(), 1200);
    let values: Vec<Value> = got.iter().filter_map(|r| r.get(1).cloned()).collect();
    let in_order: Vec<Value> = (0..1200).map(Value::Int).collect();
    assert_eq!(values, in_order);
}

/// `slices.with_context`'s thread slices, as upstream's view joins its
/// thread tracks to their slices: on a small trace, thread by thread.
#[test]
fn thread_slices_of_a_small_trace_come_thread_by_thread() {
    let json = r#"[
        {"ph": "X", "pid": 1, "tid": 2, "ts": 10, "dur": 5, "name": "a"},
        {"ph": "X", "pid": 1, "tid": 3, "ts": 20, "dur": 5, "name": "b"},
        {"ph": "X", "pid": 1, "tid": 2, "ts": 30, "dur": 5, "name": "c"},
        {"ph": "X", "pid": 1, "tid": 3, "ts": 40, "dur": 5, "name": "d"}
    ]"#;
    let tp = TraceProcessor::from_bytes(json.as_bytes()).expect("json trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE slices.with_context; SELECT name, tid FROM thread_slice"
        ),
        vec![
            vec![s("a"), Value::Int(2)],
            vec![s("c"), Value::Int(2)],
            vec![s("b"), Value::Int(3)],
            vec![s("d"), Value::Int(3)],
        ]
    );
}
