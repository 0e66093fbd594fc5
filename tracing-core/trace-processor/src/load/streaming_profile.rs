//! `StreamingProfilePacket` (Chrome's sampler) at load time: its samples'
//! times are deltas on the sequence's legacy TrackEvent clock (µs on
//! CLOCK_MONOTONIC, the running value TrackEvents share), so they are
//! resolved in stream order, each sample becoming a packet of its own at
//! its own time, as upstream's tokenizer queues them. A time that leaves
//! the clock's range counts `streaming_profile_invalid_timestamp` and ends
//! the packet (the running value keeps what it reached); deltas without
//! samples count `stackprofile_parser_error`.

use protozero::Decoder;

use crate::clock::MachineClocks;
use crate::packet_fields;
use crate::sequence_state::SequenceState;
use crate::storage::stats::Stats;

use super::Loader;

/// CLOCK_MONOTONIC.
const MONOTONIC: u64 = 3;

/// One sample: its trace time and the packet (sequence id, one
/// `callstack_iid`, the process priority) the parser reads.
pub struct Sample {
    /// Trace time.
    pub ts: i64,
    /// A one-sample `StreamingProfilePacket` (the parser's payload).
    pub bytes: Vec<u8>,
}

/// Advances the running legacy clock by `delta_ns`; the new value in ns.
fn advance(seq: &mut SequenceState, delta_ns: i64) -> i64 {
    let next = seq
        .track_event_timestamp_ns
        .unwrap_or(0)
        .saturating_add(delta_ns);
    seq.track_event_timestamp_ns = Some(next);
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

fn sample_packet(callstack_iid: u64, priority: i32) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut s = w.root();
        s.append_uint64(1, callstack_iid);
        if priority != 0 {
            s.append_int32(3, priority);
        }
    }
    w.finish().unwrap_or_default()
}

/// The samples of one `StreamingProfilePacket` of a sequence.
pub fn tokenize(
    msg: &[u8],
    seq: &mut SequenceState,
    mut clocks: MachineClocks<'_>,
    stats: &mut Stats,
) -> Vec<Sample> {
    let mut out = Vec::new();
    let packet_ns = advance(seq, 0);
    if packet_ns < 0 {
        stats.log_tokenization("streaming_profile_invalid_timestamp", &[]);
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
            stats.log_tokenization("stackprofile_parser_error", &[]);
            break;
        };
        let delta_ns = delta_us.saturating_mul(1000);
        if advance(seq, delta_ns) < 0 {
            stats.log_tokenization("streaming_profile_invalid_timestamp", &[]);
            return out;
        }
        sample_ts = sample_ts.saturating_add(delta_ns);
        out.push(Sample {
            ts: sample_ts,
            bytes: sample_packet(*iid, priority),
        });
    }
    for delta_us in deltas.iter().skip(iids.len()) {
        if advance(seq, delta_us.saturating_mul(1000)) < 0 {
            stats.log_tokenization("streaming_profile_invalid_timestamp", &[]);
            return out;
        }
    }
    out
}

impl Loader {
    /// Queues each sample of a `StreamingProfilePacket` at its own time.
    pub(super) fn queue_streaming_profile(&mut self, sp: &[u8], seq: u32, gen_idx: u32) {
        let state = self.sequences.entry(seq).or_default();
        let samples = tokenize(
            sp,
            state,
            MachineClocks::new(&mut self.parser.clocks, self.machine),
            &mut self.parser.storage.stats,
        );
        for s in samples {
            self.queue_split(
                &s.bytes,
                s.ts,
                gen_idx,
                packet_fields::STREAMING_PROFILE_PACKET,
            );
        }
    }
}
