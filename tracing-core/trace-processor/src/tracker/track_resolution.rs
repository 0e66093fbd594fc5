//! Which track a TrackEvent goes on, in one place, decided as upstream
//! decides it (a tracker: it fills threads, processes and tracks, and
//! knows nothing of the parsers that ask it). A descriptor uuid resolves to its track on first use:
//! thread and process tracks (a second descriptor for the same tid or pid
//! means it was reused), counter and state tracks, children scoped to
//! their parent's thread or process, and a global track for a uuid
//! without a descriptor; descriptors parsed in timestamp order rename a
//! track no event has used yet. An event's association: its `track_uuid`
//! (or the sequence default's) names a descriptor track; with none, a
//! legacy event falls back to the thread of the sequence's
//! ThreadDescriptor or of its pid/tid overrides, and an event with a
//! TrackEvent type goes on the "Default Track". Legacy phases then pick
//! their own tracks: async phases one per id, scoped instants the global or
//! process instant track.

use crate::hash::{HashMap, HashSet};

use zerotrace_protos::protos::TrackDescriptorDecoder;
use zerotrace_protos::protos::track_event::LegacyEventDecoder;

use crate::column_store::strings::StrId;
use crate::descriptors::Descriptors;
use crate::packet_view::TrackEventFacts;
use crate::sequence_state::Generation;
use crate::storage::Storage;
use crate::storage::args::ArgValue;
use crate::tracker::process::{NamePriority, ProcessTracker};
use crate::tracker::track_compressor::TrackCompressor;
use crate::tracker::tracks::{EventType, TrackSpec, TrackTracker};

mod descriptor_args;
mod hierarchy;
mod legacy;
mod sibling_tracks;
#[cfg(test)]
mod tests;

use sibling_tracks::{Factory, FactorySpec, MergeRule, Scope, SiblingTracks, Use};

/// Deepest parent chain followed (as deep as the chains checked).
const MAX_PARENT_DEPTH: u32 = hierarchy::MAX_ANCESTORS as u32;

/// LegacyEvent.InstantEventScope values.
const SCOPE_GLOBAL: i32 = 1;
const SCOPE_PROCESS: i32 = 2;

/// The high bits that mark a synthetic tid (pid << 32 | tid).
const SYNTHETIC_SHIFT: u32 = 32;

/// What a resolved descriptor track is.
#[derive(Debug, Clone, Copy)]
pub struct Resolved {
    /// The track id.
    pub track_id: u32,
    /// Its thread.
    pub utid: Option<u32>,
    /// Its process.
    pub upid: Option<u32>,
    /// What it holds.
    pub event_type: EventType,
}

/// What a uuid resolved to.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// A track of its own; `root` when it is a thread's or a process's own
    /// track (its children then name no parent track, as upstream).
    Fixed { track: Resolved, root: bool },
    /// Slices on tracks shared with its siblings (`sibling_tracks.rs`),
    /// made when a slice or a child first needs one.
    Merged(MergedUuid),
    /// A thread's or a process's own track, not made yet (no event used
    /// it): then `Fixed` with `root`.
    Root {
        /// Its thread.
        utid: Option<u32>,
        /// Its process.
        upid: Option<u32>,
    },
}

/// A uuid whose slices go on merged sibling tracks, as resolved.
#[derive(Debug, Clone, Copy)]
struct MergedUuid {
    /// Its thread, when a thread's track is an ancestor.
    utid: Option<u32>,
    /// Its process.
    upid: Option<u32>,
    /// Its parent's uuid (0: none).
    parent: u64,
}

impl Slot {
    fn utid(&self) -> Option<u32> {
        match self {
            Slot::Fixed { track, .. } => track.utid,
            Slot::Merged(m) => m.utid,
            Slot::Root { utid, .. } => *utid,
        }
    }

    fn upid(&self) -> Option<u32> {
        match self {
            Slot::Fixed { track, .. } => track.upid,
            Slot::Merged(m) => m.upid,
            Slot::Root { upid, .. } => *upid,
        }
    }
}

/// Track resolution's state across packets, in one scope of uuids (a
/// file's machine: `track_scopes.rs`).
#[derive(Debug, Default)]
pub struct TrackResolution {
    descriptors: Descriptors,
    resolved: HashMap<u64, Slot>,
    /// The tracks of merged siblings.
    siblings: SiblingTracks,
    /// The descriptor uuid each thread was resolved from (another uuid
    /// for the same thread means its tid was reused).
    uuid_by_utid: HashMap<u32, u64>,
    /// The same for processes (pid reuse).
    uuid_by_upid: HashMap<u32, u64>,
    /// Descriptors as parsed so far in timestamp order (these win over
    /// the loader's last-seen ones).
    current: HashMap<u64, Vec<u8>>,
    /// Tracks that received an event (their name is then fixed).
    used: HashSet<u32>,
    /// Slice tracks whose descriptor gave no name when they were made, and
    /// their uuids: the first event names them.
    unnamed: HashMap<u32, u64>,
    /// The name legacy async tracks of an id take (its first event's), by
    /// (upid when process-scoped, source id).
    async_root_names: HashMap<(Option<u32>, i64), StrId>,
    /// Legacy async tracks' pools.
    async_pools: TrackCompressor,
    /// The legacy global instant track.
    global_instants: Option<u32>,
    /// Legacy process instant tracks by upid.
    process_instants: HashMap<u32, u32>,
}

impl TrackResolution {
    /// State over the descriptors the loader registered.
    pub fn new(descriptors: Descriptors) -> Self {
        TrackResolution {
            descriptors,
            resolved: HashMap::default(),
            siblings: SiblingTracks::default(),
            uuid_by_utid: HashMap::default(),
            uuid_by_upid: HashMap::default(),
            current: HashMap::default(),
            used: HashSet::default(),
            unnamed: HashMap::default(),
            async_root_names: HashMap::default(),
            async_pools: TrackCompressor::default(),
            global_instants: None,
            process_instants: HashMap::default(),
        }
    }

    /// The descriptors the loader registered, which it keeps registering
    /// while packets are parsed behind its sort window.
    pub fn descriptors_mut(&mut self) -> &mut Descriptors {
        &mut self.descriptors
    }

    /// The descriptors registered so far.
    pub fn descriptors(&self) -> &Descriptors {
        &self.descriptors
    }

    /// The pools its tracks were made in: merged siblings', legacy async.
    pub fn compressors(&self) -> [&TrackCompressor; 2] {
        [self.siblings.compressor(), &self.async_pools]
    }
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

fn chrome_source(storage: &mut Storage) -> Vec<(&'static str, ArgValue)> {
    let chrome = storage.strings.intern("chrome");
    vec![("source", ArgValue::String(chrome))]
}

/// What resolving a track fills: the tables, and the threads, processes
/// and tracks in them.
pub struct Trackers<'a> {
    /// The tables.
    pub storage: &'a mut Storage,
    /// Threads and processes.
    pub processes: &'a mut ProcessTracker,
    /// Tracks.
    pub tracks: &'a mut TrackTracker,
}

impl TrackResolution {
    /// The descriptor of a uuid as upstream reserves it (the loader's
    /// first, else the one parsed).
    pub fn descriptor_bytes(&self, uuid: u64) -> Option<Vec<u8>> {
        match self.descriptors.get(uuid) {
            Some(d) => Some(d.bytes.clone()),
            None => self.current.get(&uuid).cloned(),
        }
    }

    /// A descriptor parsed in timestamp order: its track takes the name the
    /// uuid's descriptors give it while no event has used it, and at any
    /// time for a track that never merges with its siblings (whose last
    /// name wins, as upstream renames it).
    pub fn update_descriptor(&mut self, storage: &mut Storage, uuid: u64, bytes: &[u8]) {
        self.current.insert(uuid, bytes.to_vec());
        let Some(Slot::Fixed { track: r, .. }) = self.resolved.get(&uuid).copied() else {
            return;
        };
        let td = TrackDescriptorDecoder::new(bytes);
        let never_merges = MergeRule::of(&td).is_none();
        if self.used.contains(&r.track_id) && !never_merges {
            return;
        }
        if let Some(name) = self.descriptor_name(uuid, &td) {
            let name = storage.strings.intern(&name);
            if let Some(t) = storage.tracks.get_mut(r.track_id as usize) {
                t.name = name;
            }
            self.unnamed.remove(&r.track_id);
        }
    }

    /// The track of a uuid, made on first use: None for a uuid whose
    /// slices go on tracks merged with its siblings (which one depends on
    /// the slice: [`TrackResolution::associate`]), and for a uuid whose
    /// parents do not resolve. Its threads and processes are resolved
    /// either way.
    pub fn resolve(&mut self, cx: &mut Trackers<'_>, uuid: u64) -> Option<Resolved> {
        match self.resolve_depth(cx, uuid, 0)? {
            Slot::Fixed { track, .. } => Some(track),
            Slot::Merged(_) => None,
            Slot::Root { utid, upid } => Some(self.make_root(cx, uuid, utid, upid)),
        }
    }

    /// The thread and the process of a uuid (either may be None), resolved
    /// without making its track: a descriptor read names them.
    pub fn resolve_scope(
        &mut self,
        cx: &mut Trackers<'_>,
        uuid: u64,
    ) -> Option<(Option<u32>, Option<u32>)> {
        let slot = self.resolve_depth(cx, uuid, 0)?;
        Some((slot.utid(), slot.upid()))
    }

    /// Makes the own track of a thread's or a process's descriptor.
    fn make_root(
        &mut self,
        cx: &mut Trackers<'_>,
        uuid: u64,
        utid: Option<u32>,
        upid: Option<u32>,
    ) -> Resolved {
        let bytes = self.descriptor_bytes(uuid).unwrap_or_default();
        let td = TrackDescriptorDecoder::new(&bytes);
        let name = self.descriptor_name(uuid, &td);
        // A thread's slice track that may merge with the system's thread
        // track is that track upstream, without a descriptor's args.
        let merged_thread_track = td.thread().is_some()
            && td.counter().is_none()
            && !td.disallow_merging_with_system_tracks().unwrap_or(false);
        // The first packet flag comes from the descriptor's sequence.
        let sequence = self.descriptors.get(uuid).map(|d| d.sequence);
        let source_args = if merged_thread_track {
            self.ordering_args(cx, &td)
        } else {
            self.source_args(cx, uuid, &td, true, sequence)
        };
        let classification = if utid.is_some() {
            "thread"
        } else {
            "process_track_event"
        };
        let mut spec = TrackSpec::new(name.as_deref(), classification, EventType::Slice);
        spec.utid = utid;
        spec.upid = upid;
        spec.source_args = source_args;
        let id = cx.tracks.create(cx.storage, &spec);
        // Only a track that merges with the system's thread track is the
        // thread's default track (atrace marks and the other importers'
        // slices of the thread join it); one that disallows merging stays
        // apart, as upstream gives it a track of its own.
        match (utid, upid) {
            (Some(u), _) if merged_thread_track => cx.tracks.set_thread_track(u, id),
            (Some(_), _) => {}
            (None, Some(p)) => cx.tracks.set_process_track(p, id),
            (None, None) => {}
        }
        let track = slice_track(id, utid, upid);
        self.resolved
            .insert(uuid, Slot::Fixed { track, root: true });
        track
    }

    fn resolve_depth(&mut self, cx: &mut Trackers<'_>, uuid: u64, depth: u32) -> Option<Slot> {
        if let Some(r) = self.resolved.get(&uuid) {
            return Some(*r);
        }
        if depth > MAX_PARENT_DEPTH || (depth == 0 && !self.check_hierarchy(cx, uuid)) {
            return None;
        }
        // A uuid without a descriptor is a global track of defaults (merged
        // by the name its first event gives), as upstream reserves it; a
        // parent without one breaks its children's hierarchy.
        let known = self.descriptor_bytes(uuid);
        if known.is_none() && depth > 0 {
            return None;
        }
        let bytes = known.unwrap_or_default();
        let td = TrackDescriptorDecoder::new(&bytes);
        // A parent uuid of 0 names the default track's uuid, which upstream
        // reads as no parent: such a track is a root.
        let parent_uuid = td.parent_uuid().filter(|&pu| pu != uuid && pu != 0);
        let parent = match parent_uuid {
            Some(pu) => Some(self.resolve_depth(cx, pu, depth + 1)?),
            None => None,
        };
        let name = self.descriptor_name(uuid, &td);
        let name = name.as_deref();
        // A thread's slice track that may merge with the system's thread
        // track is that track upstream, without a descriptor's args.
        let merged_thread_track = td.thread().is_some()
            && td.counter().is_none()
            && !td.disallow_merging_with_system_tracks().unwrap_or(false);
        // Tracks made now take their first packet flag from the
        // descriptor's sequence.
        let sequence = self.descriptors.get(uuid).map(|d| d.sequence);
        let source_args = if merged_thread_track {
            self.ordering_args(cx, &td)
        } else {
            let is_root = uuid == 0 || td.thread().is_some() || td.process().is_some();
            self.source_args(cx, uuid, &td, is_root, sequence)
        };
        let r = if let Some(thread) = td.thread() {
            let pid = i64::from(thread.pid().unwrap_or(0));
            let mut tid = thread.tid().unwrap_or(0);
            // A sandboxed thread's tid is unique only in its process: a
            // synthetic tid (pid in the high 32 bits) keeps it apart, as
            // upstream makes it.
            if td
                .chrome_thread()
                .and_then(|c| c.is_sandboxed_tid())
                .unwrap_or(false)
            {
                tid |= pid << SYNTHETIC_SHIFT;
            }
            let mut utid = cx.processes.update_thread(cx.storage, tid, pid);
            if let Some(old) = self.uuid_by_utid.insert(utid, uuid) {
                if old != uuid {
                    // Another descriptor for this thread: its tid was reused.
                    cx.processes.start_reused_thread(cx.storage, tid);
                    utid = cx.processes.update_thread(cx.storage, tid, pid);
                    self.uuid_by_utid.insert(utid, uuid);
                }
            }
            if let Some(n) = thread.thread_name() {
                let n = cx.storage.strings.intern(n);
                cx.processes
                    .set_thread_name(cx.storage, utid, n, NamePriority::TrackDescriptor);
            }
            // Its track is made by the first event on it, as upstream
            // interns it.
            Slot::Root {
                utid: Some(utid),
                upid: None,
            }
        } else if let Some(process) = td.process() {
            let pid = i64::from(process.pid().unwrap_or(0));
            let mut upid = cx.processes.get_or_create_process(cx.storage, pid);
            if let Some(old) = self.uuid_by_upid.insert(upid, uuid) {
                if old != uuid {
                    // Another descriptor for this process: its pid was reused.
                    upid = cx.processes.start_reused_process(cx.storage, pid);
                    self.uuid_by_upid.insert(upid, uuid);
                }
            }
            // An empty name does not replace the system's.
            if let Some(n) = process.process_name().filter(|n| !n.is_empty()) {
                let n = cx.storage.strings.intern(n);
                cx.processes
                    .set_process_name(cx.storage, upid, n, NamePriority::TrackDescriptor);
            }
            Slot::Root {
                utid: None,
                upid: Some(upid),
            }
        } else {
            let (utid, upid) = match &parent {
                Some(p) => (p.utid(), p.upid()),
                None => (None, None),
            };
            let counter = td.counter();
            let merge = MergeRule::of(&td);
            if counter.is_none() && !td.has_state() && merge.is_some() {
                // Slices merged with the siblings': their tracks are made
                // as slices need them.
                let m = MergedUuid {
                    utid,
                    upid: if utid.is_some() { None } else { upid },
                    parent: parent_uuid.unwrap_or(0),
                };
                self.resolved.insert(uuid, Slot::Merged(m));
                return Some(Slot::Merged(m));
            }
            // Upstream's type: the scope (the thread or process of its
            // parent, else global), then the kind.
            let (event_type, classification) = match (utid, upid) {
                (Some(_), _) if counter.is_some() => {
                    (EventType::Counter, "thread_counter_track_event")
                }
                (None, Some(_)) if counter.is_some() => {
                    (EventType::Counter, "process_counter_track_event")
                }
                _ if counter.is_some() => (EventType::Counter, "global_counter_track_event"),
                (Some(_), _) if td.has_state() => (EventType::State, "thread_state_track_event"),
                (None, Some(_)) if td.has_state() => {
                    (EventType::State, "process_state_track_event")
                }
                _ if td.has_state() => (EventType::State, "global_state_track_event"),
                (Some(_), _) => (EventType::Slice, "thread_track_event"),
                (None, Some(_)) => (EventType::Slice, "process_track_event"),
                (None, None) => (EventType::Slice, "global_track_event"),
            };
            let parent_id = match (parent_uuid, parent) {
                (Some(pu), Some(p)) => self.parent_track(cx, pu, p, sequence),
                _ => None,
            };
            let mut unit: Option<String> = None;
            let mut counter_name: Option<&str> = name;
            if let Some(c) = &counter {
                unit = c.unit_name().map(str::to_owned).or_else(|| {
                    match c.unit_raw() {
                        Some(1) => Some("ns"),
                        Some(2) => Some("count"),
                        Some(3) => Some("bytes"),
                        _ => None,
                    }
                    .map(str::to_owned)
                });
                match c.type_raw() {
                    Some(1) => {
                        counter_name = counter_name.or(Some("thread_time"));
                        unit = Some("ns".to_owned());
                    }
                    Some(2) => {
                        counter_name = counter_name.or(Some("thread_instruction_count"));
                        unit = Some("count".to_owned());
                    }
                    _ => {}
                }
            }
            let mut spec = TrackSpec::new(counter_name, classification, event_type);
            spec.utid = utid;
            spec.upid = if utid.is_some() { None } else { upid };
            spec.parent_id = parent_id;
            spec.unit = unit.as_deref();
            spec.source_args = source_args;
            let id = cx.tracks.create(cx.storage, &spec);
            if counter_name.is_none() && event_type == EventType::Slice {
                self.unnamed.insert(id, uuid);
            }
            Slot::Fixed {
                track: Resolved {
                    track_id: id,
                    utid,
                    upid: spec.upid,
                    event_type,
                },
                root: false,
            }
        };
        self.resolved.insert(uuid, r);
        Some(r)
    }

    /// The track a child of `parent` names as its parent: none for a
    /// thread's or a process's own track (its children are roots in that
    /// scope, as upstream), a merged parent's first track.
    fn parent_track(
        &mut self,
        cx: &mut Trackers<'_>,
        parent_uuid: u64,
        parent: Slot,
        sequence: Option<u32>,
    ) -> Option<u32> {
        match parent {
            Slot::Fixed { root: true, .. } => None,
            // Made with its first child, as upstream interns a parent.
            Slot::Root { utid, upid } => {
                self.make_root(cx, parent_uuid, utid, upid);
                None
            }
            Slot::Fixed { track, .. } => Some(track.track_id),
            Slot::Merged(m) => {
                self.ensure_factory(cx, parent_uuid, m, StrId::NULL, sequence);
                self.siblings
                    .first_track(cx.storage, cx.tracks, parent_uuid)
            }
        }
    }

    /// Fixes how the merged tracks of `uuid` are made, on its first slice
    /// (`event_name` names them when its descriptor does not) or first
    /// child: their name, parent and args are taken then, the args' first
    /// packet flag from the sequence of the event that needed them.
    fn ensure_factory(
        &mut self,
        cx: &mut Trackers<'_>,
        uuid: u64,
        m: MergedUuid,
        event_name: StrId,
        sequence: Option<u32>,
    ) {
        if self.siblings.has_factory(uuid) {
            return;
        }
        let parent_id = match self.resolved.get(&m.parent).copied() {
            Some(p) if m.parent != 0 => self.parent_track(cx, m.parent, p, sequence),
            _ => None,
        };
        let bytes = self.descriptor_bytes(uuid);
        let td = TrackDescriptorDecoder::new(bytes.as_deref().unwrap_or_default());
        let name = match self.descriptor_name(uuid, &td) {
            Some(n) => cx.storage.strings.intern(&n),
            // Upstream reserves uuid 0 as the "Default Track" when no
            // descriptor describes it.
            None if uuid == 0 && bytes.is_none() => cx.storage.strings.intern("Default Track"),
            None => event_name,
        };
        let rule = MergeRule::of(&td).unwrap_or(MergeRule::ByName);
        let scope = match (m.utid, m.upid) {
            (Some(utid), _) => Scope::Thread(utid),
            (None, Some(upid)) => Scope::Process(upid),
            (None, None) => Scope::Global,
        };
        let source_args = self.source_args(cx, uuid, &td, uuid == 0, sequence);
        let factory = Factory::new(
            cx.storage,
            FactorySpec {
                machine: cx.tracks.machine(),
                scope,
                parent_uuid: m.parent,
                rule: &rule,
                name,
                parent_id,
                source_args,
            },
        );
        self.siblings.set_factory(uuid, factory);
    }

    /// The multiplier of a counter track's values (1 unless its descriptor
    /// says).
    pub fn unit_multiplier(&self, uuid: u64) -> f64 {
        self.descriptors
            .get(uuid)
            .and_then(|d| TrackDescriptorDecoder::new(&d.bytes).counter())
            .and_then(|c| c.unit_multiplier())
            .map_or(1.0, |m| m as f64)
    }

    /// An event lands on `track_id`: the first names the track when its
    /// descriptor did not, and from then on descriptors no longer rename it.
    pub fn event_on_track(&mut self, storage: &mut Storage, track_id: u32, name: StrId) {
        if !self.used.insert(track_id) {
            return;
        }
        let Some(uuid) = self.unnamed.remove(&track_id) else {
            return;
        };
        // A descriptor read since the track was made may have named it.
        let name = match self.descriptors.name(uuid) {
            Some(n) => storage.strings.intern(n),
            None => name,
        };
        if let Some(t) = storage.tracks.get_mut(track_id as usize) {
            t.name = name;
        }
    }

    /// The track of one TrackEvent.
    #[allow(clippy::too_many_arguments)]
    pub fn associate(
        &mut self,
        cx: &mut Trackers<'_>,
        facts: &TrackEventFacts,
        legacy: Option<&LegacyEventDecoder<'_>>,
        generation: &Generation,
        default_uuid: Option<u64>,
        name: StrId,
        category: StrId,
    ) -> Result<Association, NoTrack> {
        let track_uuid = facts.track_uuid().or(default_uuid).unwrap_or(0);
        let mut utid = None;
        let mut upid = None;
        let mut resolved = None;
        let mut fallback = false;
        if track_uuid != 0 {
            let r = self
                .resolve_depth(cx, track_uuid, 0)
                .ok_or(NoTrack::ParserError)?;
            if let Some(u) = r.utid() {
                utid = Some(u);
                upid = cx.storage.threads.get(u as usize).and_then(|t| t.upid);
            } else {
                upid = r.upid();
            }
            resolved = Some(r);
        } else {
            let thread = generation.thread;
            let valid = thread.is_some();
            let pid_override = legacy.and_then(|l| l.pid_override());
            let tid_override = legacy.and_then(|l| l.tid_override());
            fallback = (facts.track_uuid().is_none() || !facts.has_type()) && valid;
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
                let u = cx.processes.update_thread(cx.storage, tid, pid);
                utid = Some(u);
                upid = cx.storage.threads.get(u as usize).and_then(|t| t.upid);
            }
        }

        let phase = legacy.and_then(|l| l.phase()).unwrap_or(0);
        let phase = u8::try_from(phase).unwrap_or(0);
        let thread_of_event = utid;
        match phase {
            b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F' => {
                let l = legacy.ok_or(NoTrack::ParserError)?;
                let id = self.async_track(cx, l, phase, upid, name, category)?;
                return Ok(Association {
                    track: slice_track(id, None, upid),
                    uuid: None,
                    utid: thread_of_event,
                });
            }
            b'i' | b'I' => match legacy.and_then(|l| l.instant_event_scope_raw()) {
                Some(SCOPE_GLOBAL) => {
                    let id = self.global_instants(cx);
                    return Ok(Association {
                        track: slice_track(id, None, None),
                        uuid: None,
                        utid: None,
                    });
                }
                Some(SCOPE_PROCESS) => {
                    let upid = upid.ok_or(NoTrack::ParserError)?;
                    let id = self.process_instants(cx, upid);
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

        let sequence = generation.sequence_id;
        if let Some(slot) = resolved {
            let track = self.intern(cx, track_uuid, slot, facts, phase, name, Some(sequence))?;
            return Ok(Association {
                track,
                uuid: Some(track_uuid),
                utid,
            });
        }
        if fallback {
            let u = utid.ok_or(NoTrack::ParserError)?;
            let id = cx.tracks.thread_track(cx.storage, u);
            return Ok(Association {
                track: slice_track(id, Some(u), upid),
                uuid: None,
                utid: Some(u),
            });
        }
        // The "Default Track": uuid 0's descriptor track, merged with the
        // global roots of its name as any global root.
        let slot = self.resolve_depth(cx, 0, 0).ok_or(NoTrack::ParserError)?;
        // Upstream interns it without the event's sequence: it never says
        // `has_first_packet_on_sequence`.
        let track = self.intern(cx, 0, slot, facts, phase, name, None)?;
        Ok(Association {
            track: slice_track(track.track_id, None, None),
            uuid: None,
            utid: None,
        })
    }

    /// The track one event of a resolved uuid goes on: its own, or for a
    /// uuid merged with its siblings the track its slice takes in their
    /// pool (a begin or an instant the one its uuid holds or a free one,
    /// an end the one its slice is open on). Upstream finds no merged
    /// track for counters, states and the legacy phases that do not begin
    /// or end a slice (complete events, v1 flows).
    #[allow(clippy::too_many_arguments)]
    fn intern(
        &mut self,
        cx: &mut Trackers<'_>,
        uuid: u64,
        slot: Slot,
        facts: &TrackEventFacts,
        phase: u8,
        name: StrId,
        sequence: Option<u32>,
    ) -> Result<Resolved, NoTrack> {
        let m = match slot {
            Slot::Fixed { track, .. } => return Ok(track),
            Slot::Root { utid, upid } => return Ok(self.make_root(cx, uuid, utid, upid)),
            Slot::Merged(m) => m,
        };
        let how = match (facts.type_raw().unwrap_or(0), phase) {
            (1, _) | (0, b'B') => Use::Begin,
            (2, _) | (0, b'E') => Use::End,
            (3, _) | (0, b'I' | b'i' | b'R') => Use::Instant,
            _ => return Err(NoTrack::ParserError),
        };
        self.ensure_factory(cx, uuid, m, name, sequence);
        let id = self
            .siblings
            .track(cx.storage, cx.tracks, uuid, how)
            .ok_or(NoTrack::ParserError)?;
        Ok(slice_track(id, m.utid, m.upid))
    }
}
