//! Chrome's own packets about a trace: `ChromeMetadataPacket` into
//! `cr-<letter>-*` metadata (one letter per packet, as upstream tells
//! Chrome instances apart), its background tracing metadata base64-encoded
//! with the scenario hash, and `ChromeTrigger` as an instant on the trigger
//! track with the rule's hash in metadata.

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
];

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
            arg_set_id,
            ..SliceRow::default()
        },
    );
    p.storage
        .set_metadata_int("cr-triggered_rule_name_hash", i64::from(hash));
}
