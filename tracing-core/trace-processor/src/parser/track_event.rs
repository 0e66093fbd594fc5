//! TrackEvent into tables: slices with depth and parent, instants,
//! counters, states, flows (v2 ids and v1 legacy bind ids), debug
//! annotations as args, interned names and categories, and the legacy
//! event phases B/E/X/I, on the track `tracker/track_resolution.rs` gives. The
//! event's bytes are the fields the loader did not read; its track uuid,
//! type, thread time and counter values come with the packet.

use crate::hash::HashMap;
use crate::tables::opt_u32::OptU32;

use protozero::varint::decode_varint;
use zerotrace_protos::protos::{
    DebugAnnotationDecoder, TracePacket, TrackEvent, TrackEventDecoder,
};

use super::Parser;
use super::debug_annotations;
use super::importer::{Importer, Input};
use super::interned_strings::interned_str;
use crate::column_store::strings::StrId;
use crate::packet_view::{FieldKinds, TrackEventView};
use crate::sequence_state::Generation;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{CounterRow, SliceRow, StateRow, ThreadTimes};
use crate::tracker::flows::FlowTracker;
use crate::tracker::slices::EndKey;
use crate::tracker::tracks::{EventType, TrackSpec};
use zerotrace_protos::protos::track_event::LegacyEventDecoder;

/// InternedData fields.
const EVENT_CATEGORIES: u32 = 1;
const EVENT_NAMES: u32 = 2;

/// TrackEvent's state across packets (which track an event goes on is
/// `track_resolution.rs`'s).
#[derive(Debug, Default)]
pub struct TrackEventState {
    /// Flows (v2 ids, bind ids and v1 legacy flows).
    flows: FlowTracker,
    /// Open state per state track: (state row).
    open_states: HashMap<u32, usize>,
    /// Interned names and categories already resolved to pool ids.
    names: super::interned_strings::InternedStrings,
    /// The args of the event being parsed (kept for its memory).
    args: ArgSetBuilder,
    /// Reflected fields' args by the bytes they came from.
    reflected: super::track_event_reflect::ReflectedCache,
    /// What `--crop-track-events` drops: the events before the range of
    /// interest (`range_of_interest.rs`).
    pub crop: super::range_of_interest::Crop,
}

impl TrackEventState {
    /// Adds the TrackEvent extensions an `extension_descriptor` packet
    /// declares to the schema events' fields are reflected by; whether
    /// any was added.
    pub fn add_extensions(&mut self, descriptor: &[u8]) -> bool {
        self.reflected.add_extensions(descriptor)
    }
}

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(TracePacket::FIELD_TRACK_EVENT, import)];

fn import(p: &mut Parser, input: &Input<'_>) {
    // A TrackEvent the loader dropped has no times: not parsed.
    if let Some(te) = input.packet.track_event {
        if p.track_event.crop.drops(input.packet.ts) {
            p.storage
                .stats
                .incr("track_event_dropped_packets_outside_of_range_of_interest");
            return;
        }
        parse(
            p,
            input.bytes,
            input.packet.ts,
            te,
            input.packet.generation,
            input.generation,
        );
    }
}

/// Parses one TrackEvent (the bytes of the fields the loader left), its
/// args collected in the state's builder, reused from event to event
/// instead of a list allocated per event.
fn parse(
    p: &mut Parser,
    rest: &[u8],
    ts: i64,
    te: TrackEventView<'_>,
    generation_idx: u32,
    generation: &Generation,
) {
    let mut args = std::mem::take(&mut p.track_event.args);
    args.clear();
    parse_event(p, rest, ts, te, generation_idx, generation, &mut args);
    p.track_event.args = args;
}

/// [`parse`]'s body: `args` is empty.
fn parse_event(
    p: &mut Parser,
    rest: &[u8],
    ts: i64,
    te: TrackEventView<'_>,
    generation_idx: u32,
    generation: &Generation,
    args: &mut ArgSetBuilder,
) {
    // Only the fields the loader did not read or decode: not a walk from
    // the start; the decoder reads the first part (nothing, for most
    // events), the debug annotations are the second, the other readers
    // read the last one.
    let facts = te.facts;
    let parts = facts.sections(rest);
    let ev = TrackEventDecoder::new(parts.fields);
    let rest = parts.last;
    let decoded = facts.decoded();
    let te = te.times;
    let default_uuid = generation.decoded_defaults.track_uuid;
    let legacy = ev.legacy_event();

    // Name and category (an interned one's pool id is kept per sequence
    // generation: `interned_strings.rs`).
    let name_iid = decoded
        .name_iid
        .or_else(|| ev.name_iid())
        .or_else(|| legacy.as_ref().and_then(|l| l.name_iid()));
    let name_id = match (ev.name(), name_iid) {
        (Some(n), _) => p.storage.strings.intern(n),
        (None, Some(iid)) => p
            .track_event
            .names
            .resolve(
                &mut p.storage.strings,
                generation_idx,
                generation,
                EVENT_NAMES,
                iid,
            )
            .unwrap_or(StrId::NULL),
        (None, None) => StrId::NULL,
    };
    let one_iid = decoded.category_iid.or_else(|| {
        let mut iids = ev.category_iids();
        match (ev.categories().next(), iids.next(), iids.next()) {
            (None, Some(iid), None) => Some(iid),
            _ => None,
        }
    });
    let category_id = match one_iid {
        Some(iid) => p
            .track_event
            .names
            .resolve(
                &mut p.storage.strings,
                generation_idx,
                generation,
                EVENT_CATEGORIES,
                iid,
            )
            .unwrap_or(StrId::NULL),
        None => {
            let mut cats: Vec<std::borrow::Cow<'_, str>> =
                ev.categories().map(std::borrow::Cow::Borrowed).collect();
            for iid in ev.category_iids() {
                if let Some(c) = interned_str(generation, EVENT_CATEGORIES, iid) {
                    cats.push(c);
                }
            }
            let category = match cats.len() {
                0 => None,
                1 => cats.pop(),
                _ => Some(std::borrow::Cow::Owned(cats.join(","))),
            };
            p.storage.strings.intern_opt(category.as_deref())
        }
    };

    // The track.
    let (resolution, mut cx) = p.track_resolver();
    let Ok(assoc) = resolution.associate(
        &mut cx,
        &facts,
        legacy.as_ref(),
        generation,
        default_uuid,
        name_id,
        category_id,
    ) else {
        p.storage.stats.incr("track_event_parser_errors");
        return;
    };
    let track = assoc.track;
    let uuid = assoc.uuid;

    // Thread time and instruction count given on the event itself: values
    // on the thread's counter tracks, as upstream records them.
    if let Some(utid) = assoc.utid {
        for (name, value) in [
            ("thread_time", te.thread_ts),
            ("thread_instruction_count", te.thread_instruction_count),
        ] {
            if let Some(v) = value {
                let mut spec = TrackSpec::new(Some(name), name, EventType::Counter);
                spec.utid = Some(utid);
                let id = p.tracks.interned_counter(&mut p.storage, &spec);
                p.storage.counters.push(CounterRow {
                    ts,
                    track_id: id,
                    value: v as f64,
                    arg_set_id: OptU32::NONE,
                });
            }
        }
    }

    // Extra counters.
    for &(cu, value) in &te.extra_counters {
        let (resolution, mut cx) = p.track_resolver();
        if let Some(r) = resolution.resolve(&mut cx, cu) {
            let value = value * p.track_resolution.unit_multiplier(cu);
            p.storage.counters.push(CounterRow {
                ts,
                track_id: r.track_id,
                value,
                arg_set_id: OptU32::NONE,
            });
        }
    }

    let ty = facts.type_raw().unwrap_or(0);
    let phase = legacy.as_ref().and_then(|l| l.phase()).unwrap_or(0);
    if ty == 4 {
        // TYPE_COUNTER.
        if track.event_type != EventType::Counter {
            p.storage.stats.incr("track_event_parser_errors");
            return;
        }
        let value = te.counter_value.unwrap_or(0.0)
            * uuid.map_or(1.0, |u| p.track_resolution.unit_multiplier(u));
        p.storage.counters.push(CounterRow {
            ts,
            track_id: track.track_id,
            value,
            arg_set_id: OptU32::NONE,
        });
        return;
    }

    // An end's args join the open args of the slice it closes, as upstream
    // keeps one set per slice on the stack: a key given again takes the
    // end's value, an array goes on numbering its entries.
    let ends = matches!(
        (ty, u8::try_from(phase).unwrap_or(0)),
        (2, _) | (0, b'E' | b'e' | b'F')
    );
    // An end closes the innermost open slice of its category and name.
    let end_key = EndKey {
        category: category_id,
        name: name_id,
    };
    let mut closing = if ends && track.event_type == EventType::Slice {
        p.slices
            .args_for_end(&mut p.storage, track.track_id, ts, end_key)
    } else {
        None
    };
    let mut arrays = match closing.as_mut() {
        Some(open) => {
            std::mem::swap(args, &mut open.args);
            std::mem::take(&mut open.arrays)
        }
        None => debug_annotations::ArrayIndexes::default(),
    };

    // Typed fields first, then debug annotations, as upstream adds them.
    let mut names = debug_annotations::NameSource {
        generation,
        generation_idx,
        cache: &mut p.track_event.names,
    };
    // The loader's walk noted which kinds of field the bytes hold: the
    // readers of the few events with typed, reflected or extension fields
    // walk them, the others do not.
    let kinds = facts.fields();
    if kinds.contains(FieldKinds::TYPED) {
        super::track_event_args::add_typed(&mut p.storage, args, &mut names, rest, ts, assoc.utid);
    }
    // A legacy async event's id (the one its track was found by), and the
    // thread it ran on, as upstream records them on the slice.
    let legacy_async = matches!(
        u8::try_from(phase).unwrap_or(0),
        b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F'
    );
    if legacy_async {
        let source = legacy
            .as_ref()
            .and_then(|l| l.unscoped_id().or(l.global_id()).or(l.local_id()));
        if let Some(id) = source {
            let k = p.storage.strings.intern("legacy_trace_source_id");
            args.add(k, k, ArgValue::Int(id as i64));
        }
    }
    if kinds.contains(FieldKinds::REFLECTED) {
        let active_pids = super::track_event_reflect::add(
            &mut p.storage,
            &mut p.profiling.stacks,
            &mut p.track_event.reflected,
            args,
            generation_idx,
            generation,
            rest,
        );
        for pid in active_pids {
            (p.chrome_active_processes).add_active(&mut p.processes, &mut p.storage, ts, pid);
        }
    }
    for a in annotations(parts.annotations) {
        let a = DebugAnnotationDecoder::new(a);
        if !debug_annotations::add(&mut p.storage, args, &mut arrays, &mut names, &a) {
            p.storage.stats.incr("track_event_parser_errors");
        }
    }
    if let Some(utid) = assoc.utid.filter(|_| legacy_async) {
        // The begin's thread stays when its end ran on another one.
        let k = p.storage.strings.intern("legacy_event.passthrough_utid");
        if !args.args().iter().any(|a| a.key == k) {
            args.add(k, k, ArgValue::Uint(u64::from(utid)));
        }
    }

    if ty == 5 {
        // TYPE_STATE.
        if track.event_type != EventType::State {
            p.storage.stats.incr("track_event_parser_errors");
            return;
        }
        if name_id.is_null() {
            // A state event without a value ends the current state.
            if let Some(prev) = p.track_event.open_states.remove(&track.track_id) {
                if let Some(s) = p.storage.states.get_mut(prev) {
                    s.dur = ts.saturating_sub(s.ts);
                }
            }
            return;
        }
        let arg_set_id = p.storage.args.add_set(args);
        let value = name_id;
        let category = category_id;
        if let Some(prev) = p.track_event.open_states.get(&track.track_id) {
            if let Some(s) = p.storage.states.get_mut(*prev) {
                s.dur = ts.saturating_sub(s.ts);
            }
        }
        p.track_event
            .open_states
            .insert(track.track_id, p.storage.states.len());
        p.storage.states.push(StateRow {
            ts,
            dur: -1,
            track_id: track.track_id,
            category,
            value,
            arg_set_id,
        });
        return;
    }
    if track.event_type != EventType::Slice {
        p.storage.stats.incr("track_event_parser_errors");
        return;
    }

    p.track_resolution
        .event_on_track(&mut p.storage, track.track_id, name_id);
    let row = |args: Option<u32>, dur: i64| SliceRow {
        ts,
        dur,
        track_id: track.track_id,
        category: category_id,
        name: name_id,
        arg_set_id: args.into(),
        ..SliceRow::default()
    };
    // The thread times a new slice starts with, kept apart from its row.
    let started = ThreadTimes {
        ts: te.thread_ts,
        instruction_count: te.thread_instruction_count,
        ..ThreadTimes::default()
    };
    let timed = |p: &mut Parser, id: Option<u32>| {
        if let Some(id) = id.filter(|_| !started.is_empty()) {
            p.storage.slice_threads.set(id, started);
        }
        id
    };
    let track_id = track.track_id;
    let phase = u8::try_from(phase).unwrap_or(0);
    if ty == 0 && matches!(phase, b's' | b't' | b'f') {
        legacy_flow_v1(
            p,
            legacy.as_ref(),
            phase,
            track_id,
            ts,
            name_id,
            category_id,
        );
        return;
    }
    let slice_id = match (ty, phase) {
        (1, _) | (0, b'B' | b'b' | b'S') => {
            if (ty, phase) == (0, b'S') {
                // A legacy async begin keeps its phase, for JSON export.
                legacy_phase_arg(p, args, "S");
            }
            let open = open_args(p, args, arrays);
            let id = p
                .slices
                .begin_with_args(&mut p.storage, row(None, -1), open);
            timed(p, id)
        }
        (2, _) | (0, b'E' | b'e' | b'F') => match closing {
            Some(mut open) => {
                std::mem::swap(args, &mut open.args);
                open.arrays = arrays;
                p.slices
                    .end_with_args(&mut p.storage, track_id, ts, te.thread_ts, open, end_key)
            }
            None => p
                .slices
                .end_matching(&mut p.storage, track_id, ts, te.thread_ts, end_key),
        },
        (3, _) | (0, b'I' | b'i' | b'R' | b'n') => {
            if (ty, phase) == (0, b'R') {
                // A legacy mark keeps its phase, for JSON export.
                legacy_phase_arg(p, args, "R");
            }
            let open = open_args(p, args, arrays);
            let id = p
                .slices
                .instant_with_args(&mut p.storage, row(None, 0), open);
            timed(p, id)
        }
        (0, b'T' | b'p') => {
            // An async step: an instant with the phase kept as an arg.
            legacy_phase_arg(p, args, if phase == b'T' { "T" } else { "p" });
            let open = open_args(p, args, arrays);
            let id = p
                .slices
                .instant_with_args(&mut p.storage, row(None, 0), open);
            timed(p, id)
        }
        (0, b'X') => {
            let dur = legacy
                .as_ref()
                .and_then(|l| l.duration_us())
                .unwrap_or(0)
                .saturating_mul(1000);
            // A dropped slice (negative or partly overlapping) leaves no
            // args behind.
            let open = open_args(p, args, arrays);
            let Some(id) = p
                .slices
                .complete_with_args(&mut p.storage, row(None, dur), open)
            else {
                return;
            };
            timed(p, Some(id));
            if let Some(tdur) = legacy.as_ref().and_then(|l| l.thread_duration_us()) {
                (p.storage.slice_threads).update(id, |t| t.dur = Some(tdur.saturating_mul(1000)));
            }
            Some(id)
        }
        _ => {
            p.storage.stats.incr("track_event_parser_errors");
            None
        }
    };
    let Some(slice_id) = slice_id else {
        return;
    };
    let upid = assoc
        .utid
        .and_then(|u| p.storage.threads.get(u as usize))
        .and_then(|t| t.upid);
    if let Some(callsite) =
        super::track_event_callstack::callsite(p, &ev, generation_idx, generation, upid)
    {
        super::track_event_callstack::record(p, &ev, slice_id, track_id, callsite, ty == 2);
    }
    if !matches!((ty, phase), (2, _) | (0, b'E' | b'e' | b'F')) {
        p.track_event
            .flows
            .slice_began(&mut p.storage, track_id, slice_id);
    }

    // Flows by bind id (LegacyEvent.flow_direction).
    if let Some(l) = &legacy {
        if let Some(bind) = l.bind_id() {
            let flows = &mut p.track_event.flows;
            match l.flow_direction_raw() {
                Some(2) => flows.begin(&mut p.storage, slice_id, bind),
                Some(3) => flows.step(&mut p.storage, slice_id, bind),
                Some(1) => flows.end(&mut p.storage, slice_id, bind, false),
                _ => p.storage.stats.incr("flow_without_direction"),
            }
        }
    }
    // Flows by v2 ids.
    let ids: Vec<u64> = if ev.has_flow_ids() {
        ev.flow_ids().collect()
    } else {
        ev.flow_ids_old().collect()
    };
    for id in ids {
        let flows = &mut p.track_event.flows;
        if flows.is_active(id) {
            flows.step(&mut p.storage, slice_id, id);
        } else {
            flows.begin(&mut p.storage, slice_id, id);
        }
    }
    let ids: Vec<u64> = if ev.has_terminating_flow_ids() {
        ev.terminating_flow_ids().collect()
    } else {
        ev.terminating_flow_ids_old().collect()
    };
    for id in ids {
        let flows = &mut p.track_event.flows;
        if flows.is_active(id) {
            flows.end(&mut p.storage, slice_id, id, true);
        }
    }
    if kinds.contains(FieldKinds::EXTENSION) {
        super::gpu_render_stage::track_event_correlation(p, rest, slice_id);
        super::android_framework_track_event::on_slice(p, rest, slice_id);
    }
}

/// The debug annotations' part of an event's bytes (each a
/// `debug_annotations` field, as the loader's walk copied it): each
/// annotation's message; it stops at bytes that do not read as one.
fn annotations(mut part: &[u8]) -> impl Iterator<Item = &[u8]> {
    const TAG: u64 = ((TrackEvent::FIELD_DEBUG_ANNOTATIONS as u64) << 3) | 2;
    std::iter::from_fn(move || {
        let (tag, n) = decode_varint(part).ok()?;
        if tag != TAG {
            return None;
        }
        let after = part.get(n..)?;
        let (len, m) = decode_varint(after).ok()?;
        let body = after.get(m..)?;
        let len = usize::try_from(len).ok()?;
        let (message, next) = (body.get(..len)?, body.get(len..)?);
        part = next;
        Some(message)
    })
}

/// A v1 legacy flow event (`s`, `t`, `f`): it binds to the slice open on
/// its track, or an `f` without `bind_to_enclosing` to the next slice that
/// begins there.
fn legacy_flow_v1(
    p: &mut Parser,
    legacy: Option<&LegacyEventDecoder<'_>>,
    phase: u8,
    track_id: u32,
    ts: i64,
    name: StrId,
    category: StrId,
) {
    let source = legacy.and_then(|l| l.unscoped_id().or(l.local_id()).or(l.global_id()));
    let Some(source) = source else {
        p.storage.stats.incr("flow_invalid_id");
        return;
    };
    let flow = p.track_event.flows.v1_id(source, category, name);
    let bind_enclosing = legacy.and_then(|l| l.bind_to_enclosing()).unwrap_or(false);
    if phase == b'f' && !bind_enclosing {
        p.track_event.flows.end_at_next_slice(track_id, flow);
        return;
    }
    let Some(open) = p.slices.topmost(&mut p.storage, track_id, ts) else {
        p.storage.stats.incr("flow_no_enclosing_slice");
        return;
    };
    let flows = &mut p.track_event.flows;
    match phase {
        b's' => flows.begin(&mut p.storage, open, flow),
        b't' => flows.step(&mut p.storage, open, flow),
        _ => flows.end(&mut p.storage, open, flow, false),
    }
}

/// The event's args as the open args of the slice it makes (kept on the
/// stack until the slice leaves it); None when it has none. `args` is left
/// empty, holding the memory of a set taken back earlier.
/// Adds `legacy_event.phase` (a legacy event's phase letter) to `args`.
fn legacy_phase_arg(p: &mut Parser, args: &mut ArgSetBuilder, phase: &str) {
    let k = p.storage.strings.intern("legacy_event.phase");
    let v = p.storage.strings.intern(phase);
    args.add(k, k, ArgValue::String(v));
}

fn open_args(
    p: &mut Parser,
    args: &mut ArgSetBuilder,
    arrays: debug_annotations::ArrayIndexes,
) -> Option<Box<crate::tracker::slice_args::PendingArgs>> {
    if args.is_empty() {
        return None;
    }
    let mut open = p.slices.open_args();
    std::mem::swap(args, &mut open.args);
    open.arrays = arrays;
    Some(open)
}
