//! `android_aflags` (TracePacket field 127): snapshots of Android's aconfig
//! flags, each flag with its package, namespace, container, current and
//! staged values and how its value was chosen, into
//! `__intrinsic_android_aflags` (the `android.aflags` module's view). A
//! snapshot the device failed to take carries only its error, which
//! becomes an import log entry (`android_aflags_errors`) with the error
//! text as its `error` arg.

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::storage::import_logs::LogPlace;
use crate::tables::android::AndroidAflagRow;

/// TracePacket.android_aflags.
const ANDROID_AFLAGS: u32 = 127;

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(ANDROID_AFLAGS, import)];

/// AndroidAflags' fields.
mod field {
    pub const FLAGS: u32 = 1;
    pub const ERROR: u32 = 2;
}

fn fields(bytes: &[u8]) -> impl Iterator<Item = protozero::Field<'_>> {
    Decoder::new(bytes).map_while(Result::ok)
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let error = fields(input.bytes)
        .filter(|f| f.id == field::ERROR)
        .filter_map(|f| f.as_bytes().ok())
        .last();
    if let Some(error) = error {
        let text = String::from_utf8_lossy(error);
        let place = LogPlace {
            ts: Some(input.ts),
            byte_offset: None,
        };
        p.storage
            .record_import_log("android_aflags_errors", place, &[("error", text.as_ref())]);
        return;
    }
    for f in fields(input.bytes) {
        if f.id == field::FLAGS
            && let Ok(flag) = f.as_bytes()
        {
            let row = self::flag(p, input.ts, flag);
            p.storage.android.aflags.push(row);
        }
    }
}

fn flag(p: &mut Parser, ts: i64, bytes: &[u8]) -> AndroidAflagRow {
    const PERMISSIONS: &[&str] = &["read-only", "read-write"];
    const PICKED_FROM: &[&str] = &["default", "server", "local"];
    const BACKENDS: &[&str] = &["none", "aconfigd", "device_config"];
    const TYPES: &[&str] = &["boolean", "integer"];
    let mut texts: [Option<&[u8]>; 6] = [None; 6];
    let mut enums: [Option<u64>; 4] = [None; 4];
    for f in fields(bytes) {
        match f.id {
            1..=6 => {
                if let (Ok(b), Some(slot)) = (f.as_bytes(), texts.get_mut(f.id as usize - 1)) {
                    *slot = Some(b);
                }
            }
            7..=10 => {
                if let (Ok(v), Some(slot)) = (f.as_u64(), enums.get_mut(f.id as usize - 7)) {
                    *slot = Some(v);
                }
            }
            _ => {}
        }
    }
    let strings = &mut p.storage.strings;
    let mut text = |b: Option<&[u8]>| -> StrId {
        b.map_or(StrId::NULL, |b| strings.intern(&String::from_utf8_lossy(b)))
    };
    let [namespace, name, package, container, value, staged] = texts;
    let row = AndroidAflagRow {
        ts,
        package: text(package),
        name: text(name),
        flag_namespace: text(namespace),
        container: text(container),
        value: text(value),
        staged_value: text(staged),
        ..AndroidAflagRow::default()
    };
    let [permission, picked, backend, flag_type] = enums;
    AndroidAflagRow {
        permission: strings.intern(pick(PERMISSIONS, permission)),
        value_picked_from: strings.intern(pick(PICKED_FROM, picked)),
        storage_backend: strings.intern(pick(BACKENDS, backend)),
        flag_type: strings.intern(pick(TYPES, flag_type)),
        ..row
    }
}

/// The name of enum value `v` whose values 1, 2, ... are `names`;
/// `unspecified` for 0, a missing field or a value the schema lacks.
fn pick(names: &[&'static str], v: Option<u64>) -> &'static str {
    v.and_then(|v| v.checked_sub(1))
        .and_then(|i| usize::try_from(i).ok())
        .and_then(|i| names.get(i).copied())
        .unwrap_or("unspecified")
}
