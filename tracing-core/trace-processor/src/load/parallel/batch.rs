//! One read of a protobuf trace, prepared off the ordered stage: the bytes
//! as read, split into their top-level packets by the same splitter the
//! one-thread path runs (so its errors and its unfinished tail are the
//! same), each top-level packet walked (the loader's `PacketFields` walk),
//! each ftrace bundle split into its events (`compact_sched` expanded) and
//! each top-level `compressed_packets` payload inflated ahead.
//!
//! What the pre-stage computes is a pure function of the bytes: the
//! split depends only on the splitter's state carried from read to read,
//! a walk or a bundle's split only on the packet's bytes (found again by
//! their address and length, `Walked::fields`, `SplitBundle::events`), and
//! an inflation is `inflate(payload, MAX_INFLATED)`, which the ordered
//! stage takes instead of its own only where it would have made that very
//! call (`Ready::serves`). Memory: one batch holds at most its read, the
//! bytes of packets carried across reads, and what its packets inflated
//! to, which stops growing past [`PRE_INFLATE_PER_BATCH`] (the rest are
//! inflated in order, as the one-thread path does).

use crate::error::TraceError;
use crate::load::ftrace_bundle::{self, BundleEvent, FtraceItem};
use crate::load::inflate::{InflateError, MAX_INFLATED, inflate};
use crate::load::tokenizer::TraceTokenizer;
use crate::packet_fields::{self, PacketFields, Payload};
use crate::packet_view::InlineSched;
use crate::storage::stats::Stats;
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

/// A range of a packet's bytes (a packet is at most 256 MiB); `NO_SPAN`
/// for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: u32,
    end: u32,
}

/// No range.
const NO_SPAN: Span = Span {
    start: u32::MAX,
    end: 0,
};

/// Where `part`, a slice of `whole`, lies in it.
fn range_in(whole: &[u8], part: &[u8]) -> (usize, usize) {
    let start = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    (start, start + part.len())
}

/// `part`'s range in `whole`, or `NO_SPAN` for none (or past u32).
fn span_of(whole: &[u8], part: Option<&[u8]>) -> Span {
    let Some(part) = part else { return NO_SPAN };
    let (start, end) = range_in(whole, part);
    match (u32::try_from(start), u32::try_from(end)) {
        (Ok(start), Ok(end)) => Span { start, end },
        _ => NO_SPAN,
    }
}

/// The bytes of `span` in `whole`, if any.
fn part_of(whole: &[u8], span: Span) -> Option<&[u8]> {
    if span == NO_SPAN {
        return None;
    }
    whole.get(span.start as usize..span.end as usize)
}

/// A top-level packet's walk (`PacketFields::walk`, the loader's own),
/// made ahead: its values, and its byte fields as ranges of the packet
/// (about 100 bytes a packet).
#[derive(Debug, Clone, Copy)]
pub struct Walked {
    timestamp: Option<u64>,
    timestamp_clock_id: Option<u32>,
    trusted_packet_sequence_id: Option<u32>,
    trusted_pid: Option<i32>,
    sequence_flags: Option<u32>,
    machine_id: Option<u32>,
    incremental_state_cleared: bool,
    first_packet_on_sequence: bool,
    previous_packet_dropped: u32,
    interned_data: Span,
    defaults: Span,
    payload_field: u32,
    payload: Span,
    /// The packet walked: its address and length.
    addr: usize,
    len: usize,
}

impl Walked {
    /// Walks `bytes` as the loader walks a top-level packet.
    fn of(bytes: &[u8]) -> Walked {
        let f = PacketFields::walk(bytes, crate::parser::registry::has_importer);
        Walked {
            timestamp: f.timestamp,
            timestamp_clock_id: f.timestamp_clock_id,
            trusted_packet_sequence_id: f.trusted_packet_sequence_id,
            trusted_pid: f.trusted_pid,
            sequence_flags: f.sequence_flags,
            machine_id: f.machine_id,
            incremental_state_cleared: f.incremental_state_cleared,
            first_packet_on_sequence: f.first_packet_on_sequence,
            previous_packet_dropped: f.previous_packet_dropped,
            interned_data: span_of(bytes, f.interned_data),
            defaults: span_of(bytes, f.trace_packet_defaults),
            payload_field: f.payload.map_or(0, |p| p.field),
            payload: span_of(bytes, f.payload.map(|p| p.bytes)),
            addr: bytes.as_ptr() as usize,
            len: bytes.len(),
        }
    }

    /// The walk of `bytes`, when they are the packet walked.
    pub fn fields<'a>(&self, bytes: &'a [u8]) -> Option<PacketFields<'a>> {
        if bytes.as_ptr() as usize != self.addr || bytes.len() != self.len {
            return None;
        }
        Some(PacketFields {
            timestamp: self.timestamp,
            timestamp_clock_id: self.timestamp_clock_id,
            trusted_packet_sequence_id: self.trusted_packet_sequence_id,
            trusted_pid: self.trusted_pid,
            interned_data: part_of(bytes, self.interned_data),
            sequence_flags: self.sequence_flags,
            incremental_state_cleared: self.incremental_state_cleared,
            first_packet_on_sequence: self.first_packet_on_sequence,
            trace_packet_defaults: part_of(bytes, self.defaults),
            previous_packet_dropped: self.previous_packet_dropped,
            machine_id: self.machine_id,
            payload: part_of(bytes, self.payload).map(|b| Payload {
                field: self.payload_field,
                bytes: b,
            }),
        })
    }
}

/// An event of an ftrace bundle split ahead, its bytes as a range of the
/// bundle.
#[derive(Debug, Clone)]
enum SplitItem {
    Event(usize, usize),
    Inline(InlineSched),
}

/// An ftrace bundle split into its events ahead (`ftrace_bundle::split`,
/// `compact_sched` expanded), when the split counted nothing (a bundle
/// with errors or lost events is split again in order, where its counts
/// land).
#[derive(Debug)]
pub struct SplitBundle {
    /// The bundle's address and length.
    addr: usize,
    len: usize,
    /// (time, CPU, event), in the split's order.
    events: Vec<(i64, u32, SplitItem)>,
}

impl SplitBundle {
    /// Splits `bundle`, unless the split counts something.
    fn of(bundle: &[u8]) -> Option<SplitBundle> {
        let mut stats = Stats::default();
        let split = ftrace_bundle::split(bundle, &mut stats);
        // The split only adds to counters and sets indexed ones: it
        // counted nothing when every counter is still 0.
        if stats
            .rows()
            .iter()
            .any(|&(_, idx, v)| idx.is_some() || v != 0)
        {
            return None;
        }
        let events = split
            .into_iter()
            .map(|e| {
                let item = match e.item {
                    FtraceItem::Event(b) => {
                        let (start, end) = range_in(bundle, b);
                        SplitItem::Event(start, end)
                    }
                    FtraceItem::Inline(i) => SplitItem::Inline(i),
                };
                (e.raw_ts, e.cpu, item)
            })
            .collect();
        Some(SplitBundle {
            addr: bundle.as_ptr() as usize,
            len: bundle.len(),
            events,
        })
    }

    /// The events of `bundle`, when it is the bundle split.
    pub fn events(self, bundle: &[u8]) -> Option<Vec<BundleEvent<'_>>> {
        if bundle.as_ptr() as usize != self.addr || bundle.len() != self.len {
            return None;
        }
        self.events
            .into_iter()
            .map(|(raw_ts, cpu, item)| {
                let item = match item {
                    SplitItem::Event(start, end) => FtraceItem::Event(bundle.get(start..end)?),
                    SplitItem::Inline(i) => FtraceItem::Inline(i),
                };
                Some(BundleEvent { raw_ts, cpu, item })
            })
            .collect()
    }
}

/// What few packets carry beside their walk (kept out of line).
#[derive(Debug, Default)]
struct Rare {
    ready: Option<Ready>,
    bundle: Option<SplitBundle>,
}

/// What the pre-stage prepared for the top-level packet the loader reads.
#[derive(Debug, Default)]
pub struct Ahead {
    walked: Option<Walked>,
    rare: Option<Box<Rare>>,
}

impl Ahead {
    /// Its walk.
    pub fn take_walked(&mut self) -> Option<Walked> {
        self.walked.take()
    }

    /// Its `compressed_packets`, inflated.
    pub fn take_ready(&mut self) -> Option<Ready> {
        self.rare.as_mut().and_then(|r| r.ready.take())
    }

    /// Its ftrace bundle, split.
    pub fn take_bundle(&mut self) -> Option<SplitBundle> {
        self.rare.as_mut().and_then(|r| r.bundle.take())
    }

    /// Whether its walk was made (tests).
    #[cfg(test)]
    pub fn walked(&self) -> bool {
        self.walked.is_some()
    }

    /// Its inflation, if made (tests).
    #[cfg(test)]
    pub fn ready(&self) -> Option<&Ready> {
        self.rare.as_ref().and_then(|r| r.ready.as_ref())
    }

    /// Whether its bundle was split (tests).
    #[cfg(test)]
    pub fn split(&self) -> bool {
        self.rare.as_ref().is_some_and(|r| r.bundle.is_some())
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
    /// What the pre-stage prepared for it.
    pub ahead: Ahead,
}

/// One read's bytes, split into packets. Its buffers go back to the
/// framer once the loader took it, to hold a later read.
#[derive(Debug, Default)]
pub struct Batch {
    /// The read's buffer: `buf[..len]` was read.
    buf: Vec<u8>,
    len: usize,
    /// The bytes of the packets the splitter held across reads.
    carried: Vec<u8>,
    /// The packets completed by this read, in order.
    pub packets: Vec<Framed>,
    /// The splitter's error, after the packets before it.
    pub error: Option<TraceError>,
}

impl Batch {
    /// A batch of `bytes` as read, not split.
    pub fn of_bytes(bytes: Vec<u8>) -> Batch {
        Batch {
            len: bytes.len(),
            buf: bytes,
            ..Batch::default()
        }
    }

    /// The bytes read: what the one-thread path pushes to the loader.
    pub fn data(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Reads at most `max` bytes from `r` into this batch's buffer (what
    /// was in the batch before is dropped); how many were read.
    pub fn read_from(&mut self, r: &mut impl std::io::Read, max: usize) -> std::io::Result<usize> {
        self.packets.clear();
        self.carried.clear();
        self.error = None;
        self.len = 0;
        if self.buf.len() < max {
            self.buf.resize(max, 0);
        }
        let n = r.read(&mut self.buf[..max])?;
        self.len = n;
        Ok(n)
    }

    /// Splits the bytes read with `tokenizer` (its state carried from the
    /// previous read) as `TraceTokenizer::push_at` would for the loader.
    pub fn frame(&mut self, tokenizer: &mut TraceTokenizer) {
        let data = self.buf.get(..self.len).unwrap_or(&[]);
        let base = data.as_ptr() as usize;
        let len = data.len();
        let carried = &mut self.carried;
        let packets = &mut self.packets;
        let res = tokenizer.push_at(data, &mut |p, offset| {
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
        self.error = res.err();
    }

    /// The bytes of `packet`, one of this batch's.
    pub fn bytes(&self, packet: &Framed) -> &[u8] {
        let from = match packet.place {
            Place::Read => self.data(),
            Place::Carried => &self.carried,
        };
        from.get(packet.start..packet.end).unwrap_or(&[])
    }

    /// Walks each packet as the loader will, splits the ftrace bundles and
    /// inflates the `compressed_packets` the walks find, the latter until
    /// [`PRE_INFLATE_PER_BATCH`] bytes were inflated.
    pub fn prepare(&mut self) {
        let mut total = 0usize;
        for i in 0..self.packets.len() {
            let bytes = self.bytes(&self.packets[i]);
            let walked = Walked::of(bytes);
            let fields = walked.fields(bytes);
            let payload = |field| fields.and_then(|f| f.payload_of(field));
            let ready = match payload(TracePacket::FIELD_COMPRESSED_PACKETS) {
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
            let bundle = payload(packet_fields::FTRACE_EVENTS).and_then(SplitBundle::of);
            let rare =
                (ready.is_some() || bundle.is_some()).then(|| Box::new(Rare { ready, bundle }));
            if let Some(p) = self.packets.get_mut(i) {
                p.ahead = Ahead {
                    walked: Some(walked),
                    rare,
                };
            }
        }
    }
}
