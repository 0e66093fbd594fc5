//! Chrome's own packets about a trace: `ChromeMetadataPacket` into
//! `cr-<letter>-*` metadata (one letter per packet, as upstream tells
//! Chrome instances apart), its background tracing metadata base64-encoded
//! with the scenario hash, `ChromeTrigger` as an instant on the trigger
//! track with the rule's hash in metadata, and a Telemetry benchmark's
//! `ChromeBenchmarkMetadata` into the `benchmark_*` metadata entries (its
//! story tags one `multi` entry each).

use base64::Engine;
use protozero::Decoder;

use super::Parser;
use super::importer::Importer;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::SliceRow;

/// TracePacket.chrome_metadata.
const CHROME_METADATA: u32 = 51;
/// TracePacket.chrome_trigger.
const CHROME_TRIGGER: u32 = 109;
/// TracePacket.chrome_benchmark_metadata.
const CHROME_BENCHMARK_METADATA: u32 = 48;

/// What the Chrome metadata parser keeps between packets.
#[derive(Debug, Default)]
pub struct ChromeMetadataState {
    packets: u32,
}

fn int(d: &Decoder<'_>, field: u32) -> Option<i64> {
    d.find_last(field)
        .and_then(|f| f.as_u64().ok())
        .map(|v| v as i64)
}

fn string<'a>(d: &Decoder<'a>, field: u32) -> Option<&'a str> {
    d.find_last(field).and_then(|f| f.as_str().ok())
}

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[
    (CHROME_METADATA, |p, input| metadata(p, input.bytes)),
    (CHROME_TRIGGER, |p, input| trigger(p, input.bytes, input.ts)),
    (CHROME_BENCHMARK_METADATA, |p, input| {
        benchmark(p, input.bytes)
    }),
];

/// `ChromeBenchmarkMetadata`: each field present into its metadata entry
/// (the story tags appended, one entry each).
fn benchmark(p: &mut Parser, bytes: &[u8]) {
    let d = Decoder::new(bytes);
    let s = &mut p.storage;
    for (field, key) in [
        (3, "benchmark_name"),
        (4, "benchmark_description"),
        (5, "benchmark_label"),
        (6, "benchmark_story_name"),
    ] {
        if let Some(v) = string(&d, field) {
            s.set_metadata_str(key, v);
        }
    }
    for tag in Decoder::new(bytes).flatten().filter(|f| f.id == 7) {
        if let Ok(tag) = tag.as_str() {
            s.append_metadata("benchmark_story_tags", None, Some(tag));
        }
    }
    if let Some(v) = int(&d, 1) {
        s.set_metadata_int("benchmark_start_time_us", v);
    }
    if let Some(v) = int(&d, 2) {
        s.set_metadata_int("benchmark_story_run_time_us", v);
    }
    if let Some(v) = int(&d, 8) {
        // An int32.
        s.set_metadata_int("benchmark_story_run_index", i64::from(v as i32));
    }
    if let Some(v) = int(&d, 9) {
        s.set_metadata_int("benchmark_had_failures", i64::from(v != 0));
    }
}

fn metadata(p: &mut Parser, bytes: &[u8]) {
    let letter = char::from(b'a' + (p.chrome_metadata.packets % 26) as u8);
    p.chrome_metadata.packets = p.chrome_metadata.packets.wrapping_add(1);
    let key = |name: &str| format!("cr-{letter}-{name}");
    let d = Decoder::new(bytes);
    let s = &mut p.storage;
    if let Some(v) = int(&d, 2) {
        s.set_metadata_int(&key("playstore_version_code"), i64::from(v as i32));
    }
    if let Some(v) = string(&d, 6) {
        s.set_metadata_str(&key("product-version"), v);
    }
    if let Some(v) = string(&d, 8) {
        s.set_metadata_str(&key("os-name"), v);
    }
    if let Some(v) = string(&d, 5) {
        s.set_metadata_str(&key("package-name"), v);
    }
    if let Some(v) = int(&d, 7) {
        s.set_metadata_int(&key("channel"), i64::from(v as u32));
    }
    if let Some(v) = string(&d, 3) {
        s.set_metadata_str(&key("enabled_categories"), v);
    }
    let mut trials = String::new();
    let mut on_line = 0;
    let mut any = false;
    for f in Decoder::new(bytes).flatten().filter(|f| f.id == 4) {
        let Ok(b) = f.as_bytes() else {
            continue;
        };
        any = true;
        // Two hashes per line.
        if on_line == 2 {
            trials.push('\n');
            on_line = 1;
        } else {
            on_line += 1;
        }
        let h = Decoder::new(b);
        let name = int(&h, 1).unwrap_or(0) as u32;
        let group = int(&h, 2).unwrap_or(0) as u32;
        trials.push_str(&format!("{{ name: {name}, group: {group} }} "));
    }
    if any {
        s.set_metadata_str(&key("field_trial_hashes"), &trials);
    }
    if let Some(bt) = d.find_last(1).and_then(|f| f.as_bytes().ok()) {
        let encoded = base64::engine::general_purpose::STANDARD.encode(bt);
        s.set_metadata_str("cr-background_tracing_metadata", &encoded);
        // scenario_name_hash is a fixed32.
        if let Some(h) = Decoder::new(bt)
            .find_last(3)
            .and_then(|f| f.as_fixed32().ok())
        {
            s.set_metadata_int("cr-scenario_name_hash", i64::from(h));
        }
    }
}

fn trigger(p: &mut Parser, bytes: &[u8], ts: i64) {
    let d = Decoder::new(bytes);
    let name = string(&d, 1);
    let hash = d
        .find_last(2)
        .and_then(|f| f.as_fixed32().ok())
        .unwrap_or(0);
    let track = super::service::trigger_track(p);
    let name_id = p.storage.strings.intern(name.unwrap_or("chrome_trigger"));
    let mut args = ArgSetBuilder::default();
    let k = p.storage.strings.intern("chrome_trigger.name_hash");
    args.add(k, k, ArgValue::Uint(u64::from(hash)));
    if name.is_some() {
        let k = p.storage.strings.intern("chrome_trigger.name");
        args.add(k, k, ArgValue::String(name_id));
    }
    super::translation_table::translate_hashes(p, &mut args);
    let arg_set_id = p.storage.args.add_set(&args);
    p.slices.instant(
        &mut p.storage,
        SliceRow {
            ts,
            track_id: track,
            name: name_id,
            arg_set_id: arg_set_id.into(),
            ..SliceRow::default()
        },
    );
    p.storage
        .set_metadata_int("cr-triggered_rule_name_hash", i64::from(hash));
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};

    #[test]
    fn a_benchmarks_metadata_fills_the_benchmark_entries() {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = zerotrace_protos::protos::TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(1);
            let mut b = p.message().begin_nested(super::CHROME_BENCHMARK_METADATA);
            b.append_int64(1, 1_600_000);
            b.append_int64(2, 1_700_000);
            b.append_string(3, "loading.desktop");
            b.append_string(5, "run 1");
            b.append_string(6, "google_story");
            b.append_string(7, "cold");
            b.append_string(7, "top_10");
            b.append_int32(8, 2);
            b.append_bool(9, true);
        }
        let p = w.finish().expect("writer");
        let mut t = vec![0x0a, p.len() as u8];
        t.extend_from_slice(&p);
        let tp = TraceProcessor::from_bytes(&t).expect("trace");
        let rows = tp
            .query(
                "SELECT name, key_type, int_value, str_value FROM metadata \
                 WHERE name GLOB 'benchmark_*' ORDER BY name, str_value",
            )
            .expect("query")
            .rows;
        let text = |s: &str| Value::Text(s.to_owned());
        let row = |name: &str, kind: &str, int: Value, string: Value| {
            vec![text(name), text(kind), int, string]
        };
        assert_eq!(
            rows,
            vec![
                row(
                    "benchmark_had_failures",
                    "single",
                    Value::Int(1),
                    Value::Null
                ),
                row("benchmark_label", "single", Value::Null, text("run 1")),
                row(
                    "benchmark_name",
                    "single",
                    Value::Null,
                    text("loading.desktop")
                ),
                row(
                    "benchmark_start_time_us",
                    "single",
                    Value::Int(1_600_000),
                    Value::Null
                ),
                row(
                    "benchmark_story_name",
                    "single",
                    Value::Null,
                    text("google_story")
                ),
                row(
                    "benchmark_story_run_index",
                    "single",
                    Value::Int(2),
                    Value::Null
                ),
                row(
                    "benchmark_story_run_time_us",
                    "single",
                    Value::Int(1_700_000),
                    Value::Null
                ),
                row("benchmark_story_tags", "multi", Value::Null, text("cold")),
                row("benchmark_story_tags", "multi", Value::Null, text("top_10")),
            ]
        );
    }
}
