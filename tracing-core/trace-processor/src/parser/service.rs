//! Packets about the trace itself: triggers (slices on the "Trace
//! Triggers" track and the `trace_trigger` metadata, a clone snapshot's
//! trigger winning over a plain one), the service's events into
//! `metadata`, `TraceStats` buffer counters into `stats`, and the state a
//! UI saved into its trace (`ui_state`, kept in `metadata` base64-encoded
//! for the UI that opens the trace again, as upstream keeps it).

use base64::Engine;
use zerotrace_protos::protos::{
    TraceConfigDecoder, TracePacket, TraceStatsDecoder, TracingServiceEventDecoder, TriggerDecoder,
};

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// Which trigger set `trace_trigger`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum TriggerKind {
    /// None yet.
    #[default]
    None,
    /// A `trigger` packet.
    Trace,
    /// A `clone_snapshot_trigger` packet.
    CloneSnapshot,
}

/// TracePacket.ui_state (not in our generated schema's subset).
const UI_STATE: u32 = 78;

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (UI_STATE, |p, i| {
        let encoded = base64::engine::general_purpose::STANDARD.encode(i.bytes);
        p.storage.set_metadata_str("ui_state", &encoded);
    }),
    (TracePacket::FIELD_TRIGGER, |p, i| {
        on_trigger(p, &TriggerDecoder::new(i.bytes), i.ts, TriggerKind::Trace);
    }),
    (TracePacket::FIELD_CLONE_SNAPSHOT_TRIGGER, |p, i| {
        let trigger = TriggerDecoder::new(i.bytes);
        on_trigger(p, &trigger, i.ts, TriggerKind::CloneSnapshot);
    }),
    (TracePacket::FIELD_SERVICE_EVENT, service_event),
    (TracePacket::FIELD_TRACE_STATS, trace_stats),
    (TracePacket::FIELD_TRACE_CONFIG, |p, i| {
        trace_config_metadata(p, i.bytes);
        p.trace_config = Some(i.bytes.to_vec());
    }),
];

/// The metadata upstream takes from a trace config: its session's unique
/// name, and the whole config as text (`trace_config_pbtxt`).
fn trace_config_metadata(p: &mut Parser, bytes: &[u8]) {
    let config = TraceConfigDecoder::new(bytes);
    if let Some(name) = config.unique_session_name() {
        p.storage.set_metadata_str("unique_session_name", name);
    }
    let schema = super::proto_text::message("perfetto.protos.TraceConfig");
    let text = super::proto_text::to_text(schema.as_ref(), bytes);
    p.storage.set_metadata_str("trace_config_pbtxt", &text);
}

fn service_event(p: &mut Parser, input: &Input<'_>) {
    let ts = input.ts;
    let ev = TracingServiceEventDecoder::new(input.bytes);
    if ev.tracing_started() == Some(true) {
        p.storage.set_metadata_int("tracing_started_ns", ts);
    }
    if ev.tracing_disabled() == Some(true) {
        p.storage.set_metadata_int("tracing_disabled_ns", ts);
    }
    if ev.all_data_sources_started() == Some(true) {
        p.storage.set_metadata_int("all_data_source_started_ns", ts);
    }
    if ev.all_data_sources_flushed() == Some(true) {
        p.storage
            .append_metadata("all_data_source_flushed_ns", Some(ts), None);
    }
    // A clone's progress, read by the `traced.stats` module: when the
    // clone started, and when each buffer's copy was done.
    if ev.clone_started().is_some() {
        p.storage.stats.set("traced_clone_started_timestamp_ns", ts);
    }
    if let Some(buffer) = ev.buffer_cloned() {
        p.storage
            .stats
            .set_indexed("traced_buf_clone_done_timestamp_ns", i64::from(buffer), ts);
    }
    if let Some(slow) = ev.slow_starting_data_sources() {
        for ds in slow.data_source() {
            let s = format!(
                "{} {}",
                ds.producer_name().unwrap_or(""),
                ds.data_source_name().unwrap_or("")
            );
            p.storage
                .append_metadata("slow_start_data_source", None, Some(&s));
        }
    }
}

fn trace_stats(p: &mut Parser, input: &Input<'_>) {
    let stats = TraceStatsDecoder::new(input.bytes);
    service_totals(p, &stats);
    for (i, b) in stats.buffer_stats().enumerate() {
        let i = i as i64;
        let st = &mut p.storage.stats;
        let mut set = |name: &str, v: Option<u64>| {
            if let Some(v) = v {
                st.set_indexed(name, i, i64::try_from(v).unwrap_or(i64::MAX));
            }
        };
        set("traced_buf_buffer_size", b.buffer_size());
        set("traced_buf_bytes_written", b.bytes_written());
        set("traced_buf_bytes_overwritten", b.bytes_overwritten());
        set("traced_buf_bytes_read", b.bytes_read());
        set(
            "traced_buf_padding_bytes_written",
            b.padding_bytes_written(),
        );
        set(
            "traced_buf_padding_bytes_cleared",
            b.padding_bytes_cleared(),
        );
        set("traced_buf_chunks_written", b.chunks_written());
        set("traced_buf_chunks_rewritten", b.chunks_rewritten());
        set("traced_buf_chunks_overwritten", b.chunks_overwritten());
        set("traced_buf_chunks_discarded", b.chunks_discarded());
        set("traced_buf_chunks_read", b.chunks_read());
        set("traced_buf_chunks_relocated", b.chunks_relocated());
        set(
            "traced_buf_chunks_committed_out_of_order",
            b.chunks_committed_out_of_order(),
        );
        set("traced_buf_write_wrap_count", b.write_wrap_count());
        set("traced_buf_patches_succeeded", b.patches_succeeded());
        set("traced_buf_patches_failed", b.patches_failed());
        set("traced_buf_readaheads_succeeded", b.readaheads_succeeded());
        set("traced_buf_readaheads_failed", b.readaheads_failed());
        set("traced_buf_abi_violations", b.abi_violations());
        set(
            "traced_buf_trace_writer_packet_loss",
            b.trace_writer_packet_loss(),
        );
    }
}

/// The service's own counts of `TraceStats` (as upstream, each set, 0
/// when absent), its packet filter's (with the bytes it cut from each
/// buffer) and how the final flush went.
fn service_totals(p: &mut Parser, stats: &TraceStatsDecoder<'_>) {
    use zerotrace_protos::protos::trace_stats::FinalFlushOutcome;
    let st = &mut p.storage.stats;
    let mut set = |name: &str, v: Option<u64>| {
        st.set(name, i64::try_from(v.unwrap_or(0)).unwrap_or(i64::MAX));
    };
    set(
        "traced_producers_connected",
        stats.producers_connected().map(u64::from),
    );
    set("traced_producers_seen", stats.producers_seen());
    set(
        "traced_data_sources_registered",
        stats.data_sources_registered().map(u64::from),
    );
    set("traced_data_sources_seen", stats.data_sources_seen());
    set(
        "traced_tracing_sessions",
        stats.tracing_sessions().map(u64::from),
    );
    set("traced_total_buffers", stats.total_buffers().map(u64::from));
    set("traced_chunks_discarded", stats.chunks_discarded());
    set("traced_patches_discarded", stats.patches_discarded());
    set("traced_flushes_requested", stats.flushes_requested());
    set("traced_flushes_succeeded", stats.flushes_succeeded());
    set("traced_flushes_failed", stats.flushes_failed());
    if let Some(f) = stats.filter_stats() {
        set("filter_errors", f.errors());
        set("filter_input_bytes", f.input_bytes());
        set("filter_input_packets", f.input_packets());
        set("filter_output_bytes", f.output_bytes());
        set("filter_time_taken_ns", f.time_taken_ns());
        for (i, v) in f.bytes_discarded_per_buffer().enumerate() {
            st.set_indexed(
                "traced_buf_bytes_filtered_out",
                i as i64,
                i64::try_from(v).unwrap_or(i64::MAX),
            );
        }
    }
    match stats.final_flush_outcome() {
        Some(FinalFlushOutcome::FinalFlushSucceeded) => st.incr("traced_final_flush_succeeded"),
        Some(FinalFlushOutcome::FinalFlushFailed) => st.incr("traced_final_flush_failed"),
        _ => {}
    }
}

/// The "Trace Triggers" track, made on first use.
pub fn trigger_track(p: &mut Parser) -> u32 {
    if let Some(t) = p.trigger_track {
        return t;
    }
    let spec = TrackSpec::new(Some("Trace Triggers"), "triggers", EventType::Slice);
    let t = p.tracks.create(&mut p.storage, &spec);
    p.trigger_track = Some(t);
    t
}

fn on_trigger(p: &mut Parser, trigger: &TriggerDecoder<'_>, ts: i64, kind: TriggerKind) {
    let name = trigger.trigger_name().unwrap_or("");
    let track = trigger_track(p);
    let mut args = ArgSetBuilder::default();
    if let Some(producer) = trigger.producer_name().filter(|s| !s.is_empty()) {
        let k = p.storage.strings.intern("producer_name");
        let v = p.storage.strings.intern(producer);
        args.add(k, k, ArgValue::String(v));
    }
    if let Some(uid) = trigger.trusted_producer_uid() {
        let k = p.storage.strings.intern("trusted_producer_uid");
        args.add(k, k, ArgValue::Int(i64::from(uid)));
    }
    let row = SliceRow {
        ts,
        dur: 0,
        track_id: track,
        name: p.storage.strings.intern(name),
        arg_set_id: p.storage.args.add_set(&args).into(),
        ..SliceRow::default()
    };
    p.slices.begin(&mut p.storage, row);
    let set = match (kind, p.trigger_kind) {
        (TriggerKind::CloneSnapshot, k) => k != TriggerKind::CloneSnapshot,
        (TriggerKind::Trace, TriggerKind::None) => true,
        _ => false,
    };
    if set {
        p.trigger_kind = kind;
        p.storage.set_metadata_str("trace_trigger", name);
        // The first clone-snapshot trigger times the clone it asked for.
        if kind == TriggerKind::CloneSnapshot {
            p.storage.stats.set("traced_clone_trigger_timestamp_ns", ts);
        }
    }
}

/// What is decided at the end of the trace: bytes overwritten in a
/// long-trace (write_into_file) session are a loss.
pub fn finish(p: &mut Parser) {
    let Some(config) = p.trace_config.take() else {
        return;
    };
    super::trace_diagnostics::run(&mut p.storage, &config);
    let cfg = zerotrace_protos::protos::TraceConfigDecoder::new(&config);
    if cfg.write_into_file() != Some(true) {
        return;
    }
    // A period of a day or more keeps ring-buffer intent (upstream's cutoff).
    const DAY_MS: u32 = 24 * 60 * 60 * 1000;
    if cfg.file_write_period_ms().unwrap_or(0) < DAY_MS {
        for i in 0..cfg.buffers().count() as i64 {
            let v = p
                .storage
                .stats
                .get_indexed("traced_buf_bytes_overwritten", i);
            if v > 0 {
                p.storage
                    .stats
                    .set_indexed("long_trace_mode_bytes_overwritten", i, v);
            }
        }
    }
}

#[cfg(test)]
#[cfg(feature = "sql")]
mod tests {
    use crate::{TraceProcessor, Value};

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn bytes_field(id: u32, b: &[u8], out: &mut Vec<u8>) {
        varint((u64::from(id) << 3) | 2, out);
        varint(b.len() as u64, out);
        out.extend_from_slice(b);
    }

    fn int_field(id: u32, v: u64, out: &mut Vec<u8>) {
        varint(u64::from(id) << 3, out);
        varint(v, out);
    }

    #[test]
    fn a_trace_config_is_kept_as_text() {
        let mut buffer = Vec::new();
        int_field(1, 1024, &mut buffer); // size_kb
        let mut config = Vec::new();
        bytes_field(1, &buffer, &mut config); // buffers
        int_field(3, 5, &mut config); // duration_ms
        bytes_field(22, b"s\"1", &mut config); // unique_session_name
        let mut packet = Vec::new();
        bytes_field(33, &config, &mut packet);
        let mut trace = Vec::new();
        bytes_field(1, &packet, &mut trace);
        let tp = TraceProcessor::from_bytes(&trace).expect("load");
        let r = tp
            .query(
                "SELECT name, str_value FROM metadata WHERE name IN \
                 ('trace_config_pbtxt', 'unique_session_name') ORDER BY name",
            )
            .expect("query");
        let text = "buffers {\n  size_kb: 1024\n}\nduration_ms: 5\nunique_session_name: \"s\\\"1\"";
        assert_eq!(
            r.rows,
            [
                vec![
                    Value::Text("trace_config_pbtxt".into()),
                    Value::Text(text.into())
                ],
                vec![
                    Value::Text("unique_session_name".into()),
                    Value::Text("s\"1".into())
                ],
            ]
        );
    }

    #[test]
    fn trace_stats_give_the_services_and_the_filters_counts() {
        let mut filter = Vec::new();
        int_field(1, 836, &mut filter); // input_packets
        int_field(4, 12, &mut filter); // errors
        int_field(20, 1, &mut filter); // bytes_discarded_per_buffer
        int_field(20, 34, &mut filter);
        let mut stats = Vec::new();
        int_field(2, 3, &mut stats); // producers_connected
        bytes_field(11, &filter, &mut stats); // filter_stats
        int_field(15, 2, &mut stats); // final_flush_outcome: FAILED
        let mut packet = Vec::new();
        bytes_field(35, &stats, &mut packet);
        let mut trace = Vec::new();
        bytes_field(1, &packet, &mut trace);
        let tp = TraceProcessor::from_bytes(&trace).expect("load");
        let r = tp
            .query(
                "SELECT name, idx, value FROM stats WHERE name IN ('filter_errors', \
                 'filter_input_packets', 'traced_buf_bytes_filtered_out', \
                 'traced_producers_connected', 'traced_final_flush_failed') ORDER BY name, idx",
            )
            .expect("query");
        let row = |n: &str, idx: Option<i64>, v: i64| {
            vec![
                Value::Text(n.into()),
                idx.map_or(Value::Null, Value::Int),
                Value::Int(v),
            ]
        };
        assert_eq!(
            r.rows,
            [
                row("filter_errors", None, 12),
                row("filter_input_packets", None, 836),
                row("traced_buf_bytes_filtered_out", Some(0), 1),
                row("traced_buf_bytes_filtered_out", Some(1), 34),
                row("traced_final_flush_failed", None, 1),
                row("traced_producers_connected", None, 3),
            ]
        );
    }

    #[test]
    fn a_uis_saved_state_is_kept_base64_encoded() {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = zerotrace_protos::protos::TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(1);
            let mut ui = p.message().begin_nested(super::UI_STATE);
            ui.append_int64(1, 1000);
            ui.append_int64(2, 2000);
        }
        let p = w.finish().expect("writer");
        let mut t = vec![0x0a, p.len() as u8];
        t.extend_from_slice(&p);
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        let rows = tp
            .query("SELECT key_type, str_value FROM metadata WHERE name = 'ui_state'")
            .expect("query")
            .rows;
        // The payload 08 e8 07 10 d0 0f, base64-encoded.
        assert_eq!(
            rows,
            vec![vec![
                Value::Text("single".to_owned()),
                Value::Text("COgHENAP".to_owned())
            ]]
        );
    }
}
