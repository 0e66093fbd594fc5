//! What the data sources of a session could not do, for the person who
//! asked: the fields of its config that the probes refuse (read from the
//! config, by the probes' own rules) and the setup errors the ftrace data
//! source wrote into the trace (`ftrace_stats`: events unknown or failed,
//! refused fields, atrace errors). `record` says them before the session
//! starts and after it ended; `stats` says them from a trace file.

use zerotrace_probes::producer::refusals::config_refusals;
use zerotrace_protos::protos::FtraceStatsDecoder;
use zerotrace_protos::protos::{TraceConfigDecoder, TracePacketDecoder};
use zerotrace_protos::upstream_tables::packet_field;

/// For each data source of `config` (a TraceConfig) that the probes serve:
/// `(data source, line)` for each field they refuse.
pub fn refusals_of_config(config: &[u8]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for ds in TraceConfigDecoder::new(config).data_sources() {
        let Some(cfg) = ds.config_bytes() else {
            continue;
        };
        let Some(name) = ds.config().and_then(|c| c.name()) else {
            continue;
        };
        for line in config_refusals(name, cfg) {
            let entry = (name.to_owned(), line);
            if !out.contains(&entry) {
                out.push(entry);
            }
        }
    }
    out
}

/// The ftrace setup errors the trace's `ftrace_stats` packets name, each
/// once: `unknown event X`, `failed X` (a refused field's line is its own
/// text), and atrace errors.
pub fn ftrace_setup_errors<'a>(packets: impl IntoIterator<Item = &'a [u8]>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for p in packets {
        let Some(stats) = protozero::Decoder::new(p)
            .find_last(packet_field::FTRACE_STATS)
            .and_then(|f| f.as_bytes().ok())
        else {
            continue;
        };
        let s = FtraceStatsDecoder::new(stats);
        for e in s.unknown_ftrace_events() {
            add(format!("unknown ftrace event {e} (not on this kernel)"));
        }
        for e in s.failed_ftrace_events() {
            if e.starts_with("FtraceConfig.") || e.starts_with("linux.ftrace") {
                add(e.to_owned());
            } else {
                add(format!("ftrace event {e} could not be enabled"));
            }
        }
        if let Some(a) = s.atrace_errors().filter(|a| !a.is_empty()) {
            add(format!("atrace: {a}"));
        }
    }
    out
}

/// Every setup error a trace records: the ftrace ones, then the refusals
/// its `trace_config` implies for the other data sources (those of ftrace
/// are in its `ftrace_stats` already).
pub fn setup_errors_of_trace<'a>(
    packets: impl IntoIterator<Item = &'a [u8]> + Clone,
) -> Vec<String> {
    let mut out = ftrace_setup_errors(packets.clone());
    for p in packets {
        let Some(cfg) = TracePacketDecoder::new(p).trace_config_bytes() else {
            continue;
        };
        for (ds, line) in refusals_of_config(cfg) {
            let line = if ds == "linux.ftrace" {
                line
            } else {
                format!("{ds}: {line}")
            };
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}
