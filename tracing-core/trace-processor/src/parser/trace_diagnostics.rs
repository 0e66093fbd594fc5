//! Problems in how a trace was recorded, found from its trace config once
//! the whole trace is read: the rows of `__intrinsic_trace_diagnostics`.
//! A user who recorded with a tiny ftrace buffer, without kernel symbol
//! resolution for events that need it, or with a DISCARD buffer while
//! streaming to a file learns it from the trace itself, with what to change
//! next time.
//!
//! The rules, their keys, thresholds and confidences are upstream's (its
//! trace diagnostics tracker), so that a query on the key answers as
//! upstream's does; the titles, descriptions and remediations are our own
//! words. A rule reads the config and, where upstream's does, the stats
//! (data loss raises a rule's confidence) and the metadata (the build
//! type, when tracing started).

use protozero::Decoder;
use zerotrace_protos::protos::trace_config::buffer_config::FillPolicy;
use zerotrace_protos::protos::{DataSourceConfigDecoder, FtraceConfigDecoder, TraceConfigDecoder};

use crate::storage::Storage;
use crate::storage::stats::STATS;
use crate::tables::core::TraceDiagnosticRow;

/// `DataSourceConfig.ftrace_config`'s field number.
const FTRACE_CONFIG: u32 = 100;

/// One finding before it becomes a row.
struct Finding {
    key: &'static str,
    title: &'static str,
    description: String,
    remediation: &'static str,
    confidence: f64,
}

/// Whether any count of a stat that `pick` accepts (by name and
/// severity) is positive.
fn any_positive_stat(s: &Storage, pick: impl Fn(&str, &str) -> bool) -> bool {
    s.stats
        .rows()
        .iter()
        .any(|&(i, _, v)| v > 0 && STATS.get(i).is_some_and(|d| pick(d.0, d.2.as_str())))
}

/// Whether the kernel's ftrace buffers lost events.
fn ftrace_data_loss(s: &Storage) -> bool {
    any_positive_stat(s, |name, _| {
        matches!(
            name,
            "ftrace_cpu_has_data_loss"
                | "ftrace_cpu_overrun_delta"
                | "ftrace_cpu_commit_overrun_delta"
        )
    })
}

/// The text of `single` metadata entry `name`.
fn metadata_str<'s>(s: &'s Storage, name: &str) -> Option<&'s str> {
    let id = s.strings.find(name)?;
    let row = s.metadata.iter().rev().find(|m| m.name == id)?;
    s.strings.get(row.str_value)
}

/// Whether the build fingerprint names a `user` (production) build: the
/// build type is what follows the last `:`, up to a `/`.
fn android_user_build(s: &Storage) -> bool {
    let Some(fp) = metadata_str(s, "android_build_fingerprint") else {
        return false;
    };
    let Some((_, rest)) = fp.rsplit_once(':') else {
        return false;
    };
    rest.split('/').next() == Some("user")
}

/// Each data source's config in the trace config.
fn data_sources<'a>(config: &TraceConfigDecoder<'a>) -> Vec<DataSourceConfigDecoder<'a>> {
    config.data_sources().filter_map(|ds| ds.config()).collect()
}

/// The ftrace config of each data source that has one (the last one a
/// data source config carries, as protobuf merges it).
fn ftrace_configs<'a>(config: &TraceConfigDecoder<'a>) -> Vec<FtraceConfigDecoder<'a>> {
    config
        .data_sources_bytes()
        .filter_map(|ds| {
            // TraceConfig.DataSource.config = 1.
            let cfg = Decoder::new(ds)
                .flatten()
                .filter(|f| f.id == 1)
                .filter_map(|f| f.as_bytes().ok())
                .last()?;
            Decoder::new(cfg)
                .flatten()
                .filter(|f| f.id == FTRACE_CONFIG)
                .filter_map(|f| f.as_bytes().ok())
                .last()
                .map(FtraceConfigDecoder::new)
        })
        .collect()
}

/// `preserve_ftrace_buffer` when tracing started over five minutes after
/// boot: the preserved buffer then holds events from long before.
fn preserve_late_start(s: &Storage, ftrace: &[FtraceConfigDecoder<'_>], out: &mut Vec<Finding>) {
    const LATE_NS: i64 = 5 * 60 * 1_000_000_000;
    for f in ftrace {
        if f.preserve_ftrace_buffer() != Some(true) {
            continue;
        }
        let Some(started) = s.metadata_int("tracing_started_ns") else {
            continue;
        };
        if started <= LATE_NS {
            continue;
        }
        out.push(Finding {
            key: "preserve_ftrace_buffer_late_start",
            title: "Old events kept by preserve_ftrace_buffer",
            description: "The ftrace config keeps the kernel's earlier buffer \
                          (preserve_ftrace_buffer), but tracing began minutes after boot, so \
                          the kept events may be stale and mislead."
                .to_owned(),
            remediation: "Keep preserve_ftrace_buffer for traces started right after boot only.",
            confidence: 0.7,
        });
    }
}

/// An explicit `buffer_size_kb` under 1 MB: certain at 64 KB or less,
/// less likely towards 1 MB, certain again when ftrace lost data.
fn tiny_buffer(s: &Storage, ftrace: &[FtraceConfigDecoder<'_>], out: &mut Vec<Finding>) {
    const OK_KB: u32 = 1024;
    const SEVERE_KB: u32 = 64;
    for f in ftrace {
        let Some(kb) = f.buffer_size_kb() else {
            continue;
        };
        if kb == 0 || kb >= OK_KB {
            continue;
        }
        let confidence = if ftrace_data_loss(s) || kb <= SEVERE_KB {
            0.9
        } else {
            let t = f64::from(kb - SEVERE_KB) / f64::from(OK_KB - SEVERE_KB);
            0.9 - 0.7 * t
        };
        out.push(Finding {
            key: "tiny_ftrace_buffer",
            title: "Small ftrace buffer",
            description: format!(
                "The ftrace config asks for a {kb} KB kernel buffer per CPU, under 1 MB: a busy \
                 system fills it before it is read and events are lost."
            ),
            remediation: "Leave buffer_size_kb unset so that the default size applies.",
            confidence,
        });
    }
}

/// `buffer_size_kb` over `drain_period_ms` under 5 MB/s.
fn low_drain_bandwidth(s: &Storage, ftrace: &[FtraceConfigDecoder<'_>], out: &mut Vec<Finding>) {
    const OK: f64 = 5.0;
    const SEVERE: f64 = 1.0;
    for f in ftrace {
        let (Some(kb), Some(ms)) = (f.buffer_size_kb(), f.drain_period_ms()) else {
            continue;
        };
        if kb == 0 || ms == 0 {
            continue;
        }
        let mb_per_s = (f64::from(kb) / 1024.0) / (f64::from(ms) / 1000.0);
        if mb_per_s >= OK {
            continue;
        }
        let confidence = if ftrace_data_loss(s) || mb_per_s <= SEVERE {
            0.9
        } else {
            0.9 * (OK - mb_per_s) / (OK - SEVERE)
        };
        out.push(Finding {
            key: "low_ftrace_drain_bandwidth",
            title: "Slow ftrace draining",
            description: format!(
                "A {kb} KB buffer read every {ms} ms drains under 5 MB/s; a burst of events \
                 overflows it between two reads."
            ),
            remediation: "Leave buffer_size_kb and drain_period_ms unset, or make the buffer \
                          larger or the period shorter.",
            confidence,
        });
    }
}

/// `drain_period_ms` outside [100, 60000].
fn extreme_drain_period(ftrace: &[FtraceConfigDecoder<'_>], out: &mut Vec<Finding>) {
    for f in ftrace {
        let Some(ms) = f.drain_period_ms() else {
            continue;
        };
        if (100..=60_000).contains(&ms) {
            continue;
        }
        out.push(Finding {
            key: "extreme_ftrace_drain_period",
            title: "Unusual ftrace drain period",
            description: format!(
                "The ftrace buffers are read every {ms} ms, outside 100 ms to 60 s: too often \
                 wakes the CPUs, too rarely lets the buffers overflow."
            ),
            remediation: "Leave drain_period_ms unset, or keep it between 100 and 60000.",
            confidence: 0.6,
        });
    }
}

/// `raw_syscalls` events with no `syscall_events` filter.
fn syscalls_without_filter(
    s: &Storage,
    ftrace: &[FtraceConfigDecoder<'_>],
    out: &mut Vec<Finding>,
) {
    for f in ftrace {
        let syscalls = f
            .ftrace_events()
            .any(|e| e == "raw_syscalls/sys_enter" || e == "raw_syscalls/sys_exit");
        if !syscalls || f.syscall_events().next().is_some() {
            continue;
        }
        out.push(Finding {
            key: "syscalls_without_filter",
            title: "Every syscall recorded",
            description: "raw_syscalls events are on with no syscall_events list, so each \
                          system call of every process is written: large traces, high overhead."
                .to_owned(),
            remediation: "List the system calls of interest in syscall_events.",
            confidence: if ftrace_data_loss(s) { 0.9 } else { 0.3 },
        });
    }
}

/// Function graph tracing, or events whose fields are kernel addresses,
/// without `symbolize_ksyms`.
fn needs_ksyms(ftrace: &[FtraceConfigDecoder<'_>], out: &mut Vec<Finding>) {
    const NEED_KSYMS: [&str; 2] = [
        "workqueue/workqueue_execute_start",
        "sched/sched_blocked_reason",
    ];
    for f in ftrace {
        if f.symbolize_ksyms() == Some(true) {
            continue;
        }
        if f.enable_function_graph() == Some(true) {
            out.push(Finding {
                key: "function_graph_requires_symbolize_ksyms",
                title: "Function graph without kernel symbols",
                description: "Function graph tracing records kernel addresses, and with \
                              symbolize_ksyms off they cannot be turned into function names \
                              later."
                    .to_owned(),
                remediation: "Turn on symbolize_ksyms in the ftrace config.",
                confidence: 1.0,
            });
        }
        let Some(event) = f.ftrace_events().find(|e| NEED_KSYMS.contains(e)) else {
            continue;
        };
        out.push(Finding {
            key: "events_require_symbolize_ksyms",
            title: "Events without kernel symbols",
            description: format!(
                "{event} carries kernel addresses, and with symbolize_ksyms off they stay \
                 addresses that cannot be named later."
            ),
            remediation: "Turn on symbolize_ksyms in the ftrace config.",
            confidence: 0.6,
        });
    }
}

/// ftrace or track_event writing into a DISCARD buffer while the trace
/// streams into a file (unless the file is written less than weekly).
fn discard_for_streaming(config: &TraceConfigDecoder<'_>, out: &mut Vec<Finding>) {
    const LONG_PERIOD_MS: u32 = 604_800_000;
    if config.write_into_file() != Some(true)
        || config.file_write_period_ms().unwrap_or(0) >= LONG_PERIOD_MS
    {
        return;
    }
    let discard: Vec<bool> = config
        .buffers()
        .map(|b| b.fill_policy() == Some(FillPolicy::Discard))
        .collect();
    for ds in data_sources(config) {
        let name = ds.name().unwrap_or_default();
        if name != "linux.ftrace" && name != "track_event" {
            continue;
        }
        let target = ds.target_buffer().unwrap_or(0) as usize;
        if !discard.get(target).copied().unwrap_or(false) {
            continue;
        }
        out.push(Finding {
            key: "discard_buffer_for_streaming",
            title: "DISCARD buffer in a streamed trace",
            description: format!(
                "\"{name}\" writes into a DISCARD buffer while the trace streams to a file: \
                 recording stops when that buffer first fills, cutting a long trace short."
            ),
            remediation: "Give the buffers of ftrace and track_event the RING_BUFFER policy \
                          (the default) in long traces.",
            confidence: 0.8,
        });
    }
}

/// heapprofd sampling every less than 100 KB.
fn heapprofd_interval(s: &Storage, config: &TraceConfigDecoder<'_>, out: &mut Vec<Finding>) {
    for ds in data_sources(config) {
        let Some(interval) = ds
            .heapprofd_config()
            .and_then(|h| h.sampling_interval_bytes())
        else {
            continue;
        };
        if interval == 0 || interval >= 100 * 1024 {
            continue;
        }
        let errors = any_positive_stat(s, |name, sev| {
            sev == "error" && name.starts_with("heapprofd")
        });
        out.push(Finding {
            key: "heapprofd_sampling_interval_too_low",
            title: "Very fine heapprofd sampling",
            description: format!(
                "heapprofd samples every {interval} bytes, under 100 KB: the profile gets \
                 little more accurate while the profiled process slows down."
            ),
            remediation: "Sample every 100 KB or more (sampling_interval_bytes).",
            confidence: if errors { 0.9 } else { 0.3 },
        });
    }
}

/// `android.display.video` asked for on a user build that gave neither
/// frames nor errors: the build refuses it until a property is set.
fn display_video(s: &Storage, config: &TraceConfigDecoder<'_>, out: &mut Vec<Finding>) {
    let asked = data_sources(config)
        .iter()
        .any(|ds| ds.name() == Some("android.display.video"));
    if !asked || !android_user_build(s) {
        return;
    }
    // We import no video frames yet; the producer's own errors say it ran.
    let errors = any_positive_stat(s, |name, sev| {
        matches!(sev, "error" | "data_loss") && name.starts_with("android_video_")
    });
    if errors {
        return;
    }
    out.push(Finding {
        key: "display_video_not_enabled",
        title: "No display video recorded",
        description: "The config asks for android.display.video, yet no frame and no error \
                      came: production (user) builds keep screen recording off until the \
                      debug.tracing_video_allowed property is true, and a reboot clears it."
            .to_owned(),
        remediation: "Run `adb shell setprop debug.tracing_video_allowed true` after each boot, \
                      then record again.",
        confidence: 0.7,
    });
}

/// Runs every rule over trace config `config` and adds a row per finding
/// (trace 0: the one trace this storage holds), in upstream's rule order.
pub fn run(s: &mut Storage, config: &[u8]) {
    let cfg = TraceConfigDecoder::new(config);
    let ftrace = ftrace_configs(&cfg);
    let mut out = Vec::new();
    preserve_late_start(s, &ftrace, &mut out);
    tiny_buffer(s, &ftrace, &mut out);
    low_drain_bandwidth(s, &ftrace, &mut out);
    extreme_drain_period(&ftrace, &mut out);
    syscalls_without_filter(s, &ftrace, &mut out);
    needs_ksyms(&ftrace, &mut out);
    discard_for_streaming(&cfg, &mut out);
    heapprofd_interval(s, &cfg, &mut out);
    display_video(s, &cfg, &mut out);
    for f in out {
        let row = TraceDiagnosticRow {
            key: s.strings.intern(f.key),
            title: s.strings.intern(f.title),
            description: s.strings.intern(&f.description),
            remediation: s.strings.intern(f.remediation),
            confidence: f.confidence,
            trace_id: Some(0),
        };
        s.trace_diagnostics.push(row);
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

    /// A trace of one packet: a trace config with one `linux.ftrace` data
    /// source whose ftrace config is `ftrace`.
    fn trace_with_ftrace_config(ftrace: &[u8]) -> Vec<u8> {
        let mut ds_config = Vec::new();
        bytes_field(1, b"linux.ftrace", &mut ds_config);
        bytes_field(100, ftrace, &mut ds_config);
        let mut ds = Vec::new();
        bytes_field(1, &ds_config, &mut ds);
        let mut config = Vec::new();
        bytes_field(2, &ds, &mut config);
        let mut packet = Vec::new();
        bytes_field(33, &config, &mut packet);
        let mut trace = Vec::new();
        bytes_field(1, &packet, &mut trace);
        trace
    }

    fn diagnostics(trace: &[u8]) -> Vec<Vec<Value>> {
        let tp = TraceProcessor::from_bytes(trace).expect("load");
        tp.query("SELECT key, confidence, trace_id FROM __intrinsic_trace_diagnostics ORDER BY key")
            .expect("query")
            .rows
    }

    #[test]
    fn config_problems_become_rows_with_upstreams_keys() {
        let mut ftrace = Vec::new();
        bytes_field(1, b"sched/sched_blocked_reason", &mut ftrace);
        int_field(10, 16, &mut ftrace); // buffer_size_kb
        int_field(19, 1, &mut ftrace); // enable_function_graph
        assert_eq!(
            diagnostics(&trace_with_ftrace_config(&ftrace)),
            [
                vec![
                    Value::Text("events_require_symbolize_ksyms".into()),
                    Value::Real(0.6),
                    Value::Int(0)
                ],
                vec![
                    Value::Text("function_graph_requires_symbolize_ksyms".into()),
                    Value::Real(1.0),
                    Value::Int(0)
                ],
                vec![
                    Value::Text("tiny_ftrace_buffer".into()),
                    Value::Real(0.9),
                    Value::Int(0)
                ],
            ]
        );
    }

    #[test]
    fn a_sound_config_gives_no_row() {
        let mut ftrace = Vec::new();
        bytes_field(1, b"sched/sched_blocked_reason", &mut ftrace);
        int_field(10, 8192, &mut ftrace);
        int_field(13, 1, &mut ftrace); // symbolize_ksyms
        assert!(diagnostics(&trace_with_ftrace_config(&ftrace)).is_empty());
        let tp = TraceProcessor::from_bytes(&[]).expect("empty");
        let r = tp
            .query("SELECT * FROM __intrinsic_trace_diagnostics")
            .expect("query");
        assert_eq!(
            r.columns,
            [
                "id",
                "key",
                "title",
                "description",
                "remediation",
                "confidence",
                "trace_id"
            ]
        );
    }
}
