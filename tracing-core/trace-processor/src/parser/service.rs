//! Packets about the trace itself: trace stats, triggers, system info and
//! the trace config into `metadata` and `stats`.

use zerotrace_protos::protos::TracePacketDecoder;

use super::Parser;

/// Parses the service's packets; others are ignored.
pub fn parse(p: &mut Parser, pkt: &TracePacketDecoder<'_>, _ts: i64) {
    if let Some(trigger) = pkt.trigger() {
        if let Some(name) = trigger.trigger_name() {
            p.storage.append_metadata("trace_trigger", None, Some(name));
        }
    }
}
