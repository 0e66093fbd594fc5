//! One read of a protobuf trace, prepared off the ordered stage: the bytes
//! as read, split into their top-level packets by the same splitter the
//! one-thread path runs (so its errors and its unfinished tail are the
//! same), and each top-level `compressed_packets` payload inflated ahead.
//!
//! What the pre-stage computes is a pure function of the bytes: the
//! split depends only on the splitter's state carried from read to read,
//! and an inflation is `inflate(payload, MAX_INFLATED)`, which the ordered
//! stage takes instead of its own only where it would have made that very
//! call (`Ready::serves`). Memory: one batch holds at most its read, the
//! bytes of packets carried across reads, and what its packets inflated
//! to, which stops growing past [`PRE_INFLATE_PER_BATCH`] (the rest are
//! inflated in order, as the one-thread path does).

use crate::error::TraceError;
use crate::load::inflate::{InflateError, MAX_INFLATED, inflate};
use crate::load::tokenizer::TraceTokenizer;
use crate::packet_fields::PacketFields;
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
    /// Its `compressed_packets`, when it has some and they were inflated.
    pub ready: Option<Ready>,
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
                ready: None,
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

    /// Inflates the `compressed_packets` of its packets (found by the
    /// loader's own walk, so the same payload it will inflate), until
    /// [`PRE_INFLATE_PER_BATCH`] bytes were inflated.
    pub fn pre_inflate(&mut self) {
        let mut total = 0usize;
        let mut ready = Vec::new();
        for (i, p) in self.packets.iter().enumerate() {
            if total >= PRE_INFLATE_PER_BATCH {
                break;
            }
            let bytes = self.bytes(p);
            let fields = PacketFields::walk(bytes, crate::parser::registry::has_importer);
            let Some(payload) = fields.payload_of(TracePacket::FIELD_COMPRESSED_PACKETS) else {
                continue;
            };
            let result = inflate(payload, MAX_INFLATED);
            total = total.saturating_add(result.as_ref().map_or(0, Vec::len));
            ready.push((
                i,
                Ready {
                    addr: payload.as_ptr() as usize,
                    len: payload.len(),
                    result,
                },
            ));
        }
        for (i, r) in ready {
            if let Some(p) = self.packets.get_mut(i) {
                p.ready = Some(r);
            }
        }
    }
}
