//! The tracks of the legacy phases that pick their own: async events
//! (`b`/`e`/`n`, `S`/`T`/`p`/`F`) on a track per id within their scope,
//! scoped instants on the global or the process's instant track.

use zerotrace_protos::protos::track_event::LegacyEventDecoder;

use super::{NoTrack, TrackResolution, Trackers, chrome_source};
use crate::column_store::strings::StrId;
use crate::storage::args::ArgValue;
use crate::tracker::tracks::{EventType, TrackSpec};

impl TrackResolution {
    /// The global instants' track (`legacy_chrome_global_instants`), made
    /// once.
    pub(crate) fn global_instants(&mut self, cx: &mut Trackers<'_>) -> u32 {
        if let Some(id) = self.global_instants {
            return id;
        }
        let mut spec = TrackSpec::new(None, "legacy_chrome_global_instants", EventType::Slice);
        spec.source_args = chrome_source(cx.storage);
        let id = cx.tracks.create(cx.storage, &spec);
        self.global_instants = Some(id);
        id
    }

    pub(super) fn process_instants(&mut self, cx: &mut Trackers<'_>, upid: u32) -> u32 {
        if let Some(id) = self.process_instants.get(&upid) {
            return *id;
        }
        let mut spec = TrackSpec::new(None, "chrome_process_instant", EventType::Slice);
        spec.upid = Some(upid);
        spec.source_args = chrome_source(cx.storage);
        let id = cx.tracks.create(cx.storage, &spec);
        self.process_instants.insert(upid, id);
        id
    }

    /// The track of a legacy async event: one per id within its scope (the
    /// category for nestable phases, the name for the old async phases, or
    /// `category:id_scope`).
    pub(super) fn async_track(
        &mut self,
        cx: &mut Trackers<'_>,
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
                let cat = cx.storage.strings.get(category).unwrap_or("").to_owned();
                cx.storage.strings.intern(&format!("{cat}:{s}"))
            }
            None if old_async => name,
            None => category,
        };
        let key_upid = if process_scoped { upid } else { None };
        let key = (key_upid, scope, source_id);
        if let Some(id) = self.async_tracks.get(&key) {
            return Ok(*id);
        }
        let name_str = cx.storage.strings.get(name).map(str::to_owned);
        let classification = if process_scoped {
            "legacy_async_process_slice"
        } else {
            "legacy_async_global_slice"
        };
        let mut spec = TrackSpec::new(name_str.as_deref(), classification, EventType::Slice);
        spec.upid = key_upid;
        spec.dimensions = vec![("scope", ArgValue::String(scope))];
        let chrome = cx.storage.strings.intern("chrome");
        spec.source_args = vec![
            ("source", ArgValue::String(chrome)),
            ("trace_id", ArgValue::Int(source_id)),
            ("trace_id_is_process_scoped", ArgValue::Bool(process_scoped)),
            ("upid", ArgValue::Int(i64::from(upid.unwrap_or(0)))),
            ("source_scope", ArgValue::String(scope)),
        ];
        let id = cx.tracks.create(cx.storage, &spec);
        self.async_tracks.insert(key, id);
        Ok(id)
    }
}
