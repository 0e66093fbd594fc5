//! Per-sequence state a reader keeps: InternedData (the kinds TrackEvent
//! uses) and ClockSnapshot: strategies over the prost types, and the copy
//! through our writers and back out of our decoders.

use proptest::prelude::*;
use protozero::Message;
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

use super::track_event::{read_source_location, source_location, write_source_location};
use super::{Layout, Mirror, blob, checked, enum_number, few, maybe, messages, text};

// ---- strategies -------------------------------------------------------------

/// Interned strings and source locations of the kinds TrackEvent uses.
pub fn interned_data() -> BoxedStrategy<pb::InternedData> {
    let iid_name = || (maybe(any::<u64>()), maybe(text()));
    let interned_string = || {
        (maybe(any::<u64>()), maybe(blob())).prop_map(|(iid, str)| pb::InternedString { iid, str })
    };
    (
        few(iid_name().prop_map(|(iid, name)| pb::EventCategory { iid, name })),
        few(iid_name().prop_map(|(iid, name)| pb::EventName { iid, name })),
        few(iid_name().prop_map(|(iid, name)| pb::DebugAnnotationName { iid, name })),
        few(iid_name().prop_map(|(iid, name)| pb::DebugAnnotationValueTypeName { iid, name })),
        few(interned_string()),
        few(interned_string()),
        few(source_location()),
    )
        .prop_map(|v| pb::InternedData {
            event_categories: v.0,
            event_names: v.1,
            debug_annotation_names: v.2,
            debug_annotation_value_type_names: v.3,
            debug_annotation_string_values: v.4,
            correlation_id_str: v.5,
            source_locations: v.6,
            ..Default::default()
        })
        .boxed()
}

/// A clock snapshot with a few clocks.
pub fn clock_snapshot() -> BoxedStrategy<pb::ClockSnapshot> {
    let clock = (
        maybe(any::<u32>()),
        maybe(any::<u64>()),
        maybe(any::<bool>()),
        maybe(any::<u64>()),
    )
        .prop_map(|v| pb::clock_snapshot::Clock {
            clock_id: v.0,
            timestamp: v.1,
            is_incremental: v.2,
            unit_multiplier_ns: v.3,
        });
    (few(clock), maybe(enum_number()))
        .prop_map(|(clocks, primary_trace_clock)| pb::ClockSnapshot {
            clocks,
            primary_trace_clock,
        })
        .boxed()
}

// ---- prost value -> generated writers --------------------------------------

/// Copies interned data.
pub fn write_interned_data(v: &pb::InternedData, w: &mut zp::InternedData<'_>) {
    for x in &v.event_categories {
        let mut e = w.add_event_categories();
        x.iid.map(|i| e.set_iid(i));
        x.name.as_deref().map(|n| e.set_name(n));
    }
    for x in &v.event_names {
        let mut e = w.add_event_names();
        x.iid.map(|i| e.set_iid(i));
        x.name.as_deref().map(|n| e.set_name(n));
    }
    for x in &v.debug_annotation_names {
        let mut e = w.add_debug_annotation_names();
        x.iid.map(|i| e.set_iid(i));
        x.name.as_deref().map(|n| e.set_name(n));
    }
    for x in &v.debug_annotation_value_type_names {
        let mut e = w.add_debug_annotation_value_type_names();
        x.iid.map(|i| e.set_iid(i));
        x.name.as_deref().map(|n| e.set_name(n));
    }
    for x in &v.debug_annotation_string_values {
        let mut e = w.add_debug_annotation_string_values();
        x.iid.map(|i| e.set_iid(i));
        x.str.as_deref().map(|s| e.set_str(s));
    }
    for x in &v.correlation_id_str {
        let mut e = w.add_correlation_id_str();
        x.iid.map(|i| e.set_iid(i));
        x.str.as_deref().map(|s| e.set_str(s));
    }
    for x in &v.source_locations {
        write_source_location(x, &mut w.add_source_locations());
    }
}

/// Copies a clock snapshot.
pub fn write_clock_snapshot(v: &pb::ClockSnapshot, w: &mut zp::ClockSnapshot<'_>) {
    for c in &v.clocks {
        let mut clock = w.add_clocks();
        c.clock_id.map(|x| clock.set_clock_id(x));
        c.timestamp.map(|x| clock.set_timestamp(x));
        c.is_incremental.map(|x| clock.set_is_incremental(x));
        c.unit_multiplier_ns
            .map(|x| clock.set_unit_multiplier_ns(x));
    }
    set_enum!(
        w,
        v.primary_trace_clock,
        zp::BuiltinClock,
        set_primary_trace_clock,
        set_primary_trace_clock_raw
    );
}

// ---- generated decoders -> prost value -------------------------------------

/// Rebuilds interned data from the fields [`write_interned_data`] covers.
pub fn read_interned_data(d: &zp::InternedDataDecoder<'_>) -> pb::InternedData {
    let interned = |s: &zp::InternedStringDecoder<'_>| pb::InternedString {
        iid: s.iid(),
        str: s.str().map(<[u8]>::to_vec),
    };
    pb::InternedData {
        event_categories: messages(d.event_categories(), |e| pb::EventCategory {
            iid: e.iid(),
            name: e.name().map(str::to_owned),
        }),
        event_names: messages(d.event_names(), |e| pb::EventName {
            iid: e.iid(),
            name: e.name().map(str::to_owned),
        }),
        debug_annotation_names: messages(d.debug_annotation_names(), |e| pb::DebugAnnotationName {
            iid: e.iid(),
            name: e.name().map(str::to_owned),
        }),
        debug_annotation_value_type_names: messages(d.debug_annotation_value_type_names(), |e| {
            pb::DebugAnnotationValueTypeName {
                iid: e.iid(),
                name: e.name().map(str::to_owned),
            }
        }),
        debug_annotation_string_values: messages(d.debug_annotation_string_values(), interned),
        correlation_id_str: messages(d.correlation_id_str(), interned),
        source_locations: messages(d.source_locations(), read_source_location),
        ..Default::default()
    }
}

/// Rebuilds a clock snapshot.
pub fn read_clock_snapshot(d: &zp::ClockSnapshotDecoder<'_>) -> pb::ClockSnapshot {
    pb::ClockSnapshot {
        clocks: messages(d.clocks(), |c| pb::clock_snapshot::Clock {
            clock_id: c.clock_id(),
            timestamp: c.timestamp(),
            is_incremental: c.is_incremental(),
            unit_multiplier_ns: c.unit_multiplier_ns(),
        }),
        primary_trace_clock: get_enum!(d, primary_trace_clock, primary_trace_clock_raw),
    }
}

// ---- the messages on their own ----------------------------------------------

impl Mirror for pb::InternedData {
    fn write(&self, msg: Message<'_>, _: Layout) {
        write_interned_data(self, &mut zp::InternedData::from_message(msg));
    }
    fn read(bytes: &[u8]) -> Self {
        read_interned_data(&checked(zp::InternedDataDecoder::new(bytes)))
    }
}

impl Mirror for pb::ClockSnapshot {
    fn write(&self, msg: Message<'_>, _: Layout) {
        write_clock_snapshot(self, &mut zp::ClockSnapshot::from_message(msg));
    }
    fn read(bytes: &[u8]) -> Self {
        read_clock_snapshot(&checked(zp::ClockSnapshotDecoder::new(bytes)))
    }
}
