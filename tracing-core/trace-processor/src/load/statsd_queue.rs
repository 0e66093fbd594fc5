//! statsd atoms (`TracePacket.statsd_atom`) queued atom by atom: a packet
//! holds many atoms, each with its own time in the parallel
//! `timestamp_nanos` list (already on the trace's boot clock, as upstream
//! takes it), which upstream sorts one by one; an atom the list has no time
//! for is placed at its packet's time instead. Each atom becomes a packet
//! record of its own for `parser/statsd_atom.rs`: a `StatsdAtom` holding
//! that one atom and, when it had one, its time (the parser counts
//! `atom_timestamp_missing` for an atom without).

use protozero::varint::encode_varint;
use protozero::{Decoder, FieldValue};

use super::Loader;
use crate::packet_fields::{PacketFields, Payload};

/// `TracePacket.statsd_atom`.
pub const STATSD_ATOM: u32 = 84;
/// `StatsdAtom.atom`.
const ATOM: u32 = 1;
/// `StatsdAtom.timestamp_nanos`.
const TIMESTAMP_NANOS: u32 = 2;

/// A `StatsdAtom` of one atom and, if given, its time.
fn single_atom(atom: &[u8], ts: Option<i64>) -> Vec<u8> {
    let mut out = Vec::with_capacity(atom.len() + 24);
    let mut buf = [0u8; 10];
    out.push((ATOM << 3 | 2) as u8);
    let n = encode_varint(atom.len() as u64, &mut buf);
    out.extend_from_slice(&buf[..n]);
    out.extend_from_slice(atom);
    if let Some(ts) = ts {
        out.push((TIMESTAMP_NANOS << 3) as u8);
        let n = encode_varint(ts as u64, &mut buf);
        out.extend_from_slice(&buf[..n]);
    }
    out
}

impl Loader {
    /// Queues each atom of a `statsd_atom` packet at its own time (an atom
    /// without one at the packet's).
    pub(super) fn split_statsd_atoms(
        &mut self,
        payload: &[u8],
        pkt: &PacketFields<'_>,
        seq: u32,
        has_seq: bool,
        gen_idx: u32,
    ) {
        let fields = || Decoder::new(payload).map_while(Result::ok);
        let mut times = fields().filter_map(|f| match (f.id, f.value) {
            (TIMESTAMP_NANOS, FieldValue::Varint(v)) => Some(v as i64),
            _ => None,
        });
        for f in fields() {
            let (ATOM, FieldValue::Bytes(atom)) = (f.id, f.value) else {
                continue;
            };
            match times.next() {
                Some(ts) => self.queue_atom(&single_atom(atom, Some(ts)), ts, gen_idx),
                None => {
                    let bytes = single_atom(atom, None);
                    let forged = Payload {
                        field: STATSD_ATOM,
                        bytes: &bytes,
                    };
                    self.timestamp_and_queue(forged, pkt, seq, has_seq, gen_idx);
                }
            }
        }
    }

    fn queue_atom(&mut self, bytes: &[u8], ts: i64, gen_idx: u32) {
        self.queue_split(bytes, ts, gen_idx, STATSD_ATOM);
    }
}
