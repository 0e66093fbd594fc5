//! The one walk over a `TracePacket`'s top-level fields. Each packet is read
//! once, here: the loader keeps what its sequence and clock need (the
//! timestamp, the sequence fields, interned data, defaults) and the payload
//! (the member of the packet's `data` oneof: its field number and bytes),
//! and the parsers get the payload's bytes with its field number, so no
//! stage walks the packet from its start again.
//!
//! Which payload: the first field of the packet that someone imports, as
//! upstream's parser takes the first field registered to a module (a
//! well-formed packet has one member of the oneof; the rule only matters
//! for a hostile one).

use protozero::FieldValue;
use protozero::varint::decode_varint;
use protozero::wire::MAX_FIELD_ID;
use zerotrace_protos::protos::TracePacket;

/// `TracePacket.ftrace_events` (not in the generated `TracePacket`).
pub const FTRACE_EVENTS: u32 = 1;
/// `TracePacket.streaming_profile_packet` (not in the generated
/// `TracePacket`).
pub const STREAMING_PROFILE_PACKET: u32 = 54;
/// `TracePacket.etw_events` (not in the generated `TracePacket`).
pub const ETW_EVENTS: u32 = 95;
/// `TracePacket.translation_table` (not in the generated `TracePacket`).
pub const TRANSLATION_TABLE: u32 = 82;
/// `TracePacket.android_log` (not in the generated `TracePacket`).
pub const ANDROID_LOG: u32 = 39;
/// `TracePacket.protolog_viewer_config` (not in the generated
/// `TracePacket`).
pub const PROTOLOG_VIEWER_CONFIG: u32 = 105;

/// `TracePacket.track_event_range_of_interest` (not in the generated
/// `TracePacket`).
pub const TRACK_EVENT_RANGE_OF_INTEREST: u32 = 90;

/// The payloads the loader itself reads (before, or instead of, a parser).
pub const LOADER_PAYLOADS: [u32; 17] = [
    TracePacket::FIELD_COMPRESSED_PACKETS,
    TracePacket::FIELD_REMOTE_CLOCK_SYNC,
    TracePacket::FIELD_CLOCK_SNAPSHOT,
    TracePacket::FIELD_TRACE_STATS,
    TracePacket::FIELD_TRACE_ATTRIBUTES,
    TracePacket::FIELD_TRACE_UUID,
    TracePacket::FIELD_TRACE_CONFIG,
    TracePacket::FIELD_TRACK_DESCRIPTOR,
    TracePacket::FIELD_THREAD_DESCRIPTOR,
    TracePacket::FIELD_TRACK_EVENT,
    FTRACE_EVENTS,
    STREAMING_PROFILE_PACKET,
    ETW_EVENTS,
    TRANSLATION_TABLE,
    ANDROID_LOG,
    PROTOLOG_VIEWER_CONFIG,
    TRACK_EVENT_RANGE_OF_INTEREST,
];

/// [`LOADER_PAYLOADS`] as a mask of field numbers (all under 128): one
/// test per field instead of a search of the list.
const LOADER_PAYLOAD_MASK: u128 = {
    let mut m = 0u128;
    let mut i = 0;
    while i < LOADER_PAYLOADS.len() {
        assert!(LOADER_PAYLOADS[i] < 128, "a payload number past the mask");
        m |= 1 << LOADER_PAYLOADS[i];
        i += 1;
    }
    m
};

/// Whether the loader itself reads payload field `id`.
#[inline(always)]
fn is_loader_payload(id: u32) -> bool {
    1u128.checked_shl(id).unwrap_or(0) & LOADER_PAYLOAD_MASK != 0
}

/// A packet's payload: the field number of its `data` member and its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Payload<'a> {
    /// The `TracePacket` field number.
    pub field: u32,
    /// The member's bytes (a message's, without its tag and length).
    pub bytes: &'a [u8],
}

/// What one walk over a `TracePacket` found (the last value of each
/// singular field, as protobuf reads them).
#[derive(Debug, Default, Clone, Copy)]
pub struct PacketFields<'a> {
    /// `timestamp`.
    pub timestamp: Option<u64>,
    /// `timestamp_clock_id`.
    pub timestamp_clock_id: Option<u32>,
    /// `trusted_packet_sequence_id`.
    pub trusted_packet_sequence_id: Option<u32>,
    /// `trusted_pid`.
    pub trusted_pid: Option<i32>,
    /// `interned_data`'s bytes.
    pub interned_data: Option<&'a [u8]>,
    /// `sequence_flags`.
    pub sequence_flags: Option<u32>,
    /// `incremental_state_cleared`.
    pub incremental_state_cleared: bool,
    /// `first_packet_on_sequence`.
    pub first_packet_on_sequence: bool,
    /// `trace_packet_defaults`' bytes.
    pub trace_packet_defaults: Option<&'a [u8]>,
    /// `previous_packet_dropped`: 0 when nothing was lost, else the
    /// `DataLossReason` bitmask saying why.
    pub previous_packet_dropped: u32,
    /// `machine_id`.
    pub machine_id: Option<u32>,
    /// The payload, when the packet carries one someone reads.
    pub payload: Option<Payload<'a>>,
}

#[cfg(test)]
thread_local! {
    /// Walks made on this thread (tests count them per load).
    static WALKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Walks made on this thread so far (tests only).
#[cfg(test)]
pub fn walks() -> u64 {
    WALKS.with(std::cell::Cell::get)
}

/// Counts one walk over a `TracePacket` (tests only).
#[inline]
pub fn count_walk() {
    #[cfg(test)]
    WALKS.with(|w| w.set(w.get() + 1));
}

#[cfg(test)]
thread_local! {
    /// Walks over a TrackEvent from its start made on this thread.
    static TRACK_EVENT_WALKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Walks over a TrackEvent from its start made on this thread so far
/// (tests only): one per TrackEvent, the loader's (the parser reads only
/// the fields the loader left it).
#[cfg(test)]
pub fn track_event_walks() -> u64 {
    TRACK_EVENT_WALKS.with(std::cell::Cell::get)
}

/// Counts one walk over a TrackEvent from its start (tests only).
#[inline]
pub fn count_track_event_walk() {
    #[cfg(test)]
    TRACK_EVENT_WALKS.with(|w| w.set(w.get() + 1));
}

#[cfg(test)]
thread_local! {
    /// Walks over a TrackEvent's remaining bytes by a reader beyond the
    /// parser's decoder, made on this thread.
    static EXTRA_WALKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Walks over a TrackEvent's remaining bytes by a reader beyond the
/// parser's decoder (the typed fields', the reflected fields') made on
/// this thread so far (tests only): none for an event without such
/// fields, which the loader's walk notes.
#[cfg(test)]
pub fn extra_track_event_walks() -> u64 {
    EXTRA_WALKS.with(std::cell::Cell::get)
}

/// Counts one walk by a reader beyond the parser's decoder over a
/// TrackEvent's remaining bytes (tests only).
#[inline]
pub fn count_extra_track_event_walk() {
    #[cfg(test)]
    EXTRA_WALKS.with(|w| w.set(w.get() + 1));
}

/// The varint at `pos` and the offset after it; None when it does not
/// read (cut short, or longer than ten bytes).
#[inline(always)]
fn varint_at(buf: &[u8], pos: usize) -> Option<(u64, usize)> {
    match buf.get(pos) {
        Some(&b) if b < 0x80 => Some((u64::from(b), pos + 1)),
        Some(_) => {
            let (v, n) = decode_varint(buf.get(pos..)?).ok()?;
            Some((v, pos + n))
        }
        None => None,
    }
}

/// The field at `pos` of `buf` (its number and value) and the offset after
/// it: the loader's walks read packets and TrackEvents with it, inlined in
/// their loops, instead of a call per field. It reads what protozero's
/// `Decoder` reads (no groups) and stops where the decoder would fail:
/// None at the end and at malformed bytes (a field number of 0 or past
/// the largest, a wire type of a group or none, a value cut short).
#[inline(always)]
pub fn field_at(buf: &[u8], pos: usize) -> Option<(u32, FieldValue<'_>, usize)> {
    let (tag, pos) = varint_at(buf, pos)?;
    let id = tag >> 3;
    if id == 0 || id > u64::from(MAX_FIELD_ID) {
        return None;
    }
    let id = id as u32;
    match tag & 7 {
        0 => {
            let (v, next) = varint_at(buf, pos)?;
            Some((id, FieldValue::Varint(v), next))
        }
        1 => {
            let b = buf.get(pos..)?.first_chunk::<8>()?;
            Some((id, FieldValue::Fixed64(u64::from_le_bytes(*b)), pos + 8))
        }
        2 => {
            let (len, start) = varint_at(buf, pos)?;
            let len = usize::try_from(len).ok()?;
            let bytes = buf.get(start..)?.get(..len)?;
            Some((id, FieldValue::Bytes(bytes), start + len))
        }
        5 => {
            let b = buf.get(pos..)?.first_chunk::<4>()?;
            Some((id, FieldValue::Fixed32(u32::from_le_bytes(*b)), pos + 4))
        }
        _ => None,
    }
}

impl<'a> PacketFields<'a> {
    /// Walks `bytes` once; `is_payload` says which other field numbers
    /// have an importer (the loader's own payloads always count). A
    /// malformed field ends the walk: what came before it is kept.
    #[inline(always)]
    pub fn walk(bytes: &'a [u8], is_payload: impl Fn(u32) -> bool) -> Self {
        count_walk();
        let mut out = PacketFields::default();
        let mut pos = 0;
        while let Some((id, value, next)) = field_at(bytes, pos) {
            pos = next;
            let varint = || match value {
                FieldValue::Varint(v) => Some(v),
                _ => None,
            };
            let as_bytes = || match value {
                FieldValue::Bytes(b) => Some(b),
                _ => None,
            };
            match id {
                TracePacket::FIELD_TIMESTAMP => out.timestamp = varint().or(out.timestamp),
                TracePacket::FIELD_TIMESTAMP_CLOCK_ID => {
                    out.timestamp_clock_id = varint().map(|v| v as u32).or(out.timestamp_clock_id);
                }
                TracePacket::FIELD_TRUSTED_PACKET_SEQUENCE_ID => {
                    out.trusted_packet_sequence_id = varint()
                        .map(|v| v as u32)
                        .or(out.trusted_packet_sequence_id);
                }
                TracePacket::FIELD_TRUSTED_PID => {
                    out.trusted_pid = varint().map(|v| v as i32).or(out.trusted_pid);
                }
                TracePacket::FIELD_INTERNED_DATA => {
                    out.interned_data = as_bytes().or(out.interned_data);
                }
                TracePacket::FIELD_SEQUENCE_FLAGS => {
                    out.sequence_flags = varint().map(|v| v as u32).or(out.sequence_flags);
                }
                TracePacket::FIELD_INCREMENTAL_STATE_CLEARED => {
                    if let Some(v) = varint() {
                        out.incremental_state_cleared = v != 0;
                    }
                }
                TracePacket::FIELD_FIRST_PACKET_ON_SEQUENCE => {
                    if let Some(v) = varint() {
                        out.first_packet_on_sequence = v != 0;
                    }
                }
                TracePacket::FIELD_TRACE_PACKET_DEFAULTS => {
                    out.trace_packet_defaults = as_bytes().or(out.trace_packet_defaults);
                }
                TracePacket::FIELD_PREVIOUS_PACKET_DROPPED => {
                    if let Some(v) = varint() {
                        out.previous_packet_dropped = v as u32;
                    }
                }
                TracePacket::FIELD_MACHINE_ID => {
                    out.machine_id = varint().map(|v| v as u32).or(out.machine_id);
                }
                id if out.payload.is_none() && (is_loader_payload(id) || is_payload(id)) => {
                    if let Some(b) = as_bytes() {
                        out.payload = Some(Payload {
                            field: id,
                            bytes: b,
                        });
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The payload's bytes when it is field `field`.
    pub fn payload_of(&self, field: u32) -> Option<&'a [u8]> {
        self.payload.filter(|p| p.field == field).map(|p| p.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protozero::Decoder;

    /// The fields `field_at` reads from `buf`, as a list.
    fn fields_at(buf: &[u8]) -> Vec<(u32, FieldValue<'_>)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some((id, value, next)) = field_at(buf, pos) {
            out.push((id, value));
            pos = next;
        }
        out
    }

    /// The reader reads what the decoder reads and stops where it fails.
    #[test]
    fn the_inlined_reader_agrees_with_the_decoder() {
        let good = packet(|p| {
            p.set_timestamp(u64::MAX);
            p.set_trusted_packet_sequence_id(3);
            p.message().append_bytes(999, b"xyz");
            p.message().append_fixed64(7, 5);
            p.message().append_fixed32(6, 9);
            p.message().append_varint(536_870_911, 1);
        });
        let mut cases: Vec<Vec<u8>> = vec![good.clone(), Vec::new()];
        // Every cut of it, and it with garbage behind.
        for cut in 0..good.len() {
            cases.push(good[..cut].to_vec());
        }
        for tail in [
            &[0x00][..],         // field 0
            &[0x0b, 0x01],       // a start-group
            &[0x0e],             // wire type 6
            &[0x0a, 0x05, 0x01], // length past the end
            &[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ], // 11 bytes
            &[0x80, 0x80, 0x80, 0x80, 0x10], // field 2^29
            &[
                0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ], // length 2^64-1
        ] {
            let mut c = good.clone();
            c.extend_from_slice(tail);
            cases.push(c);
        }
        for c in &cases {
            let decoded: Vec<_> = Decoder::new(c)
                .map_while(Result::ok)
                .map(|f| (f.id, f.value))
                .collect();
            assert_eq!(fields_at(c), decoded, "{c:02x?}");
        }
        assert_eq!(fields_at(&good).len(), 6);
    }

    fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            f(&mut p);
        }
        w.finish().unwrap_or_default()
    }

    /// The mask says what the list says, for every field number.
    #[test]
    fn the_loader_payload_mask_is_its_list() {
        for id in (0..300).chain([MAX_FIELD_ID, u32::MAX]) {
            assert_eq!(is_loader_payload(id), LOADER_PAYLOADS.contains(&id), "{id}");
        }
    }

    #[test]
    fn the_first_imported_payload_wins_and_the_envelope_is_read() {
        let bytes = packet(|p| {
            p.set_timestamp(7);
            p.set_trusted_packet_sequence_id(3);
            // Not imported by anyone here: skipped.
            p.message().append_bytes(999, b"x");
            p.message()
                .append_bytes(TracePacket::FIELD_TRACE_CONFIG, b"\x08\x01");
            p.message()
                .append_bytes(TracePacket::FIELD_TRACE_STATS, b"");
            p.set_sequence_flags(2);
        });
        let f = PacketFields::walk(&bytes, |_| false);
        assert_eq!(f.timestamp, Some(7));
        assert_eq!(f.trusted_packet_sequence_id, Some(3));
        assert_eq!(f.sequence_flags, Some(2));
        assert_eq!(
            f.payload,
            Some(Payload {
                field: TracePacket::FIELD_TRACE_CONFIG,
                bytes: b"\x08\x01"
            })
        );
        let f = PacketFields::walk(&bytes, |id| id == 999);
        assert_eq!(f.payload.map(|p| p.field), Some(999));
    }
}
