//! Which track a TrackEvent goes on, decided as upstream decides it: its
//! `track_uuid` (or the sequence default's) names a descriptor track; with
//! none, a legacy event falls back to the thread of the sequence's
//! ThreadDescriptor or of its pid/tid overrides, and an event with a
//! TrackEvent type goes on the "Default Track". Legacy phases then pick
//! their own tracks: async phases one per id, scoped instants the global or
//! process instant track.

use crate::hash::HashMap;

use zerotrace_protos::protos::TrackEventDecoder;
use zerotrace_protos::protos::track_event::LegacyEventDecoder;

use super::Parser;
use super::track_event::{Resolved, resolve_track};
use crate::sequence_state::Generation;
use crate::storage::args::ArgValue;
use crate::storage::strings::StrId;
use crate::tracker::tracks::{EventType, TrackSpec};

/// LegacyEvent.InstantEventScope values.
const SCOPE_GLOBAL: i32 = 1;
const SCOPE_PROCESS: i32 = 2;

/// The high bits that mark a synthetic tid (pid << 32 | tid).
const SYNTHETIC_SHIFT: u32 = 32;

/// Tracks made for legacy events, by what they are made for.
#[derive(Debug, Default)]
pub struct LegacyTracks {
    /// Async tracks by (upid when process-scoped, scope, source id).
    async_tracks: HashMap<(Option<u32>, StrId, i64), u32>,
    /// The global instant track.
    global_instants: Option<u32>,
    /// Process instant tracks by upid.
    process_instants: HashMap<u32, u32>,
    /// The "Default Track" (descriptor uuid 0).
    default_track: Option<u32>,
}

/// Where an event goes.
#[derive(Debug, Clone, Copy)]
pub struct Association {
    /// The track and its scope.
    pub track: Resolved,
    /// The descriptor uuid, when the event named one.
    pub uuid: Option<u64>,
    /// The thread the event ran on, when known (thread time is kept only
    /// then).
    pub utid: Option<u32>,
}

/// Why an event has no track (each a stat or a parser error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoTrack {
    /// `track_event_parser_errors`.
    ParserError,
}

fn slice_track(track_id: u32, utid: Option<u32>, upid: Option<u32>) -> Resolved {
    Resolved {
        track_id,
        utid,
        upid,
        event_type: EventType::Slice,
    }
}

/// The track of one TrackEvent.
pub fn associate(
    p: &mut Parser,
    ev: &TrackEventDecoder<'_>,
    legacy: Option<&LegacyEventDecoder<'_>>,
    generation: &Generation,
    default_uuid: Option<u64>,
    name: StrId,
    category: StrId,
) -> Result<Association, NoTrack> {
    let track_uuid = ev.track_uuid().or(default_uuid).unwrap_or(0);
    let mut utid = None;
    let mut upid = None;
    let mut resolved = None;
    let mut fallback = false;
    if track_uuid != 0 {
        let r = resolve_track(p, track_uuid).ok_or(NoTrack::ParserError)?;
        if let Some(u) = r.utid {
            utid = Some(u);
            upid = p.storage.threads.get(u as usize).and_then(|t| t.upid);
        } else {
            upid = r.upid;
        }
        resolved = Some(r);
    } else {
        let thread = generation.thread;
        let valid = thread.is_some();
        let pid_override = legacy.and_then(|l| l.pid_override());
        let tid_override = legacy.and_then(|l| l.tid_override());
        fallback = (!ev.has_track_uuid() || !ev.has_type()) && valid;
        fallback |= pid_override.is_some();
        fallback |= tid_override.is_some() && valid;
        if fallback {
            let (mut pid, mut tid) = thread.unwrap_or((0, 0));
            if let Some(po) = pid_override {
                pid = i64::from(po);
                // Upstream makes a synthetic tid from (-1, pid): all bits set.
                tid = (pid << SYNTHETIC_SHIFT) | -1;
            }
            if let Some(to) = tid_override {
                tid = i64::from(to);
                if thread.is_some_and(|(_, t)| t >> SYNTHETIC_SHIFT != 0) {
                    tid |= pid << SYNTHETIC_SHIFT;
                }
            }
            if pid == 0 || tid == 0 {
                return Err(NoTrack::ParserError);
            }
            let u = p.processes.update_thread(&mut p.storage, tid, pid);
            utid = Some(u);
            upid = p.storage.threads.get(u as usize).and_then(|t| t.upid);
        }
    }

    let phase = legacy.and_then(|l| l.phase()).unwrap_or(0);
    let phase = u8::try_from(phase).unwrap_or(0);
    let thread_of_event = utid;
    match phase {
        b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F' => {
            let l = legacy.ok_or(NoTrack::ParserError)?;
            let id = async_track(p, l, phase, upid, name, category)?;
            return Ok(Association {
                track: slice_track(id, None, upid),
                uuid: None,
                utid: thread_of_event,
            });
        }
        b'i' | b'I' => match legacy.and_then(|l| l.instant_event_scope_raw()) {
            Some(SCOPE_GLOBAL) => {
                let id = global_instants(p);
                return Ok(Association {
                    track: slice_track(id, None, None),
                    uuid: None,
                    utid: None,
                });
            }
            Some(SCOPE_PROCESS) => {
                let upid = upid.ok_or(NoTrack::ParserError)?;
                let id = process_instants(p, upid);
                return Ok(Association {
                    track: slice_track(id, None, Some(upid)),
                    uuid: None,
                    utid: None,
                });
            }
            _ => {
                // A thread-scoped legacy instant needs a thread.
                if utid.is_none() {
                    return Err(NoTrack::ParserError);
                }
            }
        },
        _ => {}
    }

    if let Some(r) = resolved {
        return Ok(Association {
            track: r,
            uuid: Some(track_uuid),
            utid,
        });
    }
    if fallback {
        let u = utid.ok_or(NoTrack::ParserError)?;
        let id = p.tracks.thread_track(&mut p.storage, u);
        return Ok(Association {
            track: slice_track(id, Some(u), upid),
            uuid: None,
            utid: Some(u),
        });
    }
    let id = default_track(p);
    Ok(Association {
        track: slice_track(id, None, None),
        uuid: None,
        utid: None,
    })
}

/// The "Default Track": uuid 0's descriptor track.
fn default_track(p: &mut Parser) -> u32 {
    if let Some(id) = p.track_event.legacy.default_track {
        return id;
    }
    let spec = TrackSpec::new(Some("Default Track"), "track_event", EventType::Slice);
    let id = p.tracks.create(&mut p.storage, &spec);
    p.track_event.legacy.default_track = Some(id);
    id
}

fn chrome_source(p: &mut Parser) -> Vec<(&'static str, ArgValue)> {
    let chrome = p.storage.strings.intern("chrome");
    vec![("source", ArgValue::String(chrome))]
}

fn global_instants(p: &mut Parser) -> u32 {
    if let Some(id) = p.track_event.legacy.global_instants {
        return id;
    }
    let mut spec = TrackSpec::new(None, "legacy_chrome_global_instants", EventType::Slice);
    spec.source_args = chrome_source(p);
    let id = p.tracks.create(&mut p.storage, &spec);
    p.track_event.legacy.global_instants = Some(id);
    id
}

fn process_instants(p: &mut Parser, upid: u32) -> u32 {
    if let Some(id) = p.track_event.legacy.process_instants.get(&upid) {
        return *id;
    }
    let mut spec = TrackSpec::new(None, "chrome_process_instant", EventType::Slice);
    spec.upid = Some(upid);
    spec.source_args = chrome_source(p);
    let id = p.tracks.create(&mut p.storage, &spec);
    p.track_event.legacy.process_instants.insert(upid, id);
    id
}

/// The track of a legacy async event: one per id within its scope (the
/// category for nestable phases, the name for the old async phases, or
/// `category:id_scope`).
fn async_track(
    p: &mut Parser,
    l: &LegacyEventDecoder<'_>,
    phase: u8,
    upid: Option<u32>,
    name: StrId,
    category: StrId,
) -> Result<u32, NoTrack> {
    let (source_id, process_scoped) = if let Some(id) = l.unscoped_id() {
        (id as i64, false)
    } else if let Some(id) = l.global_id() {
        (id as i64, false)
    } else if let Some(id) = l.local_id() {
        if upid.is_none() {
            return Err(NoTrack::ParserError);
        }
        (id as i64, true)
    } else {
        return Err(NoTrack::ParserError);
    };
    let old_async = matches!(phase, b'S' | b'T' | b'p' | b'F');
    let scope = match l.id_scope() {
        Some(s) => {
            let cat = p.storage.strings.get(category).unwrap_or("").to_owned();
            p.storage.strings.intern(&format!("{cat}:{s}"))
        }
        None if old_async => name,
        None => category,
    };
    let key_upid = if process_scoped { upid } else { None };
    let key = (key_upid, scope, source_id);
    if let Some(id) = p.track_event.legacy.async_tracks.get(&key) {
        return Ok(*id);
    }
    let name_str = p.storage.strings.get(name).map(str::to_owned);
    let classification = if process_scoped {
        "legacy_async_process_slice"
    } else {
        "legacy_async_global_slice"
    };
    let mut spec = TrackSpec::new(name_str.as_deref(), classification, EventType::Slice);
    spec.upid = key_upid;
    spec.dimensions = vec![("scope", ArgValue::String(scope))];
    let chrome = p.storage.strings.intern("chrome");
    spec.source_args = vec![
        ("source", ArgValue::String(chrome)),
        ("trace_id", ArgValue::Int(source_id)),
        ("trace_id_is_process_scoped", ArgValue::Bool(process_scoped)),
        ("upid", ArgValue::Int(i64::from(upid.unwrap_or(0)))),
        ("source_scope", ArgValue::String(scope)),
    ];
    let id = p.tracks.create(&mut p.storage, &spec);
    p.track_event.legacy.async_tracks.insert(key, id);
    Ok(id)
}
