//! The generated TracePacket decoder on arbitrary bytes: every accessor and
//! the Debug rendering (which walks nested messages) must not panic.

use zerotrace_protos::protos::TracePacketDecoder;

/// The `trace_packet` target.
pub fn trace_packet(data: &[u8]) {
    let p = TracePacketDecoder::new(data);
    let _ = (
        p.timestamp(),
        p.trusted_packet_sequence_id(),
        p.sequence_flags(),
    );
    let _ = format!("{p:?}");
}
