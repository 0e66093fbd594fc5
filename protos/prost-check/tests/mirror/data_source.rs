//! DataSourceConfig with its TrackEventConfig, as a consumer sends it inside
//! TraceConfig: strategies over the prost types, and the copy through our
//! writers and back out of our decoders.

use proptest::prelude::*;
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

use super::{checked, enum_number, few, maybe, strings, text};

// ---- strategies -------------------------------------------------------------

fn track_event_config() -> BoxedStrategy<pb::TrackEventConfig> {
    let flags = (
        maybe(any::<bool>()),
        maybe(any::<u64>()),
        maybe(any::<bool>()),
        maybe(any::<bool>()),
        maybe(any::<u64>()),
        maybe(any::<bool>()),
    );
    (few(text()), few(text()), few(text()), few(text()), flags)
        .prop_map(|(dc, ec, dt, et, f)| pb::TrackEventConfig {
            disabled_categories: dc,
            enabled_categories: ec,
            disabled_tags: dt,
            enabled_tags: et,
            disable_incremental_timestamps: f.0,
            timestamp_unit_multiplier: f.1,
            filter_debug_annotations: f.2,
            enable_thread_time_sampling: f.3,
            thread_time_subsampling_ns: f.4,
            filter_dynamic_event_names: f.5,
        })
        .boxed()
}

/// A data source config, with a track event config half of the time.
pub fn data_source_config() -> BoxedStrategy<pb::DataSourceConfig> {
    let first = (
        maybe(text()),
        maybe(any::<u32>()),
        maybe(text()),
        maybe(any::<u32>()),
        maybe(any::<bool>()),
        maybe(any::<u32>()),
    );
    let second = (
        maybe(any::<bool>()),
        maybe(enum_number()),
        maybe(any::<u64>()),
        maybe(enum_number()),
        maybe(track_event_config()),
        maybe(text()),
    );
    (first, second)
        .prop_map(|(a, b)| pb::DataSourceConfig {
            name: a.0,
            target_buffer: a.1,
            target_buffer_name: a.2,
            trace_duration_ms: a.3,
            prefer_suspend_clock_for_duration: a.4,
            stop_timeout_ms: a.5,
            enable_extra_guardrails: b.0,
            session_initiator: b.1,
            tracing_session_id: b.2,
            buffer_exhausted_policy: b.3,
            track_event_config: b.4,
            legacy_config: b.5,
            ..Default::default()
        })
        .boxed()
}

// ---- prost value <-> generated code -----------------------------------------

/// Copies a data source config.
pub fn write_data_source_config(v: &pb::DataSourceConfig, w: &mut zp::DataSourceConfig<'_>) {
    use zp::data_source_config::{BufferExhaustedPolicy, SessionInitiator};
    v.name.as_deref().map(|x| w.set_name(x));
    v.target_buffer.map(|x| w.set_target_buffer(x));
    v.target_buffer_name
        .as_deref()
        .map(|x| w.set_target_buffer_name(x));
    v.trace_duration_ms.map(|x| w.set_trace_duration_ms(x));
    v.prefer_suspend_clock_for_duration
        .map(|x| w.set_prefer_suspend_clock_for_duration(x));
    v.stop_timeout_ms.map(|x| w.set_stop_timeout_ms(x));
    v.enable_extra_guardrails
        .map(|x| w.set_enable_extra_guardrails(x));
    set_enum!(
        w,
        v.session_initiator,
        SessionInitiator,
        set_session_initiator,
        set_session_initiator_raw
    );
    v.tracing_session_id.map(|x| w.set_tracing_session_id(x));
    set_enum!(
        w,
        v.buffer_exhausted_policy,
        BufferExhaustedPolicy,
        set_buffer_exhausted_policy,
        set_buffer_exhausted_policy_raw
    );
    if let Some(te) = &v.track_event_config {
        let mut t = w.begin_track_event_config();
        te.disabled_categories
            .iter()
            .for_each(|x| _ = t.add_disabled_categories(x));
        te.enabled_categories
            .iter()
            .for_each(|x| _ = t.add_enabled_categories(x));
        te.disabled_tags
            .iter()
            .for_each(|x| _ = t.add_disabled_tags(x));
        te.enabled_tags
            .iter()
            .for_each(|x| _ = t.add_enabled_tags(x));
        te.disable_incremental_timestamps
            .map(|x| t.set_disable_incremental_timestamps(x));
        te.timestamp_unit_multiplier
            .map(|x| t.set_timestamp_unit_multiplier(x));
        te.filter_debug_annotations
            .map(|x| t.set_filter_debug_annotations(x));
        te.enable_thread_time_sampling
            .map(|x| t.set_enable_thread_time_sampling(x));
        te.thread_time_subsampling_ns
            .map(|x| t.set_thread_time_subsampling_ns(x));
        te.filter_dynamic_event_names
            .map(|x| t.set_filter_dynamic_event_names(x));
    }
    v.legacy_config.as_deref().map(|x| w.set_legacy_config(x));
}

/// Rebuilds a data source config from the fields [`write_data_source_config`] covers.
pub fn read_data_source_config(d: &zp::DataSourceConfigDecoder<'_>) -> pb::DataSourceConfig {
    let track_event_config = d.track_event_config().map(|t| {
        let t = checked(t);
        pb::TrackEventConfig {
            disabled_categories: strings(t.disabled_categories()),
            enabled_categories: strings(t.enabled_categories()),
            disabled_tags: strings(t.disabled_tags()),
            enabled_tags: strings(t.enabled_tags()),
            disable_incremental_timestamps: t.disable_incremental_timestamps(),
            timestamp_unit_multiplier: t.timestamp_unit_multiplier(),
            filter_debug_annotations: t.filter_debug_annotations(),
            enable_thread_time_sampling: t.enable_thread_time_sampling(),
            thread_time_subsampling_ns: t.thread_time_subsampling_ns(),
            filter_dynamic_event_names: t.filter_dynamic_event_names(),
        }
    });
    pb::DataSourceConfig {
        name: d.name().map(str::to_owned),
        target_buffer: d.target_buffer(),
        target_buffer_name: d.target_buffer_name().map(str::to_owned),
        trace_duration_ms: d.trace_duration_ms(),
        prefer_suspend_clock_for_duration: d.prefer_suspend_clock_for_duration(),
        stop_timeout_ms: d.stop_timeout_ms(),
        enable_extra_guardrails: d.enable_extra_guardrails(),
        session_initiator: get_enum!(d, session_initiator, session_initiator_raw),
        tracing_session_id: d.tracing_session_id(),
        buffer_exhausted_policy: get_enum!(d, buffer_exhausted_policy, buffer_exhausted_policy_raw),
        track_event_config,
        legacy_config: d.legacy_config().map(str::to_owned),
        ..Default::default()
    }
}
