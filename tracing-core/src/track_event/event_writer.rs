//! Writes TrackEvents on one sequence (one [`TraceWriter`]): slices,
//! instants and counters with interned names and categories, debug
//! annotations, and the thread track descriptor, with the sequence flags
//! Perfetto's readers expect (the first packet after a clear says
//! INCREMENTAL_STATE_CLEARED, every packet that uses interned ids says
//! NEEDS_INCREMENTAL_STATE).

use protozero::varint::MAX_VARINT_LEN;
use zerotrace_protos::protos::{TracePacket, TrackEvent};

use super::callsite::SiteKey;
use super::category::Category;
use super::debug_value::DebugValue;
use super::debug_value::write_value;
use super::interning::{Fresh, InternKind, Interner, SourceLocation};
use super::options::EventOptions;
use super::options::on_track;
use super::site_cache::{SITE_ARGS, SiteCache, SiteFacts};
use super::site_packet;
use super::tracks::write_descriptor;
use super::tracks::{ThreadTrack, TrackSpec};
use crate::producer::TraceWriter;

/// `TracePacket.sequence_flags` bits.
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// Most annotations an event from a known point writes without the
/// general path.
const MAX_FAST_ANNOTATIONS: usize = site_packet::MAX_ANNOTATIONS;

/// The kind of an event (`TrackEvent.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// `TYPE_SLICE_BEGIN`.
    SliceBegin = 1,
    /// `TYPE_SLICE_END`.
    SliceEnd = 2,
    /// `TYPE_INSTANT`.
    Instant = 3,
    /// `TYPE_COUNTER`.
    Counter = 4,
}

/// The debug annotations of an event from a known point, as
/// [`EventWriter::site_event`] reads them: a slice of name-value pairs (the
/// macros'), or values kept in another form (the Layer's span fields) read
/// in place, so that none is copied into a slice first.
pub(crate) trait Annotations {
    /// How many there are.
    fn count(&self) -> usize;
    /// Their names, in order.
    fn names(&self) -> impl Iterator<Item = &'static str> + '_;
    /// Writes them into `e`, named by `iids` (their names' interned ids,
    /// in order).
    fn write(&self, iids: &[u64], e: &mut TrackEvent<'_>);
    /// Runs `f` with them as a slice (for the general path).
    fn with_slice<R>(&self, f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R) -> R;
}

impl Annotations for [(&'static str, DebugValue<'_>)] {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.iter().map(|(n, _)| *n)
    }
    #[inline]
    fn write(&self, iids: &[u64], e: &mut TrackEvent<'_>) {
        for (iid, (_, v)) in iids.iter().zip(self) {
            let mut a = e.add_debug_annotations();
            a.set_name_iid(*iid);
            write_value(&mut a, v);
        }
    }
    #[inline]
    fn with_slice<R>(&self, f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R) -> R {
        f(self)
    }
}

impl<const N: usize> Annotations for [(&'static str, DebugValue<'_>); N] {
    #[inline]
    fn count(&self) -> usize {
        N
    }
    #[inline]
    fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.as_slice().names()
    }
    #[inline]
    fn write(&self, iids: &[u64], e: &mut TrackEvent<'_>) {
        self.as_slice().write(iids, e)
    }
    #[inline]
    fn with_slice<R>(&self, f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R) -> R {
        f(self)
    }
}

/// What every event names: its type, track, category, name and location.
struct Head {
    kind: i32,
    track: u64,
    category: Option<&'static Category>,
    name: Option<&'static str>,
    location: Option<SourceLocation>,
}

/// TrackEvent writing on one sequence.
pub struct EventWriter {
    writer: TraceWriter,
    interner: Interner,
    thread: ThreadTrack,
    /// The thread track's `thread_name`, if any.
    thread_name: Option<Box<str>>,
    /// The process track the thread track hangs under, if described.
    process: Option<TrackSpec>,
    /// The next packet is the first after a clear.
    cleared: bool,
    /// User tracks whose descriptor this sequence has written.
    defined: Vec<u64>,
    /// What known trace points have interned on this sequence.
    sites: SiteCache,
}

impl std::fmt::Debug for EventWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventWriter")
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}

impl EventWriter {
    /// Events of `thread` on `writer`'s sequence; its track descriptor
    /// carries `thread_name` (what the UI shows for the thread) if given.
    pub fn new(writer: TraceWriter, thread: ThreadTrack, thread_name: Option<&str>) -> EventWriter {
        EventWriter {
            writer,
            interner: Interner::default(),
            thread,
            thread_name: thread_name.map(Box::from),
            process: None,
            cleared: true,
            defined: Vec::new(),
            sites: SiteCache::default(),
        }
    }

    /// Describes `process` (a [`TrackSpec::process`]) at the start of the
    /// sequence and after every clear, and puts the thread track under it,
    /// so async tracks parented to it group with the process's threads.
    pub fn set_process_track(&mut self, process: TrackSpec) {
        self.process = Some(process);
    }

    /// Forgets the interning state; the next packet re-emits what it needs
    /// (the service asked to clear incremental state).
    pub fn clear_incremental_state(&mut self) {
        self.interner.clear();
        self.cleared = true;
        self.defined.clear();
        self.sites.clear();
    }

    /// Writes `track`'s descriptor unless this sequence already did (since
    /// the last clear); events may then name `track.uuid`.
    pub fn define_track(&mut self, ts: u64, track: &TrackSpec) {
        self.start_sequence(ts);
        if self.defined.contains(&track.uuid) {
            return;
        }
        self.defined.push(track.uuid);
        self.writer.packet(|p| {
            p.set_timestamp(ts);
            write_descriptor(p, track);
        });
    }

    /// The thread this sequence writes for (its track is where events
    /// without a track go).
    pub fn thread_track(&self) -> ThreadTrack {
        self.thread
    }

    /// The underlying writer (flush it before a data source stops).
    pub fn writer(&mut self) -> &mut TraceWriter {
        &mut self.writer
    }

    /// Emits the thread track descriptor after a clear.
    fn start_sequence(&mut self, ts: u64) {
        if !self.cleared {
            return;
        }
        self.cleared = false;
        let (t, name) = (self.thread, self.thread_name.as_deref());
        let process = self.process;
        if let Some(p) = &process {
            self.defined.push(p.uuid);
            self.writer.packet(|pk| {
                pk.set_timestamp(ts);
                pk.set_sequence_flags(SEQ_INCREMENTAL_STATE_CLEARED);
                write_descriptor(pk, p);
            });
        }
        self.writer.packet(|p| {
            p.set_timestamp(ts);
            if process.is_none() {
                p.set_sequence_flags(SEQ_INCREMENTAL_STATE_CLEARED);
            }
            // Events without a track_uuid go on this thread's track.
            p.begin_trace_packet_defaults()
                .begin_track_event_defaults()
                .set_track_uuid(t.uuid);
            let mut d = p.begin_track_descriptor();
            d.set_uuid(t.uuid);
            if let Some(p) = &process {
                d.set_parent_uuid(p.uuid);
            }
            let mut th = d.begin_thread();
            th.set_pid(t.pid).set_tid(t.tid);
            if let Some(n) = name {
                th.set_thread_name(n);
            }
        });
    }

    /// One event: `fill` writes the TrackEvent fields beyond type, track,
    /// category and name.
    fn event(
        &mut self,
        ts: u64,
        head: Head,
        annotations: &[(&'static str, DebugValue<'_>)],
        fill: impl FnOnce(&mut TrackEvent<'_>),
    ) {
        let Head {
            kind,
            track,
            category,
            name,
            location,
        } = head;
        self.start_sequence(ts);
        // An end names no category: the slice it ends has one (Perfetto's
        // SDK writes it the same way), which saves a lookup and a field.
        let category = category.filter(|_| kind != EventKind::SliceEnd as i32);
        let cat = category.map(|c| self.interner.intern(InternKind::Category, c.name));
        let name = name.map(|n| self.interner.intern(InternKind::EventName, n));
        let location = location.map(|l| self.interner.intern_location(&l));
        let default_track = self.thread.uuid;
        // Annotation names are interned while the event is written; the
        // entries that were new go into the same packet's interned_data.
        let interner = &mut self.interner;
        self.writer.packet(|p: &mut TracePacket<'_>| {
            p.set_timestamp(ts);
            p.set_sequence_flags(SEQ_NEEDS_INCREMENTAL_STATE);
            {
                let mut e = p.begin_track_event();
                e.set_type_raw(kind);
                if track != default_track {
                    e.set_track_uuid(track);
                }
                if let Some(c) = cat {
                    e.add_category_iids(c);
                }
                if let Some(n) = name {
                    e.set_name_iid(n);
                }
                if let Some(l) = location {
                    e.set_source_location_iid(l);
                }
                for (n, v) in annotations {
                    let iid = interner.intern(InternKind::AnnotationName, n);
                    let mut a = e.add_debug_annotations();
                    a.set_name_iid(iid);
                    write_value(&mut a, v);
                }
                fill(&mut e);
            }
            if interner.has_fresh() {
                let mut d = p.begin_interned_data();
                for f in interner.drain_fresh() {
                    match f {
                        Fresh::Name(InternKind::Category, iid, s) => {
                            d.add_event_categories().set_iid(iid).set_name(s);
                        }
                        Fresh::Name(InternKind::EventName, iid, s) => {
                            d.add_event_names().set_iid(iid).set_name(s);
                        }
                        Fresh::Name(InternKind::AnnotationName, iid, s) => {
                            d.add_debug_annotation_names().set_iid(iid).set_name(s);
                        }
                        Fresh::Name(InternKind::SourceLocation, ..) => {}
                        Fresh::Location(iid, l) => {
                            d.add_source_locations()
                                .set_iid(iid)
                                .set_file_name(l.file)
                                .set_function_name(l.function)
                                .set_line_number(l.line);
                        }
                    }
                }
            }
        });
    }

    /// Any event, with everything [`EventOptions`] can say: its track (a
    /// [`TrackSpec`] is described first if need be), flows and location;
    /// `extra` writes further TrackEvent fields through the generated
    /// writer. `ts` is used unless the options carry a timestamp.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn emit(
        &mut self,
        ts: u64,
        kind: EventKind,
        category: Option<&'static Category>,
        name: Option<&'static str>,
        opts: &EventOptions<'_>,
        annotations: &[(&'static str, DebugValue<'_>)],
        extra: impl FnOnce(&mut TrackEvent<'_>),
    ) {
        let ts = opts.timestamp.unwrap_or(ts);
        if let Some(t) = opts.track {
            self.define_track(ts, t);
        }
        let head = Head {
            kind: kind as i32,
            track: opts.target_track().unwrap_or(self.thread.uuid),
            category,
            name,
            location: opts.location,
        };
        let (flow, flows, terminating) = (opts.flow, opts.flows, opts.terminating_flow);
        self.event(ts, head, annotations, |e| {
            if let Some(f) = flow {
                e.add_flow_ids(f);
            }
            for f in flows {
                e.add_flow_ids(*f);
            }
            if let Some(f) = terminating {
                e.add_terminating_flow_ids(f);
            }
            extra(e);
        });
    }

    /// A slice begin or an instant on the thread track from a known trace
    /// point (`key`; `None`: a point without a slot), with annotations and
    /// `extra` fields (e.g. flows). Once the point has fired on this
    /// sequence, its type, category, name and location are one copy of
    /// bytes encoded then, and only the annotations' names are interned;
    /// the first time (and after a clear) it takes the general path, whose
    /// bytes are the same.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn site_event<A: Annotations + ?Sized>(
        &mut self,
        ts: u64,
        key: Option<SiteKey>,
        kind: EventKind,
        category: &'static Category,
        name: &'static str,
        location: impl FnOnce() -> Option<SourceLocation>,
        annotations: &A,
        extra: impl FnOnce(&mut TrackEvent<'_>),
    ) {
        let facts = SiteFacts {
            kind: kind as u8,
            category,
            name,
        };
        if !self.cleared
            && annotations.count() <= MAX_FAST_ANNOTATIONS
            && let Some(key) = key
            && let Some(prefix) = self.sites.get(key, &facts)
        {
            let mut iids = [0u64; MAX_FAST_ANNOTATIONS];
            for (iid, n) in iids.iter_mut().zip(annotations.names()) {
                *iid = self.interner.intern(InternKind::AnnotationName, n);
            }
            // A new annotation name needs interned_data: the general path.
            if !self.interner.has_fresh() {
                let mut handle = self.writer.new_trace_packet();
                let mut p = handle.root();
                p.append_uint64(8, ts);
                p.append_raw_bytes(&[13 << 3, SEQ_NEEDS_INCREMENTAL_STATE as u8]);
                let mut e = TrackEvent::from_message(p.begin_nested(11));
                e.message().append_raw_bytes(prefix.as_bytes());
                annotations.write(iids.get(..annotations.count()).unwrap_or(&[]), &mut e);
                extra(&mut e);
                return;
            }
        }
        annotations.with_slice(|annotations| {
            self.site_event_slow(ts, key, facts, location(), annotations, extra)
        });
    }

    /// [`Self::site_event`] with annotations only, nothing further (what
    /// the macros write): once the point has fired on this sequence and
    /// its annotations' names are interned, an event whose annotations are
    /// scalars is one small packet (`site_packet`), the same bytes the
    /// general path writes. When the annotations are named as in the event
    /// that cached the point (the macros' names are constants), their ids
    /// come with the point's prefix and nothing is interned.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn site_event_plain(
        &mut self,
        ts: u64,
        key: Option<SiteKey>,
        kind: EventKind,
        category: &'static Category,
        name: &'static str,
        location: impl FnOnce() -> Option<SourceLocation>,
        annotations: &[(&'static str, DebugValue<'_>)],
    ) {
        if !self.cleared
            && annotations.len() <= MAX_FAST_ANNOTATIONS
            && let Some(key) = key
            && let Some(entry) = self.sites.entry(
                key,
                &SiteFacts {
                    kind: kind as u8,
                    category,
                    name,
                },
            )
        {
            if annotations.is_empty() {
                if site_packet::put_bare(&mut self.writer, ts, entry) {
                    return;
                }
            } else if let Some(heads) = entry.heads_for(annotations.iter().map(|(n, _)| *n)) {
                if site_packet::put_with_heads(&mut self.writer, ts, entry, heads, annotations) {
                    return;
                }
            } else {
                let mut iids = [0u64; MAX_FAST_ANNOTATIONS];
                for (iid, (n, _)) in iids.iter_mut().zip(annotations) {
                    *iid = self.interner.intern(InternKind::AnnotationName, n);
                }
                let iids = iids.get(..annotations.len()).unwrap_or(&[]);
                // A new annotation name needs interned_data: the general path.
                if !self.interner.has_fresh()
                    && site_packet::put_with_iids(&mut self.writer, ts, entry, iids, annotations)
                {
                    return;
                }
            }
        }
        self.site_event(ts, key, kind, category, name, location, annotations, |_| {});
    }

    /// [`Self::site_event`] through the general path, then caching the
    /// point's prefix.
    #[inline(never)]
    fn site_event_slow(
        &mut self,
        ts: u64,
        key: Option<SiteKey>,
        facts: SiteFacts,
        location: Option<SourceLocation>,
        annotations: &[(&'static str, DebugValue<'_>)],
        extra: impl FnOnce(&mut TrackEvent<'_>),
    ) {
        let head = Head {
            kind: i32::from(facts.kind),
            track: self.thread.uuid,
            category: Some(facts.category),
            name: Some(facts.name),
            location,
        };
        self.event(ts, head, annotations, extra);
        if let Some(key) = key {
            // Hits now: the event above interned them.
            let cat = self
                .interner
                .intern(InternKind::Category, facts.category.name);
            let name = self.interner.intern(InternKind::EventName, facts.name);
            let loc = location.map(|l| self.interner.intern_location(&l));
            let mut args = [("", 0); SITE_ARGS];
            for (a, (n, _)) in args.iter_mut().zip(annotations) {
                *a = (*n, self.interner.intern(InternKind::AnnotationName, n));
            }
            let args = args.get(..annotations.len()).unwrap_or(&[]);
            self.sites.put(key, &facts, cat, name, loc, args);
        }
    }

    /// Ends the innermost open slice on `track` (the thread track if
    /// `None`): on the thread track after the sequence started, a packet
    /// whose bytes but the timestamp are always the same.
    #[inline]
    pub(crate) fn slice_end_fast(
        &mut self,
        ts: u64,
        category: &'static Category,
        track: Option<u64>,
    ) {
        if self.cleared || track.is_some_and(|t| t != self.thread.uuid) {
            return self.slice_end_on(ts, category, track);
        }
        // timestamp (8), sequence_flags (13), track_event (11) { type (9):
        // SLICE_END }.
        const TAIL: [u8; 6] = [
            13 << 3,
            SEQ_NEEDS_INCREMENTAL_STATE as u8,
            11 << 3 | 2,
            2,
            9 << 3,
            EventKind::SliceEnd as u8,
        ];
        if let Some(mut p) = self.writer.small_packet(1 + MAX_VARINT_LEN + TAIL.len()) {
            p.put([8 << 3]);
            p.put_varint(ts);
            p.put(TAIL);
            if p.commit() {
                return;
            }
        }
        let mut handle = self.writer.new_trace_packet();
        let mut p = handle.root();
        p.append_uint64(8, ts);
        p.append_raw_bytes(&TAIL);
    }

    /// [`Self::slice_end_fast`] whose end also carries `flow` in
    /// `flow_ids` (a flow that starts at the slice it ends, if a later
    /// event goes on with it).
    #[cfg(feature = "tracing")]
    #[inline]
    pub(crate) fn slice_end_fast_flow(
        &mut self,
        ts: u64,
        category: &'static Category,
        track: Option<u64>,
        flow: u64,
    ) {
        if self.cleared || track.is_some_and(|t| t != self.thread.uuid) {
            let opts = on_track(EventOptions::new().flow(flow), track);
            return self.emit(
                ts,
                EventKind::SliceEnd,
                Some(category),
                None,
                &opts,
                &[],
                |_| {},
            );
        }
        let mut handle = self.writer.new_trace_packet();
        let mut p = handle.root();
        p.append_uint64(8, ts);
        // sequence_flags (13), track_event (11) { type (9): SLICE_END,
        // flow_ids (47, fixed64) }.
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&[
            13 << 3,
            SEQ_NEEDS_INCREMENTAL_STATE as u8,
            11 << 3 | 2,
            12,
            9 << 3,
            EventKind::SliceEnd as u8,
            // 47 << 3 | 1 as a varint.
            0xf9,
            0x02,
        ]);
        b[8..].copy_from_slice(&flow.to_le_bytes());
        p.append_raw_bytes(&b);
    }

    /// Begins a slice on the thread track.
    pub fn slice_begin(
        &mut self,
        ts: u64,
        category: &'static Category,
        name: &'static str,
        annotations: &[(&'static str, DebugValue<'_>)],
    ) {
        let opts = EventOptions::new();
        self.emit(
            ts,
            EventKind::SliceBegin,
            Some(category),
            Some(name),
            &opts,
            annotations,
            |_| {},
        );
    }

    /// Begins a slice on `track` (the thread track if `None`), with flows
    /// (`flow_ids` continue or start a flow, `terminating_flow_ids` end one)
    /// and any further TrackEvent fields written by `extra` through the
    /// generated writer.
    #[allow(clippy::too_many_arguments)]
    pub fn slice_begin_with(
        &mut self,
        ts: u64,
        category: &'static Category,
        name: &'static str,
        track: Option<u64>,
        annotations: &[(&'static str, DebugValue<'_>)],
        flows: &[u64],
        terminating_flows: &[u64],
        extra: impl FnOnce(&mut TrackEvent<'_>),
    ) {
        let opts = on_track(EventOptions::new().flows(flows), track);
        self.emit(
            ts,
            EventKind::SliceBegin,
            Some(category),
            Some(name),
            &opts,
            annotations,
            |e| {
                for f in terminating_flows {
                    e.add_terminating_flow_ids(*f);
                }
                extra(e);
            },
        );
    }

    /// Ends the innermost open slice on `track` (the thread track if `None`).
    pub fn slice_end_on(&mut self, ts: u64, category: &'static Category, track: Option<u64>) {
        let opts = on_track(EventOptions::new(), track);
        self.emit(
            ts,
            EventKind::SliceEnd,
            Some(category),
            None,
            &opts,
            &[],
            |_| {},
        );
    }

    /// Ends the innermost open slice on the thread track.
    pub fn slice_end(&mut self, ts: u64, category: &'static Category) {
        self.slice_end_on(ts, category, None);
    }

    /// An instant on `track` (the thread track if `None`), with or without
    /// a name.
    pub fn instant_on(
        &mut self,
        ts: u64,
        category: &'static Category,
        name: Option<&'static str>,
        track: Option<u64>,
    ) {
        let opts = on_track(EventOptions::new(), track);
        self.emit(
            ts,
            EventKind::Instant,
            Some(category),
            name,
            &opts,
            &[],
            |_| {},
        );
    }

    /// An instant on `track` (the thread track if `None`).
    pub fn instant(
        &mut self,
        ts: u64,
        category: &'static Category,
        name: &'static str,
        track: Option<u64>,
        annotations: &[(&'static str, DebugValue<'_>)],
    ) {
        let opts = on_track(EventOptions::new(), track);
        self.emit(
            ts,
            EventKind::Instant,
            Some(category),
            Some(name),
            &opts,
            annotations,
            |_| {},
        );
    }

    /// An integer counter sample on counter track `track`.
    pub fn counter(&mut self, ts: u64, track: u64, value: i64) {
        let opts = EventOptions::new().track_uuid(track);
        self.emit(ts, EventKind::Counter, None, None, &opts, &[], |e| {
            e.set_counter_value(value);
        });
    }

    /// A floating-point counter sample on counter track `track`.
    pub fn counter_f64(&mut self, ts: u64, track: u64, value: f64) {
        let opts = EventOptions::new().track_uuid(track);
        self.emit(ts, EventKind::Counter, None, None, &opts, &[], |e| {
            e.set_double_counter_value(value);
        });
    }
}

#[cfg(test)]
mod tests;
