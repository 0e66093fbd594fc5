//! The synthetic TrackEvent trace of `protos/examples/synthetic_trace`
//! (Perfetto's four documented scenarios, written through the generated
//! writers) checked two ways: Google's `protoc` with the upstream Perfetto
//! schema must print exactly the checked-in text, and our generated decoders
//! must read back the tracks, slices, flow and counter samples it describes.

use crate::scenarios;

use std::collections::HashMap;

use zerotrace_interop::protoc_decode;
use zerotrace_protos::protos::{
    TraceDecoder, TracePacketDecoder, TrackDescriptorDecoder, TrackEventDecoder,
    track_event::{CounterValueField, Type},
};

const EXPECTED: &str = include_str!("expected/synthetic_trace.txt");
const SEQUENCE_ID: u32 = 3_903_809;

/// The expected text without its `#` note lines.
fn expected_text() -> String {
    EXPECTED
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn upstream_protoc_prints_the_expected_text() {
    let bytes = scenarios::synthetic_trace().expect("encode");
    let text = protoc_decode(
        "perfetto.protos.Trace",
        "protos/perfetto/trace/trace.proto",
        &bytes,
    )
    .expect("protoc decode");
    let expected = expected_text();
    for (n, (got, want)) in text.lines().zip(expected.lines()).enumerate() {
        assert_eq!(got, want, "line {} of protoc's output differs", n + 1);
    }
    assert_eq!(
        text.lines().count(),
        expected.lines().count(),
        "protoc printed a different number of lines"
    );
    assert_eq!(text, expected);
}

fn packets(bytes: &[u8]) -> Vec<TracePacketDecoder<'_>> {
    let trace = TraceDecoder::new(bytes);
    assert_eq!(trace.decode_error(), None);
    let mut it = trace.packet();
    let packets: Vec<_> = it.by_ref().collect();
    assert_eq!(it.error(), None);
    for p in &packets {
        assert_eq!(p.decode_error(), None);
    }
    packets
}

fn descriptor<'a>(p: &TracePacketDecoder<'a>) -> TrackDescriptorDecoder<'a> {
    assert!(!p.has_track_event() && !p.has_timestamp());
    p.track_descriptor().expect("a track descriptor packet")
}

fn event<'a>(p: &TracePacketDecoder<'a>) -> TrackEventDecoder<'a> {
    assert_eq!(p.trusted_packet_sequence_id(), Some(SEQUENCE_ID));
    assert!(!p.has_track_descriptor());
    p.track_event().expect("a track event packet")
}

/// Slices rebuilt from begin/end events with one stack per track:
/// `(track, name, begin, end)` in the order they end.
fn slices(packets: &[TracePacketDecoder<'_>]) -> Vec<(u64, String, u64, u64)> {
    let mut open: HashMap<u64, Vec<(String, u64)>> = HashMap::new();
    let mut done = Vec::new();
    for p in packets.iter().filter(|p| p.has_track_event()) {
        let e = event(p);
        let track = e.track_uuid().expect("track_uuid");
        let ts = p.timestamp().expect("timestamp");
        match e.r#type() {
            Some(Type::SliceBegin) => {
                let name = e.name().expect("slice name").to_owned();
                open.entry(track).or_default().push((name, ts));
            }
            Some(Type::SliceEnd) => {
                assert!(!e.has_name(), "end events carry no name");
                let (name, begin) = open
                    .get_mut(&track)
                    .and_then(Vec::pop)
                    .expect("an end matches an open slice");
                assert!(begin <= ts);
                done.push((track, name, begin, ts));
            }
            _ => {}
        }
    }
    assert!(open.values().all(Vec::is_empty), "every slice is closed");
    done
}

#[test]
fn generated_decoders_read_every_scenario_back() {
    let bytes = scenarios::synthetic_trace().expect("encode");
    let p = packets(&bytes);
    assert_eq!(p.len(), 31);
    let descriptors = p.iter().filter(|p| p.has_track_descriptor()).count();
    assert_eq!(descriptors, 8);

    // 1. Sync slices: process and thread tracks, nested slices, an instant.
    let process = descriptor(&p[0]);
    assert_eq!(process.uuid(), Some(894_893_984));
    let proc_desc = process.process().expect("process descriptor");
    assert_eq!(proc_desc.pid(), Some(1234));
    assert_eq!(proc_desc.process_name(), Some("My process name"));
    let thread = descriptor(&p[1]);
    assert_eq!(thread.uuid(), Some(49_083_589_894));
    assert_eq!(thread.parent_uuid(), Some(894_893_984));
    let thread_desc = thread.thread().expect("thread descriptor");
    assert_eq!(
        (
            thread_desc.pid(),
            thread_desc.tid(),
            thread_desc.thread_name()
        ),
        (Some(1234), Some(5678), Some("My thread name"))
    );
    let instant = event(&p[4]);
    assert_eq!(p[4].timestamp(), Some(285));
    assert_eq!(instant.r#type(), Some(Type::Instant));
    assert_eq!(instant.track_uuid(), Some(49_083_589_894));
    assert!(!instant.has_name());

    // 2. Async slices: a named process track and a same-named child track.
    let first = descriptor(&p[7]);
    assert_eq!(first.uuid(), Some(48_948));
    assert_eq!(first.name(), Some("My special track"));
    assert_eq!(first.process().and_then(|d| d.pid()), Some(1234));
    let second = descriptor(&p[12]);
    assert_eq!(
        (second.uuid(), second.parent_uuid(), second.name()),
        (Some(2_390_190_934), Some(48_948), Some("My special track"))
    );
    assert!(!second.has_process() && !second.has_thread());

    // 3. Flow: two threads of pid 100; the flow id links three slices.
    let main = descriptor(&p[17]).thread().expect("main thread");
    assert_eq!((main.pid(), main.tid()), (Some(100), Some(100)));
    let background = descriptor(&p[22]).thread().expect("background thread");
    assert_eq!(
        (background.tid(), background.thread_name()),
        (Some(101), Some("Background thread"))
    );
    let flow_steps: Vec<(Option<&str>, Vec<u64>, Vec<u64>)> = p
        .iter()
        .filter(|p| p.has_track_event())
        .map(|p| event(p))
        .filter(|e| e.has_flow_ids() || e.has_terminating_flow_ids())
        .map(|e| {
            (
                e.name(),
                e.flow_ids().collect(),
                e.terminating_flow_ids().collect(),
            )
        })
        .collect();
    const FLOW: u64 = 1_055_895_987;
    assert_eq!(
        flow_steps,
        vec![
            (Some("Request generation"), vec![FLOW], vec![]),
            (Some("Process background result"), vec![FLOW], vec![]),
            (Some("Background work"), vec![FLOW], vec![]),
        ]
    );

    // 4. Counter: a counter track under process 1024 and four samples.
    let counter_process = descriptor(&p[25]);
    assert_eq!(counter_process.uuid(), Some(1388));
    assert_eq!(
        counter_process.process().and_then(|d| d.process_name()),
        Some("MySpecialProcess")
    );
    let counter = descriptor(&p[26]);
    assert_eq!(counter.uuid(), Some(4_489_498));
    assert_eq!(counter.parent_uuid(), Some(1388));
    assert!(counter.has_counter());
    let samples: Vec<(u64, i64)> = p[27..]
        .iter()
        .map(|p| {
            let e = event(p);
            assert_eq!(e.r#type(), Some(Type::Counter));
            assert_eq!(e.track_uuid(), Some(4_489_498));
            match e.which_counter_value_field() {
                Some(CounterValueField::CounterValue(v)) => (p.timestamp().expect("ts"), v),
                other => panic!("expected an integer counter value, got {other:?}"),
            }
        })
        .collect();
    assert_eq!(
        samples,
        [(200, 34_567), (250, 67_890), (300, 12_345), (400, 12_345)]
    );
}

#[test]
fn slices_nest_per_track_as_the_guide_describes() {
    let bytes = scenarios::synthetic_trace().expect("encode");
    let mut got = slices(&packets(&bytes));
    got.sort_by_key(|s| (s.0, s.2));
    let s = |track: u64, name: &str, begin: u64, end: u64| (track, name.to_owned(), begin, end);
    let mut want = vec![
        s(49_083_589_894, "My special parent", 200, 300),
        s(49_083_589_894, "My special child", 250, 290),
        s(48_948, "My special parent A", 200, 300),
        s(48_948, "My special child", 250, 290),
        s(2_390_190_934, "My special parent A", 230, 295),
        s(2_390_190_934, "My special child", 260, 270),
        s(93_094, "Request generation", 200, 300),
        s(93_094, "Process background result", 400, 500),
        s(40_489_498, "Background work", 310, 385),
    ];
    want.sort_by_key(|s| (s.0, s.2));
    assert_eq!(got, want);
}
