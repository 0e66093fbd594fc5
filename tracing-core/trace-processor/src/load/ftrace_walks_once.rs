//! That an ftrace event is dispatched once, by its field number: each
//! event of a load is walked once (the walks counted by `parser/ftrace.rs`
//! equal the events of the trace's bundles), and an event's kind is its
//! payload's field, the same for its raw row and its import, whatever
//! order of tries a chain would make.

use protozero::Decoder;
use zerotrace_protos::protos::FtraceEventBundle;

use super::Loader;
use super::tokenizer::TraceTokenizer;
use crate::packet_fields::FTRACE_EVENTS;
use crate::parser::ftrace::walks;
use crate::storage::Storage;

/// The fields numbered `id` of message `msg`, as bytes.
fn messages(msg: &[u8], id: u32) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut d = Decoder::new(msg);
    while let Some(Ok(f)) = d.read_field() {
        if f.id == id {
            out.push(f.as_bytes().expect("a message"));
        }
    }
    out
}

/// The `FtraceEvent`s in the trace's bundles.
fn count_events(trace: &[u8]) -> u64 {
    let mut n = 0;
    let mut tok = TraceTokenizer::default();
    let pushed = tok.push(trace, &mut |p| {
        for bundle in messages(p, FTRACE_EVENTS) {
            n += messages(bundle, FtraceEventBundle::FIELD_EVENT).len() as u64;
        }
    });
    assert!(pushed.is_ok());
    n
}

fn load(trace: &[u8]) -> Storage {
    let mut l = Loader::new();
    l.push(trace).expect("loads");
    l.finish().expect("finishes")
}

#[test]
fn each_ftrace_event_is_walked_once() {
    let traces: [(&str, &[u8]); 2] = [
        (
            "ftrace",
            include_bytes!("../../../../fuzz/seeds/trace_processor/ftrace"),
        ),
        (
            "genuine session",
            include_bytes!("../../../tests/vectors/genuine-session.pftrace"),
        ),
    ];
    let mut seen = 0;
    for (name, trace) in traces {
        let before = walks();
        load(trace);
        let events = count_events(trace);
        assert_eq!(
            walks() - before,
            events,
            "{name}: walks over its ftrace events"
        );
        seen += events;
    }
    assert!(seen > 0, "no ftrace event was loaded");
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn int_field(id: u32, v: u64, out: &mut Vec<u8>) {
    varint(u64::from(id) << 3, out);
    varint(v, out);
}

fn bytes_field(id: u32, b: &[u8], out: &mut Vec<u8>) {
    varint((u64::from(id) << 3) | 2, out);
    varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// A trace of one ftrace event on CPU 0 whose message carries two
/// payloads, `first` then `second` (field number, bytes).
fn two_payload_trace(first: (u32, &[u8]), second: (u32, &[u8])) -> Vec<u8> {
    let mut event = Vec::new();
    int_field(1, 1_000, &mut event);
    int_field(2, 10, &mut event);
    bytes_field(first.0, first.1, &mut event);
    bytes_field(second.0, second.1, &mut event);
    let mut bundle = Vec::new();
    int_field(FtraceEventBundle::FIELD_CPU, 0, &mut bundle);
    bytes_field(FtraceEventBundle::FIELD_EVENT, &event, &mut bundle);
    let mut packet = Vec::new();
    bytes_field(FTRACE_EVENTS, &bundle, &mut packet);
    let mut trace = Vec::new();
    bytes_field(1, &packet, &mut trace);
    trace
}

/// An event carrying both `print` (a systrace slice begin) and
/// `cpu_frequency_limits` (two per-CPU counters), in either order, is the
/// event of its last payload, for its `ftrace_event` row and for what it
/// imports alike. A chain that tries `print` before the events read by
/// field number imported the print either way.
#[test]
fn an_events_kind_is_its_payloads_field_not_an_order_of_tries() {
    const PRINT: u32 = 3;
    const CPU_FREQUENCY_LIMITS: u32 = 12;
    let mut print = Vec::new();
    bytes_field(2, b"B|10|a slice", &mut print);
    let mut limits = Vec::new();
    int_field(1, 100, &mut limits);
    int_field(2, 200, &mut limits);
    int_field(3, 0, &mut limits);
    let print = (PRINT, print.as_slice());
    let limits = (CPU_FREQUENCY_LIMITS, limits.as_slice());
    for (first, second, kind) in [
        (print, limits, "cpu_frequency_limits"),
        (limits, print, "print"),
    ] {
        let s = load(&two_payload_trace(first, second));
        let raw: Vec<&str> = s
            .sched
            .ftrace_events
            .iter()
            .filter_map(|r| s.strings.get(r.name))
            .collect();
        assert_eq!(raw, [kind], "the raw row");
        let (slices, counters) = (s.slices.len(), s.counters.len());
        match kind {
            "print" => assert_eq!((slices, counters), (1, 0), "{kind}: imported"),
            _ => assert_eq!((slices, counters), (0, 2), "{kind}: imported"),
        }
    }
}
