//! `StreamingProfilePacket` (Chrome's sampler) at load time: its samples'
//! times are deltas on the sequence's legacy TrackEvent clock (µs on
//! CLOCK_MONOTONIC, the running value TrackEvents share), so they are
//! resolved in stream order, each sample becoming a packet of its own at
//! its own time, as upstream's tokenizer queues them. A time that leaves
//! the clock's range counts `streaming_profile_invalid_timestamp` and ends
//! the packet (the running value keeps what it reached); deltas without
//! samples count `stackprofile_parser_error`.

use protozero::Decoder;
use zerotrace_protos::protos::TracePacket;

use super::clock::ClockTracker;
use super::sequence::SequenceState;
use crate::storage::stats::Stats;

/// `TracePacket.streaming_profile_packet`.
pub const FIELD: u32 = 54;
/// CLOCK_MONOTONIC.
const MONOTONIC: u64 = 3;

/// One sample: its trace time and the packet (sequence id, one
/// `callstack_iid`, the process priority) the parser reads.
pub struct Sample {
    /// Trace time.
    pub ts: i64,
    /// A `TracePacket` with a one-sample `StreamingProfilePacket`.
    pub bytes: Vec<u8>,
}

/// Advances the running legacy clock by `delta_ns`; the new value in ns.
fn advance(seq: &mut SequenceState, delta_ns: i64) -> i64 {
    let now = seq
        .track_event_timestamp_us
        .unwrap_or(0)
        .saturating_mul(1000);
    let next = now.saturating_add(delta_ns);
    seq.track_event_timestamp_us = Some(next / 1000);
    next
}

fn values(msg: &[u8], id: u32) -> Vec<u64> {
    let mut out = Vec::new();
    let mut d = Decoder::new(msg);
    while let Some(Ok(f)) = d.read_field() {
        if f.id != id {
            continue;
        }
        if let Ok(v) = f.as_u64() {
            out.push(v);
        } else if let Ok(mut rest) = f.as_bytes() {
            while !rest.is_empty() {
                match protozero::varint::decode_varint(rest) {
                    Ok((v, n)) if n > 0 => {
                        out.push(v);
                        rest = rest.get(n..).unwrap_or(&[]);
                    }
                    _ => break,
                }
            }
        }
    }
    out
}

fn sample_packet(seq_id: u32, callstack_iid: u64, priority: i32) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        p.set_trusted_packet_sequence_id(seq_id);
        let mut s = p.message().begin_nested(FIELD);
        s.append_uint64(1, callstack_iid);
        if priority != 0 {
            s.append_int32(3, priority);
        }
    }
    w.finish().unwrap_or_default()
}

/// The samples of one `StreamingProfilePacket` of sequence `seq_id`.
pub fn tokenize(
    msg: &[u8],
    seq_id: u32,
    seq: &mut SequenceState,
    clocks: &mut ClockTracker,
    stats: &mut Stats,
) -> Vec<Sample> {
    let mut out = Vec::new();
    let packet_ns = advance(seq, 0);
    if packet_ns < 0 {
        stats.incr("streaming_profile_invalid_timestamp");
        return out;
    }
    let mut sample_ts = clocks.trace_time(MONOTONIC, packet_ns).unwrap_or(packet_ns);
    let priority = Decoder::new(msg)
        .find_last(3)
        .and_then(|f| f.as_i64().ok())
        .map_or(0, |v| v as i32);
    let iids = values(msg, 1);
    let deltas: Vec<i64> = values(msg, 2).into_iter().map(|v| v as i64).collect();
    for (k, iid) in iids.iter().enumerate() {
        let Some(delta_us) = deltas.get(k) else {
            stats.incr("stackprofile_parser_error");
            break;
        };
        let delta_ns = delta_us.saturating_mul(1000);
        if advance(seq, delta_ns) < 0 {
            stats.incr("streaming_profile_invalid_timestamp");
            return out;
        }
        sample_ts = sample_ts.saturating_add(delta_ns);
        out.push(Sample {
            ts: sample_ts,
            bytes: sample_packet(seq_id, *iid, priority),
        });
    }
    for delta_us in deltas.iter().skip(iids.len()) {
        if advance(seq, delta_us.saturating_mul(1000)) < 0 {
            stats.incr("streaming_profile_invalid_timestamp");
            return out;
        }
    }
    out
}
