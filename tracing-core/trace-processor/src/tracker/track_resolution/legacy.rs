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

    /// The track of a legacy async event, as upstream's compressor gives
    /// it: the ids of one scope (the category for nestable phases, the
    /// name for the old async phases, or `category:id_scope`) and one name
    /// (the first event's of the id) share a pool of tracks, each id a
    /// cookie: a begin (`b`, `S`) takes the track its id holds or a free
    /// one, an end (`e`, `F`) the one its id holds, an instant or step
    /// (`n`, `T`, `p`) both; a process-scoped id (`local_id`) has a pool
    /// per process.
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
        let root_name = *self
            .async_root_names
            .entry((key_upid, source_id))
            .or_insert(name);
        // Interned strings are equal exactly when their ids are.
        let pool = format!(
            "legacy_async|{}|{key_upid:?}|{scope:?}|{root_name:?}",
            cx.tracks.machine()
        );
        let classification = if process_scoped {
            "legacy_async_process_slice"
        } else {
            "legacy_async_global_slice"
        };
        let name_str = cx.storage.strings.get(name).map(str::to_owned);
        let chrome = cx.storage.strings.intern("chrome");
        cx.storage.work.step(1);
        let Trackers {
            storage, tracks, ..
        } = cx;
        let mut create = |idx: u32| {
            let mut spec = TrackSpec::new(name_str.as_deref(), classification, EventType::Slice);
            spec.upid = key_upid;
            spec.dimensions = vec![
                ("scope", ArgValue::String(scope)),
                ("name", ArgValue::String(root_name)),
                ("track_compressor_idx", ArgValue::Int(i64::from(idx))),
            ];
            spec.source_args = vec![
                ("source", ArgValue::String(chrome)),
                ("trace_id_is_process_scoped", ArgValue::Bool(process_scoped)),
                ("upid", ArgValue::Uint(u64::from(upid.unwrap_or(0)))),
                ("source_scope", ArgValue::String(scope)),
            ];
            tracks.create(storage, &spec)
        };
        let pools = &mut self.async_pools;
        Ok(match phase {
            b'b' | b'S' => pools.begin(&pool, source_id, &mut create),
            b'e' | b'F' => pools.end_on_any(&pool, source_id, &mut create),
            _ => {
                pools.begin(&pool, source_id, &mut create);
                pools.end_on_any(&pool, source_id, &mut create)
            }
        })
    }
}
