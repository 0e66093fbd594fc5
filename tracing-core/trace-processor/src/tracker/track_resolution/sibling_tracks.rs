//! Sibling descriptor tracks that share one set of tracks, as upstream
//! merges them. A TrackEvent descriptor track that is not a thread's or a
//! process's own track, nor a counter or state track, merges with its
//! siblings (the tracks of the same parent, in the same thread or process
//! scope) by its `sibling_merge_behavior`: by default those of the same
//! name, with `BY_SIBLING_MERGE_KEY` those of the same `sibling_merge_key`
//! (a string, or an integer read as `sibling_merge_key_int:N`), and with
//! `NONE` never. The siblings of one merge key form a pool of tracks
//! (`{thread,process,global}_merged_track_event`, dimensions: the scope,
//! `parent_track_uuid`, `merge_key_type`, `merge_key_value` and the
//! pool index `track_compressor_idx`) where each uuid is a cookie of the
//! track compressor: its slices stay on the track it holds while they are
//! open, and overlapping slices of different uuids spread over the pool's
//! tracks. A track of the pool takes the name, parent and args of the
//! uuid whose slice made it.

use zerotrace_protos::protos::TrackDescriptorDecoder;

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::storage::Storage;
use crate::storage::args::ArgValue;
use crate::tracker::track_compressor::TrackCompressor;
use crate::tracker::tracks::{EventType, TrackSpec, TrackTracker};

/// `TrackDescriptor.SiblingMergeBehavior` values.
const BEHAVIOR_NONE: i32 = 2;
const BEHAVIOR_BY_KEY: i32 = 3;

/// The `merge_key_type` dimension: upstream's numbering of the two ways
/// to merge (0 by name, 2 by key; 1 is "never").
const KEY_TYPE_BY_NAME: i64 = 0;
const KEY_TYPE_BY_KEY: i64 = 2;

/// How a descriptor's track merges with its siblings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeRule {
    /// With the siblings of the same name (the default).
    ByName,
    /// With the siblings of the same merge key (None: no key given).
    ByKey(Option<String>),
}

impl MergeRule {
    /// The rule a descriptor asks for; None when it never merges.
    pub fn of(td: &TrackDescriptorDecoder<'_>) -> Option<MergeRule> {
        match td.sibling_merge_behavior_raw() {
            Some(BEHAVIOR_NONE) => None,
            Some(BEHAVIOR_BY_KEY) => Some(MergeRule::ByKey(
                td.sibling_merge_key().map(str::to_owned).or_else(|| {
                    td.sibling_merge_key_int()
                        .map(|k| format!("sibling_merge_key_int:{k}"))
                }),
            )),
            _ => Some(MergeRule::ByName),
        }
    }
}

/// Where the siblings of a merged track live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// In a thread (utid).
    Thread(u32),
    /// In a process (upid).
    Process(u32),
    /// Globally.
    Global,
}

/// What makes the tracks of one uuid's pool: fixed when the uuid's first
/// slice (or first child) needs a track.
#[derive(Debug, Clone)]
pub struct Factory {
    /// The pool's key (machine, scope, parent uuid, merge key).
    pool: String,
    /// The tracks' name.
    name: Option<String>,
    /// The tracks' type.
    classification: &'static str,
    /// The scope.
    scope: Scope,
    /// Dimensions before the pool index.
    dimensions: Vec<(&'static str, ArgValue)>,
    /// The parent track given to each new track.
    parent_id: Option<u32>,
    /// Source args.
    source_args: Vec<(&'static str, ArgValue)>,
}

/// What a uuid's tracks are made of.
#[derive(Debug, Clone)]
pub struct FactorySpec<'a> {
    /// The machine the tracks are on.
    pub machine: u32,
    /// The scope.
    pub scope: Scope,
    /// The parent's uuid (0: none).
    pub parent_uuid: u64,
    /// How the uuid merges.
    pub rule: &'a MergeRule,
    /// The tracks' name (the descriptor's, else the first event's).
    pub name: StrId,
    /// The parent track.
    pub parent_id: Option<u32>,
    /// Source args.
    pub source_args: Vec<(&'static str, ArgValue)>,
}

impl Factory {
    /// The factory of a uuid's tracks.
    pub fn new(storage: &mut Storage, spec: FactorySpec<'_>) -> Factory {
        let (key_type, key) = match spec.rule {
            MergeRule::ByName => (KEY_TYPE_BY_NAME, spec.name),
            MergeRule::ByKey(k) => (KEY_TYPE_BY_KEY, storage.strings.intern_opt(k.as_deref())),
        };
        let (classification, scope_key) = match spec.scope {
            Scope::Thread(utid) => ("thread_merged_track_event", format!("t{utid}")),
            Scope::Process(upid) => ("process_merged_track_event", format!("p{upid}")),
            Scope::Global => ("global_merged_track_event", "g".to_owned()),
        };
        // Interned strings are equal exactly when their ids are.
        let pool = format!(
            "merged|{}|{scope_key}|{}|{key_type}|{key:?}",
            spec.machine, spec.parent_uuid
        );
        Factory {
            pool,
            name: storage.strings.get(spec.name).map(str::to_owned),
            classification,
            scope: spec.scope,
            dimensions: vec![
                ("parent_track_uuid", ArgValue::Int(spec.parent_uuid as i64)),
                ("merge_key_type", ArgValue::Int(key_type)),
                ("merge_key_value", ArgValue::String(key)),
            ],
            parent_id: spec.parent_id,
            source_args: spec.source_args,
        }
    }

    /// Makes the pool's track of index `idx`.
    fn create(&self, storage: &mut Storage, tracks: &mut TrackTracker, idx: u32) -> u32 {
        let mut spec = TrackSpec::new(self.name.as_deref(), self.classification, EventType::Slice);
        match self.scope {
            Scope::Thread(utid) => spec.utid = Some(utid),
            Scope::Process(upid) => spec.upid = Some(upid),
            Scope::Global => {}
        }
        spec.dimensions = self.dimensions.clone();
        spec.dimensions
            .push(("track_compressor_idx", ArgValue::Int(i64::from(idx))));
        spec.parent_id = self.parent_id;
        spec.source_args = self.source_args.clone();
        tracks.create(storage, &spec)
    }
}

/// How a slice event uses its track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// A slice begins.
    Begin,
    /// A slice ends.
    End,
    /// An instant (begins and ends).
    Instant,
}

/// The merged tracks of every pool, and each uuid's factory.
#[derive(Debug, Default)]
pub struct SiblingTracks {
    compressor: TrackCompressor,
    factories: HashMap<u64, Factory>,
}

impl SiblingTracks {
    /// The pools the merged tracks are in.
    pub fn compressor(&self) -> &TrackCompressor {
        &self.compressor
    }

    /// Whether the tracks of `uuid` are fixed yet.
    pub fn has_factory(&self, uuid: u64) -> bool {
        self.factories.contains_key(&uuid)
    }

    /// Fixes how the tracks of `uuid` are made.
    pub fn set_factory(&mut self, uuid: u64, factory: Factory) {
        self.factories.insert(uuid, factory);
    }

    /// The track a slice event of `uuid` goes on (None when the uuid has
    /// no factory).
    pub fn track(
        &mut self,
        storage: &mut Storage,
        tracks: &mut TrackTracker,
        uuid: u64,
        how: Use,
    ) -> Option<u32> {
        let f = self.factories.get(&uuid)?;
        // One look-up or two in the pool's maps: counted into the load's work.
        storage.work.step(1);
        let cookie = uuid as i64;
        let mut create = |idx| f.create(storage, tracks, idx);
        let c = &mut self.compressor;
        Some(match how {
            Use::Begin => c.begin(&f.pool, cookie, &mut create),
            Use::End => c.end_on_any(&f.pool, cookie, &mut create),
            Use::Instant => {
                c.begin(&f.pool, cookie, &mut create);
                c.end_on_any(&f.pool, cookie, &mut create)
            }
        })
    }

    /// The track standing for `uuid`'s pool as a parent: its first track.
    pub fn first_track(
        &mut self,
        storage: &mut Storage,
        tracks: &mut TrackTracker,
        uuid: u64,
    ) -> Option<u32> {
        let f = self.factories.get(&uuid)?;
        storage.work.step(1);
        Some(
            self.compressor
                .first_track(&f.pool, |idx| f.create(storage, tracks, idx)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factory(storage: &mut Storage, name: &str, rule: &MergeRule, scope: Scope) -> Factory {
        let name = storage.strings.intern(name);
        Factory::new(
            storage,
            FactorySpec {
                machine: 0,
                scope,
                parent_uuid: 9,
                rule,
                name,
                parent_id: None,
                source_args: Vec::new(),
            },
        )
    }

    #[test]
    fn siblings_of_one_name_share_a_pool_and_overlaps_spread() {
        let mut storage = Storage::default();
        let mut tracks = TrackTracker::default();
        let mut s = SiblingTracks::default();
        let by_name = MergeRule::ByName;
        for uuid in [1, 2] {
            let f = factory(&mut storage, "same", &by_name, Scope::Global);
            s.set_factory(uuid, f);
        }
        let other = factory(&mut storage, "other", &by_name, Scope::Global);
        s.set_factory(3, other);
        let (st, tr) = (&mut storage, &mut tracks);
        let a = s.track(st, tr, 1, Use::Begin).unwrap();
        // 2 overlaps 1: the pool's second track.
        let b = s.track(st, tr, 2, Use::Begin).unwrap();
        assert_ne!(a, b);
        assert_eq!(s.track(st, tr, 1, Use::End), Some(a));
        assert_eq!(s.track(st, tr, 2, Use::End), Some(b));
        // Both free: each uuid goes back to the track it held.
        assert_eq!(s.track(st, tr, 2, Use::Instant), Some(b));
        assert_eq!(s.track(st, tr, 1, Use::Instant), Some(a));
        // Another name is another pool.
        let c = s.track(st, tr, 3, Use::Instant).unwrap();
        assert!(c != a && c != b);
        assert_eq!(s.first_track(st, tr, 2), Some(a));
        let dims = |id: u32| st.tracks[id as usize].dimension_arg_set_id;
        assert_ne!(dims(a), dims(b), "the pool index is a dimension");
    }

    #[test]
    fn merge_keys_and_scopes_keep_pools_apart() {
        let mut storage = Storage::default();
        let key = |k: &str| MergeRule::ByKey(Some(k.to_owned()));
        let a = factory(&mut storage, "x", &key("k"), Scope::Global);
        let b = factory(&mut storage, "y", &key("k"), Scope::Global);
        let c = factory(&mut storage, "x", &key("j"), Scope::Global);
        let d = factory(&mut storage, "x", &MergeRule::ByName, Scope::Global);
        let e = factory(&mut storage, "x", &MergeRule::ByName, Scope::Thread(1));
        let f = factory(&mut storage, "x", &MergeRule::ByName, Scope::Process(1));
        assert_eq!(a.pool, b.pool, "one key, two names: one pool");
        for (p, q) in [(&a, &c), (&a, &d), (&d, &e), (&e, &f)] {
            assert_ne!(p.pool, q.pool);
        }
        assert_eq!(e.classification, "thread_merged_track_event");
        assert_eq!(f.classification, "process_merged_track_event");
    }
}
