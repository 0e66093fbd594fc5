//! One read of a protobuf trace, prepared off the ordered stage: the bytes
//! as read, split into their top-level packets by the same splitter the
//! one-thread path runs (so its errors and its unfinished tail are the
//! same), each top-level packet walked (the loader's `PacketFields` walk)
//! and each top-level `compressed_packets` payload inflated ahead.
//!
//! What the pre-stage computes is a pure function of the bytes: the
//! split depends only on the splitter's state carried from read to read,
//! a walk only on the packet's bytes (found again by their address and
//! length, `Walked::fields`), and an inflation is `inflate(payload, MAX_INFLATED)`, which the ordered
//! stage takes instead of its own only where it would have made that very
//! call (`Ready::serves`). Memory: one batch holds at most its read, the
//! bytes of packets carried across reads, and what its packets inflated
//! to, which stops growing past [`PRE_INFLATE_PER_BATCH`] (the rest are
//! inflated in order, as the one-thread path does).

use crate::error::TraceError;
use crate::load::inflate::{InflateError, MAX_INFLATED, inflate};
use crate::load::tokenizer::TraceTokenizer;
use crate::packet_fields::{PacketFields, Payload};
use zerotrace_protos::protos::TracePacket;

/// Bytes a batch's packets may inflate to ahead of the ordered stage; past
/// it (a hostile or very compressible trace) the rest wait for their turn.
pub const PRE_INFLATE_PER_BATCH: usize = 32 << 20;

/// A top-level packet's `compressed_packets`, inflated ahead.
#[derive(Debug)]
pub struct Ready {
    /// Where the payload's bytes start (their address, while the batch
    /// holding them is alive) and how many there are.
    addr: usize,
    len: usize,
    /// `inflate(payload, MAX_INFLATED)`.
    result: Result<Vec<u8>, InflateError>,
}

impl Ready {
    /// Whether this is what `inflate(payload, max)` returns: the same
    /// bytes, and a cap `max` that clamps to [`MAX_INFLATED`] as well.
    pub fn serves(&self, payload: &[u8], max: u64) -> bool {
        payload.as_ptr() as usize == self.addr && payload.len() == self.len && max >= MAX_INFLATED
    }

    /// The inflated bytes, or why not.
    pub fn into_result(self) -> Result<Vec<u8>, InflateError> {
        self.result
    }

    /// A copy of the result (tests).
    #[cfg(test)]
    pub fn clone_result(&self) -> Result<Vec<u8>, InflateError> {
        self.result.clone()
    }
}

/// A top-level packet's walk (`PacketFields::walk`, the loader's own),
/// made ahead: its values, and its byte fields as ranges of the packet.
#[derive(Debug, Clone, Copy)]
pub struct Walked {
    /// The values, without the byte fields.
    values: PacketFields<'static>,
    interned_data: Option<(usize, usize)>,
    defaults: Option<(usize, usize)>,
    /// The payload's field number and range.
    payload: Option<(u32, usize, usize)>,
    /// The packet walked: its address and length.
    addr: usize,
    len: usize,
}

/// Where `part`, a slice of `whole`, lies in it.
fn range_in(whole: &[u8], part: &[u8]) -> (usize, usize) {
    let start = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    (start, start + part.len())
}

impl Walked {
    /// Walks `bytes` as the loader walks a top-level packet.
    fn of(bytes: &[u8]) -> Walked {
        let f = PacketFields::walk(bytes, crate::parser::registry::has_importer);
        Walked {
            values: PacketFields {
                timestamp: f.timestamp,
                timestamp_clock_id: f.timestamp_clock_id,
                trusted_packet_sequence_id: f.trusted_packet_sequence_id,
                trusted_pid: f.trusted_pid,
                interned_data: None,
                sequence_flags: f.sequence_flags,
                incremental_state_cleared: f.incremental_state_cleared,
                first_packet_on_sequence: f.first_packet_on_sequence,
                trace_packet_defaults: None,
                previous_packet_dropped: f.previous_packet_dropped,
                machine_id: f.machine_id,
                payload: None,
            },
            interned_data: f.interned_data.map(|b| range_in(bytes, b)),
            defaults: f.trace_packet_defaults.map(|b| range_in(bytes, b)),
            payload: f.payload.map(|p| {
                let (start, end) = range_in(bytes, p.bytes);
                (p.field, start, end)
            }),
            addr: bytes.as_ptr() as usize,
            len: bytes.len(),
        }
    }

    /// The walk of `bytes`, when they are the packet walked.
    pub fn fields<'a>(&self, bytes: &'a [u8]) -> Option<PacketFields<'a>> {
        if bytes.as_ptr() as usize != self.addr || bytes.len() != self.len {
            return None;
        }
        let part = |r: Option<(usize, usize)>| r.and_then(|(s, e)| bytes.get(s..e));
        let v = &self.values;
        Some(PacketFields {
            timestamp: v.timestamp,
            timestamp_clock_id: v.timestamp_clock_id,
            trusted_packet_sequence_id: v.trusted_packet_sequence_id,
            trusted_pid: v.trusted_pid,
            interned_data: part(self.interned_data),
            sequence_flags: v.sequence_flags,
            incremental_state_cleared: v.incremental_state_cleared,
            first_packet_on_sequence: v.first_packet_on_sequence,
            trace_packet_defaults: part(self.defaults),
            previous_packet_dropped: v.previous_packet_dropped,
            machine_id: v.machine_id,
            payload: self.payload.and_then(|(field, s, e)| {
                Some(Payload {
                    field,
                    bytes: bytes.get(s..e)?,
                })
            }),
        })
    }
}

/// What the pre-stage prepared for the top-level packet the loader reads.
#[derive(Debug, Default)]
pub struct Ahead {
    /// Its walk.
    pub walked: Option<Walked>,
    /// Its `compressed_packets`, inflated.
    pub ready: Option<Ready>,
}

/// Where a packet's bytes are in its batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// `data[start..end]`.
    Read,
    /// `carried[start..end]`: it began in an earlier read.
    Carried,
}

/// A top-level packet of a batch.
#[derive(Debug)]
pub struct Framed {
    place: Place,
    start: usize,
    end: usize,
    /// Where its bytes start in the trace (after its tag and length).
    pub offset: u64,
    /// What the pre-stage prepared for it.
    pub ahead: Ahead,
}

/// One read's bytes, split into packets.
#[derive(Debug, Default)]
pub struct Batch {
    /// The bytes as read: what the one-thread path pushes to the loader.
    pub data: Vec<u8>,
    /// The bytes of the packets the splitter held across reads.
    carried: Vec<u8>,
    /// The packets completed by this read, in order.
    pub packets: Vec<Framed>,
    /// The splitter's error, after the packets before it.
    pub error: Option<TraceError>,
}

impl Batch {
    /// Splits `data` with `tokenizer` (its state carried from the previous
    /// read) as `TraceTokenizer::push_at` would for the loader.
    pub fn frame(tokenizer: &mut TraceTokenizer, data: Vec<u8>) -> Batch {
        let mut batch = Batch::default();
        let base = data.as_ptr() as usize;
        let len = data.len();
        let carried = &mut batch.carried;
        let packets = &mut batch.packets;
        let res = tokenizer.push_at(&data, &mut |p, offset| {
            let at = p.as_ptr() as usize;
            let (place, start) = if at >= base && at + p.len() <= base + len {
                (Place::Read, at - base)
            } else {
                let start = carried.len();
                carried.extend_from_slice(p);
                (Place::Carried, start)
            };
            packets.push(Framed {
                place,
                start,
                end: start + p.len(),
                offset,
                ahead: Ahead::default(),
            });
        });
        batch.error = res.err();
        batch.data = data;
        batch
    }

    /// The bytes of `packet`, one of this batch's.
    pub fn bytes(&self, packet: &Framed) -> &[u8] {
        let from = match packet.place {
            Place::Read => &self.data,
            Place::Carried => &self.carried,
        };
        from.get(packet.start..packet.end).unwrap_or(&[])
    }

    /// Walks each packet as the loader will, and inflates the
    /// `compressed_packets` the walks find, until
    /// [`PRE_INFLATE_PER_BATCH`] bytes were inflated.
    pub fn prepare(&mut self) {
        let mut total = 0usize;
        let mut ahead = Vec::with_capacity(self.packets.len());
        for p in &self.packets {
            let bytes = self.bytes(p);
            let walked = Walked::of(bytes);
            let compressed = walked
                .fields(bytes)
                .and_then(|f| f.payload_of(TracePacket::FIELD_COMPRESSED_PACKETS));
            let ready = match compressed {
                Some(payload) if total < PRE_INFLATE_PER_BATCH => {
                    let result = inflate(payload, MAX_INFLATED);
                    total = total.saturating_add(result.as_ref().map_or(0, Vec::len));
                    Some(Ready {
                        addr: payload.as_ptr() as usize,
                        len: payload.len(),
                        result,
                    })
                }
                _ => None,
            };
            ahead.push(Ahead {
                walked: Some(walked),
                ready,
            });
        }
        for (p, a) in self.packets.iter_mut().zip(ahead) {
            p.ahead = a;
        }
    }
}
