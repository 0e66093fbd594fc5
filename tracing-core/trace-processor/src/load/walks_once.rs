//! That the loader walks each `TracePacket` once: the walks counted by
//! `packet_fields.rs` over a load of real traces equal their packets; and
//! that each TrackEvent is walked from its start once (by the loader,
//! whose facts travel with it to the parser).

use protozero::Decoder;
use zerotrace_protos::protos::TracePacket;

use super::Loader;
use super::inflate;
use super::tokenizer::TraceTokenizer;
use crate::packet_fields::{extra_track_event_walks, track_event_walks, walks};

/// The `TracePacket`s of a trace, counting a `compressed_packets`
/// packet and each packet inside it.
fn count_packets(trace: &[u8]) -> u64 {
    let mut packets = Vec::new();
    let mut tok = TraceTokenizer::default();
    assert!(tok.push(trace, &mut |p| packets.push(p.to_vec())).is_ok());
    let mut n = packets.len() as u64;
    for p in &packets {
        let d = Decoder::new(p);
        if let Some(c) = d.find_last(TracePacket::FIELD_COMPRESSED_PACKETS) {
            let c = c.as_bytes().expect("compressed bytes");
            let inner = inflate::inflate(c, inflate::MAX_INFLATED).expect("inflates");
            n += count_packets(&inner);
        }
    }
    n
}

/// The TrackEvents of a trace (in packets with a sequence, as the
/// loader reads only those), `compressed_packets` expanded. The loader
/// drops some more (no incremental state, no timestamp): those it does
/// not walk at all.
fn count_track_events(trace: &[u8]) -> u64 {
    let mut packets = Vec::new();
    let mut tok = TraceTokenizer::default();
    assert!(tok.push(trace, &mut |p| packets.push(p.to_vec())).is_ok());
    let mut n = 0;
    for p in &packets {
        let d = Decoder::new(p);
        if let Some(c) = d.find_last(TracePacket::FIELD_COMPRESSED_PACKETS) {
            let c = c.as_bytes().expect("compressed bytes");
            let inner = inflate::inflate(c, inflate::MAX_INFLATED).expect("inflates");
            n += count_track_events(&inner);
        }
        if d.find_last(TracePacket::FIELD_TRACK_EVENT).is_some()
            && d.find_last(TracePacket::FIELD_TRUSTED_PACKET_SEQUENCE_ID)
                .is_some()
        {
            n += 1;
        }
    }
    n
}

/// Loads `trace` and gives (walks over a TracePacket, packets).
fn walks_and_packets(trace: &[u8]) -> (u64, u64) {
    let before = walks();
    let mut l = Loader::new();
    l.push(trace).expect("loads");
    l.finish().expect("finishes");
    (walks() - before, count_packets(trace))
}

/// The traces the tests load.
const TRACES: [(&str, &[u8]); 8] = [
    (
        "demo excerpt",
        include_bytes!("../../../../fuzz/seeds/trace_processor/trace-file-demo-excerpt"),
    ),
    (
        "genuine session",
        include_bytes!("../../../tests/vectors/genuine-session.pftrace"),
    ),
    (
        "service packets",
        include_bytes!("../../../../fuzz/seeds/trace_processor/trace-file-genuine-service-packets"),
    ),
    (
        "track events",
        include_bytes!("../../../../fuzz/seeds/trace_processor/trace-file-genuine-track-events"),
    ),
    (
        "compressed",
        include_bytes!("../../../../fuzz/seeds/trace_processor/compressed"),
    ),
    (
        "ftrace",
        include_bytes!("../../../../fuzz/seeds/trace_processor/ftrace"),
    ),
    (
        "processes",
        include_bytes!("../../../../fuzz/seeds/trace_processor/processes"),
    ),
    (
        "sys stats",
        include_bytes!("../../../../fuzz/seeds/trace_processor/sys-stats"),
    ),
];

#[test]
fn each_packet_is_walked_once() {
    for (name, trace) in TRACES {
        let (walks, packets) = walks_and_packets(trace);
        assert!(packets > 0, "{name}: no packets");
        assert_eq!(walks, packets, "{name}: walks over its packets");
    }
}

#[test]
fn each_track_event_is_walked_once() {
    let mut all = 0;
    for (name, trace) in TRACES {
        let before = track_event_walks();
        let mut l = Loader::new();
        l.push(trace).expect("loads");
        let storage = l.finish().expect("finishes");
        let walks = track_event_walks() - before;
        let events = count_track_events(trace);
        assert!(
            walks <= events,
            "{name}: {walks} walks over its {events} TrackEvents"
        );
        if name == "demo excerpt" {
            // Nothing of it is dropped: every TrackEvent is walked, once.
            assert_eq!(walks, events, "{name}: walks over its TrackEvents");
            assert!(!storage.slices.is_empty(), "{name}: no slices parsed");
        }
        all += walks;
    }
    assert!(all > 0, "no TrackEvent walked");
}

/// The TrackEvents of a trace whose bytes hold a field some reader beyond
/// the parser's decoder looks for (typed, reflected, an extension),
/// found by a decode of their own.
fn count_events_with_extra_fields(trace: &[u8]) -> u64 {
    use crate::parser::{track_event_args::TYPED_FIELDS, track_event_reflect::REFLECTED_FIELDS};
    let mut packets = Vec::new();
    let mut tok = TraceTokenizer::default();
    assert!(tok.push(trace, &mut |p| packets.push(p.to_vec())).is_ok());
    let mut n = 0;
    for p in &packets {
        let d = Decoder::new(p);
        if let Some(c) = d.find_last(TracePacket::FIELD_COMPRESSED_PACKETS) {
            let c = c.as_bytes().expect("compressed bytes");
            let inner = inflate::inflate(c, inflate::MAX_INFLATED).expect("inflates");
            n += count_events_with_extra_fields(&inner);
        }
        let Some(te) = d.find_last(TracePacket::FIELD_TRACK_EVENT) else {
            continue;
        };
        let te = te.as_bytes().expect("track event bytes");
        let extra = Decoder::new(te).map_while(Result::ok).any(|f| {
            f.id >= 1000 || TYPED_FIELDS.contains(&f.id) || REFLECTED_FIELDS.contains(&f.id)
        });
        n += u64::from(extra);
    }
    n
}

#[test]
fn only_events_with_typed_or_reflected_fields_are_walked_again() {
    let mut events_without = 0;
    for (name, trace) in TRACES {
        let before = extra_track_event_walks();
        let mut l = Loader::new();
        l.push(trace).expect("loads");
        l.finish().expect("finishes");
        let walks = extra_track_event_walks() - before;
        let with = count_events_with_extra_fields(trace);
        // The typed reader and the reflection walk at most once each.
        assert!(
            walks <= 2 * with,
            "{name}: {walks} extra walks for {with} events with such fields"
        );
        events_without += count_track_events(trace).saturating_sub(with);
    }
    assert!(events_without > 0, "no TrackEvent without such fields");
}
