//! `zerotrace convert`: Chrome's JSON trace format (slices as B/E,
//! instants, counters, flows as s/f pairs, process and thread names as
//! metadata events, debug annotations as args, dicts and arrays included)
//! for tools that read it.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};
use zerotrace_protos::protos::DebugAnnotationDecoder;
use zerotrace_protos::protos::TracePacketDecoder;
use zerotrace_protos::protos::debug_annotation::NestedValueDecoder;
use zerotrace_protos::protos::debug_annotation::nested_value::NestedType;

use super::trace_reader::{Interned, Sequences, packets};
use super::{CliError, read_input, write_output};

/// Where a track's events go in Chrome's model.
#[derive(Debug, Clone, Default)]
struct Track {
    pid: i64,
    tid: i64,
    name: Option<String>,
    counter: bool,
    parent: Option<u64>,
}

/// How deep dicts and arrays of annotations are followed (a hostile trace
/// may nest without end); deeper values become `null`.
const MAX_ANNOTATION_DEPTH: usize = 64;

/// An annotation's name: inline, or interned on its sequence.
fn annotation_name(a: &DebugAnnotationDecoder<'_>, state: &Interned) -> String {
    a.name_iid()
        .and_then(|i| state.annotation_names.get(&i).cloned())
        .or_else(|| a.name().map(str::to_owned))
        .unwrap_or_default()
}

/// A debug annotation's value as JSON: scalars as themselves, pointers as
/// hex strings, `dict_entries` as an object, `array_values` as an array,
/// the legacy `nested_value` likewise, and `legacy_json_value` parsed.
fn annotation_value(a: &DebugAnnotationDecoder<'_>, state: &Interned, depth: usize) -> Value {
    if depth >= MAX_ANNOTATION_DEPTH {
        return Value::Null;
    }
    if let Some(v) = a
        .string_value()
        .map(|s| json!(s))
        .or(a.int_value().map(|v| json!(v)))
        .or(a.uint_value().map(|v| json!(v)))
        .or(a.double_value().map(|v| json!(v)))
        .or(a.bool_value().map(|v| json!(v)))
        .or(a.pointer_value().map(|v| json!(format!("0x{v:x}"))))
    {
        return v;
    }
    if a.has_dict_entries() {
        let mut m = serde_json::Map::new();
        for e in a.dict_entries() {
            m.insert(
                annotation_name(&e, state),
                annotation_value(&e, state, depth + 1),
            );
        }
        return Value::Object(m);
    }
    if a.has_array_values() {
        return Value::Array(
            a.array_values()
                .map(|e| annotation_value(&e, state, depth + 1))
                .collect(),
        );
    }
    if let Some(n) = a.nested_value() {
        return nested_value(&n, depth + 1);
    }
    if let Some(j) = a.legacy_json_value() {
        return serde_json::from_str(j).unwrap_or_else(|_| json!(j));
    }
    Value::Null
}

/// The legacy `DebugAnnotation.NestedValue` as JSON.
fn nested_value(n: &NestedValueDecoder<'_>, depth: usize) -> Value {
    if depth >= MAX_ANNOTATION_DEPTH {
        return Value::Null;
    }
    match n.nested_type() {
        Some(NestedType::Dict) => Value::Object(
            n.dict_keys()
                .zip(n.dict_values())
                .map(|(k, v)| (k.to_owned(), nested_value(&v, depth + 1)))
                .collect(),
        ),
        Some(NestedType::Array) => Value::Array(
            n.array_values()
                .map(|v| nested_value(&v, depth + 1))
                .collect(),
        ),
        _ => n
            .string_value()
            .map(|s| json!(s))
            .or(n.int_value().map(|v| json!(v)))
            .or(n.double_value().map(|v| json!(v)))
            .or(n.bool_value().map(|v| json!(v)))
            .unwrap_or(Value::Null),
    }
}

/// Converts the packets of a trace.
fn convert(name: &str, trace: &[u8]) -> Result<Value, CliError> {
    let mut tracks: HashMap<u64, Track> = HashMap::new();
    let mut defaults: HashMap<u32, u64> = HashMap::new();
    let mut seqs = Sequences::default();
    let mut events = Vec::new();
    let mut flows: HashMap<u64, Vec<(f64, i64, i64, bool)>> = HashMap::new();
    let mut next_async_tid = 1_000_000i64;
    for raw in packets(name, trace)? {
        let p = TracePacketDecoder::new(&raw);
        let seq = p.trusted_packet_sequence_id().unwrap_or(0);
        let state = seqs.update(&p).clone();
        if let Some(d) = p.trace_packet_defaults()
            && let Some(t) = d.track_event_defaults().and_then(|t| t.track_uuid())
        {
            defaults.insert(seq, t);
        }
        if let Some(d) = p.track_descriptor() {
            let Some(uuid) = d.uuid() else { continue };
            if tracks.contains_key(&uuid) {
                // Described again by another sequence (or after a clear).
                continue;
            }
            let mut t = Track {
                name: d.name().map(str::to_owned),
                parent: d.parent_uuid(),
                counter: d.has_counter(),
                ..Track::default()
            };
            if let Some(pr) = d.process() {
                t.pid = pr.pid().unwrap_or(0) as i64;
                if let Some(n) = pr.process_name() {
                    events.push(
                        json!({"ph": "M", "name": "process_name", "pid": t.pid, "tid": 0,
                                       "args": {"name": n}}),
                    );
                }
            }
            if let Some(th) = d.thread() {
                t.pid = th.pid().unwrap_or(0) as i64;
                t.tid = th.tid().unwrap_or(0);
                if let Some(n) = th.thread_name() {
                    events.push(
                        json!({"ph": "M", "name": "thread_name", "pid": t.pid, "tid": t.tid,
                                       "args": {"name": n}}),
                    );
                }
            }
            if d.process().is_none() && d.thread().is_none() {
                // A named or async track: its parent's process, a lane of its own.
                if let Some(parent) = t.parent.and_then(|u| tracks.get(&u)) {
                    t.pid = parent.pid;
                }
                t.tid = next_async_tid;
                next_async_tid += 1;
                if let Some(n) = &t.name
                    && !t.counter
                {
                    events.push(
                        json!({"ph": "M", "name": "thread_name", "pid": t.pid, "tid": t.tid,
                                       "args": {"name": n}}),
                    );
                }
            }
            tracks.insert(uuid, t);
            continue;
        }
        let Some(e) = p.track_event() else { continue };
        let uuid = e.track_uuid().or_else(|| defaults.get(&seq).copied());
        let track = uuid
            .and_then(|u| tracks.get(&u))
            .cloned()
            .unwrap_or_default();
        let ts = p.timestamp().unwrap_or(0) as f64 / 1000.0;
        let name = e
            .name_iid()
            .and_then(|i| state.names.get(&i).cloned())
            .or_else(|| e.name().map(str::to_owned))
            .unwrap_or_default();
        let cat: Vec<String> = e
            .category_iids()
            .filter_map(|i| state.categories.get(&i).cloned())
            .chain(e.categories().map(str::to_owned))
            .collect();
        let mut args = serde_json::Map::new();
        for a in e.debug_annotations() {
            let key = annotation_name(&a, &state);
            args.insert(key, annotation_value(&a, &state, 0));
        }
        let (pid, tid) = (track.pid, track.tid);
        let base = |ph: &str| json!({"ph": ph, "name": name, "cat": cat.join(","), "ts": ts, "pid": pid, "tid": tid});
        let mut ev = match e.type_raw() {
            Some(1) => base("B"),
            Some(2) => json!({"ph": "E", "ts": ts, "pid": pid, "tid": tid}),
            Some(3) => {
                let mut v = base("i");
                v["s"] = json!("t");
                v
            }
            Some(4) => {
                let value = e
                    .counter_value()
                    .map(|v| json!(v))
                    .or(e.double_counter_value().map(|v| json!(v)))
                    .unwrap_or(Value::Null);
                let cname = track.name.clone().unwrap_or_else(|| "counter".into());
                json!({"ph": "C", "name": cname, "ts": ts, "pid": pid, "args": {"value": value}})
            }
            _ => continue,
        };
        if !args.is_empty() && ev["ph"] != "C" {
            ev["args"] = Value::Object(args);
        }
        events.push(ev);
        for id in e.flow_ids() {
            flows.entry(id).or_default().push((ts, pid, tid, false));
        }
        for id in e.terminating_flow_ids() {
            flows.entry(id).or_default().push((ts, pid, tid, true));
        }
    }
    // Flows in time order (packets are in sequence order, not time order):
    // the first step starts it, a terminating one ends it, others continue.
    let mut ids: Vec<_> = flows.into_iter().collect();
    ids.sort_by_key(|(id, _)| *id);
    for (id, mut steps) in ids {
        steps.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (i, (ts, pid, tid, terminating)) in steps.into_iter().enumerate() {
            let ph = match (i, terminating) {
                (0, _) => "s",
                (_, true) => "f",
                _ => "t",
            };
            events.push(
                json!({"ph": ph, "id": id, "name": "flow", "cat": "flow", "ts": ts,
                               "pid": pid, "tid": tid, "bp": "e"}),
            );
        }
    }
    Ok(json!({"traceEvents": events, "displayTimeUnit": "ns"}))
}

/// Runs `convert` (`--json`, the only format, is optional).
pub fn run(path: &Path, out: Option<&Path>) -> Result<(), CliError> {
    let bytes = read_input(path)?;
    let json = convert(&path.display().to_string(), &bytes)?;
    let text = serde_json::to_string(&json).map_err(|e| CliError::Usage(e.to_string()))?;
    write_output(out.unwrap_or(Path::new("-")), text.as_bytes(), false)
}
