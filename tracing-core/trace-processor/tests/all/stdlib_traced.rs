//! The standard library's `traced.stats`: the clone flush latencies read
//! the service's clone timestamps from `stats`; a trace without a clone
//! has none (the importer records those timestamps only for clones).

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
