//! TraceConfig (buffers, data sources with their DataSourceConfig and
//! TrackEventConfig, builtin data sources, producers, triggers, file and flush
//! options, session name, incremental state): strategies over the prost
//! types, and the copy through our writers and back out of our decoders.

use proptest::prelude::*;
use protozero::Message;
use zerotrace_protos::protos as zp;
use zerotrace_protos_prost_check::protos as pb;

use super::data_source::{data_source_config, read_data_source_config, write_data_source_config};
use super::{Layout, Mirror, checked, double, enum_number, few, maybe, messages, strings, text};

use pb::trace_config as ptc;
use zp::trace_config as gtc;

// ---- strategies -------------------------------------------------------------

fn buffer() -> BoxedStrategy<ptc::BufferConfig> {
    (
        maybe(any::<u32>()),
        maybe(enum_number()),
        maybe(any::<bool>()),
        maybe(any::<bool>()),
        maybe(text()),
        maybe(enum_number()),
    )
        .prop_map(|v| ptc::BufferConfig {
            size_kb: v.0,
            fill_policy: v.1,
            transfer_on_clone: v.2,
            clear_before_clone: v.3,
            name: v.4,
            experimental_mode: v.5,
        })
        .boxed()
}

fn data_source() -> BoxedStrategy<ptc::DataSource> {
    (
        maybe(data_source_config()),
        few(text()),
        few(text()),
        few(text()),
    )
        .prop_map(|v| ptc::DataSource {
            config: v.0,
            producer_name_filter: v.1,
            producer_name_regex_filter: v.2,
            machine_name_filter: v.3,
        })
        .boxed()
}

fn builtin_data_sources() -> BoxedStrategy<ptc::BuiltinDataSource> {
    let bools = prop::collection::vec(maybe(any::<bool>()), 8);
    (bools, maybe(enum_number()), maybe(any::<u32>()))
        .prop_map(|(b, clock, interval)| ptc::BuiltinDataSource {
            disable_clock_snapshotting: b[0],
            disable_trace_config: b[1],
            disable_system_info: b[2],
            disable_service_events: b[3],
            primary_trace_clock: clock,
            snapshot_interval_ms: interval,
            prefer_suspend_clock_for_snapshot: b[4],
            disable_chunk_usage_histograms: b[5],
            disable_extension_descriptors: b[6],
            enable_concurrent_session_events: b[7],
        })
        .boxed()
}

fn trigger_config() -> BoxedStrategy<ptc::TriggerConfig> {
    let trigger = (
        maybe(text()),
        maybe(text()),
        maybe(any::<u32>()),
        maybe(any::<u32>()),
        maybe(double()),
    )
        .prop_map(|v| ptc::trigger_config::Trigger {
            name: v.0,
            producer_name_regex: v.1,
            stop_delay_ms: v.2,
            max_per_24_h: v.3,
            skip_probability: v.4,
        });
    (
        maybe(enum_number()),
        maybe(any::<bool>()),
        few(trigger),
        maybe(any::<u32>()),
    )
        .prop_map(|v| ptc::TriggerConfig {
            trigger_mode: v.0,
            use_clone_snapshot_if_available: v.1,
            triggers: v.2,
            trigger_timeout_ms: v.3,
        })
        .boxed()
}

/// A trace config as a consumer would send it.
pub fn trace_config() -> BoxedStrategy<pb::TraceConfig> {
    let producer = (maybe(text()), maybe(any::<u32>()), maybe(any::<u32>())).prop_map(|v| {
        ptc::ProducerConfig {
            producer_name: v.0,
            shm_size_kb: v.1,
            page_size_kb: v.2,
        }
    });
    let semaphore =
        (maybe(text()), maybe(any::<u64>())).prop_map(|(name, max)| ptc::SessionSemaphore {
            name,
            max_other_session_count: max,
        });
    let incremental = maybe(any::<u32>())
        .prop_map(|clear_period_ms| ptc::IncrementalStateConfig { clear_period_ms });
    let parts = (
        few(buffer()),
        few(data_source()),
        maybe(builtin_data_sources()),
        few(producer),
        maybe(trigger_config()),
        few(semaphore),
        maybe(incremental),
    );
    let session = (
        maybe(any::<u32>()),
        maybe(any::<bool>()),
        maybe(any::<bool>()),
        maybe(enum_number()),
        maybe(text()),
        few(text()),
        maybe(enum_number()),
        maybe(any::<bool>()),
    );
    let output = (
        maybe(any::<bool>()),
        maybe(text()),
        maybe(any::<u32>()),
        maybe(any::<u64>()),
        maybe(any::<bool>()),
        maybe(any::<u32>()),
        maybe(any::<u32>()),
        maybe(any::<u32>()),
    );
    let misc = (
        maybe(any::<bool>()),
        maybe(any::<i32>()),
        maybe(text()),
        maybe(any::<u32>()),
        maybe(enum_number()),
        maybe(enum_number()),
    );
    (parts, session, output, misc)
        .prop_map(|(p, s, o, m)| pb::TraceConfig {
            buffers: p.0,
            data_sources: p.1,
            builtin_data_sources: p.2,
            producers: p.3,
            trigger_config: p.4,
            session_semaphores: p.5,
            incremental_state_config: p.6,
            duration_ms: s.0,
            prefer_suspend_clock_for_duration: s.1,
            enable_extra_guardrails: s.2,
            lockdown_mode: s.3,
            unique_session_name: s.4,
            activate_triggers: s.5,
            statsd_logging: s.6,
            trace_all_machines: s.7,
            write_into_file: o.0,
            output_path: o.1,
            file_write_period_ms: o.2,
            max_file_size_bytes: o.3,
            deferred_start: o.4,
            flush_period_ms: o.5,
            flush_timeout_ms: o.6,
            data_source_stop_timeout_ms: o.7,
            notify_traceur: m.0,
            bugreport_score: m.1,
            bugreport_filename: m.2,
            exclusive_prio: m.3,
            write_flush_mode: m.4,
            fflush_post_write: m.5,
            ..Default::default()
        })
        .boxed()
}

// ---- prost value -> generated writers --------------------------------------

fn write_builtin(v: &ptc::BuiltinDataSource, w: &mut gtc::BuiltinDataSource<'_>) {
    v.disable_clock_snapshotting
        .map(|x| w.set_disable_clock_snapshotting(x));
    v.disable_trace_config
        .map(|x| w.set_disable_trace_config(x));
    v.disable_system_info.map(|x| w.set_disable_system_info(x));
    v.disable_service_events
        .map(|x| w.set_disable_service_events(x));
    set_enum!(
        w,
        v.primary_trace_clock,
        zp::BuiltinClock,
        set_primary_trace_clock,
        set_primary_trace_clock_raw
    );
    v.snapshot_interval_ms
        .map(|x| w.set_snapshot_interval_ms(x));
    v.prefer_suspend_clock_for_snapshot
        .map(|x| w.set_prefer_suspend_clock_for_snapshot(x));
    v.disable_chunk_usage_histograms
        .map(|x| w.set_disable_chunk_usage_histograms(x));
    v.disable_extension_descriptors
        .map(|x| w.set_disable_extension_descriptors(x));
    v.enable_concurrent_session_events
        .map(|x| w.set_enable_concurrent_session_events(x));
}

fn write_trigger_config(v: &ptc::TriggerConfig, w: &mut gtc::TriggerConfig<'_>) {
    use gtc::trigger_config::TriggerMode;
    set_enum!(
        w,
        v.trigger_mode,
        TriggerMode,
        set_trigger_mode,
        set_trigger_mode_raw
    );
    v.use_clone_snapshot_if_available
        .map(|x| w.set_use_clone_snapshot_if_available(x));
    for t in &v.triggers {
        let mut trigger = w.add_triggers();
        t.name.as_deref().map(|x| trigger.set_name(x));
        t.producer_name_regex
            .as_deref()
            .map(|x| trigger.set_producer_name_regex(x));
        t.stop_delay_ms.map(|x| trigger.set_stop_delay_ms(x));
        t.max_per_24_h.map(|x| trigger.set_max_per_24_h(x));
        t.skip_probability.map(|x| trigger.set_skip_probability(x));
    }
    v.trigger_timeout_ms.map(|x| w.set_trigger_timeout_ms(x));
}

/// Copies a trace config.
pub fn write_trace_config(v: &pb::TraceConfig, w: &mut zp::TraceConfig<'_>) {
    use gtc::buffer_config::{ExperimentalMode, FillPolicy};
    use gtc::{FFlushMode, LockdownModeOperation, StatsdLogging, WriteFlushMode};
    for b in &v.buffers {
        let mut buf = w.add_buffers();
        b.size_kb.map(|x| buf.set_size_kb(x));
        set_enum!(
            buf,
            b.fill_policy,
            FillPolicy,
            set_fill_policy,
            set_fill_policy_raw
        );
        b.transfer_on_clone.map(|x| buf.set_transfer_on_clone(x));
        b.clear_before_clone.map(|x| buf.set_clear_before_clone(x));
        b.name.as_deref().map(|x| buf.set_name(x));
        set_enum!(
            buf,
            b.experimental_mode,
            ExperimentalMode,
            set_experimental_mode,
            set_experimental_mode_raw
        );
    }
    for ds in &v.data_sources {
        let mut d = w.add_data_sources();
        if let Some(c) = &ds.config {
            write_data_source_config(c, &mut d.begin_config());
        }
        ds.producer_name_filter
            .iter()
            .for_each(|x| _ = d.add_producer_name_filter(x));
        ds.producer_name_regex_filter
            .iter()
            .for_each(|x| _ = d.add_producer_name_regex_filter(x));
        ds.machine_name_filter
            .iter()
            .for_each(|x| _ = d.add_machine_name_filter(x));
    }
    if let Some(b) = &v.builtin_data_sources {
        write_builtin(b, &mut w.begin_builtin_data_sources());
    }
    v.duration_ms.map(|x| w.set_duration_ms(x));
    v.prefer_suspend_clock_for_duration
        .map(|x| w.set_prefer_suspend_clock_for_duration(x));
    v.enable_extra_guardrails
        .map(|x| w.set_enable_extra_guardrails(x));
    set_enum!(
        w,
        v.lockdown_mode,
        LockdownModeOperation,
        set_lockdown_mode,
        set_lockdown_mode_raw
    );
    for p in &v.producers {
        let mut producer = w.add_producers();
        p.producer_name
            .as_deref()
            .map(|x| producer.set_producer_name(x));
        p.shm_size_kb.map(|x| producer.set_shm_size_kb(x));
        p.page_size_kb.map(|x| producer.set_page_size_kb(x));
    }
    v.write_into_file.map(|x| w.set_write_into_file(x));
    v.output_path.as_deref().map(|x| w.set_output_path(x));
    v.file_write_period_ms
        .map(|x| w.set_file_write_period_ms(x));
    v.max_file_size_bytes.map(|x| w.set_max_file_size_bytes(x));
    v.deferred_start.map(|x| w.set_deferred_start(x));
    v.flush_period_ms.map(|x| w.set_flush_period_ms(x));
    v.flush_timeout_ms.map(|x| w.set_flush_timeout_ms(x));
    v.data_source_stop_timeout_ms
        .map(|x| w.set_data_source_stop_timeout_ms(x));
    v.notify_traceur.map(|x| w.set_notify_traceur(x));
    v.bugreport_score.map(|x| w.set_bugreport_score(x));
    v.bugreport_filename
        .as_deref()
        .map(|x| w.set_bugreport_filename(x));
    if let Some(t) = &v.trigger_config {
        write_trigger_config(t, &mut w.begin_trigger_config());
    }
    v.activate_triggers
        .iter()
        .for_each(|x| _ = w.add_activate_triggers(x));
    if let Some(i) = &v.incremental_state_config {
        let mut inc = w.begin_incremental_state_config();
        i.clear_period_ms.map(|x| inc.set_clear_period_ms(x));
    }
    v.unique_session_name
        .as_deref()
        .map(|x| w.set_unique_session_name(x));
    set_enum!(
        w,
        v.statsd_logging,
        StatsdLogging,
        set_statsd_logging,
        set_statsd_logging_raw
    );
    for s in &v.session_semaphores {
        let mut sem = w.add_session_semaphores();
        s.name.as_deref().map(|x| sem.set_name(x));
        s.max_other_session_count
            .map(|x| sem.set_max_other_session_count(x));
    }
    v.exclusive_prio.map(|x| w.set_exclusive_prio(x));
    set_enum!(
        w,
        v.write_flush_mode,
        WriteFlushMode,
        set_write_flush_mode,
        set_write_flush_mode_raw
    );
    set_enum!(
        w,
        v.fflush_post_write,
        FFlushMode,
        set_fflush_post_write,
        set_fflush_post_write_raw
    );
    v.trace_all_machines.map(|x| w.set_trace_all_machines(x));
}

// ---- generated decoders -> prost value -------------------------------------

fn read_builtin(d: &gtc::BuiltinDataSourceDecoder<'_>) -> ptc::BuiltinDataSource {
    ptc::BuiltinDataSource {
        disable_clock_snapshotting: d.disable_clock_snapshotting(),
        disable_trace_config: d.disable_trace_config(),
        disable_system_info: d.disable_system_info(),
        disable_service_events: d.disable_service_events(),
        primary_trace_clock: get_enum!(d, primary_trace_clock, primary_trace_clock_raw),
        snapshot_interval_ms: d.snapshot_interval_ms(),
        prefer_suspend_clock_for_snapshot: d.prefer_suspend_clock_for_snapshot(),
        disable_chunk_usage_histograms: d.disable_chunk_usage_histograms(),
        disable_extension_descriptors: d.disable_extension_descriptors(),
        enable_concurrent_session_events: d.enable_concurrent_session_events(),
    }
}

fn read_trigger_config(d: &gtc::TriggerConfigDecoder<'_>) -> ptc::TriggerConfig {
    ptc::TriggerConfig {
        trigger_mode: get_enum!(d, trigger_mode, trigger_mode_raw),
        use_clone_snapshot_if_available: d.use_clone_snapshot_if_available(),
        triggers: messages(d.triggers(), |t| ptc::trigger_config::Trigger {
            name: t.name().map(str::to_owned),
            producer_name_regex: t.producer_name_regex().map(str::to_owned),
            stop_delay_ms: t.stop_delay_ms(),
            max_per_24_h: t.max_per_24_h(),
            skip_probability: t.skip_probability(),
        }),
        trigger_timeout_ms: d.trigger_timeout_ms(),
    }
}

/// Rebuilds a trace config from the fields [`write_trace_config`] covers.
pub fn read_trace_config(d: &zp::TraceConfigDecoder<'_>) -> pb::TraceConfig {
    pb::TraceConfig {
        buffers: messages(d.buffers(), |b| ptc::BufferConfig {
            size_kb: b.size_kb(),
            fill_policy: get_enum!(b, fill_policy, fill_policy_raw),
            transfer_on_clone: b.transfer_on_clone(),
            clear_before_clone: b.clear_before_clone(),
            name: b.name().map(str::to_owned),
            experimental_mode: get_enum!(b, experimental_mode, experimental_mode_raw),
        }),
        data_sources: messages(d.data_sources(), |ds| ptc::DataSource {
            config: ds.config().map(|c| read_data_source_config(&checked(c))),
            producer_name_filter: strings(ds.producer_name_filter()),
            producer_name_regex_filter: strings(ds.producer_name_regex_filter()),
            machine_name_filter: strings(ds.machine_name_filter()),
        }),
        builtin_data_sources: d.builtin_data_sources().map(|b| read_builtin(&checked(b))),
        duration_ms: d.duration_ms(),
        prefer_suspend_clock_for_duration: d.prefer_suspend_clock_for_duration(),
        enable_extra_guardrails: d.enable_extra_guardrails(),
        lockdown_mode: get_enum!(d, lockdown_mode, lockdown_mode_raw),
        producers: messages(d.producers(), |p| ptc::ProducerConfig {
            producer_name: p.producer_name().map(str::to_owned),
            shm_size_kb: p.shm_size_kb(),
            page_size_kb: p.page_size_kb(),
        }),
        write_into_file: d.write_into_file(),
        output_path: d.output_path().map(str::to_owned),
        file_write_period_ms: d.file_write_period_ms(),
        max_file_size_bytes: d.max_file_size_bytes(),
        deferred_start: d.deferred_start(),
        flush_period_ms: d.flush_period_ms(),
        flush_timeout_ms: d.flush_timeout_ms(),
        data_source_stop_timeout_ms: d.data_source_stop_timeout_ms(),
        notify_traceur: d.notify_traceur(),
        bugreport_score: d.bugreport_score(),
        bugreport_filename: d.bugreport_filename().map(str::to_owned),
        trigger_config: d.trigger_config().map(|t| read_trigger_config(&checked(t))),
        activate_triggers: strings(d.activate_triggers()),
        incremental_state_config: d.incremental_state_config().map(|i| {
            ptc::IncrementalStateConfig {
                clear_period_ms: checked(i).clear_period_ms(),
            }
        }),
        unique_session_name: d.unique_session_name().map(str::to_owned),
        statsd_logging: get_enum!(d, statsd_logging, statsd_logging_raw),
        session_semaphores: messages(d.session_semaphores(), |s| ptc::SessionSemaphore {
            name: s.name().map(str::to_owned),
            max_other_session_count: s.max_other_session_count(),
        }),
        exclusive_prio: d.exclusive_prio(),
        write_flush_mode: get_enum!(d, write_flush_mode, write_flush_mode_raw),
        fflush_post_write: get_enum!(d, fflush_post_write, fflush_post_write_raw),
        trace_all_machines: d.trace_all_machines(),
        ..Default::default()
    }
}

impl Mirror for pb::TraceConfig {
    fn write(&self, msg: Message<'_>, _: Layout) {
        write_trace_config(self, &mut zp::TraceConfig::from_message(msg));
    }
    fn read(bytes: &[u8]) -> Self {
        read_trace_config(&checked(zp::TraceConfigDecoder::new(bytes)))
    }
}
