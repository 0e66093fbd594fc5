//! Where a profiler writes its `TracePacket`s: one trait for the CPU
//! profiler and the probes' other data sources (which write through the
//! untyped message, wrapped by writers generated from upstream's schema)
//! and for the heap profiler's dumps (which write through the generated
//! `TracePacket` writer). A producer's `TraceWriter` is one; tests and
//! tools keep the encoded packets in a [`BufferSink`].

use protozero::{HeapWriter, Message};
use zerotrace_core::producer::TraceWriter;
use zerotrace_protos::protos::TracePacket;

/// Something `TracePacket`s are written to, one at a time.
pub trait PacketSink {
    /// Writes one packet, its fields written by `fill` through the
    /// generated `TracePacket` writer.
    fn packet(&mut self, fill: &mut dyn FnMut(&mut TracePacket<'_>));

    /// Writes one packet, its fields written by `fill` into the raw
    /// `TracePacket` message (for writers generated from other schemas).
    fn write_packet(&mut self, fill: &mut dyn FnMut(&mut Message<'_>)) {
        self.packet(&mut |p| fill(p.message()));
    }

    /// Hands on what was written (a writer's chunks to the service); a
    /// sink that keeps its packets has nothing to do.
    fn flush(&mut self) {}
}

impl PacketSink for TraceWriter {
    fn packet(&mut self, fill: &mut dyn FnMut(&mut TracePacket<'_>)) {
        TraceWriter::packet(self, |p| fill(p));
    }

    fn write_packet(&mut self, fill: &mut dyn FnMut(&mut Message<'_>)) {
        TraceWriter::write_packet(self, |m| fill(m));
    }

    fn flush(&mut self) {
        TraceWriter::flush(self, None);
    }
}

/// A sink that keeps each packet's bytes (tests, tools, and whoever wants
/// a profile without a tracing session).
#[derive(Debug, Default)]
pub struct BufferSink {
    /// The encoded `TracePacket`s, in order.
    pub packets: Vec<Vec<u8>>,
}

impl PacketSink for BufferSink {
    fn packet(&mut self, fill: &mut dyn FnMut(&mut TracePacket<'_>)) {
        let mut w = HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            fill(&mut p);
        }
        // A heap writer without size limits cannot fail to finish; keep an
        // empty packet rather than lose the slot if it ever did.
        self.packets.push(w.finish().unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use zerotrace_protos::protos::TracePacketDecoder;

    use super::*;

    #[test]
    fn typed_and_raw_packets_are_the_same_bytes() {
        let mut sink = BufferSink::default();
        sink.packet(&mut |p| {
            p.set_timestamp(42);
        });
        sink.write_packet(&mut |m| m.append_uint64(TracePacket::FIELD_TIMESTAMP, 42));
        assert_eq!(sink.packets.len(), 2);
        assert_eq!(sink.packets[0], sink.packets[1]);
        assert_eq!(
            TracePacketDecoder::new(&sink.packets[0]).timestamp(),
            Some(42)
        );
    }
}
