//! The generated TracePacket decoder on arbitrary bytes: every accessor and
//! the Debug rendering (which walks nested messages) must not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zerotrace_protos::protos::TracePacketDecoder;

fuzz_target!(|data: &[u8]| {
    let p = TracePacketDecoder::new(data);
    let _ = (p.timestamp(), p.trusted_packet_sequence_id(), p.sequence_flags());
    let _ = format!("{p:?}");
});
