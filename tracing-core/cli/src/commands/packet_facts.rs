//! What `stats` reads of each packet, in one scan of its fields through
//! the generated field enum (`TracePacketField::read`): its sequence and
//! machine, its sequence flags, its `trace_stats` and its kind (the first
//! field that is not part of every packet's header). A declared field read
//! with another wire type counts as absent, as the decoder's accessors
//! read it; the last occurrence of a field wins.

use zerotrace_protos::protos::{TracePacket, TracePacketField};

/// The fields every kind of packet may carry (`summary::packet_kind` skips
/// them to find what a packet is).
pub const HEADER_FIELDS: [u32; 12] = [
    TracePacket::FIELD_TIMESTAMP,
    TracePacket::FIELD_TIMESTAMP_CLOCK_ID,
    TracePacket::FIELD_TRUSTED_UID,
    TracePacket::FIELD_TRUSTED_PID,
    TracePacket::FIELD_TRUSTED_PACKET_SEQUENCE_ID,
    TracePacket::FIELD_SEQUENCE_FLAGS,
    TracePacket::FIELD_INTERNED_DATA,
    TracePacket::FIELD_TRACE_PACKET_DEFAULTS,
    TracePacket::FIELD_INCREMENTAL_STATE_CLEARED,
    TracePacket::FIELD_PREVIOUS_PACKET_DROPPED,
    TracePacket::FIELD_FIRST_PACKET_ON_SEQUENCE,
    TracePacket::FIELD_MACHINE_ID,
];

/// What one packet says of itself, for `stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PacketFacts<'a> {
    /// `trusted_packet_sequence_id` (0 when absent).
    pub sequence: u32,
    /// `machine_id` (0 when absent: the service's own machine).
    pub machine: u32,
    /// `first_packet_on_sequence` is true.
    pub first_on_sequence: bool,
    /// `previous_packet_dropped` is set and not zero.
    pub previous_dropped: bool,
    /// `trace_stats`, encoded.
    pub trace_stats: Option<&'a [u8]>,
    /// The number of the first field outside [`HEADER_FIELDS`]; `None`
    /// when the packet holds only header fields (interned data only).
    pub kind: Option<u32>,
}

/// Reads `packet` once.
pub fn scan(packet: &[u8]) -> PacketFacts<'_> {
    let mut sequence = None;
    let mut machine = None;
    let mut first = None;
    let mut dropped = None;
    let mut trace_stats = None;
    let mut kind = None;
    for f in TracePacketField::read(packet) {
        let number = f.number();
        match f {
            TracePacketField::TrustedPacketSequenceId(v) => sequence = Some(v),
            TracePacketField::MachineId(v) => machine = Some(v),
            TracePacketField::FirstPacketOnSequence(v) => first = Some(v),
            TracePacketField::PreviousPacketDropped(v) => dropped = Some(v),
            TracePacketField::TraceStats(s) => trace_stats = Some(s.bytes()),
            // A malformed occurrence of one of them hides the earlier ones.
            TracePacketField::Other(_) => match number {
                TracePacket::FIELD_TRUSTED_PACKET_SEQUENCE_ID => sequence = None,
                TracePacket::FIELD_MACHINE_ID => machine = None,
                TracePacket::FIELD_FIRST_PACKET_ON_SEQUENCE => first = None,
                TracePacket::FIELD_PREVIOUS_PACKET_DROPPED => dropped = None,
                TracePacket::FIELD_TRACE_STATS => trace_stats = None,
                _ => {}
            },
            _ => {}
        }
        if kind.is_none() && !HEADER_FIELDS.contains(&number) {
            kind = Some(number);
        }
    }
    PacketFacts {
        sequence: sequence.unwrap_or(0),
        machine: machine.unwrap_or(0),
        first_on_sequence: first == Some(true),
        previous_dropped: dropped.is_some_and(|v| v != 0),
        trace_stats,
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protozero::HeapWriter;
    use zerotrace_protos::protos::TracePacketDecoder;

    use crate::commands::machines::machine_of;
    use crate::commands::summary::{kind_name, packet_kind};

    fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
        let mut w = HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            f(&mut p);
        }
        w.finish().expect("a packet")
    }

    /// What the random-access decoder and the older helpers say.
    fn by_the_decoder(raw: &[u8]) -> PacketFacts<'_> {
        let p = TracePacketDecoder::new(raw);
        let kind = packet_kind(raw);
        PacketFacts {
            sequence: p.trusted_packet_sequence_id().unwrap_or(0),
            machine: machine_of(raw),
            first_on_sequence: p.first_packet_on_sequence() == Some(true),
            previous_dropped: p.previous_packet_dropped().is_some_and(|v| v != 0),
            trace_stats: p.trace_stats_bytes(),
            kind: (kind != "interned data only").then(|| {
                (1..=2000)
                    .find(|&n| kind_name(Some(n)) == kind)
                    .expect("a field number")
            }),
        }
    }

    #[test]
    fn one_scan_reads_what_the_decoder_reads() {
        let packets = [
            packet(|p| {
                p.set_trusted_packet_sequence_id(7)
                    .set_timestamp(5)
                    .set_first_packet_on_sequence(true)
                    .set_machine_id(3);
                p.begin_track_event().set_name_iid(1);
            }),
            packet(|p| {
                p.set_trusted_packet_sequence_id(7)
                    .set_previous_packet_dropped(1);
                p.begin_trace_stats();
                p.set_trusted_packet_sequence_id(8);
            }),
            packet(|p| {
                p.begin_interned_data();
                p.set_sequence_flags(1);
            }),
            // Field 10 read with another wire type: absent.
            packet(|p| {
                p.set_trusted_packet_sequence_id(7);
                p.message().append_string(10, "x");
                p.message().append_uint32(999, 1);
            }),
            // Malformed from the second field on.
            {
                let mut b = packet(|p| {
                    p.set_trusted_packet_sequence_id(4);
                });
                b.extend_from_slice(&[0x0a, 0x7f]);
                b
            },
        ];
        for raw in &packets {
            assert_eq!(scan(raw), by_the_decoder(raw), "{raw:x?}");
        }
        assert_eq!(scan(&packets[0]).kind, Some(TracePacket::FIELD_TRACK_EVENT));
        assert_eq!(scan(&packets[1]).sequence, 8);
        assert_eq!(scan(&packets[2]).kind, None);
        assert_eq!(scan(&packets[3]).sequence, 0);
        assert_eq!(kind_name(scan(&packets[3]).kind), "field 999");
    }
}
