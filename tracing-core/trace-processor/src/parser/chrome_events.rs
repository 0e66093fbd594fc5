//! Chrome's legacy event bundles (`TracePacket.chrome_events`, field 5):
//! what older Chrome versions put beside their protobuf events, kept as
//! upstream keeps it for its JSON export and its metrics, in
//! `__intrinsic_chrome_raw`:
//! - the untyped metadata, one `chrome_event.metadata` row with each entry
//!   as an arg, and each entry also a `cr-<name>` metadata row
//!   (`cr-<n>-<name>` from the second bundle with metadata on, so that
//!   several Chrome instances stay apart); an entry without a value counts
//!   `empty_chrome_metadata`;
//! - the legacy system trace text (its pieces joined), a
//!   `chrome_event.legacy_system_trace` row with a `data` arg;
//! - each legacy JSON user trace, a `chrome_event.legacy_user_trace` row
//!   with a `data` arg (system traces are skipped).

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::tables::chrome::ChromeRawRow;
use crate::tables::core::MetadataRow;

/// `TracePacket.chrome_events`.
const CHROME_EVENTS: u32 = 5;
/// `ChromeLegacyJsonTrace.TraceType.USER_TRACE`.
const USER_TRACE: u64 = 0;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(CHROME_EVENTS, import)];

/// What the importer keeps between bundles.
#[derive(Debug, Default)]
pub struct ChromeEventsState {
    /// Bundles with metadata seen so far.
    metadata_bundles: u32,
}

fn fields(bytes: &[u8]) -> impl Iterator<Item = protozero::Field<'_>> {
    Decoder::new(bytes).map_while(Result::ok)
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let has = |id: u32| fields(input.bytes).any(|f| f.id == id);
    if has(2) {
        metadata(p, input);
    }
    if has(4) {
        let mut data = Vec::new();
        for f in fields(input.bytes).filter(|f| f.id == 4) {
            data.extend_from_slice(f.as_bytes().unwrap_or_default());
        }
        let data = String::from_utf8_lossy(&data).into_owned();
        raw_with_data(p, input.ts, "chrome_event.legacy_system_trace", &data);
    }
    for f in fields(input.bytes).filter(|f| f.id == 5) {
        let trace = Decoder::new(f.as_bytes().unwrap_or_default());
        let kind = trace
            .find_last(1)
            .and_then(|t| t.as_u64().ok())
            .unwrap_or(USER_TRACE);
        if kind != USER_TRACE {
            continue;
        }
        let data = trace
            .find_last(2)
            .and_then(|d| d.as_bytes().ok())
            .unwrap_or_default();
        let data = String::from_utf8_lossy(data).into_owned();
        raw_with_data(p, input.ts, "chrome_event.legacy_user_trace", &data);
    }
}

fn raw_with_data(p: &mut Parser, ts: i64, name: &str, data: &str) {
    let mut b = ArgSetBuilder::default();
    let key = p.storage.strings.intern("data");
    b.add(key, key, ArgValue::String(p.storage.strings.intern(data)));
    let row = ChromeRawRow {
        ts,
        name: p.storage.strings.intern(name),
        utid: 0,
        arg_set_id: p.storage.args.add_set(&b).unwrap_or(0),
    };
    p.storage.chrome_raw.push(row);
}

fn metadata(p: &mut Parser, input: &Input<'_>) {
    p.chrome_events.metadata_bundles = p.chrome_events.metadata_bundles.saturating_add(1);
    let bundle = p.chrome_events.metadata_bundles;
    let mut b = ArgSetBuilder::default();
    for f in fields(input.bytes).filter(|f| f.id == 2) {
        let mut name: &[u8] = &[];
        let mut value = None;
        for m in fields(f.as_bytes().unwrap_or_default()) {
            match m.id {
                1 => name = m.as_bytes().unwrap_or_default(),
                2 => value = Some((false, Value::Text(m.as_bytes().unwrap_or_default()))),
                3 => value = Some((false, Value::Int(i64::from(m.as_bool().unwrap_or(false))))),
                4 => value = Some((false, Value::Int(m.as_u64().unwrap_or(0) as i64))),
                5 => value = Some((true, Value::Text(m.as_bytes().unwrap_or_default()))),
                _ => {}
            }
        }
        let Some((json, value)) = value else {
            p.storage.stats.incr("empty_chrome_metadata");
            continue;
        };
        let name = String::from_utf8_lossy(name);
        let (arg, int_value, str_value) = match value {
            Value::Int(v) => (ArgValue::Int(v), Some(v), StrId::NULL),
            Value::Text(t) => {
                let s = p.storage.strings.intern(&String::from_utf8_lossy(t));
                let arg = if json {
                    ArgValue::Json(s)
                } else {
                    ArgValue::String(s)
                };
                (arg, None, s)
            }
        };
        let key = p.storage.strings.intern(&name);
        b.add(key, key, arg);
        let row_name = if bundle > 1 {
            format!("cr-{bundle}-{name}")
        } else {
            format!("cr-{name}")
        };
        let row = MetadataRow {
            name: p.storage.strings.intern(&row_name),
            key_type: p.storage.strings.intern("single"),
            int_value,
            str_value,
            machine: 0,
        };
        p.storage.metadata.push(row);
    }
    let row = ChromeRawRow {
        ts: input.ts,
        name: p.storage.strings.intern("chrome_event.metadata"),
        utid: 0,
        arg_set_id: p.storage.args.add_set(&b).unwrap_or(0),
    };
    p.storage.chrome_raw.push(row);
}

/// A metadata entry's value as read.
enum Value<'a> {
    Int(i64),
    Text(&'a [u8]),
}
