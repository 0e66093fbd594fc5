//! What `linux.perf` does with each field of a `PerfEventConfig` and of
//! the messages inside it (`Timebase`, `Tracepoint`, `RawEvent`,
//! `FollowerEvent`, `CallstackSampling`, `Scope`): one table,
//! [`PERF_CONFIG_FIELDS`], checked against the schema this crate is
//! generated from ([`undecided_fields`]), so that a field upstream adds
//! cannot slip through undecided; and, at run time, the fields of a config
//! that the table does not know (newer than it) named as refused
//! ([`unknown_fields`]).

use zerotrace_protos::upstream_tables::{
    PERF_CALLSTACK_SAMPLING_SCHEMA, PERF_EVENT_CONFIG_SCHEMA, PERF_FOLLOWER_EVENT_SCHEMA,
    PERF_RAW_EVENT_SCHEMA, PERF_SCOPE_SCHEMA, PERF_TIMEBASE_SCHEMA, PERF_TRACEPOINT_SCHEMA,
};

/// How `linux.perf` treats a config field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Done as upstream's `traced_perf` does it on Linux.
    Implemented,
    /// Refused with a line naming the field when set; recorded without it.
    Refused,
    /// Accepted and not acted on, as upstream on Linux does not act on it
    /// either.
    Kept,
}

/// Where the table's knowledge of a field comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The schema this crate is generated from.
    Schema,
    /// Upstream's newer schema: read by number.
    Newer,
}

/// The messages of the table.
pub const MESSAGES: &[&str] = &[
    "PerfEventConfig",
    "CallstackSampling",
    "Scope",
    "Timebase",
    "Tracepoint",
    "RawEvent",
    "FollowerEvent",
];

/// Every field of the config's messages: (message, number, name, handling,
/// source).
pub const PERF_CONFIG_FIELDS: &[(&str, u32, &str, Handling, Source)] = &[
    (
        "PerfEventConfig",
        15,
        "timebase",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        19,
        "followers",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        16,
        "callstack_sampling",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        20,
        "target_cpu",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        21,
        "ignore_open_failure",
        Handling::Implemented,
        Source::Newer,
    ),
    // A CPU model filter for Android's heterogeneous PMUs.
    (
        "PerfEventConfig",
        22,
        "cpuid",
        Handling::Refused,
        Source::Newer,
    ),
    (
        "PerfEventConfig",
        8,
        "ring_buffer_read_period_ms",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        3,
        "ring_buffer_pages",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        17,
        "max_enqueued_footprint_kb",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        13,
        "max_daemon_memory_kb",
        Handling::Implemented,
        Source::Schema,
    ),
    // Bounds Android's signal-based lookup of a process's /proc files; on
    // Linux upstream opens them directly, so the lookup never times out
    // (and ours reads them when a sample is unwound).
    (
        "PerfEventConfig",
        9,
        "remote_descriptor_timeout_ms",
        Handling::Kept,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        10,
        "unwind_state_clear_period_ms",
        Handling::Implemented,
        Source::Schema,
    ),
    // Android's package installer check.
    (
        "PerfEventConfig",
        18,
        "target_installed_by",
        Handling::Refused,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        1,
        "all_cpus",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        2,
        "sampling_frequency",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        12,
        "kernel_frames",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        4,
        "target_pid",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        5,
        "target_cmdline",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        6,
        "exclude_pid",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        7,
        "exclude_cmdline",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "PerfEventConfig",
        11,
        "additional_cmdline_count",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "CallstackSampling",
        1,
        "scope",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "CallstackSampling",
        2,
        "kernel_frames",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "CallstackSampling",
        3,
        "user_frames",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Scope",
        1,
        "target_pid",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Scope",
        2,
        "target_cmdline",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Scope",
        3,
        "exclude_pid",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Scope",
        4,
        "exclude_cmdline",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Scope",
        5,
        "additional_cmdline_count",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Scope",
        6,
        "process_shard_count",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Timebase",
        2,
        "frequency",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Timebase",
        1,
        "period",
        Handling::Implemented,
        Source::Schema,
    ),
    // Counter polling (upstream's `perf stat`-like mode).
    (
        "Timebase",
        6,
        "poll_period_ms",
        Handling::Refused,
        Source::Schema,
    ),
    (
        "Timebase",
        4,
        "counter",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Timebase",
        3,
        "tracepoint",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Timebase",
        5,
        "raw_event",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Timebase",
        12,
        "modifiers",
        Handling::Implemented,
        Source::Newer,
    ),
    (
        "Timebase",
        11,
        "timestamp_clock",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Timebase",
        10,
        "name",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Tracepoint",
        1,
        "name",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "Tracepoint",
        2,
        "filter",
        Handling::Implemented,
        Source::Schema,
    ),
    ("RawEvent", 1, "type", Handling::Implemented, Source::Schema),
    (
        "RawEvent",
        2,
        "config",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "RawEvent",
        3,
        "config1",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "RawEvent",
        4,
        "config2",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "RawEvent",
        5,
        "pmu_name",
        Handling::Implemented,
        Source::Newer,
    ),
    (
        "FollowerEvent",
        1,
        "counter",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "FollowerEvent",
        2,
        "tracepoint",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "FollowerEvent",
        3,
        "raw_event",
        Handling::Implemented,
        Source::Schema,
    ),
    (
        "FollowerEvent",
        5,
        "modifiers",
        Handling::Implemented,
        Source::Newer,
    ),
    (
        "FollowerEvent",
        4,
        "name",
        Handling::Implemented,
        Source::Schema,
    ),
];

/// The generated schema of one of [`MESSAGES`].
fn schema(message: &str) -> &'static [(u32, &'static str)] {
    match message {
        "PerfEventConfig" => PERF_EVENT_CONFIG_SCHEMA,
        "CallstackSampling" => PERF_CALLSTACK_SAMPLING_SCHEMA,
        "Scope" => PERF_SCOPE_SCHEMA,
        "Timebase" => PERF_TIMEBASE_SCHEMA,
        "Tracepoint" => PERF_TRACEPOINT_SCHEMA,
        "RawEvent" => PERF_RAW_EVENT_SCHEMA,
        "FollowerEvent" => PERF_FOLLOWER_EVENT_SCHEMA,
        _ => &[],
    }
}

/// The fields where [`PERF_CONFIG_FIELDS`] and the generated schema
/// disagree: a schema field with no decision, a decision said to be from
/// the schema that is not in it, or one said to be newer that is.
pub fn undecided_fields() -> Vec<String> {
    let mut out = Vec::new();
    for &message in MESSAGES {
        for &(number, name) in schema(message) {
            let decided = PERF_CONFIG_FIELDS.iter().any(|&(m, n, f, _, src)| {
                m == message && n == number && f == name && src == Source::Schema
            });
            if !decided {
                out.push(format!("{message}.{name} = {number} has no decision"));
            }
        }
    }
    for &(message, number, name, _, src) in PERF_CONFIG_FIELDS {
        let in_schema = schema(message)
            .iter()
            .any(|&(n, f)| n == number && f == name);
        match (src, in_schema) {
            (Source::Schema, false) => {
                out.push(format!("{message}.{name} = {number} is not in the schema"));
            }
            (Source::Newer, true) => {
                out.push(format!("{message}.{name} = {number} is in the schema now"));
            }
            _ => {}
        }
        if !MESSAGES.contains(&message) {
            out.push(format!("{message} is not a message of the table"));
        }
    }
    out
}

/// Which of [`MESSAGES`] field `number` of `message` holds, if a message.
fn nested(message: &str, number: u32) -> Option<&'static str> {
    Some(match (message, number) {
        ("PerfEventConfig", 15) => "Timebase",
        ("PerfEventConfig", 19) => "FollowerEvent",
        ("PerfEventConfig", 16) => "CallstackSampling",
        ("CallstackSampling", 1) => "Scope",
        ("Timebase", 3) | ("FollowerEvent", 2) => "Tracepoint",
        ("Timebase", 5) | ("FollowerEvent", 3) => "RawEvent",
        _ => return None,
    })
}

/// The fields of the encoded `PerfEventConfig` `bytes` (and of the
/// messages in it) that [`PERF_CONFIG_FIELDS`] does not know, as
/// `Message.field N`, once each. Undecodable bytes end the walk (the
/// config's reader reports them).
pub fn unknown_fields(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    walk("PerfEventConfig", bytes, &mut out, 0);
    out
}

fn walk(message: &'static str, bytes: &[u8], out: &mut Vec<String>, depth: u32) {
    if depth > 4 {
        return;
    }
    for f in protozero::Decoder::new(bytes) {
        let Ok(f) = f else { return };
        let known = PERF_CONFIG_FIELDS
            .iter()
            .any(|&(m, n, ..)| m == message && n == f.id);
        if !known {
            let line = format!("{message}.field {}", f.id);
            if !out.contains(&line) {
                out.push(line);
            }
            continue;
        }
        if let (Some(inner), Ok(b)) = (nested(message, f.id), f.as_bytes()) {
            walk(inner, b, out, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_covers_the_generated_schema() {
        assert!(PERF_EVENT_CONFIG_SCHEMA.len() >= 19, "schema found");
        assert_eq!(undecided_fields(), Vec::<String>::new());
    }

    #[test]
    fn fields_the_table_does_not_know_are_named() {
        let mut w = protozero::HeapWriter::new();
        {
            let mut c = w.root();
            {
                let mut tb = c.begin_nested(15);
                tb.append_varint(2, 100);
                tb.append_varint(99, 1);
                let mut raw = tb.begin_nested(5);
                raw.append_varint(1, 4);
                raw.append_varint(6, 1);
            }
            c.append_varint(40, 1);
            c.append_varint(40, 2);
            c.append_varint(3, 8);
        }
        let bytes = w.finish().unwrap();
        assert_eq!(
            unknown_fields(&bytes),
            [
                "Timebase.field 99",
                "RawEvent.field 6",
                "PerfEventConfig.field 40"
            ]
        );
    }
}
