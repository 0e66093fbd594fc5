//! The whole standard library includes: `INCLUDE PERFETTO MODULE *` (every
//! module we ship, each with its own includes) succeeds on an empty trace
//! and on one of our own recordings, as upstream's does on any trace, and a
//! second time (includes are idempotent).

use zerotrace_trace_processor::TraceProcessor;

#[test]
fn every_shipped_module_includes_on_an_empty_trace_and_on_our_recording() {
    let recording = TraceProcessor::from_bytes(include_bytes!(
        "../../../tests/vectors/genuine-session.pftrace"
    ))
    .expect("recording");
    let empty = TraceProcessor::from_bytes(&[]).expect("empty trace");
    for (what, tp) in [("our recording", &recording), ("an empty trace", &empty)] {
        for round in 0..2 {
            if let Err(e) = tp.query("INCLUDE PERFETTO MODULE *; SELECT 1") {
                panic!("INCLUDE PERFETTO MODULE * on {what} (round {round}): {e}");
            }
        }
    }
}
