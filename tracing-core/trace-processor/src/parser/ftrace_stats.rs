//! `FtraceStats` packets (the ftrace data source's counters at the start
//! and end of the trace) as upstream's stats: per CPU the ring buffer's
//! entries, overruns, bytes, dropped and read events, times (`_begin`,
//! `_end` and, at the end, `_delta`), the kprobe hits and misses, and the
//! ABI errors met while reading the ring buffer: a zero-length data page
//! is counted (`ftrace_abi_errors_skipped_zero_data_length`); any other
//! error (`ftrace_parse_errors`) is what upstream refuses the trace for,
//! counted here in `ftrace_bundle_tokenizer_errors` so it is not silent.
//! The setup errors it reports at the start are logged one by one
//! (`ftrace_setup_errors`, with their messages).

use protozero::Decoder;
use zerotrace_protos::protos::FtraceStatsDecoder;
use zerotrace_protos::protos::ftrace_stats::Phase;
use zerotrace_protos::upstream_tables::packet_field::FTRACE_STATS;

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::import_logs::LogPlace;

/// `FtraceStats.exclusive_feature_error` (newer than the generated schema).
const EXCLUSIVE_FEATURE_ERROR: u32 = 13;

/// `FtraceParseStatus.FTRACE_STATUS_ABI_ZERO_DATA_LENGTH`.
const ABI_ZERO_DATA_LENGTH: i32 = 12;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(FTRACE_STATS, import)];

/// The errors the ftrace data source met while setting up (events it could
/// not enable or did not know, atrace's complaints, a feature another
/// session held): each counted in `ftrace_setup_errors` and logged with its
/// message, once per sequence, as upstream's Notices show them.
fn log_setup_errors(p: &mut Parser, evt: &FtraceStatsDecoder<'_>, bytes: &[u8], sequence: u32) {
    if p.sched.setup_errors_logged.contains(&sequence) {
        return;
    }
    let mut messages: Vec<String> = Vec::new();
    messages.extend(
        evt.failed_ftrace_events()
            .map(|e| format!("Ftrace event failed: {e}")),
    );
    messages.extend(
        evt.unknown_ftrace_events()
            .map(|e| format!("Ftrace event unknown: {e}")),
    );
    if let Some(e) = evt.atrace_errors().filter(|e| !e.is_empty()) {
        messages.push(format!("Atrace failures: {e}"));
    }
    let exclusive = Decoder::new(bytes)
        .find_last(EXCLUSIVE_FEATURE_ERROR)
        .and_then(|f| f.as_bytes().ok())
        .filter(|e| !e.is_empty());
    if let Some(e) = exclusive {
        let e = String::from_utf8_lossy(e);
        messages.push(format!("Ftrace exclusive feature error: {e}"));
    }
    if messages.is_empty() {
        return;
    }
    for message in &messages {
        p.storage.record_import_log(
            "ftrace_setup_errors",
            LogPlace::default(),
            &[("message", message)],
        );
    }
    p.sched.setup_errors_logged.insert(sequence);
}

/// Reads a packet's `ftrace_stats`; whether it had one.
fn import(p: &mut Parser, input: &Input<'_>) {
    let bytes = input.bytes;
    let evt = FtraceStatsDecoder::new(bytes);
    let phase = match evt.phase() {
        Some(Phase::StartOfTrace) => "begin",
        Some(Phase::EndOfTrace) => "end",
        _ => return,
    };
    let end = phase == "end";
    if !end {
        log_setup_errors(p, &evt, bytes, input.generation.sequence_id);
        if evt.preserve_ftrace_buffer().unwrap_or(false) {
            p.sched.preserve_ftrace_buffer = true;
        }
    }
    let stats = &mut p.storage.stats;
    for c in evt.cpu_stats() {
        let cpu = c.cpu().unwrap_or(0) as i64;
        let values = [
            ("entries", c.entries().unwrap_or(0) as i64),
            ("overrun", c.overrun().unwrap_or(0) as i64),
            ("commit_overrun", c.commit_overrun().unwrap_or(0) as i64),
            ("bytes", c.bytes_read().unwrap_or(0) as i64),
            ("dropped_events", c.dropped_events().unwrap_or(0) as i64),
            ("read_events", c.read_events().unwrap_or(0) as i64),
        ];
        for (name, v) in values {
            let begin_name = format!("ftrace_cpu_{name}_begin");
            let begin = stats
                .has_indexed(&begin_name, cpu)
                .then(|| stats.get_indexed(&begin_name, cpu));
            stats.set_indexed(&format!("ftrace_cpu_{name}_{phase}"), cpu, v);
            if end {
                if let Some(b) = begin {
                    stats.set_indexed(&format!("ftrace_cpu_{name}_delta"), cpu, v - b);
                }
            }
        }
        let now = (c.now_ts().unwrap_or(0.0) * 1e9) as i64;
        stats.set_indexed(&format!("ftrace_cpu_now_ts_{phase}"), cpu, now);
        // A cast saturates, as upstream clamps a wrapped oldest time.
        let oldest = (c.oldest_event_ts().unwrap_or(0.0) * 1e9) as i64;
        stats.set_indexed(&format!("ftrace_cpu_oldest_event_ts_{phase}"), cpu, oldest);
    }
    let kprobes = evt.kprobe_stats();
    let hits = kprobes.as_ref().and_then(|k| k.hits()).unwrap_or(0);
    let misses = kprobes.as_ref().and_then(|k| k.misses()).unwrap_or(0);
    for (name, v) in [("hits", hits), ("misses", misses)] {
        let begin_name = format!("ftrace_kprobe_{name}_begin");
        let begin = stats.has(&begin_name).then(|| stats.get(&begin_name));
        stats.set(&format!("ftrace_kprobe_{name}_{phase}"), v);
        if end {
            if let Some(b) = begin {
                stats.set(&format!("ftrace_kprobe_{name}_delta"), v - b);
            }
        }
    }
    for code in evt.ftrace_parse_errors_raw() {
        if code == ABI_ZERO_DATA_LENGTH {
            stats.incr("ftrace_abi_errors_skipped_zero_data_length");
        } else {
            stats.incr("ftrace_bundle_tokenizer_errors");
        }
    }
}
