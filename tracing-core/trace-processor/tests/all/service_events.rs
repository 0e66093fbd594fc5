//! The tracing service's lifecycle events: their timestamps are on
//! BOOTTIME whatever the trace clock, so `tracing_started_ns` and its kin
//! land in trace time once the clocks can convert them, and keep their raw
//! value when they cannot.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{packet, rows, trace};

/// A snapshot making MONOTONIC_RAW (5) the trace clock, 900 ns behind
/// BOOTTIME (6), when `snapshot`; then the service's start at BOOTTIME
/// 1050, with `clock` as its explicit clock id when given.
fn started_trace(snapshot: bool, clock: Option<u32>) -> Vec<u8> {
    let mut packets = Vec::new();
    if snapshot {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            let mut cs = p.begin_clock_snapshot();
            cs.set_primary_trace_clock_raw(5);
            {
                let mut c = cs.add_clocks();
                c.set_clock_id(6);
                c.set_timestamp(1000);
            }
            let mut c = cs.add_clocks();
            c.set_clock_id(5);
            c.set_timestamp(100);
        }));
    }
    packets.push(packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(1050);
        if let Some(c) = clock {
            p.set_timestamp_clock_id(c);
        }
        p.begin_service_event().set_tracing_started(true);
    }));
    trace(&packets)
}

fn started(bytes: &[u8]) -> Vec<Vec<Value>> {
    let tp = TraceProcessor::from_bytes(bytes).unwrap();
    rows(
        &tp,
        "SELECT int_value FROM metadata WHERE name = 'tracing_started_ns'",
    )
}

#[test]
fn a_service_event_is_read_on_boottime_and_converted() {
    assert_eq!(
        started(&started_trace(true, None)),
        vec![vec![Value::Int(150)]]
    );
}

#[test]
fn an_explicit_clock_is_kept() {
    // Stamped on MONOTONIC_RAW, the trace clock itself: no conversion.
    assert_eq!(
        started(&started_trace(true, Some(5))),
        vec![vec![Value::Int(1050)]]
    );
}

#[test]
fn without_the_clocks_to_convert_the_raw_value_stays() {
    assert_eq!(
        started(&started_trace(false, None)),
        vec![vec![Value::Int(1050)]]
    );
}
