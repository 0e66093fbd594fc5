//! What the service checks on every packet a producer wrote, and what it adds.
//!
//! Producers are untrusted: a packet read out of a trace buffer is kept only
//! if it is a well-formed sequence of top-level fields none of which is
//! reserved for the service (identity, the trace config, service events,
//! compressed batches, ...), so that a producer can neither spoof who wrote
//! it nor pass itself off as the service. A kept packet then gets the trusted
//! fields appended — after the producer's bytes, since the last occurrence of
//! a field wins when a protobuf is decoded.

use protozero::varint::decode_varint;
use protozero::wire::MAX_FIELD_ID;
use protozero::{DecodeError, SliceWriter};
use zerotrace_protos::protos::TracePacket;

/// `TracePacket` field ids only the service may write (upstream
/// `protos/perfetto/trace/trace_packet.proto`): trusted_uid 3,
/// trusted_packet_sequence_id 10, trace_config 33, trace_stats 35,
/// synchronization_marker 36, compressed_packets 50, service_event 69,
/// trusted_pid 79, machine_id 98, trace_provenance 124, protovms 125,
/// zstd_compressed_packets 133.
pub const RESERVED_FIELDS: [u32; 12] = [3, 10, 33, 35, 36, 50, 69, 79, 98, 124, 125, 133];

/// Largest length a field of a producer packet may declare (256 MiB).
pub const MAX_FIELD_LENGTH: u64 = 256 << 20;

/// Why a producer packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvalidPacket {
    /// The packet sets a field reserved for the service.
    #[error("field {id} is reserved for the tracing service")]
    ReservedField {
        /// The field id.
        id: u32,
    },
    /// A top-level field of wire type 3 or 4 (groups), or an invalid type.
    #[error("field {id} has wire type {wire_type}, not allowed at the top level")]
    BadWireType {
        /// The field id.
        id: u32,
        /// Its wire type.
        wire_type: u8,
    },
    /// A length-delimited field longer than [`MAX_FIELD_LENGTH`].
    #[error("field {id} declares {len} bytes, more than the 256 MiB limit")]
    TooLong {
        /// The field id.
        id: u32,
        /// The declared length.
        len: u64,
    },
    /// The bytes are not a sequence of whole fields.
    #[error("malformed packet: {0}")]
    Malformed(DecodeError),
}

/// Checks a reassembled producer packet; see the module docs.
///
/// One pass over the top-level fields with the varint decoder alone (no
/// field values are built): it runs once for every packet the service
/// reads out of a buffer.
pub fn validate(packet: &[u8]) -> Result<(), InvalidPacket> {
    let mut at = 0;
    while at < packet.len() {
        let rest = &packet[at..];
        let (tag, n) = decode_varint(rest).map_err(InvalidPacket::Malformed)?;
        let id64 = tag >> 3;
        if id64 == 0 || id64 > u64::from(MAX_FIELD_ID) {
            return Err(InvalidPacket::Malformed(DecodeError::InvalidFieldId {
                id: id64,
            }));
        }
        let id = id64 as u32;
        let rest = &rest[n..];
        // The field's length after its tag; a length-delimited field's
        // declared length.
        let (len, declared) = match tag & 7 {
            0 => (
                decode_varint(rest).map_err(InvalidPacket::Malformed)?.1,
                None,
            ),
            1 | 5 => {
                let size = if tag & 7 == 1 { 8 } else { 4 };
                if rest.len() < size {
                    return Err(InvalidPacket::Malformed(DecodeError::TruncatedFixed { id }));
                }
                (size, None)
            }
            2 => {
                let (len, m) = decode_varint(rest).map_err(InvalidPacket::Malformed)?;
                let remaining = rest.len() - m;
                if len > remaining as u64 {
                    return Err(InvalidPacket::Malformed(DecodeError::LengthOutOfBounds {
                        id,
                        len,
                        remaining,
                    }));
                }
                (m + len as usize, Some(len))
            }
            wire_type => {
                return Err(InvalidPacket::BadWireType {
                    id,
                    wire_type: wire_type as u8,
                });
            }
        };
        if is_reserved(id) {
            return Err(InvalidPacket::ReservedField { id });
        }
        if let Some(len) = declared.filter(|l| *l > MAX_FIELD_LENGTH) {
            return Err(InvalidPacket::TooLong { id, len });
        }
        at += n + len;
    }
    Ok(())
}

/// [`RESERVED_FIELDS`] as a bit set (all of them are below 192).
const RESERVED_BITS: [u64; 3] = {
    let mut bits = [0u64; 3];
    let mut i = 0;
    while i < RESERVED_FIELDS.len() {
        let id = RESERVED_FIELDS[i];
        bits[(id / 64) as usize] |= 1 << (id % 64);
        i += 1;
    }
    bits
};

/// Whether field `id` is reserved for the service.
#[inline]
fn is_reserved(id: u32) -> bool {
    RESERVED_BITS
        .get((id / 64) as usize)
        .is_some_and(|w| w & (1 << (id % 64)) != 0)
}

/// The fields the service appends to a producer packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedFields {
    /// The producer's uid, from the connection's credentials.
    pub uid: i32,
    /// The producer's pid, where the transport tells it.
    pub pid: Option<i32>,
    /// Per session, per (producer, writer); 1 is the service's own.
    pub sequence_id: u32,
    /// `DataLossReason` bits since the previous packet of the sequence.
    pub previous_packet_dropped: u32,
    /// The machine a remote producer runs on (none for local producers).
    pub machine_id: Option<u32>,
}

/// Most bytes [`append_trusted_fields`] writes.
pub const MAX_TRUSTED_FIELDS_LEN: usize = 48;

/// Appends the trusted fields to a packet being built in `out`, through the
/// generated `TracePacket` writer.
pub fn append_trusted_fields(fields: &TrustedFields, out: &mut Vec<u8>) {
    let mut buf = [0u8; MAX_TRUSTED_FIELDS_LEN];
    let mut w = SliceWriter::new(&mut buf);
    {
        let mut p = TracePacket::from_message(w.root());
        p.set_trusted_uid(fields.uid);
        p.set_trusted_packet_sequence_id(fields.sequence_id);
        if let Some(pid) = fields.pid {
            p.set_trusted_pid(pid);
        }
        if fields.previous_packet_dropped != 0 {
            p.set_previous_packet_dropped(fields.previous_packet_dropped);
        }
        if let Some(machine) = fields.machine_id {
            p.set_machine_id(machine);
        }
    }
    // The fields take at most 11 + 6 + 12 + 7 + 7 = 43 bytes: they always fit.
    if let Ok(bytes) = w.finish() {
        out.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protozero::HeapWriter;
    use zerotrace_protos::protos::TracePacketDecoder;

    fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
        let mut w = HeapWriter::new();
        f(&mut TracePacket::from_message(w.root()));
        w.finish().unwrap()
    }

    #[test]
    fn ordinary_packets_pass() {
        let p = packet(|p| {
            p.set_timestamp(5);
            p.begin_track_event().set_name("x");
        });
        assert_eq!(validate(&p), Ok(()));
        assert_eq!(validate(&[]), Ok(()));
    }

    #[test]
    fn every_reserved_field_is_refused() {
        for id in RESERVED_FIELDS {
            let mut w = HeapWriter::new();
            {
                let mut root = w.root();
                root.append_uint64(8, 1);
                root.append_uint32(id, 1);
            }
            let p = w.finish().unwrap();
            assert_eq!(
                validate(&p),
                Err(InvalidPacket::ReservedField { id }),
                "{id}"
            );
            // Also when written as a message.
            let mut w = HeapWriter::new();
            w.root().begin_nested(id).append_uint32(1, 1);
            let p = w.finish().unwrap();
            assert_eq!(
                validate(&p),
                Err(InvalidPacket::ReservedField { id }),
                "{id}"
            );
        }
    }

    #[test]
    fn malformed_packets_are_refused() {
        // Truncated length, overlong varint, a group, an invalid wire type.
        for bad in [
            &[0x5A, 0x05, 0x01][..],
            &[
                0x40, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
            ],
            &[0x0B, 0x0C],
            &[0x0E, 0x00],
        ] {
            assert!(validate(bad).is_err(), "{bad:?}");
        }
    }

    /// The validator as first written, over the schema-less `Decoder`: the
    /// one-pass scan must give the same verdict, error included.
    fn through_the_decoder(packet: &[u8]) -> Result<(), InvalidPacket> {
        use protozero::{Decoder, WireType};
        let mut d = Decoder::new(packet);
        while let Some(field) = d.read_field() {
            let field = field.map_err(|e| match e {
                DecodeError::UnsupportedWireType { id, wire_type } => {
                    InvalidPacket::BadWireType { id, wire_type }
                }
                e => InvalidPacket::Malformed(e),
            })?;
            if RESERVED_FIELDS.contains(&field.id) {
                return Err(InvalidPacket::ReservedField { id: field.id });
            }
            if field.wire_type() == WireType::LengthDelimited {
                let len = field.as_bytes().map_or(0, |b| b.len() as u64);
                if len > MAX_FIELD_LENGTH {
                    return Err(InvalidPacket::TooLong { id: field.id, len });
                }
            }
        }
        Ok(())
    }

    /// Packets made of fields with small ids (reserved ones among them),
    /// every wire type, and now and then a truncated or corrupted byte.
    fn packets() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let field = (
            0u32..140,
            0u8..8,
            proptest::collection::vec(any::<u8>(), 0..12),
        )
            .prop_map(|(id, wire, body)| {
                let mut out = Vec::new();
                let mut tag = (u64::from(id) << 3) | u64::from(wire);
                while tag >= 0x80 {
                    out.push((tag as u8) | 0x80);
                    tag >>= 7;
                }
                out.push(tag as u8);
                match wire {
                    0 => out.push(body.first().copied().unwrap_or(0) & 0x7f),
                    1 => out.extend(body.iter().chain([0u8; 8].iter()).take(8)),
                    5 => out.extend(body.iter().chain([0u8; 4].iter()).take(4)),
                    2 => {
                        out.push(body.len() as u8);
                        out.extend(&body);
                    }
                    _ => out.extend(&body),
                }
                out
            });
        (
            proptest::collection::vec(field, 0..6),
            any::<u16>(),
            any::<u8>(),
        )
            .prop_map(|(fields, cut, flip)| {
                let mut p: Vec<u8> = fields.concat();
                // Sometimes truncated, sometimes one byte replaced.
                match cut % 4 {
                    0 if !p.is_empty() => p.truncate(usize::from(cut) % p.len()),
                    1 if !p.is_empty() => {
                        let i = usize::from(cut) % p.len();
                        p[i] = flip;
                    }
                    _ => {}
                }
                p
            })
    }

    proptest::proptest! {
        #[test]
        fn the_one_pass_scan_agrees_with_the_decoder(p in packets()) {
            proptest::prop_assert_eq!(validate(&p), through_the_decoder(&p));
        }

        #[test]
        fn any_bytes_get_the_decoders_verdict(p in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
            proptest::prop_assert_eq!(validate(&p), through_the_decoder(&p));
        }
    }

    #[test]
    fn trusted_fields_are_appended_and_win() {
        // A producer packet cannot carry them, but even an appended copy wins.
        let mut p = packet(|p| {
            p.set_timestamp(7);
        });
        append_trusted_fields(
            &TrustedFields {
                uid: 1000,
                pid: Some(42),
                sequence_id: 3,
                previous_packet_dropped: 1,
                machine_id: None,
            },
            &mut p,
        );
        let d = TracePacketDecoder::new(&p);
        assert_eq!(d.timestamp(), Some(7));
        assert_eq!(d.trusted_uid(), Some(1000));
        assert_eq!(d.trusted_pid(), Some(42));
        assert_eq!(d.trusted_packet_sequence_id(), Some(3));
        assert_eq!(d.previous_packet_dropped(), Some(1));
        assert_eq!(d.machine_id(), None);
        let mut big = Vec::new();
        append_trusted_fields(
            &TrustedFields {
                uid: i32::MIN,
                pid: Some(i32::MIN),
                sequence_id: u32::MAX,
                previous_packet_dropped: u32::MAX,
                machine_id: Some(u32::MAX),
            },
            &mut big,
        );
        assert!(!big.is_empty() && big.len() <= MAX_TRUSTED_FIELDS_LEN);
        assert_eq!(TracePacketDecoder::new(&big).machine_id(), Some(u32::MAX));
    }
}
