//! Reading traces back the way the interop tests compare them: packets,
//! the trusted fields a service appends, track events with their interned
//! names resolved (so the genuine SDK's events compare with
//! [`workload::expected_events`](crate::sdk_workload::expected_events) event
//! by event), the custom data source's test packets, and the kinds of the
//! service's own packets on sequence 1.

use std::collections::HashMap;

use protozero::{Decoder, Field, FieldValue};

use crate::sdk_workload::{Arg, Event, TestPacket};

/// TracePacket field numbers the checks read.
pub mod field {
    /// trusted_uid.
    pub const TRUSTED_UID: u32 = 3;
    /// timestamp.
    pub const TIMESTAMP: u32 = 8;
    /// trusted_packet_sequence_id.
    pub const SEQUENCE_ID: u32 = 10;
    /// track_event.
    pub const TRACK_EVENT: u32 = 11;
    /// interned_data.
    pub const INTERNED_DATA: u32 = 12;
    /// sequence_flags.
    pub const SEQUENCE_FLAGS: u32 = 13;
    /// previous_packet_dropped.
    pub const PREVIOUS_PACKET_DROPPED: u32 = 42;
    /// track_descriptor.
    pub const TRACK_DESCRIPTOR: u32 = 60;
    /// trusted_pid.
    pub const TRUSTED_PID: u32 = 79;
    /// first_packet_on_sequence.
    pub const FIRST_PACKET_ON_SEQUENCE: u32 = 87;
    /// for_testing.
    pub const FOR_TESTING: u32 = 900;
}

/// The fields of one message, in order (a decode error panics: every
/// trace the tests read must decode).
pub fn fields(msg: &[u8]) -> Vec<Field<'_>> {
    Decoder::new(msg)
        .map(|f| f.expect("a well-formed message"))
        .collect()
}

/// The last varint value of field `id`.
pub fn varint(msg: &[u8], id: u32) -> Option<u64> {
    fields(msg)
        .into_iter()
        .rev()
        .find(|f| f.id == id)
        .and_then(|f| f.as_varint().ok())
}

/// The last length-delimited value of field `id`.
pub fn bytes(msg: &[u8], id: u32) -> Option<&[u8]> {
    fields(msg)
        .into_iter()
        .rev()
        .find(|f| f.id == id)
        .and_then(|f| f.as_bytes().ok())
}

fn string(msg: &[u8], id: u32) -> Option<String> {
    bytes(msg, id).map(|b| String::from_utf8_lossy(b).into_owned())
}

/// The packets of a trace file (`Trace.packet`, field 1), in order.
pub fn packets(trace: &[u8]) -> Vec<Vec<u8>> {
    fields(trace)
        .into_iter()
        .filter(|f| f.id == 1)
        .map(|f| f.as_bytes().expect("a packet").to_vec())
        .collect()
}

/// A packet's trusted sequence id (0 when absent).
pub fn sequence_of(packet: &[u8]) -> u64 {
    varint(packet, field::SEQUENCE_ID).unwrap_or(0)
}

/// The packets of every sequence other than the service's (1), grouped by
/// sequence id in order of first appearance.
pub fn data_sequences(trace: &[u8]) -> Vec<(u64, Vec<Vec<u8>>)> {
    let mut out: Vec<(u64, Vec<Vec<u8>>)> = Vec::new();
    for p in packets(trace) {
        let seq = sequence_of(&p);
        // 1 is the service's; the service writes a few packets on none
        // (a relayed machine's remote_clock_sync, as Perfetto's does).
        if seq <= 1 {
            continue;
        }
        match out.iter_mut().find(|(s, _)| *s == seq) {
            Some((_, v)) => v.push(p),
            None => out.push((seq, vec![p])),
        }
    }
    out
}

/// The packet without the fields a service appends (trusted uid, pid and
/// sequence id, `previous_packet_dropped`, `first_packet_on_sequence`):
/// what the producer wrote when the service appended them, as services do,
/// after the producer's bytes.
pub fn producer_bytes(packet: &[u8]) -> Vec<u8> {
    let appended = [
        field::TRUSTED_UID,
        field::SEQUENCE_ID,
        field::PREVIOUS_PACKET_DROPPED,
        field::TRUSTED_PID,
        field::FIRST_PACKET_ON_SEQUENCE,
    ];
    let mut d = Decoder::new(packet);
    let mut end = 0;
    let mut cut = packet.len();
    while let Some(f) = d.read_field() {
        let f = f.expect("a well-formed packet");
        if appended.contains(&f.id) {
            cut = cut.min(end);
        } else {
            cut = packet.len();
        }
        end = d.offset();
    }
    packet[..cut].to_vec()
}

/// The trusted fields of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trusted {
    /// trusted_uid.
    pub uid: Option<u64>,
    /// trusted_pid.
    pub pid: Option<u64>,
    /// trusted_packet_sequence_id.
    pub sequence_id: Option<u64>,
}

/// The trusted fields of `packet`.
pub fn trusted(packet: &[u8]) -> Trusted {
    Trusted {
        uid: varint(packet, field::TRUSTED_UID),
        pid: varint(packet, field::TRUSTED_PID),
        sequence_id: varint(packet, field::SEQUENCE_ID),
    }
}

/// Track events of one sequence with interned names and track names
/// resolved, in order.
pub fn track_events(sequence: &[Vec<u8>]) -> Vec<Event> {
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut arg_names: HashMap<u64, String> = HashMap::new();
    let mut tracks: HashMap<u64, String> = HashMap::new();
    let mut events = Vec::new();
    for p in sequence {
        for f in fields(p) {
            match f.id {
                field::INTERNED_DATA => {
                    for i in fields(f.as_bytes().unwrap()) {
                        let table = match i.id {
                            2 => &mut names,
                            3 => &mut arg_names,
                            _ => continue,
                        };
                        let entry = i.as_bytes().unwrap();
                        let iid = varint(entry, 1).unwrap_or(0);
                        table.insert(iid, string(entry, 2).unwrap_or_default());
                    }
                }
                field::TRACK_DESCRIPTOR => {
                    let d = f.as_bytes().unwrap();
                    let name = string(d, 10).or_else(|| string(d, 2));
                    if let (Some(uuid), Some(name)) = (varint(d, 1), name) {
                        tracks.insert(uuid, name);
                    }
                }
                _ => {}
            }
        }
        if let Some(te) = bytes(p, field::TRACK_EVENT) {
            events.push(track_event(te, &names, &arg_names, &tracks));
        }
    }
    events
}

fn track_event(
    te: &[u8],
    names: &HashMap<u64, String>,
    arg_names: &HashMap<u64, String>,
    tracks: &HashMap<u64, String>,
) -> Event {
    let mut e = Event {
        kind: 0,
        name: String::new(),
        track: None,
        args: Vec::new(),
        counter: None,
        flows: Vec::new(),
        terminating_flows: Vec::new(),
    };
    for f in fields(te) {
        match (f.id, f.value) {
            (9, FieldValue::Varint(v)) => e.kind = v,
            (10, FieldValue::Varint(iid)) => {
                e.name = names.get(&iid).cloned().unwrap_or(format!("<iid {iid}>"))
            }
            (23, FieldValue::Bytes(b)) => e.name = String::from_utf8_lossy(b).into_owned(),
            (11, FieldValue::Varint(uuid)) => {
                e.track = Some(
                    tracks
                        .get(&uuid)
                        .cloned()
                        .unwrap_or(format!("<uuid {uuid}>")),
                )
            }
            (30, FieldValue::Varint(v)) => e.counter = Some(Arg::Int(v as i64)),
            (44, FieldValue::Fixed64(v)) => e.counter = Some(Arg::Double(f64::from_bits(v))),
            (47, FieldValue::Fixed64(v)) => e.flows.push(v),
            (48, FieldValue::Fixed64(v)) => e.terminating_flows.push(v),
            (4, FieldValue::Bytes(a)) => e.args.push(annotation(a, arg_names)),
            _ => {}
        }
    }
    e
}

fn annotation(a: &[u8], arg_names: &HashMap<u64, String>) -> (String, Arg) {
    let mut name = String::new();
    let mut value = Arg::Str(String::new());
    for f in fields(a) {
        match (f.id, f.value) {
            (1, FieldValue::Varint(iid)) => {
                name = arg_names
                    .get(&iid)
                    .cloned()
                    .unwrap_or(format!("<iid {iid}>"))
            }
            (10, FieldValue::Bytes(b)) => name = String::from_utf8_lossy(b).into_owned(),
            (2, FieldValue::Varint(v)) => value = Arg::Bool(v != 0),
            (3, FieldValue::Varint(v)) => value = Arg::Uint(v),
            (4, FieldValue::Varint(v)) => value = Arg::Int(v as i64),
            (5, FieldValue::Fixed64(v)) => value = Arg::Double(f64::from_bits(v)),
            (6, FieldValue::Bytes(b)) => value = Arg::Str(String::from_utf8_lossy(b).into_owned()),
            _ => {}
        }
    }
    (name, value)
}

/// The `for_testing` packets of one sequence, in order.
pub fn test_packets(sequence: &[Vec<u8>]) -> Vec<TestPacket> {
    sequence
        .iter()
        .filter_map(|p| bytes(p, field::FOR_TESTING))
        .map(|t| TestPacket {
            str: string(t, 1).unwrap_or_default(),
            seq_value: varint(t, 2).unwrap_or(0) as u32,
            counter: varint(t, 3),
            is_last: varint(t, 4).unwrap_or(0) != 0,
        })
        .collect()
}

/// What a service packet is: its payload field (trusted fields and
/// timestamps aside), with the event for `service_event` (69) packets,
/// e.g. `"clock_snapshot(6)"` or `"service_event(69).tracing_started(2)"`.
pub fn service_packet_kind(p: &[u8]) -> String {
    const NOT_PAYLOAD: [u32; 5] = [
        field::TRUSTED_UID,
        field::TIMESTAMP,
        field::SEQUENCE_ID,
        58,
        79,
    ];
    let main = fields(p)
        .into_iter()
        .find(|f| !NOT_PAYLOAD.contains(&f.id))
        .map(|f| f.id)
        .unwrap_or(0);
    let name = match main {
        6 => "clock_snapshot",
        33 => "trace_config",
        36 => "synchronization_marker",
        35 => "trace_stats",
        45 => "system_info",
        69 => "service_event",
        89 => "trace_uuid",
        _ => "other",
    };
    if main == 69 {
        let ev = bytes(p, 69).unwrap_or(&[]);
        let first = fields(ev).first().map(|f| f.id).unwrap_or(0);
        format!("{name}({main}).{first}")
    } else {
        format!("{name}({main})")
    }
}

/// The kinds of the packets on sequence 1, in order.
pub fn service_packet_kinds(trace: &[u8]) -> Vec<String> {
    packets(trace)
        .iter()
        .filter(|p| sequence_of(p) == 1)
        .map(|p| service_packet_kind(p))
        .collect()
}
