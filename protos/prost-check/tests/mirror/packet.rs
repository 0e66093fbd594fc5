//! TracePacket (its `data` oneof carrying a track event, a track descriptor,
//! a clock snapshot, a trace config, process/thread descriptors or raw bytes;
//! sequence fields; interned data) and Trace, the repeated packet container.

use proptest::prelude::*;
use protozero::Message;
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

use super::config::{read_trace_config, trace_config, write_trace_config};
use super::descriptors::{
    read_process, read_thread, read_track_descriptor, track_descriptor, write_process,
    write_thread, write_track_descriptor,
};
use super::sequence::{
    clock_snapshot, interned_data, read_clock_snapshot, read_interned_data, write_clock_snapshot,
    write_interned_data,
};
use super::track_event::{read_track_event, track_event, write_track_event};
use super::{Layout, Mirror, blob, checked, few, maybe, messages};

use pb::trace_packet as ptp;
use zp::trace_packet as gtp;

/// A packet whose payload is weighted towards TrackEvent, as in real traces.
pub fn trace_packet() -> BoxedStrategy<pb::TracePacket> {
    let data = prop_oneof![
        4 => track_event().prop_map(ptp::Data::TrackEvent),
        2 => track_descriptor().prop_map(ptp::Data::TrackDescriptor),
        1 => clock_snapshot().prop_map(ptp::Data::ClockSnapshot),
        1 => trace_config().prop_map(ptp::Data::TraceConfig),
        1 => Just(pb::ProcessDescriptor { pid: Some(7), ..Default::default() })
            .prop_map(ptp::Data::ProcessDescriptor),
        1 => Just(pb::ThreadDescriptor { tid: Some(-3), ..Default::default() })
            .prop_map(ptp::Data::ThreadDescriptor),
        1 => blob().prop_map(ptp::Data::SynchronizationMarker),
        1 => blob().prop_map(ptp::Data::CompressedPackets),
    ];
    let sequence = (
        maybe(any::<i32>().prop_map(ptp::OptionalTrustedUid::TrustedUid)),
        maybe(any::<u32>().prop_map(ptp::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId)),
        maybe(any::<i32>()),
        maybe(interned_data()),
        maybe(any::<u32>()),
        maybe(any::<bool>()),
        maybe(any::<u32>()),
        maybe(any::<bool>()),
    );
    (
        maybe(any::<u64>()),
        maybe(any::<u32>()),
        maybe(data),
        sequence,
        maybe(any::<u32>()),
    )
        .prop_map(|(timestamp, clock, data, s, machine_id)| pb::TracePacket {
            timestamp,
            timestamp_clock_id: clock,
            data,
            optional_trusted_uid: s.0,
            optional_trusted_packet_sequence_id: s.1,
            trusted_pid: s.2,
            interned_data: s.3,
            sequence_flags: s.4,
            incremental_state_cleared: s.5,
            previous_packet_dropped: s.6,
            first_packet_on_sequence: s.7,
            machine_id,
            ..Default::default()
        })
        .boxed()
}

/// A trace of a few packets.
pub fn trace() -> BoxedStrategy<pb::Trace> {
    few(trace_packet())
        .prop_map(|packet| pb::Trace { packet })
        .boxed()
}

fn write_packet(v: &pb::TracePacket, w: &mut zp::TracePacket<'_>, layout: Layout) {
    v.timestamp.map(|x| w.set_timestamp(x));
    v.timestamp_clock_id.map(|x| w.set_timestamp_clock_id(x));
    match &v.data {
        Some(ptp::Data::TrackEvent(x)) => write_track_event(x, &mut w.begin_track_event(), layout),
        Some(ptp::Data::TrackDescriptor(x)) => {
            write_track_descriptor(x, &mut w.begin_track_descriptor());
        }
        Some(ptp::Data::ClockSnapshot(x)) => write_clock_snapshot(x, &mut w.begin_clock_snapshot()),
        Some(ptp::Data::TraceConfig(x)) => write_trace_config(x, &mut w.begin_trace_config()),
        Some(ptp::Data::ProcessDescriptor(x)) => {
            write_process(x, &mut w.begin_process_descriptor());
        }
        Some(ptp::Data::ThreadDescriptor(x)) => write_thread(x, &mut w.begin_thread_descriptor()),
        Some(ptp::Data::SynchronizationMarker(x)) => _ = w.set_synchronization_marker(x),
        Some(ptp::Data::CompressedPackets(x)) => _ = w.set_compressed_packets(x),
        Some(other) => panic!("no strategy produces {other:?}"),
        None => {}
    }
    if let Some(ptp::OptionalTrustedUid::TrustedUid(x)) = v.optional_trusted_uid {
        w.set_trusted_uid(x);
    }
    if let Some(ptp::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(x)) =
        v.optional_trusted_packet_sequence_id
    {
        w.set_trusted_packet_sequence_id(x);
    }
    v.trusted_pid.map(|x| w.set_trusted_pid(x));
    if let Some(x) = &v.interned_data {
        write_interned_data(x, &mut w.begin_interned_data());
    }
    v.sequence_flags.map(|x| w.set_sequence_flags(x));
    v.incremental_state_cleared
        .map(|x| w.set_incremental_state_cleared(x));
    v.previous_packet_dropped
        .map(|x| w.set_previous_packet_dropped(x));
    v.first_packet_on_sequence
        .map(|x| w.set_first_packet_on_sequence(x));
    v.machine_id.map(|x| w.set_machine_id(x));
}

fn read_packet(d: &zp::TracePacketDecoder<'_>) -> pb::TracePacket {
    let data = d.which_data().map(|data| match data {
        gtp::Data::TrackEvent(x) => ptp::Data::TrackEvent(read_track_event(&checked(x))),
        gtp::Data::TrackDescriptor(x) => {
            ptp::Data::TrackDescriptor(read_track_descriptor(&checked(x)))
        }
        gtp::Data::ClockSnapshot(x) => ptp::Data::ClockSnapshot(read_clock_snapshot(&checked(x))),
        gtp::Data::TraceConfig(x) => ptp::Data::TraceConfig(read_trace_config(&checked(x))),
        gtp::Data::ProcessDescriptor(x) => ptp::Data::ProcessDescriptor(read_process(&checked(x))),
        gtp::Data::ThreadDescriptor(x) => ptp::Data::ThreadDescriptor(read_thread(&checked(x))),
        gtp::Data::SynchronizationMarker(x) => ptp::Data::SynchronizationMarker(x.to_vec()),
        gtp::Data::CompressedPackets(x) => ptp::Data::CompressedPackets(x.to_vec()),
        other => panic!("unexpected payload {other:?}"),
    });
    pb::TracePacket {
        timestamp: d.timestamp(),
        timestamp_clock_id: d.timestamp_clock_id(),
        data,
        optional_trusted_uid: d
            .which_optional_trusted_uid()
            .map(|gtp::OptionalTrustedUid::TrustedUid(x)| ptp::OptionalTrustedUid::TrustedUid(x)),
        optional_trusted_packet_sequence_id: d.which_optional_trusted_packet_sequence_id().map(
            |gtp::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(x)| {
                ptp::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(x)
            },
        ),
        trusted_pid: d.trusted_pid(),
        interned_data: d.interned_data().map(|x| read_interned_data(&checked(x))),
        sequence_flags: d.sequence_flags(),
        incremental_state_cleared: d.incremental_state_cleared(),
        previous_packet_dropped: d.previous_packet_dropped(),
        first_packet_on_sequence: d.first_packet_on_sequence(),
        machine_id: d.machine_id(),
        ..Default::default()
    }
}

impl Mirror for pb::TracePacket {
    fn write(&self, msg: Message<'_>, layout: Layout) {
        write_packet(self, &mut zp::TracePacket::from_message(msg), layout);
    }
    fn read(bytes: &[u8]) -> Self {
        read_packet(&checked(zp::TracePacketDecoder::new(bytes)))
    }
}

impl Mirror for pb::Trace {
    fn write(&self, msg: Message<'_>, layout: Layout) {
        let mut trace = zp::Trace::from_message(msg);
        for p in &self.packet {
            write_packet(p, &mut trace.add_packet(), layout);
        }
    }
    fn read(bytes: &[u8]) -> Self {
        let trace = checked(zp::TraceDecoder::new(bytes));
        pb::Trace {
            packet: messages(trace.packet(), read_packet),
        }
    }
}
