//! `upstream_tables.rs` in `protos/src/generated`: what zerotrace reads from
//! upstream's schema as data rather than as generated types. The field
//! numbers of [`FIELD_TABLES`] (messages whose upstream file imports most of
//! Perfetto, so they are not generated whole), the `/proc/vmstat` key
//! table, the field lists of `FtraceConfig` and of `PerfEventConfig`'s
//! messages (so the probes' decision tables can be checked against the
//! schema), the typed ftrace events' fields, and every ftrace event
//! upstream declares with its fields' arg types (the trace processor's
//! raw table decodes any event by it).

use std::fmt::Write as _;
use std::path::Path;

use protozero_codegen::Schema;
use protozero_codegen::model::{FieldType, Label, MessageDef, Scalar};

use crate::{FIELD_TABLES, FieldTable, PipelineError};

/// The generated file's name in the output directory.
pub(crate) const FILE: &str = "upstream_tables.rs";

/// The file's text (after `header`), from the upstream root `root` and the
/// parsed upstream set `schema`.
pub(crate) fn generate(
    root: &Path,
    schema: &Schema,
    header: &str,
) -> Result<String, PipelineError> {
    let mut out = format!("{header}\n\n");
    for table in FIELD_TABLES {
        field_numbers(root, table, &mut out)?;
    }
    vmstat_names(schema, &mut out)?;
    message_fields(schema, "FtraceConfig", "FTRACE_CONFIG_SCHEMA", &mut out)?;
    for (message, constant) in PERF_CONFIG_MESSAGES {
        message_fields(schema, message, constant, &mut out)?;
    }
    event_table(schema, &mut out)?;
    full_event_table(root, &mut out)?;
    Ok(out)
}

/// Emits `FTRACE_EVENT_SCHEMA`: every event of upstream's whole
/// `FtraceEvent` (not only those the generated code keeps), by its
/// `FtraceEvent` field number, with its message's fields and the arg type
/// each is stored as. Parsed here from `ftrace_event.proto` and what it
/// imports, apart from the pruned set the code is generated from.
fn full_event_table(root: &Path, out: &mut String) -> Result<(), PipelineError> {
    let mut config = protozero_codegen::Config::new();
    config
        .include(root)
        .front_end(crate::front_end(false))
        .input(root.join("protos/perfetto/trace/ftrace/ftrace_event.proto"));
    let schema = config.parse()?;
    let messages: Vec<&MessageDef> = schema.files.iter().flat_map(|f| &f.messages).collect();
    let event = messages
        .iter()
        .find(|m| m.full_name == "perfetto.protos.FtraceEvent")
        .ok_or_else(|| PipelineError::Upstream("no FtraceEvent".into()))?;
    out.push_str("/// Every ftrace event upstream declares: `FtraceEvent` field, name and fields with their arg types.\npub const FTRACE_EVENT_SCHEMA: &[SchemaEvent] = &[\n");
    let mut events: Vec<_> = event
        .fields
        .iter()
        .filter_map(|f| match &f.ty {
            FieldType::Message(t) if f.name != "generic" => Some((f, t)),
            _ => None,
        })
        .collect();
    events.sort_by_key(|(f, _)| f.number);
    for (f, t) in events {
        let Some(m) = messages.iter().find(|m| &m.full_name == t) else {
            continue;
        };
        let _ = writeln!(
            out,
            "    SchemaEvent {{ name: {:?}, field: {}, fields: &[",
            f.name, f.number
        );
        for mf in &m.fields {
            let ty = match &mf.ty {
                FieldType::Scalar(
                    Scalar::Int32
                    | Scalar::Int64
                    | Scalar::Sfixed32
                    | Scalar::Sfixed64
                    | Scalar::Bool,
                ) => "Int",
                FieldType::Enum(_) => "Int",
                FieldType::Scalar(Scalar::Sint32 | Scalar::Sint64) => "Sint",
                FieldType::Scalar(
                    Scalar::Uint32 | Scalar::Uint64 | Scalar::Fixed32 | Scalar::Fixed64,
                ) => "Uint",
                FieldType::Scalar(Scalar::String | Scalar::Bytes) => "String",
                FieldType::Scalar(Scalar::Double) => "Double",
                FieldType::Scalar(Scalar::Float) => "Float",
                _ => "Other",
            };
            let _ = writeln!(
                out,
                "        SchemaField {{ name: {:?}, number: {}, ty: ArgType::{ty} }},",
                mf.name, mf.number
            );
        }
        out.push_str("    ] },\n");
    }
    out.push_str("];\n");
    Ok(())
}

/// The messages of a `PerfEventConfig` whose fields `linux.perf` decides
/// one by one (`Outer.Inner` for a nested message), and the constants
/// their schemas are emitted as.
const PERF_CONFIG_MESSAGES: &[(&str, &str)] = &[
    ("PerfEventConfig", "PERF_EVENT_CONFIG_SCHEMA"),
    (
        "PerfEventConfig.CallstackSampling",
        "PERF_CALLSTACK_SAMPLING_SCHEMA",
    ),
    ("PerfEventConfig.Scope", "PERF_SCOPE_SCHEMA"),
    ("PerfEvents.Timebase", "PERF_TIMEBASE_SCHEMA"),
    ("PerfEvents.Tracepoint", "PERF_TRACEPOINT_SCHEMA"),
    ("PerfEvents.RawEvent", "PERF_RAW_EVENT_SCHEMA"),
    ("FollowerEvent", "PERF_FOLLOWER_EVENT_SCHEMA"),
];

/// Emits module `table.module` with `pub const NAME: u32 = N;` for each
/// field, N read from the upstream declaration `Type name = N;` in
/// `table.file` (the message's field names are unique in that file).
fn field_numbers(root: &Path, table: &FieldTable, out: &mut String) -> Result<(), PipelineError> {
    let path = root.join(table.file);
    let text = std::fs::read_to_string(&path).map_err(|source| PipelineError::Io {
        path: path.clone(),
        source,
    })?;
    let message = table.message;
    let _ = writeln!(
        out,
        "/// `{message}` field numbers, read from upstream's schema.\npub mod {} {{",
        table.module
    );
    for (constant, name) in table.fields {
        let number = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or("").trim())
            .find_map(|l| {
                let (decl, rest) = l.split_once('=')?;
                let mut words = decl.split_whitespace().rev();
                (words.next()? == *name && words.next().is_some()).then_some(())?;
                rest.trim()
                    .split([';', '['])
                    .next()?
                    .trim()
                    .parse::<u32>()
                    .ok()
            })
            .ok_or_else(|| PipelineError::Upstream(format!("{message}.{name} not found")))?;
        let _ = writeln!(
            out,
            "    /// `{message}.{name}`.\n    pub const {constant}: u32 = {number};"
        );
    }
    out.push_str("}\n");
    Ok(())
}

/// Emits `VMSTAT_KEYS`: each `/proc/vmstat` key (the enum value's name
/// without its `VMSTAT_` prefix, lower-cased, as the kernel spells it) with
/// its `VmstatCounters` number, sorted by key for binary search.
fn vmstat_names(schema: &Schema, out: &mut String) -> Result<(), PipelineError> {
    let values = schema
        .files
        .iter()
        .flat_map(|f| &f.enums)
        .find(|e| e.name == "VmstatCounters")
        .ok_or_else(|| PipelineError::Upstream("no VmstatCounters".into()))?;
    let mut keys: Vec<(String, i32)> = values
        .values
        .iter()
        .filter(|v| v.number != 0)
        .filter_map(|v| {
            Some((
                v.name.strip_prefix("VMSTAT_")?.to_ascii_lowercase(),
                v.number,
            ))
        })
        .collect();
    keys.sort();
    keys.dedup_by(|a, b| a.0 == b.0);
    out.push_str("/// `/proc/vmstat` keys with their `VmstatCounters` numbers, sorted by key.\npub const VMSTAT_KEYS: &[(&str, i32)] = &[\n");
    for (k, n) in keys {
        let _ = writeln!(out, "    ({k:?}, {n}),");
    }
    out.push_str("];\n");
    Ok(())
}

/// The message called `name` (short name) anywhere in `schema`.
fn find_short<'s>(schema: &'s Schema, name: &str) -> Result<&'s MessageDef, PipelineError> {
    schema
        .files
        .iter()
        .flat_map(|f| &f.messages)
        .find(|m| m.name == name)
        .ok_or_else(|| PipelineError::Upstream(format!("no message {name}")))
}

/// Emits `constant: &[(u32, &str)]`: every field (number, name) of the
/// upstream message `message`, in declaration order, so a test can check
/// that a decision table covers the schema the code was generated from.
fn message_fields(
    schema: &Schema,
    message: &str,
    constant: &str,
    out: &mut String,
) -> Result<(), PipelineError> {
    let mut path = message.split('.');
    let mut msg = find_short(schema, path.next().unwrap_or(message))?;
    for inner in path {
        msg = msg
            .messages
            .iter()
            .find(|m| m.name == inner)
            .ok_or_else(|| PipelineError::Upstream(format!("no message {message}")))?;
    }
    let _ = writeln!(
        out,
        "/// Every field (number, name) of upstream `{message}`, read from its `.proto`.\npub const {constant}: &[(u32, &str)] = &["
    );
    for f in &msg.fields {
        let _ = writeln!(out, "    ({}, {:?}),", f.number, f.name);
    }
    out.push_str("];\n");
    Ok(())
}

/// Emits `FTRACE_EVENT_MESSAGES`: for each typed event kept in
/// `FtraceEvent`, its field number there and its message's fields (name,
/// number, scalar type), in upstream's declaration order, which is the
/// order traced_probes writes them in.
fn event_table(schema: &Schema, out: &mut String) -> Result<(), PipelineError> {
    let messages: Vec<&MessageDef> = schema.files.iter().flat_map(|f| &f.messages).collect();
    let find = |full: &str| {
        messages
            .iter()
            .find(|m| m.full_name == full)
            .copied()
            .ok_or_else(|| PipelineError::Upstream(format!("{full} not kept")))
    };
    let event = find("perfetto.protos.FtraceEvent")?;
    out.push_str("/// The typed ftrace events: `FtraceEvent` field and message fields, from upstream.\npub const FTRACE_EVENT_MESSAGES: &[EventMessage] = &[\n");
    for f in &event.fields {
        let FieldType::Message(t) = &f.ty else {
            continue;
        };
        if f.name == "generic" {
            continue;
        }
        let m = find(t)?;
        let _ = writeln!(
            out,
            "    EventMessage {{ name: {:?}, field: {}, fields: &[",
            f.name, f.number
        );
        for mf in &m.fields {
            let ty = match (&mf.ty, mf.label) {
                (FieldType::Scalar(Scalar::String), Label::Singular) => "String",
                (FieldType::Scalar(Scalar::Int32), Label::Singular) => "Int32",
                (FieldType::Scalar(Scalar::Int64), Label::Singular) => "Int64",
                (FieldType::Scalar(Scalar::Uint32), Label::Singular) => "Uint32",
                (FieldType::Scalar(Scalar::Uint64), Label::Singular) => "Uint64",
                (FieldType::Scalar(Scalar::Uint64), Label::Repeated) => "RepeatedUint64",
                (other, label) => {
                    return Err(PipelineError::Upstream(format!(
                        "{}.{}: {other:?} {label:?} is not a type the probes translate",
                        m.name, mf.name
                    )));
                }
            };
            let _ = writeln!(
                out,
                "        ProtoField {{ name: {:?}, number: {}, ty: ProtoType::{ty} }},",
                mf.name, mf.number
            );
        }
        out.push_str("    ] },\n");
    }
    out.push_str("];\n");
    Ok(())
}
