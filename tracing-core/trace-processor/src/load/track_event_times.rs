//! The stream-order part of a TrackEvent, read in the one walk over its
//! bytes: its timestamp (the packet's, or the legacy µs deltas and
//! absolutes against the sequence's ThreadDescriptor reference, on
//! CLOCK_MONOTONIC), thread time and instruction count, and counter values
//! made absolute for incremental counter tracks. These depend on the
//! packets before it in its sequence, so they are resolved before the
//! sort.
//!
//! The walk keeps what it read (with the track uuid and the type) as facts
//! that travel with the packet, decodes for the parser what nearly every
//! event has (the name's and the one category's interned ids, kept in the
//! facts), and copies every other field, untouched, into the bytes the
//! packet keeps: the parser reads those and never the fields read here,
//! so a TrackEvent is walked from its start once and no field is decoded
//! twice. The debug annotations are put after the other fields, and after
//! them the few fields that readers beyond the parser's decoder take
//! (typed fields, fields reflected into args, extensions), their kinds and
//! the parts' lengths noted in the facts: each reader walks only its part
//! (the parser's decoder nothing, for most events), and the last part's
//! readers only when it holds their kind.

use protozero::{Field, FieldValue, PackedFixed64, PackedVarints};
use zerotrace_protos::protos::TrackEvent;
use zerotrace_protos::protos::track_event::Type;

use crate::clock::MachineClocks;
use crate::descriptors::Descriptors;
use crate::packet_fields::{count_track_event_walk, field_at};
use crate::packet_view::{Decoded, FieldKinds, TrackEventFacts, TrackEventTimes};
use crate::sequence_state::{Generation, SequenceState};
use crate::storage::args::ArgValue;
use crate::storage::stats::Stats;

/// CLOCK_MONOTONIC's id: legacy TrackEvent µs timestamps are on it.
const MONOTONIC: u64 = 3;

/// The most extra counter values one event carries (upstream's bound).
const MAX_EXTRA_COUNTERS: usize = 8;

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
    /// What the walk decoded for the parser (the name's and the one
    /// category's iids, the debug annotations' length).
    decoded: Decoded,
}

/// The name oneof's last member, as the walk saw it.
#[derive(Debug, Clone, Copy)]
enum Name {
    /// `name_iid`.
    Iid(u64),
    /// `name`, at this range of the event.
    Str(usize, usize),
}

/// The categories, as the walk saw them so far.
#[derive(Debug, Clone, Copy)]
enum Categories {
    /// None yet.
    None,
    /// One `category_iids` occurrence, a varint, at this range.
    One(u64, usize, usize),
    /// Others: all of them are left to the parser's decoder.
    Many,
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

/// The one walk: the fields read here into `ReadHere`, and every other
/// field (tag and value as they were) appended to `rest` in three parts:
/// the fields for the parser's decoder, the debug annotations, then those
/// of a [`FieldKinds`] kind. The name's and a lone category's interned ids
/// are decoded here for the parser ([`Decoded`]) and not copied; a name
/// that a later member of its oneof replaced is dropped, as the decoder
/// would drop it. A malformed field ends the walk, as it ends the
/// decoder's.
#[inline(always)]
fn split(event: &[u8], rest: &mut Vec<u8>) -> ReadHere {
    count_track_event_walk();
    rest.clear();
    // Room for the facts' header, written once they are known.
    rest.resize(TrackEventFacts::MAX_HEADER, 0);
    let mut out = ReadHere::default();
    let mut fields = Ranges::default();
    let mut annotations = Ranges::default();
    let mut extras = Ranges::default();
    let mut name = None;
    let mut categories = Categories::None;
    let mut pos = 0;
    while let Some((id, value, end)) = field_at(event, pos) {
        let start = pos;
        pos = end;
        let f = Field { id, value };
        let here = 1u64.checked_shl(f.id).unwrap_or(0) & READ_HERE_MASK != 0;
        if !here {
            let kinds = kinds_of(f.id);
            if kinds != FieldKinds::NONE {
                out.kinds = out.kinds.union(kinds);
                extras.push(start, end);
                continue;
            }
            match (f.id, f.value) {
                (TrackEvent::FIELD_NAME_IID, FieldValue::Varint(v)) => name = Some(Name::Iid(v)),
                (TrackEvent::FIELD_NAME, FieldValue::Bytes(_)) => {
                    name = Some(Name::Str(start, end));
                }
                (TrackEvent::FIELD_DEBUG_ANNOTATIONS, FieldValue::Bytes(_)) => {
                    annotations.push(start, end);
                }
                (TrackEvent::FIELD_CATEGORY_IIDS, FieldValue::Varint(v))
                    if matches!(categories, Categories::None) =>
                {
                    categories = Categories::One(v, start, end);
                }
                (TrackEvent::FIELD_CATEGORY_IIDS | TrackEvent::FIELD_CATEGORIES, _) => {
                    // More than a lone iid: the decoder reads them all, in
                    // their order.
                    if let Categories::One(_, s, e) = categories {
                        fields.push(s, e);
                    }
                    categories = Categories::Many;
                    fields.push(start, end);
                }
                _ => fields.push(start, end),
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
    match name {
        Some(Name::Iid(v)) => out.decoded.name_iid = Some(v),
        Some(Name::Str(s, e)) => fields.push(s, e),
        None => {}
    }
    if let Categories::One(v, _, _) = categories {
        out.decoded.category_iid = Some(v);
    }
    fields.append_to(event, rest);
    let fields_end = rest.len();
    annotations.append_to(event, rest);
    let main_end = rest.len();
    out.decoded.annotations_len = u32::try_from(main_end - fields_end).unwrap_or(u32::MAX);
    // The fields for the parser's other readers go last.
    extras.append_to(event, rest);
    out.extra_len = u32::try_from(rest.len() - main_end).unwrap_or(u32::MAX);
    out
}

/// Where the fields of one part are in the event, while the walk reads
/// it: a few ranges, on the stack (adjacent fields make one range, copied
/// at once); more spill to the heap.
#[derive(Debug, Default)]
struct Ranges {
    /// Four ranges: with adjacent fields joined, a part of nearly every
    /// event fits (and the walk clears little per event).
    fixed: [(usize, usize); 4],
    len: usize,
    spill: Vec<(usize, usize)>,
}

impl Ranges {
    fn push(&mut self, start: usize, end: usize) {
        if self.spill.is_empty() {
            if let Some(last) = self.len.checked_sub(1).and_then(|i| self.fixed.get_mut(i)) {
                if last.1 == start {
                    last.1 = end;
                    return;
                }
            }
        } else if let Some(last) = self.spill.last_mut() {
            if last.1 == start {
                last.1 = end;
                return;
            }
        }
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
#[inline]
pub fn tokenize(
    event: &[u8],
    rest: &mut Vec<u8>,
    has_timestamp: bool,
    packet_ts: i64,
    seq: &mut SequenceState,
    generation: Option<&Generation>,
    descriptors: Option<&Descriptors>,
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
            let Some(value) = absolute(seq, descriptors, uuid, value) else {
                stats.log_tokenization(
                    "track_event_counter_invalid_track_uuid",
                    &[("track_uuid", ArgValue::Uint(uuid))],
                );
                return None;
            };
            out.counter_value = Some(value);
        }
        Some(5) if event.track_uuid.or(default_uuid).is_none() => {
            stats.log_tokenization("track_event_state_missing_track_uuid", &[]);
            return None;
        }
        _ => {}
    }

    let extra_counters = !event.extra_values.is_empty() || !event.extra_double_values.is_empty();
    for (values, uuids, default_uuids) in extra_counters
        .then_some([
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
        ])
        .into_iter()
        .flatten()
    {
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
            // Both lists count against one bound, as upstream's event holds them.
            if out.extra_counters.len() >= MAX_EXTRA_COUNTERS {
                stats.log_tokenization("track_event_extra_counter_exceeds_max", &seq_arg);
                return None;
            }
            let Some(abs) = absolute(seq, descriptors, uuid, v) else {
                stats.log_tokenization(
                    "track_event_extra_counter_invalid_track",
                    &[("track_uuid", ArgValue::Uint(uuid))],
                );
                return None;
            };
            out.extra_counters.push((uuid, abs));
        }
    }
    // The facts' header goes right before the fields, in the room left.
    let mut header = [0u8; TrackEventFacts::MAX_HEADER];
    let len = TrackEventFacts::new(event.track_uuid, event.ty, event.has_type)
        .with_extra(event.kinds, event.extra_len)
        .with_decoded(event.decoded)
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
/// their running value on this sequence. None when no counter descriptor
/// was read for `uuid` so far (in its file and machine), as upstream drops
/// the sample then.
fn absolute(
    seq: &mut SequenceState,
    descriptors: Option<&Descriptors>,
    uuid: u64,
    value: f64,
) -> Option<f64> {
    let d = descriptors?.get(uuid).filter(|d| d.is_counter)?;
    if d.is_incremental_counter {
        let v = seq.incremental_counters.entry(uuid).or_insert(0.0);
        *v += value;
        Some(*v)
    } else {
        Some(value)
    }
}

#[cfg(test)]
mod tests;
