//! That the loader walks each `TracePacket` once: the walks counted by
//! `packet_fields.rs` over a load of real traces equal their packets.

use protozero::Decoder;
use zerotrace_protos::protos::TracePacket;

use super::Loader;
use super::inflate;
use super::tokenizer::TraceTokenizer;
use crate::packet_fields::walks;

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

/// Loads `trace` and gives (walks over a TracePacket, packets).
fn walks_and_packets(trace: &[u8]) -> (u64, u64) {
    let before = walks();
    let mut l = Loader::new();
    l.push(trace).expect("loads");
    l.finish().expect("finishes");
    (walks() - before, count_packets(trace))
}

#[test]
fn each_packet_is_walked_once() {
    let traces: [(&str, &[u8]); 8] = [
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
            include_bytes!(
                "../../../../fuzz/seeds/trace_processor/trace-file-genuine-service-packets"
            ),
        ),
        (
            "track events",
            include_bytes!(
                "../../../../fuzz/seeds/trace_processor/trace-file-genuine-track-events"
            ),
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
    for (name, trace) in traces {
        let (walks, packets) = walks_and_packets(trace);
        assert!(packets > 0, "{name}: no packets");
        assert_eq!(walks, packets, "{name}: walks over its packets");
    }
}
