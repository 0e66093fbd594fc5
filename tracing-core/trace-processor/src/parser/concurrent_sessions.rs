//! `concurrent_session_event` (TracePacket field 134): each tracing
//! session the service ran beside this one becomes a state track
//! (`concurrent_tracing_sessions`, one per session id, named by the session
//! or `Session <id>`, `(clone)` for a read-only clone) whose states are the
//! session's lifecycle, each holding the consumer uid and the number of
//! data sources; DISABLED closes at once.
//!
//! The message is newer than our pinned schemas: read at upstream's field
//! numbers (`perfetto/concurrent_session_event.proto`) with protozero's
//! schema-less decoder.

use crate::hash::HashMap;

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::import_logs::LogPlace;
use crate::storage::rows::StateRow;
use crate::tracker::tracks::{EventType, TrackSpec};

/// TracePacket.concurrent_session_event.
const CONCURRENT_SESSION_EVENT: u32 = 134;
/// ConcurrentSessionEvent.State: DISABLED and CLONED_READ_ONLY.
const STATE_DISABLED: u64 = 1;
const STATE_CLONED_READ_ONLY: u64 = 5;

/// Tracks and open states of the sessions.
#[derive(Debug, Default)]
pub struct Sessions {
    tracks: HashMap<u64, u32>,
    open: HashMap<u32, usize>,
}

fn close(p: &mut Parser, track: u32, ts: i64) {
    if let Some(row) = p.sessions.open.remove(&track) {
        if let Some(s) = p.storage.states.get_mut(row) {
            s.dur = ts.saturating_sub(s.ts);
        }
    }
}

/// The payload this module imports.
pub const IMPORTERS: &[(u32, Importer)] = &[(CONCURRENT_SESSION_EVENT, import)];

/// Parses a packet's concurrent session event; false when it has none.
fn import(p: &mut Parser, input: &Input<'_>) {
    let ev = input.bytes;
    let ts = input.ts;
    let field = |id: u32| Decoder::new(ev).find_last(id);
    let state = field(1).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let value = match state {
        1 => "DISABLED",
        2 => "CONFIGURED",
        3 => "STARTED",
        4 => "DISABLING_WAITING_STOP_ACKS",
        5 => "CLONED_READ_ONLY",
        _ => {
            let place = LogPlace {
                ts: Some(ts),
                byte_offset: None,
            };
            let state = ("state", ArgValue::Int(state as i64));
            p.storage.record_import_log_typed(
                "concurrent_session_event_unknown_state",
                place,
                &[state],
            );
            return;
        }
    };
    let id = field(3).and_then(|f| f.as_u64().ok()).unwrap_or(0);
    let mut name = field(2)
        .and_then(|f| f.as_bytes().ok())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("Session {id}"));
    if state == STATE_CLONED_READ_ONLY {
        name.push_str(" (clone)");
    }
    let track = match p.sessions.tracks.get(&id) {
        Some(t) => *t,
        None => {
            let mut spec =
                TrackSpec::new(Some(&name), "concurrent_tracing_sessions", EventType::State);
            spec.dimensions = vec![("session_id", ArgValue::Int(id as i64))];
            let t = p.tracks.create(&mut p.storage, &spec);
            p.sessions.tracks.insert(id, t);
            t
        }
    };
    let mut args = ArgSetBuilder::default();
    let uid = field(4).and_then(|f| f.as_i32().ok()).unwrap_or(0);
    let sources = field(5).and_then(|f| f.as_u32().ok()).unwrap_or(0);
    let k = p.storage.strings.intern("consumer_uid");
    args.add(k, k, ArgValue::Int(i64::from(uid)));
    let k = p.storage.strings.intern("num_data_sources");
    args.add(k, k, ArgValue::Int(i64::from(sources)));
    close(p, track, ts);
    let row = StateRow {
        ts,
        dur: -1,
        track_id: track,
        category: crate::column_store::strings::StrId::NULL,
        value: p.storage.strings.intern(value),
        arg_set_id: p.storage.args.add_set(&args),
    };
    p.sessions.open.insert(track, p.storage.states.len());
    p.storage.states.push(row);
    if state == STATE_DISABLED {
        close(p, track, ts);
    }
}
