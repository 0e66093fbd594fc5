//! Android logcat entries (`AndroidLogPacket.LogEvent`, queued one by one
//! at their converted times by `load/android_log_queue.rs`) as upstream
//! imports them: a row of `android_logs` on the writing thread (its pid
//! and tid), INFO when the entry gives no priority, its tag, and its
//! message followed by its binary args written out as `name=value` (a
//! string quoted, a float with six decimals).

use protozero::{Decoder, FieldValue};

use super::Parser;
use super::fields::Fields;
use super::importer::{Importer, Input};
use crate::column_store::strings::StrId;
use crate::tables::logs::LogRow;

/// `TracePacket.android_log`.
const ANDROID_LOG: u32 = 39;

/// The payload this module imports: one log entry, as the loader queued it.
pub const IMPORTERS: &[(u32, Importer)] = &[(ANDROID_LOG, import)];

/// Longest args text kept (upstream's buffer, less its terminator).
const MAX_ARGS_TEXT: usize = 4095;

/// `LogEvent`'s fields.
mod field {
    pub const PID: u32 = 2;
    pub const TID: u32 = 3;
    pub const TAG: u32 = 6;
    pub const PRIO: u32 = 7;
    pub const MESSAGE: u32 = 8;
    pub const ARGS: u32 = 9;
}

/// A binary entry's args as text: ` name=value` each.
fn args_text(bytes: &[u8]) -> String {
    let mut out = String::new();
    for f in Decoder::new(bytes).map_while(Result::ok) {
        let (field::ARGS, FieldValue::Bytes(arg)) = (f.id, f.value) else {
            continue;
        };
        let a = Fields::new(arg);
        let Some(name) = a.str(1) else {
            continue;
        };
        let mut piece = format!(" {name}=");
        if let Some(s) = a.str(4) {
            piece.push('"');
            piece.push_str(&s);
            piece.push('"');
        } else if let Some(i) = a.int(2) {
            piece.push_str(&i.to_string());
        } else if let Some(v) = a.real(3) {
            piece.push_str(&format!("{v:.6}"));
        }
        out.push_str(&piece);
        if out.len() >= MAX_ARGS_TEXT {
            let mut end = MAX_ARGS_TEXT;
            while !out.is_char_boundary(end) {
                end -= 1;
            }
            out.truncate(end);
            break;
        }
    }
    out
}

fn import(p: &mut Parser, input: &Input<'_>) {
    let f = Fields::new(input.bytes);
    let pid = i64::from(f.int32(field::PID).unwrap_or(0));
    let tid = i64::from(f.int32(field::TID).unwrap_or(0));
    let mut prio = i64::from(f.int(field::PRIO).unwrap_or(0) as u8);
    if prio == 0 {
        prio = 4;
    }
    let tag = match f.str(field::TAG) {
        Some(t) => p.storage.strings.intern(&t),
        None => StrId::NULL,
    };
    let message = f.str(field::MESSAGE);
    let args = args_text(input.bytes);
    let msg = match (message, args.strip_prefix(' ')) {
        (Some(m), Some(a)) if !m.is_empty() => format!("{m} {a}"),
        (_, Some(a)) => a.to_owned(),
        (Some(m), None) => m.into_owned(),
        (None, None) => String::new(),
    };
    let msg = p.storage.strings.intern(&msg);
    let utid = p.processes.update_thread(&mut p.storage, tid, pid);
    let log_source = p.storage.strings.intern("android_logcat");
    p.storage.logs.push(LogRow {
        ts: input.ts,
        utid: Some(utid),
        prio,
        log_source,
        tag,
        msg,
        arg_set_id: None,
    });
}
