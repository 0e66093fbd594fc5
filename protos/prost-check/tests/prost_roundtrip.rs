//! Round-trip property tests between zerotrace's generated code and prost
//! types compiled (by protox + prost-build) from the same `.proto` files.
//!
//! For random prost values of the messages zerotrace relies on, three paths
//! must give the value back (see `mirror::round_trip`): prost decoding the
//! bytes of our generated writers (both with repeated scalars unpacked and
//! with them half packed), our generated decoders reading those bytes, and
//! our generated decoders reading prost's own encoding. A field number, wire
//! type, sign or zigzag mistake on either side breaks one of them.

mod mirror;

use mirror::{Layout, Mirror, check_round_trips, encode_ours};
use prost::Message as _;
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

#[test]
fn trace_packets_round_trip() {
    check_round_trips(256, mirror::packet::trace_packet);
}

#[test]
fn traces_round_trip() {
    check_round_trips(64, mirror::packet::trace);
}

#[test]
fn track_descriptors_round_trip() {
    check_round_trips(256, mirror::descriptors::track_descriptor);
}

#[test]
fn interned_data_round_trips() {
    check_round_trips(256, mirror::sequence::interned_data);
}

#[test]
fn clock_snapshots_round_trip() {
    check_round_trips(256, mirror::sequence::clock_snapshot);
}

#[test]
fn trace_configs_round_trip() {
    check_round_trips(256, mirror::config::trace_config);
}

#[test]
fn commit_data_requests_round_trip() {
    check_round_trips(256, mirror::ipc::commit_data_request);
}

#[test]
fn ipc_frames_round_trip() {
    check_round_trips(256, mirror::ipc::ipc_frame);
}

/// A packet with one track event, for the hand-picked cases below.
fn packet_with(event: pb::TrackEvent) -> pb::TracePacket {
    pb::TracePacket {
        data: Some(pb::trace_packet::Data::TrackEvent(event)),
        ..Default::default()
    }
}

fn event_of(packet: &pb::TracePacket) -> &pb::TrackEvent {
    match &packet.data {
        Some(pb::trace_packet::Data::TrackEvent(e)) => e,
        other => panic!("expected a track event, got {other:?}"),
    }
}

/// NaN never equals itself, so the properties leave it out; here its payload
/// and the sign of zero must survive every path bit for bit.
#[test]
fn nan_payloads_and_negative_zero_keep_their_bits() {
    use pb::track_event::CounterValueField::DoubleCounterValue;
    let nan = f64::from_bits(0x7ff8_0000_dead_beef);
    let value = packet_with(pb::TrackEvent {
        counter_value_field: Some(DoubleCounterValue(nan)),
        extra_double_counter_values: vec![-0.0, nan, f64::NEG_INFINITY],
        ..Default::default()
    });
    let bits = |e: &pb::TrackEvent| {
        let counter = match e.counter_value_field {
            Some(DoubleCounterValue(x)) => x.to_bits(),
            ref other => panic!("counter lost: {other:?}"),
        };
        let extra: Vec<u64> = e
            .extra_double_counter_values
            .iter()
            .map(|x| x.to_bits())
            .collect();
        (counter, extra)
    };
    let want = bits(event_of(&value));
    for layout in [Layout::Unpacked, Layout::HalfPacked] {
        let ours = encode_ours(&value, layout);
        let by_prost = pb::TracePacket::decode(ours.as_slice()).expect("prost decodes");
        assert_eq!(bits(event_of(&by_prost)), want, "prost, {layout:?}");
        assert_eq!(
            bits(event_of(&pb::TracePacket::read(&ours))),
            want,
            "ours, {layout:?}"
        );
    }
    let theirs = value.encode_to_vec();
    assert_eq!(bits(event_of(&pb::TracePacket::read(&theirs))), want);
}

/// Enum numbers the schema does not name (negative ones take ten varint
/// bytes) are kept as numbers by both decoders (ours: by the `_raw`
/// accessor, while the typed one reads `None`).
#[test]
fn unknown_enum_numbers_are_kept() {
    for raw in [99, -5, i32::MIN, 4] {
        let value = packet_with(pb::TrackEvent {
            r#type: Some(raw),
            ..Default::default()
        });
        let ours = encode_ours(&value, Layout::Unpacked);
        let by_prost = pb::TracePacket::decode(ours.as_slice()).expect("prost decodes");
        assert_eq!(event_of(&by_prost).r#type, Some(raw));
        let packet = zp::TracePacketDecoder::new(&ours);
        let event = packet.track_event().expect("track event");
        assert_eq!(event.r#type(), zp::track_event::Type::from_i32(raw));
        assert_eq!(event.type_raw(), Some(raw));
    }
}

/// Category iids written half packed, half unpacked, read in order by both.
#[test]
fn mixed_packed_and_unpacked_category_iids_keep_their_order() {
    let iids = vec![1, 300, u64::MAX, 0, 7];
    let value = packet_with(pb::TrackEvent {
        category_iids: iids.clone(),
        ..Default::default()
    });
    let ours = encode_ours(&value, Layout::HalfPacked);
    // Field 3 with wire type 2: the packed record comes first.
    let event_bytes = zp::TracePacketDecoder::new(&ours)
        .track_event_bytes()
        .expect("track event");
    assert_eq!(event_bytes[0], 3 << 3 | 2);
    let by_prost = pb::TracePacket::decode(ours.as_slice()).expect("prost decodes");
    assert_eq!(event_of(&by_prost).category_iids, iids);
    let ours_read: Vec<u64> = zp::TrackEventDecoder::new(event_bytes)
        .category_iids()
        .collect();
    assert_eq!(ours_read, iids);
}
