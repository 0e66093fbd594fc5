//! What the loading core hands the parsers as packets leave its sort
//! window: each packet with its trace time, sequence generation and where
//! its bytes are, and the side tables it points into. A leaf below the
//! loader and the parsers (the loader fills it, the parsers read it), so
//! the parsers import nothing of the loader.
//!
//! A queued [`Packet`] is small (40 bytes): its bytes wait in the
//! [`PacketArena`], and what only some kinds carry (a TrackEvent's thread
//! time and counter values; a `compact_sched` event) waits in side tables
//! that `extra` indexes. The parsers see each packet as a [`PacketView`].
//! A TrackEvent's bytes are only the fields the loader did not read: what
//! it read travels as [`TrackEventFacts`], written as a header in front of
//! those bytes (one or two flags bytes and up to six varints, 1 to 52 bytes, not a
//! record beside each of millions of waiting events), and
//! [`TrackEventTimes`], so the parser does not read them again; the header
//! also carries what the walk decoded for the parser ([`Decoded`]: the
//! name's and the one category's interned ids), so that no field is
//! decoded twice. The bytes end with the debug annotations, then the few
//! fields that readers beyond the parser's decoder take ([`FieldKinds`]),
//! so that each reader walks only its part ([`TrackEventParts`]).

use slab::Slab;

use crate::arena::{ByteRange, PacketArena};

/// `Packet::extra` when the packet has no side-table entry.
pub const NO_EXTRA: u32 = u32::MAX;

/// What a queued packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// A trace packet of any other kind.
    Packet,
    /// A TrackEvent packet (its facts in front of its bytes, its times in
    /// `extra`'s entry, if any).
    TrackEvent,
    /// One `FtraceEvent` of a bundle (`cpu` is its CPU).
    Ftrace,
    /// One event of a bundle's `compact_sched` (`extra` indexes it).
    InlineSched,
}

/// A packet read and waiting in the sort window.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    /// Time on the trace clock.
    pub ts: i64,
    /// Where the packet's bytes are (an `FtraceEvent`'s for ftrace).
    pub bytes: ByteRange,
    /// Index of its sequence's generation.
    pub generation: u32,
    /// The machine the packet came from (0: the host).
    pub machine: u32,
    /// An ftrace event's CPU.
    pub cpu: u32,
    /// Index into the side table of its kind, or [`NO_EXTRA`]; for a
    /// plain packet, the index of the trace packet it came from.
    pub extra: u32,
    /// What it is.
    pub kind: PacketKind,
    /// For a plain packet or a TrackEvent: the `TracePacket` field number
    /// of its payload (its bytes are the payload's); 0 for none.
    pub field: u16,
}

/// A packet as the parsers see it.
#[derive(Debug)]
pub struct PacketView<'a> {
    /// Time on the trace clock.
    pub ts: i64,
    /// The packet's payload's bytes (an `FtraceEvent`'s for an ftrace
    /// event; empty for a `compact_sched` event).
    pub bytes: &'a [u8],
    /// The `TracePacket` field number of the payload (0 for an ftrace
    /// event).
    pub field: u32,
    /// Index of its sequence's generation.
    pub generation: u32,
    /// For a TrackEvent: what the loader read of it.
    pub track_event: Option<TrackEventView<'a>>,
    /// Index of the trace packet it came from (`compressed_packets`
    /// expanded), as [`crate::packets::packets`] lists them; 0 for a
    /// TrackEvent or an ftrace event, whose parsers do not ask.
    pub index: u64,
    /// For one event of an ftrace bundle: its CPU.
    pub ftrace_cpu: Option<u32>,
    /// The machine the packet came from (0: the host).
    pub machine: u32,
    /// For an event of a bundle's `compact_sched`.
    pub inline_sched: Option<&'a InlineSched>,
}

/// What only some kinds of packet carry, waiting beside them in the sort
/// window: a slot is taken when a packet is queued and given back when it
/// leaves the window, so the tables hold about what the window holds.
#[derive(Debug, Default)]
pub struct SideTables {
    /// TrackEvents' times beyond their timestamp, by their packet's
    /// `extra` (none for most events).
    pub track_event_times: Slab<WaitingTimes>,
    /// `compact_sched` events, by their packet's `extra`.
    pub inline_sched: Slab<InlineSched>,
}

impl SideTables {
    /// Gives back the slots of `packet`, which left the window.
    pub fn release(&mut self, packet: &Packet) {
        match packet.kind {
            PacketKind::TrackEvent => {
                if packet.extra != NO_EXTRA {
                    self.track_event_times.try_remove(packet.extra as usize);
                }
            }
            PacketKind::InlineSched => {
                self.inline_sched.try_remove(packet.extra as usize);
            }
            PacketKind::Packet | PacketKind::Ftrace => {}
        }
    }
}

/// The parts of the loader a packet's view borrows from.
pub struct PacketSource<'a> {
    /// The packets' bytes.
    pub arena: &'a PacketArena,
    /// What the packets carry beside their bytes.
    pub side: &'a SideTables,
}

impl<'a> PacketSource<'a> {
    /// Calls `f` with the view of `packet` (a TrackEvent without thread
    /// time or counter values is seen with empty times).
    pub fn with_view<R>(&self, packet: &Packet, f: impl FnOnce(&PacketView<'_>) -> R) -> R {
        let mut bytes = self.arena.get(packet.bytes);
        // A counter's value alone waits as a number; its times are made
        // here for the view.
        let mut counter_only = TrackEventTimes::default();
        let track_event = match packet.kind {
            PacketKind::TrackEvent => {
                let (facts, rest) = TrackEventFacts::read(bytes);
                bytes = rest;
                let times = match self.side.track_event_times.get(packet.extra as usize) {
                    Some(WaitingTimes::Counter(v)) => {
                        counter_only.counter_value = Some(*v);
                        &counter_only
                    }
                    Some(WaitingTimes::Other(t)) => &**t,
                    None => &NO_TIMES,
                };
                Some(TrackEventView { facts, times })
            }
            _ => None,
        };
        let inline_sched = match packet.kind {
            PacketKind::InlineSched => self.side.inline_sched.get(packet.extra as usize),
            _ => None,
        };
        let ftrace_cpu = matches!(packet.kind, PacketKind::Ftrace | PacketKind::InlineSched)
            .then_some(packet.cpu);
        let index = match packet.kind {
            PacketKind::Packet if packet.extra != NO_EXTRA => u64::from(packet.extra),
            _ => 0,
        };
        f(&PacketView {
            ts: packet.ts,
            index,
            bytes,
            field: u32::from(packet.field),
            generation: packet.generation,
            track_event,
            ftrace_cpu,
            machine: packet.machine,
            inline_sched,
        })
    }
}

/// A scheduler event decoded from `compact_sched`.
#[derive(Debug, Clone, PartialEq)]
pub enum InlineSched {
    /// A sched_switch without its `prev_*` fields (the CPU's previous
    /// switch names the task leaving).
    Switch {
        /// The leaving task's state bits.
        prev_state: i64,
        /// The task switched in.
        next_pid: i64,
        /// Its priority.
        next_prio: i32,
        /// Its comm.
        next_comm: String,
    },
    /// A sched_waking (the task running on the CPU is the waker).
    Waking {
        /// The woken task.
        pid: i64,
        /// The CPU it will run on.
        target_cpu: u32,
        /// Its priority.
        prio: i32,
        /// Its comm.
        comm: String,
        /// The kernel's common_flags, when recorded.
        common_flags: Option<u32>,
    },
}

/// A TrackEvent's times as they wait in the side table. Most carry a
/// counter's value alone (a `TYPE_COUNTER` event), and in a trace read to
/// its end every one waits at once: 16 bytes a slot instead of the whole
/// 72-byte [`TrackEventTimes`] (600 K counter events of a 226 MB
/// recording held a 72 MiB slab until the load's end).
#[derive(Debug, Clone)]
pub enum WaitingTimes {
    /// Only a counter's value.
    Counter(f64),
    /// Anything else.
    Other(Box<TrackEventTimes>),
}

impl WaitingTimes {
    /// How `times` waits.
    pub fn of(times: TrackEventTimes) -> WaitingTimes {
        match times {
            TrackEventTimes {
                thread_ts: None,
                thread_instruction_count: None,
                counter_value: Some(v),
                ref extra_counters,
            } if extra_counters.is_empty() => WaitingTimes::Counter(v),
            t => WaitingTimes::Other(Box::new(t)),
        }
    }
}

/// The times of a TrackEvent that has none beyond its timestamp.
static NO_TIMES: TrackEventTimes = TrackEventTimes {
    thread_ts: None,
    thread_instruction_count: None,
    counter_value: None,
    extra_counters: Vec::new(),
};

/// The fields of a TrackEvent the loader read in its walk, which travel
/// in front of the bytes it left ([`TrackEventFacts::encode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrackEventFacts {
    track_uuid: u64,
    ty: i32,
    flags: u8,
    /// The length of the bytes' last part: the fields of the kinds in
    /// `flags` (0 when there are none).
    extra_len: u32,
    /// What the walk decoded for the parser ([`Decoded`]'s flags).
    decoded: u8,
    /// The name's interned id (`name_iid`, the name oneof's last member).
    name_iid: u64,
    /// The one category's interned id, when the event has only it.
    category_iid: u64,
    /// The length of the debug annotations' part, before the last part.
    annotations_len: u32,
}

/// What a TrackEvent's walk decoded for the parser, so that the parser
/// reads it from the facts instead of decoding the fields again: the
/// name's and the category's interned ids, and where the debug
/// annotations are (a part of their own, right before the last part).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Decoded {
    /// `name_iid`, when it is the name oneof's last member (the fields
    /// left then hold no `name`).
    pub name_iid: Option<u64>,
    /// The event's one category iid, when it has exactly one occurrence
    /// of `category_iids`, a varint, and no `categories` (the fields left
    /// then hold neither field).
    pub category_iid: Option<u64>,
    /// The length of the debug annotations' occurrences (as messages),
    /// which the fields left hold in a part of their own.
    pub annotations_len: u32,
}

/// A TrackEvent's bytes behind its facts, in the three parts the walk
/// wrote them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackEventParts<'b> {
    /// The fields nobody decoded yet, for the parser's decoder.
    pub fields: &'b [u8],
    /// The debug annotations (each a `debug_annotations` field).
    pub annotations: &'b [u8],
    /// The fields of [`TrackEventFacts::fields`]'s kinds.
    pub last: &'b [u8],
}

/// `TrackEventFacts::flags`: `track_uuid` is present.
const HAS_TRACK_UUID: u8 = 1;
/// `type` is present (its last number in `ty`).
const HAS_TYPE_RAW: u8 = 2;
/// An occurrence of `type` has a number the enum names.
const HAS_TYPE: u8 = 4;
/// The bytes left hold a field the parser's typed reader takes
/// ([`FieldKinds::TYPED`]).
const HAS_TYPED: u8 = 8;
/// They hold a field reflected into args ([`FieldKinds::REFLECTED`]).
const HAS_REFLECTED: u8 = 16;
/// They hold an extension field ([`FieldKinds::EXTENSION`]).
const HAS_EXTENSION: u8 = 32;
/// A second flags byte follows: what the walk decoded ([`Decoded`]).
const HAS_DECODED: u8 = 64;

/// The second flags byte: `name_iid` is in the header.
const DECODED_NAME_IID: u8 = 1;
/// The one category iid is in the header.
const DECODED_CATEGORY_IID: u8 = 2;
/// The debug annotations' part has a length in the header.
const DECODED_ANNOTATIONS: u8 = 4;

/// Which kinds of field the bytes a TrackEvent's walk left hold, as the
/// walk saw them. The walk puts the fields of these kinds last, after the
/// fields the parser's decoder reads (each field's occurrences keep their
/// order): each reader that looks for only these walks that last part, and
/// skips it when it holds none of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FieldKinds(u8);

impl FieldKinds {
    /// None of the kinds below.
    pub const NONE: FieldKinds = FieldKinds(0);
    /// A field the typed reader (`parser/track_event_args.rs`) takes.
    pub const TYPED: FieldKinds = FieldKinds(HAS_TYPED);
    /// A field reflected into args (`parser/track_event_reflect.rs`).
    pub const REFLECTED: FieldKinds = FieldKinds(HAS_REFLECTED);
    /// A field of TrackEvent's extension range (1000 and up).
    pub const EXTENSION: FieldKinds = FieldKinds(HAS_EXTENSION);

    /// Both sets' kinds.
    pub const fn union(self, other: FieldKinds) -> FieldKinds {
        FieldKinds(self.0 | other.0)
    }

    /// Whether it has every kind of `other`.
    pub const fn contains(self, other: FieldKinds) -> bool {
        self.0 & other.0 == other.0
    }
}
/// The flags [`FieldKinds`] occupies.
const FIELD_KINDS: u8 = HAS_TYPED | HAS_REFLECTED | HAS_EXTENSION;

impl TrackEventFacts {
    /// Facts of an event's `track_uuid`, `type` (its last number) and
    /// whether the enum names one of its numbers (protoc's `has_type`).
    pub fn new(track_uuid: Option<u64>, ty: Option<i32>, has_type: bool) -> Self {
        let mut flags = 0;
        if track_uuid.is_some() {
            flags |= HAS_TRACK_UUID;
        }
        if ty.is_some() {
            flags |= HAS_TYPE_RAW;
        }
        if has_type {
            flags |= HAS_TYPE;
        }
        TrackEventFacts {
            track_uuid: track_uuid.unwrap_or(0),
            ty: ty.unwrap_or(0),
            flags,
            ..TrackEventFacts::default()
        }
    }

    /// The facts, with what the walk decoded for the parser.
    pub fn with_decoded(mut self, decoded: Decoded) -> Self {
        let mut d = 0;
        if let Some(iid) = decoded.name_iid {
            d |= DECODED_NAME_IID;
            self.name_iid = iid;
        }
        if let Some(iid) = decoded.category_iid {
            d |= DECODED_CATEGORY_IID;
            self.category_iid = iid;
        }
        if decoded.annotations_len > 0 {
            d |= DECODED_ANNOTATIONS;
        }
        self.annotations_len = decoded.annotations_len;
        self.decoded = d;
        if d == 0 {
            self.flags &= !HAS_DECODED;
        } else {
            self.flags |= HAS_DECODED;
        }
        self
    }

    /// What the walk decoded for the parser ([`Self::with_decoded`]).
    pub fn decoded(&self) -> Decoded {
        Decoded {
            name_iid: (self.decoded & DECODED_NAME_IID != 0).then_some(self.name_iid),
            category_iid: (self.decoded & DECODED_CATEGORY_IID != 0).then_some(self.category_iid),
            annotations_len: self.annotations_len,
        }
    }

    /// The bytes left (behind the header) in their three parts: the
    /// fields for the parser's decoder, the debug annotations, the last
    /// part ([`Self::parts`]); lengths past the bytes put all of them in
    /// the later parts, which they never are in bytes the loader wrote.
    pub fn sections<'b>(&self, bytes: &'b [u8]) -> TrackEventParts<'b> {
        let (main, last) = self.parts(bytes);
        let split = main.len().saturating_sub(self.annotations_len as usize);
        let (fields, annotations) = main.split_at(split);
        TrackEventParts {
            fields,
            annotations,
            last,
        }
    }

    /// The facts, saying that the bytes left end with `extra_len` bytes
    /// of fields of the `kinds` (none when `kinds` is empty).
    pub fn with_extra(mut self, kinds: FieldKinds, extra_len: u32) -> Self {
        self.flags = (self.flags & !FIELD_KINDS) | (kinds.0 & FIELD_KINDS);
        self.extra_len = if self.flags & FIELD_KINDS == 0 {
            0
        } else {
            extra_len
        };
        self
    }

    /// Which kinds of field the bytes left hold in their last part
    /// ([`Self::with_extra`]).
    pub fn fields(&self) -> FieldKinds {
        FieldKinds(self.flags & FIELD_KINDS)
    }

    /// The bytes left (behind the header) as the fields the parser's
    /// decoder reads and the last part, the fields of [`Self::fields`]'s
    /// kinds; all of them in the last part when the length is past them,
    /// which it never is in bytes the loader wrote.
    pub fn parts<'b>(&self, bytes: &'b [u8]) -> (&'b [u8], &'b [u8]) {
        let main = bytes.len().saturating_sub(self.extra_len as usize);
        bytes.split_at(main)
    }

    /// The longest header [`Self::encode`] writes.
    pub const MAX_HEADER: usize = 52;

    /// Writes the facts as the header that goes in front of the event's
    /// bytes (the flags, the decoded flags when any, then the type, the
    /// track uuid, the last part's length, the name iid, the category iid
    /// and the annotations' length as varints, each only when present) at
    /// the start of `header`; its length.
    pub fn encode(&self, header: &mut [u8; Self::MAX_HEADER]) -> usize {
        let mut len = 1;
        header[0] = self.flags;
        if self.flags & HAS_DECODED != 0 {
            header[1] = self.decoded;
            len += 1;
        }
        if self.flags & HAS_TYPE_RAW != 0 {
            len += put_varint(i64::from(self.ty) as u64, &mut header[len..]);
        }
        if self.flags & HAS_TRACK_UUID != 0 {
            len += put_varint(self.track_uuid, &mut header[len..]);
        }
        if self.flags & FIELD_KINDS != 0 {
            len += put_varint(u64::from(self.extra_len), &mut header[len..]);
        }
        if self.decoded & DECODED_NAME_IID != 0 {
            len += put_varint(self.name_iid, &mut header[len..]);
        }
        if self.decoded & DECODED_CATEGORY_IID != 0 {
            len += put_varint(self.category_iid, &mut header[len..]);
        }
        if self.decoded & DECODED_ANNOTATIONS != 0 {
            len += put_varint(u64::from(self.annotations_len), &mut header[len..]);
        }
        len
    }

    /// The facts in front of `bytes` ([`Self::encode`]'s header) and the
    /// bytes after them; no facts and all of `bytes` when the header does
    /// not read, which it always does in bytes the loader wrote.
    pub fn read(bytes: &[u8]) -> (Self, &[u8]) {
        let parse = || -> Option<(Self, &[u8])> {
            let (&flags, mut rest) = bytes.split_first()?;
            let mut facts = TrackEventFacts {
                flags,
                ..TrackEventFacts::default()
            };
            if flags & HAS_DECODED != 0 {
                let (&d, r) = rest.split_first()?;
                facts.decoded = d;
                rest = r;
            }
            if flags & HAS_TYPE_RAW != 0 {
                let (v, r) = get_varint(rest)?;
                facts.ty = v as i32;
                rest = r;
            }
            if flags & HAS_TRACK_UUID != 0 {
                let (v, r) = get_varint(rest)?;
                facts.track_uuid = v;
                rest = r;
            }
            if flags & FIELD_KINDS != 0 {
                let (v, r) = get_varint(rest)?;
                facts.extra_len = u32::try_from(v).ok()?;
                rest = r;
            }
            if facts.decoded & DECODED_NAME_IID != 0 {
                let (v, r) = get_varint(rest)?;
                facts.name_iid = v;
                rest = r;
            }
            if facts.decoded & DECODED_CATEGORY_IID != 0 {
                let (v, r) = get_varint(rest)?;
                facts.category_iid = v;
                rest = r;
            }
            if facts.decoded & DECODED_ANNOTATIONS != 0 {
                let (v, r) = get_varint(rest)?;
                facts.annotations_len = u32::try_from(v).ok()?;
                rest = r;
            }
            Some((facts, rest))
        };
        parse().unwrap_or((TrackEventFacts::default(), bytes))
    }

    /// `TrackEvent.track_uuid`.
    pub fn track_uuid(&self) -> Option<u64> {
        (self.flags & HAS_TRACK_UUID != 0).then_some(self.track_uuid)
    }

    /// `TrackEvent.type` as the number on the wire.
    pub fn type_raw(&self) -> Option<i32> {
        (self.flags & HAS_TYPE_RAW != 0).then_some(self.ty)
    }

    /// Whether `TrackEvent.type` is present as protoc's C++ has it (a
    /// number the enum names).
    pub fn has_type(&self) -> bool {
        self.flags & HAS_TYPE != 0
    }
}

/// Writes `v` as a varint at the start of `out` (room for 10 bytes);
/// the bytes written.
fn put_varint(mut v: u64, out: &mut [u8]) -> usize {
    let mut n = 0;
    while let Some(b) = out.get_mut(n) {
        n += 1;
        if v < 0x80 {
            *b = v as u8;
            break;
        }
        *b = (v as u8 & 0x7f) | 0x80;
        v >>= 7;
    }
    n
}

/// A varint at the start of `bytes` and the bytes after it.
fn get_varint(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((v, bytes.get(i + 1..)?));
        }
    }
    None
}

/// A TrackEvent as the parser sees what the loader read of it.
#[derive(Debug, Clone, Copy)]
pub struct TrackEventView<'a> {
    /// Its track uuid and type.
    pub facts: TrackEventFacts,
    /// Its thread time and counter values (empty when it has none).
    pub times: &'a TrackEventTimes,
}

/// What a TrackEvent resolved in stream order beyond its timestamp.
#[derive(Debug, Clone, Default)]
pub struct TrackEventTimes {
    /// Thread time (ns).
    pub thread_ts: Option<i64>,
    /// Thread instruction count.
    pub thread_instruction_count: Option<i64>,
    /// The absolute counter value of a TYPE_COUNTER event.
    pub counter_value: Option<f64>,
    /// Absolute values of the extra counters, with their track uuids.
    pub extra_counters: Vec<(u64, f64)>,
}

impl TrackEventTimes {
    /// Whether it says nothing beyond the timestamp.
    pub fn is_empty(&self) -> bool {
        self.thread_ts.is_none()
            && self.thread_instruction_count.is_none()
            && self.counter_value.is_none()
            && self.extra_counters.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter's value alone waits in 16 bytes and is seen as it came;
    /// other times wait whole.
    #[test]
    fn times_wait_compactly_and_are_seen_as_they_came() {
        assert_eq!(std::mem::size_of::<WaitingTimes>(), 16);
        let counter = TrackEventTimes {
            counter_value: Some(2.5),
            ..TrackEventTimes::default()
        };
        let other = TrackEventTimes {
            thread_ts: Some(7),
            counter_value: Some(1.0),
            extra_counters: vec![(3, 4.0)],
            ..TrackEventTimes::default()
        };
        assert!(matches!(
            WaitingTimes::of(counter.clone()),
            WaitingTimes::Counter(v) if v == 2.5
        ));
        assert!(matches!(
            WaitingTimes::of(other.clone()),
            WaitingTimes::Other(_)
        ));
        let mut arena = PacketArena::default();
        let mut side = SideTables::default();
        let mut header = [0u8; TrackEventFacts::MAX_HEADER];
        let len = TrackEventFacts::new(Some(9), Some(4), true).encode(&mut header);
        let mut seen = Vec::new();
        for times in [Some(counter), Some(other), None] {
            let extra = match &times {
                Some(t) => side.track_event_times.insert(WaitingTimes::of(t.clone())) as u32,
                None => NO_EXTRA,
            };
            let packet = Packet {
                ts: 1,
                bytes: arena.push(&header[..len]).unwrap(),
                generation: 0,
                machine: 0,
                cpu: 0,
                extra,
                kind: PacketKind::TrackEvent,
                field: 11,
            };
            let source = PacketSource {
                arena: &arena,
                side: &side,
            };
            source.with_view(&packet, |v| {
                let te = v.track_event.expect("a TrackEvent");
                seen.push((
                    te.times.thread_ts,
                    te.times.counter_value,
                    te.times.extra_counters.clone(),
                ));
            });
        }
        assert_eq!(
            seen,
            vec![
                (None, Some(2.5), vec![]),
                (Some(7), Some(1.0), vec![(3, 4.0)]),
                (None, None, vec![]),
            ]
        );
    }

    /// The header gives back what was written, present or absent, and
    /// the bytes behind it untouched.
    #[test]
    fn facts_read_back_from_their_header() {
        for (facts, len) in [
            (
                TrackEventFacts::new(Some(u64::MAX - 3), Some(-7), false)
                    .with_extra(FieldKinds::EXTENSION, u32::MAX)
                    .with_decoded(Decoded {
                        name_iid: Some(u64::MAX),
                        category_iid: Some(u64::MAX - 1),
                        annotations_len: u32::MAX,
                    }),
                TrackEventFacts::MAX_HEADER,
            ),
            (
                TrackEventFacts::new(Some(u64::MAX - 3), Some(-7), false)
                    .with_extra(FieldKinds::EXTENSION, u32::MAX),
                26,
            ),
            (
                TrackEventFacts::new(None, Some(1), true).with_decoded(Decoded {
                    name_iid: Some(5),
                    category_iid: None,
                    annotations_len: 0,
                }),
                4,
            ),
            (
                TrackEventFacts::new(Some(u64::MAX - 3), Some(-7), false),
                21,
            ),
            (TrackEventFacts::new(None, Some(i32::MAX), true), 6),
            (TrackEventFacts::new(Some(300), Some(1), true), 4),
            (TrackEventFacts::new(Some(0), None, false), 2),
            (TrackEventFacts::default(), 1),
        ] {
            let mut header = [0u8; TrackEventFacts::MAX_HEADER];
            assert_eq!(facts.encode(&mut header), len);
            let mut bytes = header[..len].to_vec();
            bytes.extend_from_slice(&[8, 1]);
            let (read, rest) = TrackEventFacts::read(&bytes);
            assert_eq!(read, facts);
            assert_eq!(rest, &[8, 1]);
        }
        // The kinds of field ride in the flags byte, the last part's
        // length after the uuid; the parts split where it says.
        let kinds = FieldKinds::TYPED.union(FieldKinds::EXTENSION);
        let facts = TrackEventFacts::new(Some(9), Some(2), true).with_extra(kinds, 2);
        let mut header = [0u8; TrackEventFacts::MAX_HEADER];
        let len = facts.encode(&mut header);
        assert_eq!(len, 4);
        let mut bytes = header[..len].to_vec();
        bytes.extend_from_slice(&[8, 1, 0xa0, 2]);
        let (read, rest) = TrackEventFacts::read(&bytes);
        assert_eq!(read.fields(), kinds);
        assert!(!read.fields().contains(FieldKinds::REFLECTED));
        assert_eq!((read.track_uuid(), read.type_raw()), (Some(9), Some(2)));
        assert!(read.has_type());
        assert_eq!(read.parts(rest), (&[8, 1][..], &[0xa0, 2][..]));
        // A length past the bytes puts them all in the last part.
        let long = TrackEventFacts::new(None, None, false).with_extra(kinds, 9);
        assert_eq!(long.parts(&[8, 1]), (&[][..], &[8, 1][..]));
        // No kinds, no last part, whatever length is asked for.
        let none = TrackEventFacts::new(None, None, false).with_extra(FieldKinds::NONE, 5);
        assert_eq!(none.parts(&[8, 1]), (&[8, 1][..], &[][..]));
        assert_eq!(TrackEventFacts::default().fields(), FieldKinds::NONE);
        // What the walk decoded rides in a second flags byte and three
        // varints; the annotations are the part before the last.
        let decoded = Decoded {
            name_iid: None,
            category_iid: Some(3),
            annotations_len: 2,
        };
        let facts = TrackEventFacts::new(None, Some(1), true)
            .with_extra(FieldKinds::TYPED, 1)
            .with_decoded(decoded);
        let mut header = [0u8; TrackEventFacts::MAX_HEADER];
        let len = facts.encode(&mut header);
        let mut bytes = header[..len].to_vec();
        bytes.extend_from_slice(&[8, 1, 0x22, 0, 0xa0]);
        let (read, rest) = TrackEventFacts::read(&bytes);
        assert_eq!(read.decoded(), decoded);
        assert_eq!(read.fields(), FieldKinds::TYPED);
        let parts = read.sections(rest);
        assert_eq!(
            (parts.fields, parts.annotations, parts.last),
            (&[8, 1][..], &[0x22, 0][..], &[0xa0][..])
        );
        // Nothing decoded: no second byte, nothing but fields before the
        // last part.
        let plain = TrackEventFacts::new(None, None, false).with_decoded(Decoded::default());
        assert_eq!(plain.encode(&mut header), 1);
        assert_eq!(plain.sections(&[8, 1]).fields, &[8, 1]);
        // A header cut short reads as no facts.
        let (read, rest) = TrackEventFacts::read(&[3, 0x80]);
        assert_eq!(read, TrackEventFacts::default());
        assert_eq!(rest, &[3, 0x80]);
    }
}
