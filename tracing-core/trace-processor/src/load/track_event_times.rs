//! The stream-order part of a TrackEvent, read in the one walk over its
//! bytes: its timestamp (the packet's, or the legacy µs deltas and
//! absolutes against the sequence's ThreadDescriptor reference, on
//! CLOCK_MONOTONIC), thread time and instruction count, and counter values
//! made absolute for incremental counter tracks. These depend on the
//! packets before it in its sequence, so they are resolved before the
//! sort.
//!
//! The walk keeps what it read (with the track uuid and the type) as facts
//! that travel with the packet, and copies every other field, untouched,
//! into the bytes the packet keeps: the parser reads those and never the
//! fields read here, so a TrackEvent is walked from its start once. The
//! few fields that readers beyond the parser's decoder take (typed fields,
//! fields reflected into args, extensions) are put after the others, their
//! kinds and length noted in the facts: those readers walk only that last
//! part, and only when it holds their kind.

use protozero::{Field, FieldValue, PackedFixed64, PackedVarints};
use zerotrace_protos::protos::TrackEvent;
use zerotrace_protos::protos::track_event::Type;

use crate::clock::MachineClocks;
use crate::descriptors::Descriptors;
use crate::packet_fields::{count_track_event_walk, field_at};
use crate::packet_view::{FieldKinds, TrackEventFacts, TrackEventTimes};
use crate::sequence_state::{Generation, SequenceState};
use crate::storage::args::ArgValue;
use crate::storage::stats::Stats;

/// CLOCK_MONOTONIC's id: legacy TrackEvent µs timestamps are on it.
const MONOTONIC: u64 = 3;

/// The TrackEvent fields read here (the parser never sees them).
const READ_HERE: [u32; 14] = [
    TrackEvent::FIELD_TYPE,
    TrackEvent::FIELD_TRACK_UUID,
    TrackEvent::FIELD_TIMESTAMP_DELTA_US,
    TrackEvent::FIELD_TIMESTAMP_ABSOLUTE_US,
    TrackEvent::FIELD_THREAD_TIME_DELTA_US,
    TrackEvent::FIELD_THREAD_TIME_ABSOLUTE_US,
    TrackEvent::FIELD_THREAD_INSTRUCTION_COUNT_DELTA,
    TrackEvent::FIELD_THREAD_INSTRUCTION_COUNT_ABSOLUTE,
    TrackEvent::FIELD_COUNTER_VALUE,
    TrackEvent::FIELD_DOUBLE_COUNTER_VALUE,
    TrackEvent::FIELD_EXTRA_COUNTER_TRACK_UUIDS,
    TrackEvent::FIELD_EXTRA_COUNTER_VALUES,
    TrackEvent::FIELD_EXTRA_DOUBLE_COUNTER_TRACK_UUIDS,
    TrackEvent::FIELD_EXTRA_DOUBLE_COUNTER_VALUES,
];

/// A set of field numbers under 64 as a bit mask (a number of 64 or more
/// stops the build).
const fn mask(ids: &[u32]) -> u64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < ids.len() {
        assert!(ids[i] < 64, "a field number past the mask");
        m |= 1 << ids[i];
        i += 1;
    }
    m
}

/// [`READ_HERE`] as a mask: one test per field instead of a search.
const READ_HERE_MASK: u64 = mask(&READ_HERE);
/// The fields the parser's typed reader takes.
const TYPED_MASK: u64 = mask(&crate::parser::track_event_args::TYPED_FIELDS);
/// The fields reflected into args (besides the extensions).
const REFLECTED_MASK: u64 = mask(&crate::parser::track_event_reflect::REFLECTED_FIELDS);
/// The first field number of TrackEvent's extension range (`extensions
/// 1000 to 9899`).
const FIRST_EXTENSION: u32 = 1000;

/// The kinds of field (for the parser's readers) field `id` is, when it
/// is not read here.
fn kinds_of(id: u32) -> FieldKinds {
    if id >= FIRST_EXTENSION {
        return FieldKinds::EXTENSION.union(FieldKinds::REFLECTED);
    }
    let bit = 1u64.checked_shl(id).unwrap_or(0);
    let mut k = FieldKinds::NONE;
    if TYPED_MASK & bit != 0 {
        k = k.union(FieldKinds::TYPED);
    }
    if REFLECTED_MASK & bit != 0 {
        k = k.union(FieldKinds::REFLECTED);
    }
    k
}

fn us_to_ns(us: i64) -> i64 {
    us.saturating_mul(1000)
}

/// A member of one of TrackEvent's delta-or-absolute oneofs.
#[derive(Debug, Clone, Copy)]
enum Stamp {
    Delta(i64),
    Absolute(i64),
}

/// The fields read here, as the generated decoder reads them: the last
/// member of each oneof, the last value of a singular field, every
/// element of a repeated one (packed or not); a field with another wire
/// type than its own reads as absent.
#[derive(Debug, Default)]
struct ReadHere {
    ty: Option<i32>,
    /// Whether an occurrence of `type` has a number the enum names.
    has_type: bool,
    track_uuid: Option<u64>,
    timestamp: Option<Stamp>,
    thread_time: Option<Stamp>,
    instruction_count: Option<Stamp>,
    counter_value: Option<f64>,
    extra_uuids: Vec<u64>,
    extra_values: Vec<f64>,
    extra_double_uuids: Vec<u64>,
    extra_double_values: Vec<f64>,
    /// The kinds of field among those left to the parser.
    kinds: FieldKinds,
    /// The length of the fields of those kinds, put last.
    extra_len: u32,
}

/// Varints of a repeated field's occurrence, packed or not.
fn varints(value: FieldValue<'_>, out: &mut Vec<u64>) {
    match value {
        FieldValue::Varint(v) => out.push(v),
        FieldValue::Bytes(b) => out.extend(PackedVarints::new(b)),
        _ => {}
    }
}

/// Doubles of a repeated field's occurrence, packed or not.
fn doubles(value: FieldValue<'_>, out: &mut Vec<f64>) {
    match value {
        FieldValue::Fixed64(v) => out.push(f64::from_bits(v)),
        FieldValue::Bytes(b) => {
            if let Ok(p) = PackedFixed64::new(b) {
                out.extend(p.map(f64::from_bits));
            }
        }
        _ => {}
    }
}

/// The one walk: the fields read here into `ReadHere`, every other field
/// (tag and value as they were) appended to `rest`, those of a
/// [`FieldKinds`] kind after all the others. A malformed field ends the
/// walk, as it ends the decoder's.
fn split(event: &[u8], rest: &mut Vec<u8>) -> ReadHere {
    count_track_event_walk();
    rest.clear();
    // Room for the facts' header, written once they are known.
    rest.resize(TrackEventFacts::MAX_HEADER, 0);
    let mut out = ReadHere::default();
    let mut extras = Extras::default();
    let mut pos = 0;
    while let Some((id, value, end)) = field_at(event, pos) {
        let start = pos;
        pos = end;
        let f = Field { id, value };
        let here = 1u64.checked_shl(f.id).unwrap_or(0) & READ_HERE_MASK != 0;
        if !here {
            let kinds = kinds_of(f.id);
            if kinds == FieldKinds::NONE {
                if let Some(bytes) = event.get(start..end) {
                    rest.extend_from_slice(bytes);
                }
            } else {
                out.kinds = out.kinds.union(kinds);
                extras.push(start, end);
            }
            continue;
        }
        let varint = match f.value {
            FieldValue::Varint(v) => Some(v),
            _ => None,
        };
        match f.id {
            TrackEvent::FIELD_TYPE => {
                if let Some(v) = varint {
                    out.ty = Some(v as i32);
                    out.has_type |= Type::from_i32(v as i32).is_some();
                }
            }
            TrackEvent::FIELD_TRACK_UUID => out.track_uuid = varint.or(out.track_uuid),
            TrackEvent::FIELD_TIMESTAMP_DELTA_US => {
                if let Some(v) = varint {
                    out.timestamp = Some(Stamp::Delta(v as i64));
                }
            }
            TrackEvent::FIELD_TIMESTAMP_ABSOLUTE_US => {
                if let Some(v) = varint {
                    out.timestamp = Some(Stamp::Absolute(v as i64));
                }
            }
            TrackEvent::FIELD_THREAD_TIME_DELTA_US => {
                if let Some(v) = varint {
                    out.thread_time = Some(Stamp::Delta(v as i64));
                }
            }
            TrackEvent::FIELD_THREAD_TIME_ABSOLUTE_US => {
                if let Some(v) = varint {
                    out.thread_time = Some(Stamp::Absolute(v as i64));
                }
            }
            TrackEvent::FIELD_THREAD_INSTRUCTION_COUNT_DELTA => {
                if let Some(v) = varint {
                    out.instruction_count = Some(Stamp::Delta(v as i64));
                }
            }
            TrackEvent::FIELD_THREAD_INSTRUCTION_COUNT_ABSOLUTE => {
                if let Some(v) = varint {
                    out.instruction_count = Some(Stamp::Absolute(v as i64));
                }
            }
            TrackEvent::FIELD_COUNTER_VALUE => {
                if let Some(v) = varint {
                    out.counter_value = Some(v as i64 as f64);
                }
            }
            TrackEvent::FIELD_DOUBLE_COUNTER_VALUE => {
                if let FieldValue::Fixed64(v) = f.value {
                    out.counter_value = Some(f64::from_bits(v));
                }
            }
            TrackEvent::FIELD_EXTRA_COUNTER_TRACK_UUIDS => varints(f.value, &mut out.extra_uuids),
            TrackEvent::FIELD_EXTRA_COUNTER_VALUES => {
                let mut v = Vec::new();
                varints(f.value, &mut v);
                out.extra_values
                    .extend(v.into_iter().map(|v| v as i64 as f64));
            }
            TrackEvent::FIELD_EXTRA_DOUBLE_COUNTER_TRACK_UUIDS => {
                varints(f.value, &mut out.extra_double_uuids);
            }
            TrackEvent::FIELD_EXTRA_DOUBLE_COUNTER_VALUES => {
                doubles(f.value, &mut out.extra_double_values);
            }
            _ => {}
        }
    }
    // The fields for the parser's other readers go last.
    let main_end = rest.len();
    extras.append_to(event, rest);
    out.extra_len = u32::try_from(rest.len() - main_end).unwrap_or(u32::MAX);
    out
}

/// Where the fields that go last ([`FieldKinds`]) are in the event, while
/// the walk copies the others: a few, on the stack; more spill to the heap.
#[derive(Debug, Default)]
struct Extras {
    fixed: [(usize, usize); 8],
    len: usize,
    spill: Vec<(usize, usize)>,
}

impl Extras {
    fn push(&mut self, start: usize, end: usize) {
        match self.fixed.get_mut(self.len) {
            Some(slot) => {
                *slot = (start, end);
                self.len += 1;
            }
            None => self.spill.push((start, end)),
        }
    }

    /// Appends the fields' bytes, in the order they came, to `out`.
    fn append_to(&self, event: &[u8], out: &mut Vec<u8>) {
        let fixed = self.fixed.get(..self.len).unwrap_or(&[]);
        for &(start, end) in fixed.iter().chain(&self.spill) {
            if let Some(bytes) = event.get(start..end) {
                out.extend_from_slice(bytes);
            }
        }
    }
}

/// One TrackEvent as the loader keeps it: its time on the trace clock and
/// what only some events carry (its facts are in front of `rest`).
#[derive(Debug)]
pub struct Tokenized {
    /// Time on the trace clock.
    pub ts: i64,
    /// Where the event's bytes (its facts' header, then the fields) start
    /// in `rest`.
    pub start: usize,
    /// Thread time, instruction count and counter values.
    pub times: TrackEventTimes,
}

/// Resolves one TrackEvent (its bytes; whether its packet has a
/// timestamp), leaving in `rest` from [`Tokenized::start`] its facts'
/// header ([`TrackEventFacts::encode`]) followed by the bytes of the fields
/// the parser reads; None when it is dropped (counted).
#[allow(clippy::too_many_arguments)]
pub fn tokenize(
    event: &[u8],
    rest: &mut Vec<u8>,
    has_timestamp: bool,
    packet_ts: i64,
    seq: &mut SequenceState,
    generation: Option<&Generation>,
    descriptors: &Descriptors,
    mut clocks: MachineClocks<'_>,
    stats: &mut Stats,
) -> Option<Tokenized> {
    let event = split(event, rest);
    let defaults = generation.map(|g| &g.decoded_defaults);
    // What the import logs of a dropped event name it by.
    let seq_arg = [(
        "packet_sequence_id",
        ArgValue::Uint(u64::from(generation.map_or(0, |g| g.sequence_id))),
    )];
    let mut out = TrackEventTimes::default();
    let mut legacy = false;
    let ts = match event.timestamp {
        Some(Stamp::Delta(delta)) => {
            let Some(base) = seq.track_event_timestamp_ns else {
                stats.log_tokenization(
                    "track_event_skipped_timestamp_delta_without_valid_state",
                    &seq_arg,
                );
                return None;
            };
            let v = base.saturating_add(us_to_ns(delta));
            seq.track_event_timestamp_ns = Some(v);
            legacy = true;
            v
        }
        Some(Stamp::Absolute(abs)) if abs != 0 => {
            legacy = true;
            us_to_ns(abs)
        }
        _ if has_timestamp => packet_ts,
        _ => {
            stats.log_tokenization("track_event_missing_timestamp", &[]);
            return None;
        }
    };
    // Negative times are dropped before the clock conversion, whose offset
    // could otherwise bring them back to positive.
    if ts < 0 {
        stats.log_tokenization("track_event_invalid_timestamp", &[]);
        return None;
    }
    let ts = if legacy {
        clocks.trace_time(MONOTONIC, ts).unwrap_or(ts)
    } else {
        ts
    };

    match event.thread_time {
        Some(Stamp::Delta(delta)) => {
            let Some(base) = seq.track_event_thread_time_us else {
                stats.log_tokenization(
                    "track_event_skipped_thread_time_delta_without_valid_state",
                    &seq_arg,
                );
                return None;
            };
            let v = base.saturating_add(delta);
            seq.track_event_thread_time_us = Some(v);
            out.thread_ts = Some(us_to_ns(v));
        }
        Some(Stamp::Absolute(abs)) => out.thread_ts = Some(us_to_ns(abs)),
        None => {}
    }
    match event.instruction_count {
        Some(Stamp::Delta(delta)) => {
            let base = seq.track_event_instruction_count.unwrap_or(0);
            let v = base.saturating_add(delta);
            seq.track_event_instruction_count = Some(v);
            out.thread_instruction_count = Some(v);
        }
        Some(Stamp::Absolute(abs)) => out.thread_instruction_count = Some(abs),
        None => {}
    }

    let default_uuid = defaults.and_then(|d| d.track_uuid);
    match event.ty {
        Some(4) => {
            // TYPE_COUNTER
            let Some(uuid) = event.track_uuid.or(default_uuid) else {
                stats.log_tokenization("track_event_counter_missing_track_uuid", &[]);
                return None;
            };
            let Some(value) = event.counter_value else {
                stats.log_tokenization(
                    "track_event_counter_missing_value",
                    &[("track_uuid", ArgValue::Uint(uuid))],
                );
                return None;
            };
            out.counter_value = Some(absolute(seq, descriptors, uuid, value));
        }
        Some(5) if event.track_uuid.or(default_uuid).is_none() => {
            stats.log_tokenization("track_event_state_missing_track_uuid", &[]);
            return None;
        }
        _ => {}
    }

    for (values, uuids, default_uuids) in [
        (
            event.extra_values,
            event.extra_uuids,
            defaults.map_or(&[][..], |d| &d.extra_counter_track_uuids),
        ),
        (
            event.extra_double_values,
            event.extra_double_uuids,
            defaults.map_or(&[][..], |d| &d.extra_double_counter_track_uuids),
        ),
    ] {
        if values.is_empty() {
            continue;
        }
        let uuids = if uuids.is_empty() {
            default_uuids
        } else {
            uuids.as_slice()
        };
        if uuids.is_empty() {
            stats.log_tokenization("track_event_extra_counter_missing_track_uuids", &seq_arg);
            return None;
        }
        for (i, v) in values.into_iter().enumerate() {
            let Some(&uuid) = uuids.get(i) else {
                stats.log_tokenization("track_event_extra_counter_track_uuid_mismatch", &seq_arg);
                return None;
            };
            let abs = absolute(seq, descriptors, uuid, v);
            out.extra_counters.push((uuid, abs));
        }
    }
    // The facts' header goes right before the fields, in the room left.
    let mut header = [0u8; TrackEventFacts::MAX_HEADER];
    let len = TrackEventFacts::new(event.track_uuid, event.ty, event.has_type)
        .with_extra(event.kinds, event.extra_len)
        .encode(&mut header);
    let start = TrackEventFacts::MAX_HEADER - len;
    if let (Some(room), Some(header)) = (
        rest.get_mut(start..TrackEventFacts::MAX_HEADER),
        header.get(..len),
    ) {
        room.copy_from_slice(header);
    }
    Some(Tokenized {
        ts,
        start,
        times: out,
    })
}

/// The absolute value of a counter sample: incremental tracks add it to
/// their running value on this sequence.
fn absolute(seq: &mut SequenceState, descriptors: &Descriptors, uuid: u64, value: f64) -> f64 {
    if descriptors
        .get(uuid)
        .is_some_and(|d| d.is_incremental_counter)
    {
        let v = seq.incremental_counters.entry(uuid).or_insert(0.0);
        *v += value;
        *v
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protozero::Decoder;
    use zerotrace_protos::protos::TrackEventDecoder;

    fn event(f: impl FnOnce(&mut TrackEvent<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut e = TrackEvent::from_message(w.root());
            f(&mut e);
        }
        w.finish().unwrap_or_default()
    }

    #[test]
    fn the_parser_gets_only_the_fields_read_nowhere_else() {
        let bytes = event(|e| {
            e.set_name("n");
            e.set_timestamp_absolute_us(5);
            e.set_type_raw(99);
            e.add_categories("c");
            e.set_type(Type::Counter);
            e.set_track_uuid(7);
            e.set_timestamp_delta_us(-3);
            e.set_thread_time_absolute_us(11);
            e.set_thread_instruction_count_delta(2);
            e.set_counter_value(4);
            e.set_double_counter_value(1.5);
            e.add_flow_ids(9);
            e.add_extra_counter_track_uuids(21);
            e.add_extra_counter_values(-8);
            e.add_extra_double_counter_track_uuids(22);
            e.add_extra_double_counter_values(0.25);
            e.message()
                .append_packed_varint(TrackEvent::FIELD_EXTRA_COUNTER_VALUES, [3u64, 6]);
        });
        let mut rest = Vec::new();
        let got = split(&bytes, &mut rest);

        // What was read here is what the generated decoder reads.
        let full = TrackEventDecoder::new(&bytes);
        assert_eq!(got.ty, full.type_raw());
        assert_eq!(got.has_type, full.has_type());
        assert_eq!(got.track_uuid, full.track_uuid());
        assert!(matches!(got.timestamp, Some(Stamp::Delta(-3))));
        assert_eq!(full.timestamp_delta_us(), Some(-3));
        assert!(matches!(got.thread_time, Some(Stamp::Absolute(11))));
        assert!(matches!(got.instruction_count, Some(Stamp::Delta(2))));
        assert_eq!(got.counter_value, full.double_counter_value());
        assert_eq!(
            got.extra_uuids,
            full.extra_counter_track_uuids().collect::<Vec<_>>()
        );
        let values: Vec<f64> = full.extra_counter_values().map(|v| v as f64).collect();
        assert_eq!(got.extra_values, values);
        assert_eq!(got.extra_values, [-8.0, 3.0, 6.0]);
        assert_eq!(got.extra_double_uuids, [22]);
        assert_eq!(got.extra_double_values, [0.25]);

        // The rest holds room for the facts' header (`tokenize` writes it
        // there), then the other fields as they were, and none of these.
        let (room, rest) = rest.split_at(TrackEventFacts::MAX_HEADER);
        assert!(room.iter().all(|&b| b == 0));
        let mut d = Decoder::new(rest);
        let mut ids = Vec::new();
        while let Some(Ok(f)) = d.read_field() {
            ids.push(f.id);
        }
        assert_eq!(
            ids,
            [
                TrackEvent::FIELD_NAME,
                TrackEvent::FIELD_CATEGORIES,
                TrackEvent::FIELD_FLOW_IDS
            ]
        );
        let rest = TrackEventDecoder::new(rest);
        assert_eq!(rest.name(), Some("n"));
        assert_eq!(rest.categories().collect::<Vec<_>>(), ["c"]);
        assert_eq!(rest.flow_ids().collect::<Vec<_>>(), [9]);
        assert_eq!(rest.type_raw(), None);
    }

    #[test]
    fn the_fields_other_readers_take_go_last_in_their_order() {
        let bytes = event(|e| {
            e.message()
                .append_varint(TrackEvent::FIELD_SOURCE_LOCATION_IID, 5);
            e.set_name("n");
            e.message().append_bytes(1001, b"x");
            e.set_type(Type::SliceBegin);
            e.message()
                .append_varint(TrackEvent::FIELD_SOURCE_LOCATION_IID, 6);
            e.add_flow_ids(9);
        });
        let mut rest = Vec::new();
        let got = split(&bytes, &mut rest);
        let fields = |b: &[u8]| {
            Decoder::new(b)
                .map_while(Result::ok)
                .map(|f| (f.id, f.as_u64().ok()))
                .collect::<Vec<_>>()
        };
        let kept = &rest[TrackEventFacts::MAX_HEADER..];
        let facts = TrackEventFacts::new(None, None, false).with_extra(got.kinds, got.extra_len);
        let (main, last) = facts.parts(kept);
        let ids: Vec<u32> = fields(main).into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, [TrackEvent::FIELD_NAME, TrackEvent::FIELD_FLOW_IDS]);
        assert_eq!(
            fields(last),
            [
                (TrackEvent::FIELD_SOURCE_LOCATION_IID, Some(5)),
                (1001, None),
                (TrackEvent::FIELD_SOURCE_LOCATION_IID, Some(6))
            ]
        );
        let kinds = facts.fields();
        assert!(kinds.contains(FieldKinds::TYPED));
        assert!(kinds.contains(FieldKinds::REFLECTED));
        assert!(kinds.contains(FieldKinds::EXTENSION));
        // More of them than the walk keeps on the stack: none lost.
        let many = event(|e| {
            for i in 0..20 {
                e.message()
                    .append_varint(TrackEvent::FIELD_CORRELATION_ID, i);
            }
            e.set_name("n");
        });
        let got = split(&many, &mut rest);
        let facts = TrackEventFacts::new(None, None, false).with_extra(got.kinds, got.extra_len);
        let (main, last) = facts.parts(&rest[TrackEventFacts::MAX_HEADER..]);
        assert_eq!(fields(main), [(TrackEvent::FIELD_NAME, None)]);
        let ids: Vec<_> = fields(last).into_iter().filter_map(|(_, v)| v).collect();
        assert_eq!(ids, (0..20).collect::<Vec<u64>>());
        assert_eq!(facts.fields(), FieldKinds::TYPED);
    }

    #[test]
    fn an_unnamed_type_is_kept_raw_but_not_present() {
        let bytes = event(|e| {
            e.set_type_raw(99);
        });
        let got = split(&bytes, &mut Vec::new());
        assert_eq!(got.ty, Some(99));
        assert!(!got.has_type);
        let facts = TrackEventFacts::new(got.track_uuid, got.ty, got.has_type);
        assert_eq!(facts.type_raw(), Some(99));
        assert!(!facts.has_type());
        assert_eq!(facts.track_uuid(), None);
    }
}
