//! `zerotrace query`: the service's producers, data sources and sessions,
//! as tables or (`--json`) as the TracingServiceState in JSON.

use prost_reflect::{DynamicMessage, ReflectMessage, Value};

use super::{CliError, connect, print_out};
use crate::schema;

/// A field of `m` by name.
fn field(m: &DynamicMessage, name: &str) -> Option<Value> {
    let f = m.descriptor().get_field_by_name(name)?;
    m.has_field(&f).then(|| m.get_field(&f).into_owned())
}

/// A scalar field as text ("" when unset).
fn text(m: &DynamicMessage, name: &str) -> String {
    match field(m, name) {
        Some(Value::String(s)) => s,
        Some(Value::EnumNumber(n)) => {
            let desc = m.descriptor().get_field_by_name(name);
            desc.and_then(|f| f.kind().as_enum().and_then(|e| e.get_value(n)))
                .map_or(n.to_string(), |v| v.name().to_owned())
        }
        Some(Value::List(l)) => l
            .iter()
            .map(|v| format!("{v}"))
            .collect::<Vec<_>>()
            .join(","),
        Some(v) => format!("{v}"),
        None => String::new(),
    }
}

/// The repeated message field `name` of `m`.
fn messages(m: &DynamicMessage, name: &str) -> Vec<DynamicMessage> {
    match field(m, name) {
        Some(Value::List(l)) => l
            .into_iter()
            .filter_map(|v| match v {
                Value::Message(m) => Some(m),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Runs `query`.
pub fn run(socket: &str, json: bool) -> Result<(), CliError> {
    let mut o = String::new();
    let mut consumer = connect(socket)?;
    let bytes = consumer
        .query_service_state()
        .map_err(|e| CliError::Session(format!("QueryServiceState: {e}")))?;
    let desc = schema::pool()
        .get_message_by_name("perfetto.protos.TracingServiceState")
        .ok_or_else(|| CliError::Usage("the schema lacks TracingServiceState".into()))?;
    let state = DynamicMessage::decode(desc, bytes.as_slice())
        .map_err(|e| CliError::Session(format!("a malformed service state: {e}")))?;
    if json {
        let s = serde_json::to_string_pretty(&state)
            .map_err(|e| CliError::Session(format!("JSON: {e}")))?;
        outln!(o, "{s}");
        return print_out(o.as_bytes());
    }
    outln!(
        o,
        "service: {}  sessions: {} ({} started)",
        text(&state, "tracing_service_version"),
        text(&state, "num_sessions"),
        text(&state, "num_sessions_started")
    );
    outln!(o);
    outln!(o, "PRODUCERS\n{:<6} {:<8} {:<8} NAME", "ID", "PID", "UID");
    for p in messages(&state, "producers") {
        outln!(
            o,
            "{:<6} {:<8} {:<8} {}",
            text(&p, "id"),
            text(&p, "pid"),
            text(&p, "uid"),
            text(&p, "name")
        );
    }
    outln!(o);
    outln!(o, "DATA SOURCES\n{:<9} NAME", "PRODUCER");
    for d in messages(&state, "data_sources") {
        let name = match field(&d, "ds_descriptor") {
            Some(Value::Message(desc)) => text(&desc, "name"),
            _ => String::new(),
        };
        outln!(o, "{:<9} {}", text(&d, "producer_id"), name);
    }
    outln!(o);
    outln!(
        o,
        "SESSIONS\n{:<6} {:<10} {:<8} {:>10} {:>12} {:>5}  NAME",
        "ID",
        "STATE",
        "UID",
        "BUFFERS KB",
        "DURATION MS",
        "DS"
    );
    for s in messages(&state, "tracing_sessions") {
        outln!(
            o,
            "{:<6} {:<10} {:<8} {:>10} {:>12} {:>5}  {}",
            text(&s, "id"),
            text(&s, "state"),
            text(&s, "consumer_uid"),
            text(&s, "buffer_size_kb"),
            text(&s, "duration_ms"),
            text(&s, "num_data_sources"),
            text(&s, "unique_session_name")
        );
    }
    print_out(o.as_bytes())
}
