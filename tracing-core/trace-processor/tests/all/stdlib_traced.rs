//! The standard library's `traced.stats`: the clone flush latencies read
//! the service's clone timestamps from `stats`; a trace without a clone
//! has none; a clone has one row per buffer copied (the importer records
//! the clone's start, its trigger and each buffer's copy in `stats`).

use zerotrace_trace_processor::TraceProcessor;

use crate::common;
use common::{packet, rows, s, trace};

#[test]
fn a_trace_without_a_clone_has_no_clone_latencies() {
    let tp = TraceProcessor::from_bytes(&trace(&[packet(|p| {
        p.set_timestamp(500_000);
    })]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE traced.stats;
             SELECT
               (SELECT count(*) FROM traced_clone_flush_latency),
               (SELECT count(*) FROM traced_trigger_clone_flush_latency)",
        ),
        vec![vec![common::i(0), common::i(0)]]
    );
    // Both tables have upstream's columns.
    assert_eq!(
        rows(
            &tp,
            "SELECT group_concat(name, ',') FROM pragma_table_info('traced_clone_flush_latency')",
        ),
        vec![vec![s("buffer_id,duration_ns,machine_id,trace_id")]]
    );
}

#[test]
fn a_clone_times_each_buffer_from_its_start_and_from_its_trigger() {
    // A clone-snapshot trigger at 1 µs, the clone started at 2 µs, buffer 0
    // copied at 5 µs and buffer 1 at 7 µs (TracePacket.service_event = 69:
    // clone_started = 10, buffer_cloned = 11; clone_snapshot_trigger = 113).
    // Both fields are varints: (field, value).
    let service = |ts: u64, field: u32, value: u32| {
        packet(|p| {
            p.set_timestamp(ts);
            p.message().append_uint32(10, 1);
            p.message().begin_nested(69).append_uint32(field, value);
        })
    };
    let trigger = packet(|p| {
        p.set_timestamp(1_000);
        p.message().append_uint32(10, 1);
        p.message().begin_nested(113).append_string(1, "clone_now");
    });
    let tp = TraceProcessor::from_bytes(&trace(&[
        trigger,
        service(2_000, 10, 1),
        service(5_000, 11, 0),
        service(7_000, 11, 1),
    ]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE traced.stats;
             SELECT buffer_id, duration_ns FROM traced_clone_flush_latency ORDER BY buffer_id",
        ),
        vec![
            vec![common::i(0), common::i(3_000)],
            vec![common::i(1), common::i(5_000)]
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT buffer_id, duration_ns FROM traced_trigger_clone_flush_latency ORDER BY buffer_id",
        ),
        vec![
            vec![common::i(0), common::i(4_000)],
            vec![common::i(1), common::i(6_000)]
        ]
    );
}
