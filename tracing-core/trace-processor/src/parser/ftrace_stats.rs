//! `FtraceStats` packets (the ftrace data source's counters at the start
//! and end of the trace) as upstream's stats: per CPU the ring buffer's
//! entries, overruns, bytes, dropped and read events, times (`_begin`,
//! `_end` and, at the end, `_delta`), the kprobe hits and misses, and the
//! ABI errors met while reading the ring buffer: a zero-length data page
//! is counted (`ftrace_abi_errors_skipped_zero_data_length`); any other
//! error (`ftrace_parse_errors`) is what upstream refuses the trace for,
//! counted here in `ftrace_bundle_tokenizer_errors` so it is not silent.

use zerotrace_protos::protos::FtraceStatsDecoder;
use zerotrace_protos::protos::ftrace_stats::Phase;
use zerotrace_protos::upstream_tables::packet_field::FTRACE_STATS;

use super::Parser;
use super::importer::{Importer, Input};

/// `FtraceParseStatus.FTRACE_STATUS_ABI_ZERO_DATA_LENGTH`.
const ABI_ZERO_DATA_LENGTH: i32 = 12;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(FTRACE_STATS, import)];

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
    if !end && evt.preserve_ftrace_buffer().unwrap_or(false) {
        p.sched.preserve_ftrace_buffer = true;
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
