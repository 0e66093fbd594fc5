//! TrackDescriptor with its process, thread and counter descriptors:
//! strategies over the prost types, and the copy through our writers and back
//! out of our decoders.

use proptest::prelude::*;
use protozero::Message;
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

use super::{Layout, Mirror, checked, enum_number, few, maybe, strings, text};

// ---- strategies -------------------------------------------------------------

fn process_descriptor() -> BoxedStrategy<pb::ProcessDescriptor> {
    (
        maybe(any::<i32>()),
        few(text()),
        maybe(text()),
        maybe(any::<i32>()),
        maybe(any::<i64>()),
        maybe(enum_number()),
        maybe(any::<i32>()),
        few(text()),
    )
        .prop_map(|v| pb::ProcessDescriptor {
            pid: v.0,
            cmdline: v.1,
            process_name: v.2,
            process_priority: v.3,
            start_timestamp_ns: v.4,
            chrome_process_type: v.5,
            legacy_sort_index: v.6,
            process_labels: v.7,
        })
        .boxed()
}

fn thread_descriptor() -> BoxedStrategy<pb::ThreadDescriptor> {
    (
        maybe(any::<i32>()),
        maybe(any::<i64>()),
        maybe(text()),
        maybe(enum_number()),
        maybe(any::<i64>()),
        maybe(any::<i64>()),
        maybe(any::<i64>()),
        maybe(any::<i32>()),
    )
        .prop_map(|v| pb::ThreadDescriptor {
            pid: v.0,
            tid: v.1,
            thread_name: v.2,
            chrome_thread_type: v.3,
            reference_timestamp_us: v.4,
            reference_thread_time_us: v.5,
            reference_thread_instruction_count: v.6,
            legacy_sort_index: v.7,
        })
        .boxed()
}

fn counter_descriptor() -> BoxedStrategy<pb::CounterDescriptor> {
    (
        maybe(enum_number()),
        few(text()),
        maybe(enum_number()),
        maybe(text()),
        maybe(any::<i64>()),
        maybe(any::<bool>()),
        maybe(text()),
    )
        .prop_map(|v| pb::CounterDescriptor {
            r#type: v.0,
            categories: v.1,
            unit: v.2,
            unit_name: v.3,
            unit_multiplier: v.4,
            is_incremental: v.5,
            y_axis_share_key: v.6,
        })
        .boxed()
}

/// A track descriptor for a process, a thread, a counter or none of these.
pub fn track_descriptor() -> BoxedStrategy<pb::TrackDescriptor> {
    use pb::track_descriptor::{SiblingMergeKeyField, StaticOrDynamicName};
    let name = prop_oneof![
        text().prop_map(StaticOrDynamicName::Name),
        text().prop_map(StaticOrDynamicName::StaticName),
        text().prop_map(StaticOrDynamicName::AtraceName),
    ];
    let merge_key = prop_oneof![
        text().prop_map(SiblingMergeKeyField::SiblingMergeKey),
        any::<u64>().prop_map(SiblingMergeKeyField::SiblingMergeKeyInt),
    ];
    let identity = (
        maybe(any::<u64>()),
        maybe(any::<u64>()),
        maybe(name),
        maybe(text()),
        maybe(process_descriptor()),
        maybe(thread_descriptor()),
        maybe(counter_descriptor()),
    );
    let layout = (
        maybe(any::<bool>()),
        maybe(enum_number()),
        maybe(any::<i32>()),
        maybe(enum_number()),
        maybe(merge_key),
        maybe(enum_number()),
        maybe(enum_number()),
    );
    (identity, layout)
        .prop_map(|(i, l)| pb::TrackDescriptor {
            uuid: i.0,
            parent_uuid: i.1,
            static_or_dynamic_name: i.2,
            description: i.3,
            process: i.4,
            thread: i.5,
            counter: i.6,
            disallow_merging_with_system_tracks: l.0,
            child_ordering: l.1,
            sibling_order_rank: l.2,
            sibling_merge_behavior: l.3,
            sibling_merge_key_field: l.4,
            process_ordering: l.5,
            thread_ordering: l.6,
            ..Default::default()
        })
        .boxed()
}

// ---- prost value -> generated writers --------------------------------------

/// Copies a process descriptor.
pub fn write_process(v: &pb::ProcessDescriptor, w: &mut zp::ProcessDescriptor<'_>) {
    use zp::process_descriptor::ChromeProcessType;
    v.pid.map(|x| w.set_pid(x));
    v.cmdline.iter().for_each(|x| _ = w.add_cmdline(x));
    v.process_name.as_deref().map(|x| w.set_process_name(x));
    v.process_priority.map(|x| w.set_process_priority(x));
    v.start_timestamp_ns.map(|x| w.set_start_timestamp_ns(x));
    set_enum!(
        w,
        v.chrome_process_type,
        ChromeProcessType,
        set_chrome_process_type,
        set_chrome_process_type_raw
    );
    v.legacy_sort_index.map(|x| w.set_legacy_sort_index(x));
    v.process_labels
        .iter()
        .for_each(|x| _ = w.add_process_labels(x));
}

/// Copies a thread descriptor.
pub fn write_thread(v: &pb::ThreadDescriptor, w: &mut zp::ThreadDescriptor<'_>) {
    use zp::thread_descriptor::ChromeThreadType;
    v.pid.map(|x| w.set_pid(x));
    v.tid.map(|x| w.set_tid(x));
    v.thread_name.as_deref().map(|x| w.set_thread_name(x));
    set_enum!(
        w,
        v.chrome_thread_type,
        ChromeThreadType,
        set_chrome_thread_type,
        set_chrome_thread_type_raw
    );
    v.reference_timestamp_us
        .map(|x| w.set_reference_timestamp_us(x));
    v.reference_thread_time_us
        .map(|x| w.set_reference_thread_time_us(x));
    v.reference_thread_instruction_count
        .map(|x| w.set_reference_thread_instruction_count(x));
    v.legacy_sort_index.map(|x| w.set_legacy_sort_index(x));
}

fn write_counter(v: &pb::CounterDescriptor, w: &mut zp::CounterDescriptor<'_>) {
    use zp::counter_descriptor::{BuiltinCounterType, Unit};
    set_enum!(w, v.r#type, BuiltinCounterType, set_type, set_type_raw);
    v.categories.iter().for_each(|x| _ = w.add_categories(x));
    set_enum!(w, v.unit, Unit, set_unit, set_unit_raw);
    v.unit_name.as_deref().map(|x| w.set_unit_name(x));
    v.unit_multiplier.map(|x| w.set_unit_multiplier(x));
    v.is_incremental.map(|x| w.set_is_incremental(x));
    v.y_axis_share_key
        .as_deref()
        .map(|x| w.set_y_axis_share_key(x));
}

/// Copies a track descriptor.
pub fn write_track_descriptor(v: &pb::TrackDescriptor, w: &mut zp::TrackDescriptor<'_>) {
    use pb::track_descriptor::{SiblingMergeKeyField, StaticOrDynamicName};
    use zp::track_descriptor::{
        ChildTracksOrdering, ProcessOrdering, SiblingMergeBehavior, ThreadOrdering,
    };
    v.uuid.map(|x| w.set_uuid(x));
    v.parent_uuid.map(|x| w.set_parent_uuid(x));
    match &v.static_or_dynamic_name {
        Some(StaticOrDynamicName::Name(x)) => _ = w.set_name(x),
        Some(StaticOrDynamicName::StaticName(x)) => _ = w.set_static_name(x),
        Some(StaticOrDynamicName::AtraceName(x)) => _ = w.set_atrace_name(x),
        None => {}
    }
    v.description.as_deref().map(|x| w.set_description(x));
    if let Some(p) = &v.process {
        write_process(p, &mut w.begin_process());
    }
    if let Some(t) = &v.thread {
        write_thread(t, &mut w.begin_thread());
    }
    if let Some(c) = &v.counter {
        write_counter(c, &mut w.begin_counter());
    }
    v.disallow_merging_with_system_tracks
        .map(|x| w.set_disallow_merging_with_system_tracks(x));
    set_enum!(
        w,
        v.child_ordering,
        ChildTracksOrdering,
        set_child_ordering,
        set_child_ordering_raw
    );
    v.sibling_order_rank.map(|x| w.set_sibling_order_rank(x));
    set_enum!(
        w,
        v.sibling_merge_behavior,
        SiblingMergeBehavior,
        set_sibling_merge_behavior,
        set_sibling_merge_behavior_raw
    );
    match &v.sibling_merge_key_field {
        Some(SiblingMergeKeyField::SiblingMergeKey(x)) => _ = w.set_sibling_merge_key(x),
        Some(SiblingMergeKeyField::SiblingMergeKeyInt(x)) => _ = w.set_sibling_merge_key_int(*x),
        None => {}
    }
    set_enum!(
        w,
        v.process_ordering,
        ProcessOrdering,
        set_process_ordering,
        set_process_ordering_raw
    );
    set_enum!(
        w,
        v.thread_ordering,
        ThreadOrdering,
        set_thread_ordering,
        set_thread_ordering_raw
    );
}

// ---- generated decoders -> prost value -------------------------------------

/// Rebuilds a process descriptor.
pub fn read_process(d: &zp::ProcessDescriptorDecoder<'_>) -> pb::ProcessDescriptor {
    pb::ProcessDescriptor {
        pid: d.pid(),
        cmdline: strings(d.cmdline()),
        process_name: d.process_name().map(str::to_owned),
        process_priority: d.process_priority(),
        start_timestamp_ns: d.start_timestamp_ns(),
        chrome_process_type: get_enum!(d, chrome_process_type, chrome_process_type_raw),
        legacy_sort_index: d.legacy_sort_index(),
        process_labels: strings(d.process_labels()),
    }
}

/// Rebuilds a thread descriptor.
pub fn read_thread(d: &zp::ThreadDescriptorDecoder<'_>) -> pb::ThreadDescriptor {
    pb::ThreadDescriptor {
        pid: d.pid(),
        tid: d.tid(),
        thread_name: d.thread_name().map(str::to_owned),
        chrome_thread_type: get_enum!(d, chrome_thread_type, chrome_thread_type_raw),
        reference_timestamp_us: d.reference_timestamp_us(),
        reference_thread_time_us: d.reference_thread_time_us(),
        reference_thread_instruction_count: d.reference_thread_instruction_count(),
        legacy_sort_index: d.legacy_sort_index(),
    }
}

fn read_counter(d: &zp::CounterDescriptorDecoder<'_>) -> pb::CounterDescriptor {
    pb::CounterDescriptor {
        r#type: get_enum!(d, r#type, type_raw),
        categories: strings(d.categories()),
        unit: get_enum!(d, unit, unit_raw),
        unit_name: d.unit_name().map(str::to_owned),
        unit_multiplier: d.unit_multiplier(),
        is_incremental: d.is_incremental(),
        y_axis_share_key: d.y_axis_share_key().map(str::to_owned),
    }
}

/// Rebuilds a track descriptor from the fields [`write_track_descriptor`] covers.
pub fn read_track_descriptor(d: &zp::TrackDescriptorDecoder<'_>) -> pb::TrackDescriptor {
    use pb::track_descriptor as p;
    use zp::track_descriptor as g;
    pb::TrackDescriptor {
        uuid: d.uuid(),
        parent_uuid: d.parent_uuid(),
        static_or_dynamic_name: d.which_static_or_dynamic_name().map(|n| match n {
            g::StaticOrDynamicName::Name(x) => p::StaticOrDynamicName::Name(x.to_owned()),
            g::StaticOrDynamicName::StaticName(x) => {
                p::StaticOrDynamicName::StaticName(x.to_owned())
            }
            g::StaticOrDynamicName::AtraceName(x) => {
                p::StaticOrDynamicName::AtraceName(x.to_owned())
            }
        }),
        description: d.description().map(str::to_owned),
        process: d.process().map(|x| read_process(&checked(x))),
        thread: d.thread().map(|x| read_thread(&checked(x))),
        counter: d.counter().map(|x| read_counter(&checked(x))),
        disallow_merging_with_system_tracks: d.disallow_merging_with_system_tracks(),
        child_ordering: get_enum!(d, child_ordering, child_ordering_raw),
        sibling_order_rank: d.sibling_order_rank(),
        sibling_merge_behavior: get_enum!(d, sibling_merge_behavior, sibling_merge_behavior_raw),
        sibling_merge_key_field: d.which_sibling_merge_key_field().map(|k| match k {
            g::SiblingMergeKeyField::SiblingMergeKey(x) => {
                p::SiblingMergeKeyField::SiblingMergeKey(x.to_owned())
            }
            g::SiblingMergeKeyField::SiblingMergeKeyInt(x) => {
                p::SiblingMergeKeyField::SiblingMergeKeyInt(x)
            }
        }),
        process_ordering: get_enum!(d, process_ordering, process_ordering_raw),
        thread_ordering: get_enum!(d, thread_ordering, thread_ordering_raw),
        ..Default::default()
    }
}

// ---- the messages on their own ----------------------------------------------

impl Mirror for pb::TrackDescriptor {
    fn write(&self, msg: Message<'_>, _: Layout) {
        write_track_descriptor(self, &mut zp::TrackDescriptor::from_message(msg));
    }
    fn read(bytes: &[u8]) -> Self {
        read_track_descriptor(&checked(zp::TrackDescriptorDecoder::new(bytes)))
    }
}
