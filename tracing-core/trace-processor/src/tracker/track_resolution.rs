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
use crate::tracker::tracks::{EventType, TrackSpec, TrackTracker};

/// Deepest parent chain followed.
const MAX_PARENT_DEPTH: u32 = 64;

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

/// Track resolution's state across packets.
#[derive(Debug)]
pub struct TrackResolution {
    descriptors: Descriptors,
    resolved: HashMap<u64, Resolved>,
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
    /// Slice tracks whose descriptor gives no name: the first event names them.
    unnamed: HashSet<u32>,
    /// Legacy async tracks by (upid when process-scoped, scope, source id).
    async_tracks: HashMap<(Option<u32>, StrId, i64), u32>,
    /// The legacy global instant track.
    global_instants: Option<u32>,
    /// Legacy process instant tracks by upid.
    process_instants: HashMap<u32, u32>,
    /// The "Default Track" (descriptor uuid 0).
    default_track: Option<u32>,
}

impl TrackResolution {
    /// State over the descriptors the loader registered.
    pub fn new(descriptors: Descriptors) -> Self {
        TrackResolution {
            descriptors,
            resolved: HashMap::default(),
            uuid_by_utid: HashMap::default(),
            uuid_by_upid: HashMap::default(),
            current: HashMap::default(),
            used: HashSet::default(),
            unnamed: HashSet::default(),
            async_tracks: HashMap::default(),
            global_instants: None,
            process_instants: HashMap::default(),
            default_track: None,
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
    /// The descriptor of a uuid as known now (parsed, else the loader's).
    pub fn descriptor_bytes(&self, uuid: u64) -> Option<Vec<u8>> {
        self.current
            .get(&uuid)
            .cloned()
            .or_else(|| self.descriptors.get(uuid).map(|d| d.bytes.clone()))
    }

    /// A descriptor parsed in timestamp order: it replaces earlier ones of its
    /// uuid, and renames the track while no event has used it.
    pub fn update_descriptor(&mut self, storage: &mut Storage, uuid: u64, bytes: &[u8]) {
        self.current.insert(uuid, bytes.to_vec());
        let Some(r) = self.resolved.get(&uuid).copied() else {
            return;
        };
        if self.used.contains(&r.track_id) {
            return;
        }
        let td = TrackDescriptorDecoder::new(bytes);
        if let Some(name) = td.name().or(td.static_name()).or(td.atrace_name()) {
            let name = storage.strings.intern(name);
            if let Some(t) = storage.tracks.get_mut(r.track_id as usize) {
                t.name = name;
            }
            self.unnamed.remove(&r.track_id);
        }
    }

    /// The track of a uuid, made on first use.
    pub fn resolve(&mut self, cx: &mut Trackers<'_>, uuid: u64) -> Option<Resolved> {
        self.resolve_depth(cx, uuid, 0)
    }

    fn resolve_depth(&mut self, cx: &mut Trackers<'_>, uuid: u64, depth: u32) -> Option<Resolved> {
        if let Some(r) = self.resolved.get(&uuid) {
            return Some(*r);
        }
        if depth > MAX_PARENT_DEPTH {
            return None;
        }
        let bytes = match self.current.get(&uuid) {
            Some(b) => b.clone(),
            None => match self.descriptors.get(uuid) {
                Some(d) => d.bytes.clone(),
                None => {
                    // No descriptor at all: a global track the first event names.
                    let spec = TrackSpec::new(None, "track_event", EventType::Slice);
                    let id = cx.tracks.create(cx.storage, &spec);
                    self.unnamed.insert(id);
                    let r = Resolved {
                        track_id: id,
                        utid: None,
                        upid: None,
                        event_type: EventType::Slice,
                    };
                    self.resolved.insert(uuid, r);
                    return Some(r);
                }
            },
        };
        let td = TrackDescriptorDecoder::new(&bytes);
        // A parent uuid of 0 names the default track's uuid, which upstream
        // reads as no parent: such a track is a root.
        let parent = match td.parent_uuid() {
            Some(pu) if pu != uuid && pu != 0 => self.resolve_depth(cx, pu, depth + 1),
            _ => None,
        };
        let name = td.name().or(td.static_name()).or(td.atrace_name());
        let description = td.description().map(|s| cx.storage.strings.intern(s));
        // As upstream: where the track came from (a descriptor, its uuid as
        // `trace_id`, whether it is the root of its scope: a thread's or a
        // process's own track, or the default track), how the UI orders
        // the track's children, its rank among its siblings, then its
        // description.
        // A thread's slice track that may merge with the system's thread
        // track is that track upstream, without a descriptor's args.
        let merged_thread_track = td.thread().is_some()
            && td.counter().is_none()
            && !td.disallow_merging_with_system_tracks().unwrap_or(false);
        let mut source_args = Vec::new();
        if !merged_thread_track {
            let descriptor = cx.storage.strings.intern("descriptor");
            let is_root = uuid == 0 || td.thread().is_some() || td.process().is_some();
            source_args.push(("source", ArgValue::String(descriptor)));
            source_args.push(("trace_id", ArgValue::Int(uuid as i64)));
            source_args.push(("is_root_in_scope", ArgValue::Bool(is_root)));
            let sequence = self.descriptors.get(uuid).map(|d| d.sequence);
            if sequence.is_some_and(|s| self.descriptors.first_packet_sequences.contains(&s)) {
                source_args.push(("has_first_packet_on_sequence", ArgValue::Bool(true)));
            }
        }
        let ordering = match td.child_ordering_raw() {
            Some(1) => Some("lexicographic"),
            Some(2) => Some("chronological"),
            Some(3) => Some("explicit"),
            _ => None,
        };
        if let Some(o) = ordering {
            let o = cx.storage.strings.intern(o);
            source_args.push(("child_ordering", ArgValue::String(o)));
        }
        if let Some(rank) = td.sibling_order_rank() {
            source_args.push(("sibling_order_rank", ArgValue::Int(i64::from(rank))));
        }
        if let Some(desc) = description {
            source_args.push(("description", ArgValue::String(desc)));
        }
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
            let mut spec = TrackSpec::new(name, "thread", EventType::Slice);
            spec.utid = Some(utid);
            spec.source_args = source_args;
            let id = cx.tracks.create(cx.storage, &spec);
            cx.tracks.set_thread_track(utid, id);
            Resolved {
                track_id: id,
                utid: Some(utid),
                upid: None,
                event_type: EventType::Slice,
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
            let mut spec = TrackSpec::new(name, "process_track_event", EventType::Slice);
            spec.upid = Some(upid);
            spec.source_args = source_args;
            let id = cx.tracks.create(cx.storage, &spec);
            cx.tracks.set_process_track(upid, id);
            Resolved {
                track_id: id,
                utid: None,
                upid: Some(upid),
                event_type: EventType::Slice,
            }
        } else {
            let (utid, upid) = match parent {
                Some(r) => (r.utid, r.upid),
                None => (None, None),
            };
            let counter = td.counter();
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
            spec.parent_id = parent.map(|r| r.track_id);
            spec.unit = unit.as_deref();
            spec.source_args = source_args;
            let id = cx.tracks.create(cx.storage, &spec);
            if counter_name.is_none() && event_type == EventType::Slice {
                self.unnamed.insert(id);
            }
            Resolved {
                track_id: id,
                utid,
                upid: spec.upid,
                event_type,
            }
        };
        self.resolved.insert(uuid, r);
        Some(r)
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
        if self.used.insert(track_id) && self.unnamed.remove(&track_id) {
            if let Some(t) = storage.tracks.get_mut(track_id as usize) {
                t.name = name;
            }
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
            let r = self.resolve(cx, track_uuid).ok_or(NoTrack::ParserError)?;
            if let Some(u) = r.utid {
                utid = Some(u);
                upid = cx.storage.threads.get(u as usize).and_then(|t| t.upid);
            } else {
                upid = r.upid;
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

        if let Some(r) = resolved {
            return Ok(Association {
                track: r,
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
        let id = self.default_track(cx, generation.sequence_id);
        Ok(Association {
            track: slice_track(id, None, None),
            uuid: None,
            utid: None,
        })
    }

    /// The "Default Track": uuid 0's descriptor track. Upstream gives it no
    /// track of its own: like every global slice track without a parent
    /// whose siblings may merge by name, it is a track of the merged-track
    /// pool keyed by (parent uuid 0, merge by name, its name), with the
    /// pool index as `track_compressor_idx`. Only uuid 0 is ever a
    /// cookie of that pool here, so its slices always land on the pool's
    /// first track (index 0), made once. Its args are a descriptor track's,
    /// as the root of its scope; the sequence that first used it decides
    /// `has_first_packet_on_sequence`.
    fn default_track(&mut self, cx: &mut Trackers<'_>, sequence_id: u32) -> u32 {
        if let Some(id) = self.default_track {
            return id;
        }
        const NAME: &str = "Default Track";
        /// SiblingMergeBehavior's "by name".
        const MERGE_BY_NAME: i64 = 0;
        let name = cx.storage.strings.intern(NAME);
        let descriptor = cx.storage.strings.intern("descriptor");
        let mut spec = TrackSpec::new(Some(NAME), "global_merged_track_event", EventType::Slice);
        spec.dimensions = vec![
            ("parent_track_uuid", ArgValue::Int(0)),
            ("merge_key_type", ArgValue::Int(MERGE_BY_NAME)),
            ("merge_key_value", ArgValue::String(name)),
            ("track_compressor_idx", ArgValue::Int(0)),
        ];
        spec.source_args = vec![
            ("source", ArgValue::String(descriptor)),
            ("trace_id", ArgValue::Int(0)),
            ("is_root_in_scope", ArgValue::Bool(true)),
        ];
        if self
            .descriptors
            .first_packet_sequences
            .contains(&sequence_id)
        {
            spec.source_args
                .push(("has_first_packet_on_sequence", ArgValue::Bool(true)));
        }
        let id = cx.tracks.create(cx.storage, &spec);
        self.default_track = Some(id);
        id
    }

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

    fn process_instants(&mut self, cx: &mut Trackers<'_>, upid: u32) -> u32 {
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
    fn async_track(
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
