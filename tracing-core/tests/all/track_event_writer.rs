//! TrackEvents through the whole path (event writer → SMB → service →
//! trace): every interned id resolves through the sequence's interned data,
//! slices nest, annotations and counters keep their values, and a cleared
//! incremental state is re-emitted.

use crate::service_support;

use std::collections::HashMap;

use service_support::*;
use zerotrace_core::service::ConsumerCall;
use zerotrace_core::track_event::{Category, DebugValue, EventWriter, ThreadTrack};
use zerotrace_protos::protos::TracePacketDecoder;

static RENDER: Category = Category::new("render");
static IO: Category = Category::new("io");

/// A harness with producer "app" serving `track_event` into a running
/// session: (harness, producer, consumer, global buffer id).
fn track_event_session() -> (
    Harness,
    zerotrace_core::service::ProducerId,
    zerotrace_core::service::ConsumerId,
    u16,
) {
    let mut h = Harness::new();
    let p = h.producer("app", 1);
    h.register(p, "track_event", false, false);
    let c = h.consumer(1);
    h.enable(c, config(&[(1024, false)], &[("track_event", 0)], |_| {}));
    let b = h.svc.sessions()[0].buffers[0].0.0;
    (h, p, c, b)
}

#[derive(Debug, PartialEq)]
enum Seen {
    Begin(String, String, Vec<(String, String)>),
    End,
    Instant(String, String, u64),
    Counter(u64, i64),
}

#[test]
fn events_resolve_through_interned_data() {
    let (mut h, p, c, b) = track_event_session();
    let thread = ThreadTrack {
        uuid: 77,
        pid: 10,
        tid: 11,
    };
    let mut ev = EventWriter::new(h.writer(p, b), thread, Some("main"));
    ev.slice_begin(
        100,
        &RENDER,
        "frame",
        &[("n", DebugValue::Int(-3)), ("ok", DebugValue::Bool(true))],
    );
    ev.slice_begin(
        110,
        &IO,
        "read",
        &[
            ("path", DebugValue::Str("/tmp/x")),
            ("ratio", DebugValue::Double(0.5)),
        ],
    );
    ev.slice_end(120, &IO);
    ev.instant(130, &RENDER, "vsync", Some(900), &[]);
    ev.counter(140, 555, 42);
    ev.slice_end(150, &RENDER);
    ev.clear_incremental_state();
    ev.slice_begin(200, &RENDER, "frame", &[("n", DebugValue::Uint(7))]);
    ev.slice_end(210, &RENDER);
    ev.writer().flush(None);
    h.pump(p);
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);

    let mut names: HashMap<(u64, u64), String> = HashMap::new();
    let mut seen = Vec::new();
    let mut cleared = 0;
    for raw in packets.iter().filter(|p| varint(p, 10) != Some(1)) {
        let p = TracePacketDecoder::new(raw);
        let flags = p.sequence_flags().unwrap_or(0);
        if flags & 1 != 0 {
            cleared += 1;
            names.clear();
            let defaults = p
                .trace_packet_defaults()
                .and_then(|d| d.track_event_defaults());
            assert_eq!(
                defaults.and_then(|d| d.track_uuid()),
                Some(77),
                "events default to the thread track"
            );
            let d = p.track_descriptor().expect("the thread track comes first");
            assert_eq!(d.uuid(), Some(77));
            assert_eq!(d.thread().and_then(|t| t.tid()), Some(11));
            continue;
        }
        assert_eq!(flags, 2, "events need incremental state");
        if let Some(i) = p.interned_data() {
            for e in i.event_categories() {
                names.insert((1, e.iid().unwrap()), e.name().unwrap().to_owned());
            }
            for e in i.event_names() {
                names.insert((2, e.iid().unwrap()), e.name().unwrap().to_owned());
            }
            for e in i.debug_annotation_names() {
                names.insert((3, e.iid().unwrap()), e.name().unwrap().to_owned());
            }
        }
        let e = p.track_event().expect("a track event");
        let resolve = |k: u64, iid: Option<u64>| {
            names
                .get(&(k, iid.expect("iid")))
                .cloned()
                .expect("interned")
        };
        seen.push(match e.type_raw() {
            Some(1) => Seen::Begin(
                resolve(1, e.category_iids().next()),
                resolve(2, e.name_iid()),
                e.debug_annotations()
                    .map(|a| {
                        let v = if let Some(x) = a.int_value() {
                            x.to_string()
                        } else if let Some(x) = a.uint_value() {
                            format!("u{x}")
                        } else if let Some(x) = a.bool_value() {
                            x.to_string()
                        } else if let Some(x) = a.double_value() {
                            x.to_string()
                        } else {
                            a.string_value().unwrap_or("?").to_owned()
                        };
                        (resolve(3, a.name_iid()), v)
                    })
                    .collect(),
            ),
            Some(2) => Seen::End,
            Some(3) => Seen::Instant(
                resolve(1, e.category_iids().next()),
                resolve(2, e.name_iid()),
                e.track_uuid().unwrap(),
            ),
            Some(4) => Seen::Counter(e.track_uuid().unwrap(), e.counter_value().unwrap()),
            t => panic!("type {t:?}"),
        });
    }
    let s = |x: &str| x.to_owned();
    assert_eq!(cleared, 2, "the state was cleared once more");
    assert_eq!(
        seen,
        vec![
            Seen::Begin(
                s("render"),
                s("frame"),
                vec![(s("n"), s("-3")), (s("ok"), s("true"))]
            ),
            Seen::Begin(
                s("io"),
                s("read"),
                vec![(s("path"), s("/tmp/x")), (s("ratio"), s("0.5"))]
            ),
            Seen::End,
            Seen::Instant(s("render"), s("vsync"), 900),
            Seen::Counter(555, 42),
            Seen::End,
            Seen::Begin(s("render"), s("frame"), vec![(s("n"), s("u7"))]),
            Seen::End,
        ]
    );
}

/// Flows, async tracks and extra fields through the raw-field closure.
#[test]
fn flows_tracks_and_extra_fields() {
    let (mut h, p, c, b) = track_event_session();
    let mut ev = EventWriter::new(
        h.writer(p, b),
        ThreadTrack {
            uuid: 5,
            pid: 1,
            tid: 2,
        },
        None,
    );
    ev.slice_begin_with(10, &RENDER, "send", None, &[], &[99], &[], |_| {});
    ev.slice_end(11, &RENDER);
    ev.slice_begin_with(20, &IO, "async op", Some(4242), &[], &[], &[99], |e| {
        e.add_extra_counter_values(7);
    });
    ev.slice_end_on(30, &IO, Some(4242));
    ev.writer().flush(None);
    h.pump(p);
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let events: Vec<_> = packets
        .iter()
        .filter_map(|raw| {
            TracePacketDecoder::new(raw)
                .track_event()
                .map(|e| e.raw_bytes().to_vec())
        })
        .collect();
    let d = |i: usize| zerotrace_protos::protos::TrackEventDecoder::new(&events[i]);
    assert_eq!(d(0).flow_ids().collect::<Vec<_>>(), [99]);
    assert_eq!(d(2).terminating_flow_ids().collect::<Vec<_>>(), [99]);
    assert_eq!(d(2).track_uuid(), Some(4242));
    assert_eq!(d(2).extra_counter_values().collect::<Vec<_>>(), [7]);
    assert_eq!(d(3).track_uuid(), Some(4242));
    assert_eq!(
        d(1).track_uuid(),
        None,
        "the thread track is the sequence default"
    );
}

/// Nested debug annotations: dictionaries and arrays, to any depth.
#[test]
fn nested_annotations() {
    let (mut h, p, c, b) = track_event_session();
    let mut ev = EventWriter::new(
        h.writer(p, b),
        ThreadTrack {
            uuid: 5,
            pid: 1,
            tid: 2,
        },
        None,
    );
    let inner = [DebugValue::Int(1), DebugValue::Str("two")];
    let dict = [
        ("size", DebugValue::Uint(3)),
        ("items", DebugValue::Array(&inner)),
    ];
    ev.slice_begin(10, &RENDER, "nested", &[("args", DebugValue::Dict(&dict))]);
    ev.slice_end(11, &RENDER);
    ev.writer().flush(None);
    h.pump(p);
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let event = packets
        .iter()
        .find_map(|raw| {
            let p = TracePacketDecoder::new(raw);
            p.track_event()
                .filter(|e| e.type_raw() == Some(1))
                .map(|e| e.raw_bytes().to_vec())
        })
        .unwrap();
    let e = zerotrace_protos::protos::TrackEventDecoder::new(&event);
    let args = e.debug_annotations().next().unwrap();
    let entries: Vec<_> = args.dict_entries().collect();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].name(), Some("size"));
    assert_eq!(entries[0].uint_value(), Some(3));
    assert_eq!(entries[1].name(), Some("items"));
    let items: Vec<_> = entries[1].array_values().collect();
    assert_eq!(items[0].int_value(), Some(1));
    assert_eq!(items[1].string_value(), Some("two"));
}
