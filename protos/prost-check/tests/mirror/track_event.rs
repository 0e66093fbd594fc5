//! TrackEvent and what it nests (SourceLocation, InlineCallstack, LegacyEvent,
//! and debug annotations from the sibling module): strategies over the prost
//! types, and the copy through our writers and back out of our decoders.

use proptest::prelude::*;
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

use super::debug_annotation::{debug_annotation, read_debug_annotation, write_debug_annotation};
use super::write_repeated;
use super::{Layout, checked, double, enum_number, few, maybe, messages, scalars, strings, text};

// ---- strategies -------------------------------------------------------------

/// A source location with any subset of its fields.
pub fn source_location() -> BoxedStrategy<pb::SourceLocation> {
    (
        maybe(any::<u64>()),
        maybe(text()),
        maybe(text()),
        maybe(any::<u32>()),
    )
        .prop_map(
            |(iid, file_name, function_name, line_number)| pb::SourceLocation {
                iid,
                file_name,
                function_name,
                line_number,
            },
        )
        .boxed()
}

fn legacy_event() -> BoxedStrategy<pb::track_event::LegacyEvent> {
    use pb::track_event::legacy_event::Id;
    let id = prop_oneof![
        any::<u64>().prop_map(Id::UnscopedId),
        any::<u64>().prop_map(Id::LocalId),
        any::<u64>().prop_map(Id::GlobalId),
    ];
    let first = (
        maybe(any::<u64>()),
        maybe(any::<i32>()),
        maybe(any::<i64>()),
        maybe(any::<i64>()),
        maybe(any::<i64>()),
        maybe(id),
        maybe(text()),
    );
    let second = (
        maybe(any::<bool>()),
        maybe(any::<u64>()),
        maybe(any::<bool>()),
        maybe(enum_number()),
        maybe(enum_number()),
        maybe(any::<i32>()),
        maybe(any::<i32>()),
    );
    (first, second)
        .prop_map(|(a, b)| pb::track_event::LegacyEvent {
            name_iid: a.0,
            phase: a.1,
            duration_us: a.2,
            thread_duration_us: a.3,
            thread_instruction_delta: a.4,
            id: a.5,
            id_scope: a.6,
            use_async_tts: b.0,
            bind_id: b.1,
            bind_to_enclosing: b.2,
            flow_direction: b.3,
            instant_event_scope: b.4,
            pid_override: b.5,
            tid_override: b.6,
        })
        .boxed()
}

/// A track event using every field family zerotrace writes (and then some).
pub fn track_event() -> BoxedStrategy<pb::TrackEvent> {
    use pb::track_event::inline_callstack::Frame;
    use pb::track_event::{
        CallstackField, CorrelationIdField, CounterValueField, InlineCallstack, NameField,
        SourceLocationField, ThreadInstructionCount, ThreadTime, Timestamp,
    };
    let name = prop_oneof![
        any::<u64>().prop_map(NameField::NameIid),
        text().prop_map(NameField::Name),
    ];
    let counter = prop_oneof![
        any::<i64>().prop_map(CounterValueField::CounterValue),
        double().prop_map(CounterValueField::DoubleCounterValue),
    ];
    let correlation = prop_oneof![
        any::<u64>().prop_map(CorrelationIdField::CorrelationId),
        text().prop_map(CorrelationIdField::CorrelationIdStr),
        any::<u64>().prop_map(CorrelationIdField::CorrelationIdStrIid),
    ];
    let frame = (maybe(text()), maybe(text()), maybe(any::<u32>())).prop_map(
        |(function_name, source_file, line_number)| Frame {
            function_name,
            source_file,
            line_number,
        },
    );
    let callstack = prop_oneof![
        few(frame).prop_map(|frames| CallstackField::Callstack(InlineCallstack { frames })),
        any::<u64>().prop_map(CallstackField::CallstackIid),
    ];
    let location = prop_oneof![
        source_location().prop_map(SourceLocationField::SourceLocation),
        any::<u64>().prop_map(SourceLocationField::SourceLocationIid),
    ];
    let timestamp = prop_oneof![
        any::<i64>().prop_map(Timestamp::TimestampDeltaUs),
        any::<i64>().prop_map(Timestamp::TimestampAbsoluteUs),
    ];
    let thread_time = prop_oneof![
        any::<i64>().prop_map(ThreadTime::ThreadTimeDeltaUs),
        any::<i64>().prop_map(ThreadTime::ThreadTimeAbsoluteUs),
    ];
    let instructions = prop_oneof![
        any::<i64>().prop_map(ThreadInstructionCount::ThreadInstructionCountDelta),
        any::<i64>().prop_map(ThreadInstructionCount::ThreadInstructionCountAbsolute),
    ];
    let identity = (
        few(any::<u64>()),
        few(text()),
        maybe(name),
        maybe(enum_number()),
        maybe(any::<u64>()),
        maybe(counter),
    );
    let extras = (
        few(any::<u64>()),
        few(any::<i64>()),
        few(any::<u64>()),
        few(double()),
        few(any::<u64>()),
        few(any::<u64>()),
    );
    let more = (
        maybe(correlation),
        maybe(callstack),
        maybe(double()),
        few(debug_annotation()),
        maybe(location),
    );
    let times = (
        maybe(timestamp),
        maybe(thread_time),
        maybe(instructions),
        maybe(legacy_event()),
    );
    (identity, extras, more, times)
        .prop_map(|(i, x, m, t)| pb::TrackEvent {
            category_iids: i.0,
            categories: i.1,
            name_field: i.2,
            r#type: i.3,
            track_uuid: i.4,
            counter_value_field: i.5,
            extra_counter_track_uuids: x.0,
            extra_counter_values: x.1,
            extra_double_counter_track_uuids: x.2,
            extra_double_counter_values: x.3,
            flow_ids: x.4,
            terminating_flow_ids: x.5,
            correlation_id_field: m.0,
            callstack_field: m.1,
            callstack_weight: m.2,
            debug_annotations: m.3,
            source_location_field: m.4,
            timestamp: t.0,
            thread_time: t.1,
            thread_instruction_count: t.2,
            legacy_event: t.3,
            ..Default::default()
        })
        .boxed()
}

// ---- prost value -> generated writers --------------------------------------

/// Copies a source location.
pub fn write_source_location(v: &pb::SourceLocation, w: &mut zp::SourceLocation<'_>) {
    v.iid.map(|x| w.set_iid(x));
    v.file_name.as_deref().map(|x| w.set_file_name(x));
    v.function_name.as_deref().map(|x| w.set_function_name(x));
    v.line_number.map(|x| w.set_line_number(x));
}

fn write_legacy_event(v: &pb::track_event::LegacyEvent, w: &mut zp::track_event::LegacyEvent<'_>) {
    use pb::track_event::legacy_event::Id;
    use zp::track_event::legacy_event::{FlowDirection, InstantEventScope};
    v.name_iid.map(|x| w.set_name_iid(x));
    v.phase.map(|x| w.set_phase(x));
    v.duration_us.map(|x| w.set_duration_us(x));
    v.thread_duration_us.map(|x| w.set_thread_duration_us(x));
    v.thread_instruction_delta
        .map(|x| w.set_thread_instruction_delta(x));
    match v.id {
        Some(Id::UnscopedId(x)) => _ = w.set_unscoped_id(x),
        Some(Id::LocalId(x)) => _ = w.set_local_id(x),
        Some(Id::GlobalId(x)) => _ = w.set_global_id(x),
        None => {}
    }
    v.id_scope.as_deref().map(|x| w.set_id_scope(x));
    v.use_async_tts.map(|x| w.set_use_async_tts(x));
    v.bind_id.map(|x| w.set_bind_id(x));
    v.bind_to_enclosing.map(|x| w.set_bind_to_enclosing(x));
    if let Some(x) = v.flow_direction {
        match FlowDirection::from_i32(x) {
            Some(known) => w.set_flow_direction(known),
            None => w.set_flow_direction_raw(x),
        };
    }
    if let Some(x) = v.instant_event_scope {
        match InstantEventScope::from_i32(x) {
            Some(known) => w.set_instant_event_scope(known),
            None => w.set_instant_event_scope_raw(x),
        };
    }
    v.pid_override.map(|x| w.set_pid_override(x));
    v.tid_override.map(|x| w.set_tid_override(x));
}

/// Copies a track event; repeated scalars follow `layout`.
pub fn write_track_event(v: &pb::TrackEvent, w: &mut zp::TrackEvent<'_>, layout: Layout) {
    use pb::track_event::{
        CallstackField, CorrelationIdField, CounterValueField, NameField, SourceLocationField,
        ThreadInstructionCount, ThreadTime, Timestamp,
    };
    use zp::TrackEvent as T;
    let varints = |id| {
        move |w: &mut T<'_>, xs: &[u64]| w.message().append_packed_varint(id, xs.iter().copied())
    };
    write_repeated(
        w,
        &v.category_iids,
        layout,
        varints(T::FIELD_CATEGORY_IIDS),
        |w, x| {
            w.add_category_iids(x);
        },
    );
    for c in &v.categories {
        w.add_categories(c);
    }
    match &v.name_field {
        Some(NameField::NameIid(x)) => _ = w.set_name_iid(*x),
        Some(NameField::Name(x)) => _ = w.set_name(x),
        None => {}
    }
    if let Some(t) = v.r#type {
        match zp::track_event::Type::from_i32(t) {
            Some(known) => w.set_type(known),
            None => w.set_type_raw(t),
        };
    }
    v.track_uuid.map(|x| w.set_track_uuid(x));
    match v.counter_value_field {
        Some(CounterValueField::CounterValue(x)) => _ = w.set_counter_value(x),
        Some(CounterValueField::DoubleCounterValue(x)) => _ = w.set_double_counter_value(x),
        None => {}
    }
    let extra_tracks = varints(T::FIELD_EXTRA_COUNTER_TRACK_UUIDS);
    write_repeated(
        w,
        &v.extra_counter_track_uuids,
        layout,
        extra_tracks,
        |w, x| {
            w.add_extra_counter_track_uuids(x);
        },
    );
    let int64s = |w: &mut T<'_>, xs: &[i64]| {
        let raw = xs.iter().map(|&x| x as u64);
        w.message()
            .append_packed_varint(T::FIELD_EXTRA_COUNTER_VALUES, raw);
    };
    write_repeated(w, &v.extra_counter_values, layout, int64s, |w, x| {
        w.add_extra_counter_values(x);
    });
    let double_tracks = varints(T::FIELD_EXTRA_DOUBLE_COUNTER_TRACK_UUIDS);
    write_repeated(
        w,
        &v.extra_double_counter_track_uuids,
        layout,
        double_tracks,
        |w, x| {
            w.add_extra_double_counter_track_uuids(x);
        },
    );
    let doubles = |w: &mut T<'_>, xs: &[f64]| {
        w.message()
            .append_packed_double(T::FIELD_EXTRA_DOUBLE_COUNTER_VALUES, xs);
    };
    write_repeated(
        w,
        &v.extra_double_counter_values,
        layout,
        doubles,
        |w, x| {
            w.add_extra_double_counter_values(x);
        },
    );
    let fixed = |id| move |w: &mut T<'_>, xs: &[u64]| w.message().append_packed_fixed64(id, xs);
    write_repeated(w, &v.flow_ids, layout, fixed(T::FIELD_FLOW_IDS), |w, x| {
        w.add_flow_ids(x);
    });
    let terminating = fixed(T::FIELD_TERMINATING_FLOW_IDS);
    write_repeated(w, &v.terminating_flow_ids, layout, terminating, |w, x| {
        w.add_terminating_flow_ids(x);
    });
    match &v.correlation_id_field {
        Some(CorrelationIdField::CorrelationId(x)) => _ = w.set_correlation_id(*x),
        Some(CorrelationIdField::CorrelationIdStr(x)) => _ = w.set_correlation_id_str(x),
        Some(CorrelationIdField::CorrelationIdStrIid(x)) => _ = w.set_correlation_id_str_iid(*x),
        None => {}
    }
    match &v.callstack_field {
        Some(CallstackField::Callstack(stack)) => {
            let mut c = w.begin_callstack();
            for f in &stack.frames {
                let mut frame = c.add_frames();
                f.function_name
                    .as_deref()
                    .map(|x| frame.set_function_name(x));
                f.source_file.as_deref().map(|x| frame.set_source_file(x));
                f.line_number.map(|x| frame.set_line_number(x));
            }
        }
        Some(CallstackField::CallstackIid(x)) => _ = w.set_callstack_iid(*x),
        None => {}
    }
    v.callstack_weight.map(|x| w.set_callstack_weight(x));
    for a in &v.debug_annotations {
        write_debug_annotation(a, &mut w.add_debug_annotations());
    }
    match &v.source_location_field {
        Some(SourceLocationField::SourceLocation(x)) => {
            write_source_location(x, &mut w.begin_source_location());
        }
        Some(SourceLocationField::SourceLocationIid(x)) => _ = w.set_source_location_iid(*x),
        None => {}
    }
    match v.timestamp {
        Some(Timestamp::TimestampDeltaUs(x)) => _ = w.set_timestamp_delta_us(x),
        Some(Timestamp::TimestampAbsoluteUs(x)) => _ = w.set_timestamp_absolute_us(x),
        None => {}
    }
    match v.thread_time {
        Some(ThreadTime::ThreadTimeDeltaUs(x)) => _ = w.set_thread_time_delta_us(x),
        Some(ThreadTime::ThreadTimeAbsoluteUs(x)) => _ = w.set_thread_time_absolute_us(x),
        None => {}
    }
    match v.thread_instruction_count {
        Some(ThreadInstructionCount::ThreadInstructionCountDelta(x)) => {
            w.set_thread_instruction_count_delta(x);
        }
        Some(ThreadInstructionCount::ThreadInstructionCountAbsolute(x)) => {
            w.set_thread_instruction_count_absolute(x);
        }
        None => {}
    }
    if let Some(legacy) = &v.legacy_event {
        write_legacy_event(legacy, &mut w.begin_legacy_event());
    }
}

// ---- generated decoders -> prost value -------------------------------------

/// Rebuilds a source location.
pub fn read_source_location(d: &zp::SourceLocationDecoder<'_>) -> pb::SourceLocation {
    pb::SourceLocation {
        iid: d.iid(),
        file_name: d.file_name().map(str::to_owned),
        function_name: d.function_name().map(str::to_owned),
        line_number: d.line_number(),
    }
}

fn read_legacy_event(d: &zp::track_event::LegacyEventDecoder<'_>) -> pb::track_event::LegacyEvent {
    use pb::track_event::legacy_event as p;
    use zp::track_event::legacy_event as g;
    pb::track_event::LegacyEvent {
        name_iid: d.name_iid(),
        phase: d.phase(),
        duration_us: d.duration_us(),
        thread_duration_us: d.thread_duration_us(),
        thread_instruction_delta: d.thread_instruction_delta(),
        id: d.which_id().map(|id| match id {
            g::Id::UnscopedId(x) => p::Id::UnscopedId(x),
            g::Id::LocalId(x) => p::Id::LocalId(x),
            g::Id::GlobalId(x) => p::Id::GlobalId(x),
        }),
        id_scope: d.id_scope().map(str::to_owned),
        use_async_tts: d.use_async_tts(),
        bind_id: d.bind_id(),
        bind_to_enclosing: d.bind_to_enclosing(),
        flow_direction: d.flow_direction_raw(),
        instant_event_scope: d.instant_event_scope_raw(),
        pid_override: d.pid_override(),
        tid_override: d.tid_override(),
    }
}

/// Rebuilds a track event from the fields [`write_track_event`] covers.
pub fn read_track_event(d: &zp::TrackEventDecoder<'_>) -> pb::TrackEvent {
    use pb::track_event as p;
    use zp::track_event as g;
    super::check_enum(d.r#type(), d.type_raw());
    assert_eq!(d.has_track_uuid(), d.track_uuid().is_some());
    let callstack_field = d.which_callstack_field().map(|c| match c {
        g::CallstackField::Callstack(stack) => {
            let frames = messages(checked(stack).frames(), |f| p::inline_callstack::Frame {
                function_name: f.function_name().map(str::to_owned),
                source_file: f.source_file().map(str::to_owned),
                line_number: f.line_number(),
            });
            p::CallstackField::Callstack(p::InlineCallstack { frames })
        }
        g::CallstackField::CallstackIid(x) => p::CallstackField::CallstackIid(x),
    });
    pb::TrackEvent {
        category_iids: scalars(d.category_iids()),
        categories: strings(d.categories()),
        name_field: d.which_name_field().map(|n| match n {
            g::NameField::NameIid(x) => p::NameField::NameIid(x),
            g::NameField::Name(x) => p::NameField::Name(x.to_owned()),
        }),
        r#type: d.type_raw(),
        track_uuid: d.track_uuid(),
        counter_value_field: d.which_counter_value_field().map(|c| match c {
            g::CounterValueField::CounterValue(x) => p::CounterValueField::CounterValue(x),
            g::CounterValueField::DoubleCounterValue(x) => {
                p::CounterValueField::DoubleCounterValue(x)
            }
        }),
        extra_counter_track_uuids: scalars(d.extra_counter_track_uuids()),
        extra_counter_values: scalars(d.extra_counter_values()),
        extra_double_counter_track_uuids: scalars(d.extra_double_counter_track_uuids()),
        extra_double_counter_values: scalars(d.extra_double_counter_values()),
        flow_ids: scalars(d.flow_ids()),
        terminating_flow_ids: scalars(d.terminating_flow_ids()),
        correlation_id_field: d.which_correlation_id_field().map(|c| match c {
            g::CorrelationIdField::CorrelationId(x) => p::CorrelationIdField::CorrelationId(x),
            g::CorrelationIdField::CorrelationIdStr(x) => {
                p::CorrelationIdField::CorrelationIdStr(x.to_owned())
            }
            g::CorrelationIdField::CorrelationIdStrIid(x) => {
                p::CorrelationIdField::CorrelationIdStrIid(x)
            }
        }),
        callstack_field,
        callstack_weight: d.callstack_weight(),
        debug_annotations: messages(d.debug_annotations(), read_debug_annotation),
        source_location_field: d.which_source_location_field().map(|s| match s {
            g::SourceLocationField::SourceLocation(x) => {
                p::SourceLocationField::SourceLocation(read_source_location(&checked(x)))
            }
            g::SourceLocationField::SourceLocationIid(x) => {
                p::SourceLocationField::SourceLocationIid(x)
            }
        }),
        timestamp: d.which_timestamp().map(|t| match t {
            g::Timestamp::TimestampDeltaUs(x) => p::Timestamp::TimestampDeltaUs(x),
            g::Timestamp::TimestampAbsoluteUs(x) => p::Timestamp::TimestampAbsoluteUs(x),
        }),
        thread_time: d.which_thread_time().map(|t| match t {
            g::ThreadTime::ThreadTimeDeltaUs(x) => p::ThreadTime::ThreadTimeDeltaUs(x),
            g::ThreadTime::ThreadTimeAbsoluteUs(x) => p::ThreadTime::ThreadTimeAbsoluteUs(x),
        }),
        thread_instruction_count: d.which_thread_instruction_count().map(|t| match t {
            g::ThreadInstructionCount::ThreadInstructionCountDelta(x) => {
                p::ThreadInstructionCount::ThreadInstructionCountDelta(x)
            }
            g::ThreadInstructionCount::ThreadInstructionCountAbsolute(x) => {
                p::ThreadInstructionCount::ThreadInstructionCountAbsolute(x)
            }
        }),
        legacy_event: d.legacy_event().map(|l| read_legacy_event(&checked(l))),
        ..Default::default()
    }
}
