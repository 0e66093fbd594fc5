//! The packets the service writes itself, on trusted sequence 1: clock
//! snapshots, the trace config, the trace uuid, the sync marker, the trace
//! provenance, system info, lifecycle events, triggers and trace stats.
//! Field order inside each packet follows what the genuine service writes.

use protozero::{HeapWriter, Message};
use zerotrace_protos::protos::TracePacket;

use super::env::ClockReading;

/// Encodes one message through `f` into a fresh vector.
pub fn encode(f: impl FnOnce(Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(w.root());
    w.finish().unwrap_or_default()
}

/// The 16 bytes of `synchronization_marker`, which let a reader find packet
/// boundaries in a damaged trace.
pub const SYNC_MARKER: [u8; 16] = [
    0x82, 0x47, 0x7A, 0x76, 0xB2, 0x8D, 0x42, 0xBA, 0x81, 0xDC, 0x33, 0x32, 0x6D, 0x57, 0xA0, 0x79,
];

/// The service's own trusted sequence.
pub const SERVICE_SEQUENCE_ID: u32 = 1;

/// `BuiltinClock.BOOTTIME`, the clock of the service's timestamps.
const BOOTTIME: u32 = 6;

/// `TracingServiceEvent` field numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ServiceEvent {
    /// Every data source instance has started.
    AllDataSourcesStarted = 1,
    /// The session started.
    TracingStarted = 2,
    /// A flush completed on every producer.
    AllDataSourcesFlushed = 3,
    /// The consumer read the buffers to their end.
    ReadTracingBuffersCompleted = 4,
    /// The session stopped.
    TracingDisabled = 5,
    /// A flush timed out.
    LastFlushSlowDataSources = 8,
    /// A flush began.
    FlushStarted = 9,
    /// A clone of the session began (in the clone's trace).
    CloneStarted = 10,
    /// A buffer was copied into the clone (its value the buffer's index).
    BufferCloned = 11,
}

/// Writes the fields every service packet carries.
fn trusted(p: &mut TracePacket<'_>, uid: u32, clock: bool) {
    p.set_trusted_uid(uid as i32);
    p.set_trusted_packet_sequence_id(SERVICE_SEQUENCE_ID);
    if clock {
        p.set_timestamp_clock_id(BOOTTIME);
    }
}

/// A `clock_snapshot` packet.
pub fn clock_snapshot_packet(uid: u32, primary: u32, readings: &[ClockReading]) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        {
            let mut c = p.begin_clock_snapshot();
            c.set_primary_trace_clock_raw(primary as i32);
            for r in readings {
                c.add_clocks()
                    .set_clock_id(r.clock_id)
                    .set_timestamp(r.timestamp);
            }
        }
        trusted(&mut p, uid, true);
    })
}

/// The `trace_config` packet: the consumer's bytes, unchanged.
pub fn trace_config_packet(uid: u32, raw: &[u8]) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        trusted(&mut p, uid, true);
        p.set_trace_config_raw(raw);
    })
}

/// The `trace_uuid` packet.
pub fn trace_uuid_packet(uid: u32, uuid: u128) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        trusted(&mut p, uid, true);
        let mut u = p.begin_trace_uuid();
        u.set_lsb(uuid as u64 as i64);
        u.set_msb((uuid >> 64) as i64);
    })
}

/// The sync marker packet (no clock id, as the genuine service writes it).
pub fn sync_marker_packet(uid: u32) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        trusted(&mut p, uid, false);
        p.set_synchronization_marker(&SYNC_MARKER);
    })
}

/// The `trace_provenance` packet: per buffer, the sequences written into it
/// and by which producer.
pub fn provenance_packet(uid: u32, now: u64, buffers: &[Vec<(u32, u16)>]) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        p.set_timestamp(now);
        {
            let mut prov = p.begin_trace_provenance();
            for seqs in buffers {
                let mut b = prov.add_buffers();
                for &(id, producer) in seqs {
                    b.add_sequences()
                        .set_id(id)
                        .set_producer_id(producer as i32);
                }
            }
        }
        trusted(&mut p, uid, true);
    })
}

/// The `system_info` packet.
pub fn system_info_packet(uid: u32, info: &[u8]) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        p.set_system_info_raw(info);
        trusted(&mut p, uid, true);
    })
}

/// A remote machine's `system_info` packet (what its relay sent), stamped
/// with the machine's id.
pub fn remote_system_info_packet(uid: u32, machine: u32, info: &[u8]) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        p.set_system_info_raw(info);
        p.set_machine_id(machine);
        p.set_trusted_uid(uid as i32);
        p.set_trusted_packet_sequence_id(SERVICE_SEQUENCE_ID);
    })
}

/// A remote machine's `remote_clock_sync` packet: its relay's clock
/// exchanges, each the relay's readings (`client`) and the service's
/// (`host`).
pub fn remote_clock_sync_packet<'a>(
    uid: u32,
    machine: u32,
    synced: impl IntoIterator<Item = (&'a [ClockReading], &'a [ClockReading])>,
) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        p.set_machine_id(machine);
        p.set_trusted_uid(uid as i32);
        {
            let mut r = p.begin_remote_clock_sync();
            for (client, host) in synced {
                let mut e = r.add_synced_clocks();
                {
                    let mut c = e.begin_client_clocks();
                    for x in client {
                        c.add_clocks()
                            .set_clock_id(x.clock_id)
                            .set_timestamp(x.timestamp);
                    }
                }
                let mut h = e.begin_host_clocks();
                for x in host {
                    h.add_clocks()
                        .set_clock_id(x.clock_id)
                        .set_timestamp(x.timestamp);
                }
            }
        }
    })
}

/// A `service_event` packet.
pub fn service_event_packet(uid: u32, ts: u64, field: u32, value: u32) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        p.set_timestamp(ts);
        trusted(&mut p, uid, true);
        // A flag's `true` and an index are both varints.
        p.begin_service_event()
            .message()
            .append_uint32(field, value);
    })
}

/// A `trigger` packet for a trigger the session received.
pub fn trigger_packet(uid: u32, ts: u64, name: &str, producer: &str, producer_uid: u32) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        p.set_timestamp(ts);
        trusted(&mut p, uid, true);
        let mut t = p.begin_trigger();
        t.set_trigger_name(name);
        t.set_producer_name(producer);
        t.set_trusted_producer_uid(producer_uid as i32);
    })
}

/// The `clone_snapshot_trigger` packet of a clone made for a CLONE_SNAPSHOT
/// trigger: which trigger cut the trace, at its time.
pub fn clone_snapshot_trigger_packet(uid: u32, trigger: &crate::service::CloneTrigger) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        p.set_timestamp(trigger.boot_time_ns);
        trusted(&mut p, uid, true);
        let mut t = p.begin_clone_snapshot_trigger();
        t.set_trigger_name(&trigger.name);
        t.set_producer_name(&trigger.producer_name);
        t.set_trusted_producer_uid(trigger.producer_uid);
        t.set_stop_delay_ms(trigger.delay_ms);
    })
}

/// The `trace_stats` packet.
pub fn trace_stats_packet(uid: u32, stats: impl FnOnce(Message<'_>)) -> Vec<u8> {
    encode(|m| {
        let mut p = TracePacket::from_message(m);
        trusted(&mut p, uid, true);
        stats(p.begin_trace_stats().into_message());
    })
}
