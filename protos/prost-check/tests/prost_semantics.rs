//! The generated decoders as a prost user expects them (issue 47), each
//! case on the same bytes as prost:
//!
//! - a string that is not UTF-8 is an error one can see (`try_x`,
//!   `try_new`, `try_read`), not only a field that reads as absent;
//! - a singular message field that occurs twice merges as protobuf says:
//!   the accessor reads the last occurrence (documented), `x_all` yields
//!   every one, and decoding their concatenation gives prost's merge;
//! - malformed bytes are reported by the constructor itself
//!   (`FooDecoder::try_new`, `MessageDecoder::try_decode`) and by the
//!   strict visit (`FooField::try_read`), not only by `decode_error()`.

use prost::Message as _;
use protozero::{DecodeError, MessageDecoder};
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

/// Field `id` of wire type 2 holding `payload` (shorter than 128 bytes).
fn len_field(id: u32, payload: &[u8]) -> Vec<u8> {
    let mut tag = id << 3 | 2;
    let mut buf = Vec::new();
    while tag >= 0x80 {
        buf.push(tag as u8 | 0x80);
        tag >>= 7;
    }
    buf.push(tag as u8);
    buf.push(payload.len() as u8);
    buf.extend_from_slice(payload);
    buf
}

/// Field `name` (23, string) of TrackEvent holding bytes that are not UTF-8.
fn event_with_bad_name() -> Vec<u8> {
    let mut buf = len_field(23, &[0xff, 0xfe]);
    // track_uuid = 11: 5, so the event has a valid field too.
    buf.extend([11 << 3, 5]);
    buf
}

/// `bytes` as TracePacket field `track_event` (11).
fn packet_of_event(event: &[u8]) -> Vec<u8> {
    len_field(11, event)
}

#[test]
fn invalid_utf8_is_an_error_not_an_absent_field() {
    let bytes = event_with_bad_name();
    assert!(pb::TrackEvent::decode(bytes.as_slice()).is_err(), "prost");

    let lenient = zp::TrackEventDecoder::new(&bytes);
    assert_eq!(lenient.name(), None, "the lenient accessor, documented");
    assert_eq!(lenient.name_bytes(), Some(&[0xff, 0xfe][..]));
    assert_eq!(lenient.track_uuid(), Some(5));
    assert_eq!(lenient.decode_error(), None);
    let invalid = DecodeError::InvalidUtf8 { id: 23 };
    assert_eq!(lenient.try_name(), Err(invalid));
    assert_eq!(
        zp::TrackEventDecoder::try_new(&bytes).err(),
        Some(invalid),
        "the strict constructor refuses the message, as prost does"
    );
    assert_eq!(
        <zp::TrackEventDecoder<'_> as MessageDecoder<'_>>::try_decode(&bytes).err(),
        Some(invalid)
    );
    let visited: Vec<_> = zp::TrackEventField::try_read(&bytes).collect();
    assert!(matches!(visited.as_slice(), [Err(e)] if *e == invalid));

    // A valid name reads the same on every path.
    let good = len_field(23, b"ok");
    let d = zp::TrackEventDecoder::try_new(&good).expect("valid");
    assert_eq!(d.try_name(), Ok(Some("ok")));
    assert_eq!(d.name(), Some("ok"));
    assert_eq!(zp::TrackEventDecoder::new(&[]).try_name(), Ok(None));

    // Repeated strings too (`categories` = 22).
    let bad_category = len_field(22, &[0x80]);
    assert!(pb::TrackEvent::decode(bad_category.as_slice()).is_err());
    assert_eq!(
        zp::TrackEventDecoder::try_new(&bad_category).err(),
        Some(DecodeError::InvalidUtf8 { id: 22 })
    );

    // Nested: prost refuses the whole packet; ours checks the packet's own
    // fields in `try_new` and the event when it is read strictly.
    let packet = packet_of_event(&bytes);
    assert!(pb::TracePacket::decode(packet.as_slice()).is_err());
    let p = zp::TracePacketDecoder::try_new(&packet).expect("the packet's own fields are fine");
    assert_eq!(p.try_track_event().err(), Some(invalid));
    let strict_visit: Vec<Result<(), DecodeError>> = zp::TracePacketField::try_read(&packet)
        .map(|f| match f? {
            zp::TracePacketField::TrackEvent(e) => e.try_decode().map(|_| ()),
            _ => Ok(()),
        })
        .collect();
    assert_eq!(strict_visit, [Err(invalid)]);
}

/// An InternedData with one event name.
fn interned(iid: u64, name: &str) -> pb::InternedData {
    pb::InternedData {
        event_names: vec![pb::EventName {
            iid: Some(iid),
            name: Some(name.to_owned()),
        }],
        ..Default::default()
    }
}

#[test]
fn a_singular_message_twice_merges_as_prost_merges() {
    // interned_data (12) twice, then trace_packet_defaults (59) twice with
    // a scalar in the first and a nested message in the second.
    let mut bytes = Vec::new();
    for d in [interned(1, "first"), interned(2, "second")] {
        pb::TracePacket {
            interned_data: Some(d),
            ..Default::default()
        }
        .encode(&mut bytes)
        .expect("encodes");
    }
    let defaults = [
        pb::TracePacketDefaults {
            timestamp_clock_id: Some(64),
            ..Default::default()
        },
        pb::TracePacketDefaults {
            track_event_defaults: Some(pb::TrackEventDefaults {
                track_uuid: Some(7),
                ..Default::default()
            }),
            ..Default::default()
        },
    ];
    for d in defaults {
        pb::TracePacket {
            trace_packet_defaults: Some(d),
            ..Default::default()
        }
        .encode(&mut bytes)
        .expect("encodes");
    }
    let merged = pb::TracePacket::decode(bytes.as_slice()).expect("prost");
    let prost_names: Vec<(u64, String)> = merged
        .interned_data
        .as_ref()
        .expect("merged")
        .event_names
        .iter()
        .map(|n| (n.iid.unwrap_or(0), n.name.clone().unwrap_or_default()))
        .collect();
    assert_eq!(prost_names, [(1, "first".into()), (2, "second".into())]);

    let p = zp::TracePacketDecoder::try_new(&bytes).expect("valid");
    // The accessor reads the last occurrence, as documented.
    let last = p.interned_data().expect("present");
    let last_names: Vec<u64> = last.event_names().filter_map(|n| n.iid()).collect();
    assert_eq!(last_names, [2]);
    // Every occurrence, and their concatenation decoded: prost's merge.
    assert_eq!(p.interned_data_all().count(), 2);
    let concat: Vec<u8> = p
        .interned_data_all()
        .flat_map(|d| d.raw_bytes().iter().copied())
        .collect();
    let ours_names: Vec<(u64, String)> = zp::InternedDataDecoder::new(&concat)
        .event_names()
        .map(|n| {
            (
                n.iid().unwrap_or(0),
                n.name().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(ours_names, prost_names);

    let prost_defaults = merged.trace_packet_defaults.expect("merged");
    let concat: Vec<u8> = p
        .trace_packet_defaults_all()
        .flat_map(|d| d.raw_bytes().iter().copied())
        .collect();
    let ours_defaults = zp::TracePacketDefaultsDecoder::new(&concat);
    assert_eq!(
        ours_defaults.timestamp_clock_id(),
        prost_defaults.timestamp_clock_id
    );
    assert_eq!(
        ours_defaults
            .track_event_defaults()
            .and_then(|t| t.track_uuid()),
        prost_defaults
            .track_event_defaults
            .and_then(|t| t.track_uuid)
    );
    // The last occurrence alone has lost the first one's clock id.
    assert_eq!(
        p.trace_packet_defaults()
            .and_then(|d| d.timestamp_clock_id()),
        None
    );

    // The visitor yields each occurrence, for the caller to merge.
    let visited = zp::TracePacketField::try_read(&bytes)
        .filter(|f| matches!(f, Ok(zp::TracePacketField::InternedData(_))))
        .count();
    assert_eq!(visited, 2);
}

#[test]
fn malformed_bytes_are_reported_by_the_constructor_and_the_visit() {
    // timestamp (8) = 1, then interned_data (12) claiming 9 bytes of 1.
    let truncated = [8 << 3, 1, 12 << 3 | 2, 9, 0];
    assert!(pb::TracePacket::decode(&truncated[..]).is_err(), "prost");
    let cut = DecodeError::LengthOutOfBounds {
        id: 12,
        len: 9,
        remaining: 1,
    };
    assert_eq!(zp::TracePacketDecoder::try_new(&truncated).err(), Some(cut));
    // The lenient constructor keeps what came before, as documented.
    let lenient = zp::TracePacketDecoder::new(&truncated);
    assert_eq!(lenient.timestamp(), Some(1));
    assert_eq!(lenient.decode_error(), Some(cut));
    let items: Vec<_> = zp::TracePacketField::try_read(&truncated).collect();
    assert!(matches!(
        items.as_slice(),
        [Ok(zp::TracePacketField::Timestamp(1)), Err(e)] if *e == cut
    ));

    // A declared field with a wire type its type cannot have: timestamp
    // (uint64) as fixed32. prost refuses it; so do the strict paths.
    let wrong = [8 << 3 | 5, 1, 0, 0, 0];
    assert!(pb::TracePacket::decode(&wrong[..]).is_err(), "prost");
    let wire = DecodeError::WrongWireType {
        id: 8,
        expected: 0,
        found: 5,
    };
    assert_eq!(zp::TracePacketDecoder::try_new(&wrong).err(), Some(wire));
    assert_eq!(zp::TracePacketDecoder::new(&wrong).timestamp(), None);
    let items: Vec<_> = zp::TracePacketField::try_read(&wrong).collect();
    assert!(matches!(items.as_slice(), [Err(e)] if *e == wire));

    // Undeclared fields are unknown fields, for both.
    let unknown = [(1000 << 3) as u8 | 0x80, (1000 >> 4) as u8, 3];
    assert!(pb::TracePacket::decode(&unknown[..]).is_ok());
    assert!(zp::TracePacketDecoder::try_new(&unknown).is_ok());
    assert!(zp::TracePacketField::try_read(&unknown).all(|f| f.is_ok()));
}
