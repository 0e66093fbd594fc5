//! A `tracing-subscriber` Layer (feature `tracing`): `tracing` spans and
//! events recorded as Perfetto TrackEvents, so a program instrumented with
//! `tracing` shows in Perfetto's UI without other changes. What becomes
//! what is documented on [`PerfettoLayer`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tracing::span::{Attributes, Id};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use zerotrace_protos::protos::TrackEvent as TrackEventMsg;

use super::backend::{TrackEvent, flow_id};
use super::callsite::SiteKey;
use super::category::Category;
use super::event_writer::EventKind;
use super::interning::SourceLocation;
use super::layer_fields::{Fields, Owned};
use super::options::EventOptions;
use super::span_table::{Slot, SpanTable};
use super::tracks::TrackSpec;
use crate::platform::boottime_ns;

/// Fields named `counter.NAME` are counter samples.
const COUNTER_PREFIX: &str = "counter.";

/// Whether a `counter.NAME` field's value is a counter sample: an integer
/// that `counter_value` (an int64) holds exactly, a float or a bool. Text,
/// and an unsigned value above `i64::MAX` (which would wrap, and which a
/// double would round), stay a debug annotation named `counter.NAME`,
/// exact.
fn is_sample(v: &Owned) -> bool {
    match *v {
        Owned::Int(_) | Owned::Double(_) | Owned::Bool(_) => true,
        Owned::Uint(x) => i64::try_from(x).is_ok(),
        Owned::Str(..) => false,
    }
}

/// A stable uuid for the counter track named `name` in this process.
fn counter_uuid(name: &str) -> u64 {
    // FNV-1a over the name, mixed with the pid so processes do not collide.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ std::process::id() as u64;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h | 1 << 62
}

/// One slice of a span that is open now.
#[derive(Debug, Clone, Copy)]
struct OpenSlice {
    /// The thread that began it ([`thread_key`]), which alone ends it; 0
    /// for a slice on the span's own async track, which its close ends.
    thread: u64,
    /// The track it is on.
    track: u64,
    /// When it began.
    begin: u64,
    /// How many fields the span had then (the end carries those recorded
    /// since).
    fields: usize,
}

/// A flow waiting for a span's next slice event.
#[derive(Debug, Clone, Copy)]
struct Flow {
    id: u64,
    /// It ends there (`terminating_flow_ids`), else it starts or continues
    /// there (`flow_ids`).
    ends: bool,
}

/// Writes `flows` into a slice event.
#[inline]
fn write_flows(e: &mut TrackEventMsg<'_>, flows: &[Flow]) {
    if flows.is_empty() {
        return;
    }
    write_flows_slow(e, flows);
}

/// [`write_flows`] when there are some (rare).
#[inline(never)]
fn write_flows_slow(e: &mut TrackEventMsg<'_>, flows: &[Flow]) {
    for f in flows {
        if f.ends {
            e.add_terminating_flow_ids(f.id);
        } else {
            e.add_flow_ids(f.id);
        }
    }
}

/// The last slice of a span that ended on a thread track.
#[derive(Debug, Default, Clone, Copy)]
struct Ended {
    /// Its track (0: none yet).
    track: u64,
    begin: u64,
    end: u64,
    /// The flow id its end carries (`flow_ids`), for a span that will
    /// follow from this one; 0 once one has (or if none).
    flow: u64,
}

/// What the layer keeps per span: its callsite, its fields, its slices
/// open now (one per thread that entered it, and per nested entry), the
/// last one that ended, and the flows waiting for its next slice event.
/// One slot of the layer's span table per span, its buffers kept for the
/// next span when it closes.
#[derive(Debug, Default)]
struct SpanState {
    /// The span's callsite (`None` only in the pool).
    meta: Option<&'static Metadata<'static>>,
    fields: Fields,
    open: Vec<OpenSlice>,
    /// The last slice that ended on a thread track.
    last: Ended,
    flows: Vec<Flow>,
}

thread_local! {
    /// Fields of the event being recorded.
    static SCRATCH: std::cell::RefCell<Fields> = const {
        std::cell::RefCell::new(Fields { values: Vec::new(), text: String::new() })
    };
    /// This thread's [`thread_key`] (0 until it takes one).
    static THREAD_KEY: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// This thread's block of flow ids for slice ends: the next one and
    /// how many are left.
    static END_FLOWS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// How many flow ids a thread takes at once for its slice ends.
const END_FLOW_BLOCK: u64 = 4096;

/// A fresh flow id for the end of a slice on this thread (0 if the thread
/// is going away): one atomic per [`END_FLOW_BLOCK`] ends, not per end.
#[inline]
fn end_flow_id() -> u64 {
    END_FLOWS
        .try_with(|c| {
            let (mut next, mut left) = c.get();
            if left == 0 {
                // Consecutive numbers below 2^40 are consecutive ids.
                next = flow_id(TrackEvent::reserve_flow_ids(END_FLOW_BLOCK));
                left = END_FLOW_BLOCK;
            }
            c.set((next + 1, left - 1));
            next
        })
        .unwrap_or(0)
}

/// A number for the calling thread, never 0 and never another thread's:
/// which slices of a span this thread began (and so ends).
fn thread_key() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    THREAD_KEY
        .try_with(|k| {
            if k.get() == 0 {
                k.set(NEXT.fetch_add(1, Ordering::Relaxed));
            }
            k.get()
        })
        .unwrap_or(u64::MAX)
}

impl Slot for SpanState {
    fn clear(&mut self) {
        self.meta = None;
        self.fields.clear();
        self.open.clear();
        self.last = Ended::default();
        self.flows.clear();
    }
}

/// The source location of a callsite, when its metadata has one.
fn location(meta: &'static Metadata<'static>) -> Option<SourceLocation> {
    Some(SourceLocation::new(
        meta.file()?,
        meta.module_path().unwrap_or(""),
        meta.line()?,
    ))
}

/// The Layer: what a `tracing` program does, as TrackEvents.
///
/// - **Spans** become slices named after the span, on the track of the
///   thread that enters them, from enter to exit: a span entered on two
///   threads gives one slice on each thread's track, and each entry one
///   slice. With [`PerfettoLayer::with_async_tracks`], instead, each span
///   instance gets a track of its own holding one slice from its creation
///   to its close. A span's fields are the debug annotations of its
///   slices' begins; one that `Span::record` sets while a slice is open
///   annotates that slice's end (Perfetto adds it to the slice), and the
///   begins of later slices. Its callsite is the source location.
/// - **Thread tracks** are named after their thread (its Rust name, else the
///   kernel's), and hang under the process track, named after the process.
/// - **Events** become instants on the thread track, inside the slice of
///   the span they happen in, with their fields (the message included) as
///   debug annotations; `log` records arrive the same way through
///   `tracing-log`'s `LogTracer`.
/// - **`counter.NAME` fields** with an integer, float or bool value are
///   samples of the counter track NAME (a bool counts 0 or 1); an event
///   that carries only such fields (and perhaps a message) makes no
///   instant. A `counter.NAME` field with any other value (text, `Debug`,
///   or an unsigned integer above `i64::MAX`, which Perfetto's int64
///   `counter_value` cannot hold and a double would round) is not a
///   sample: it stays a debug annotation, named `counter.NAME`, of the
///   event's instant, its value exact.
/// - **`follows_from`** is a flow from the cause's slice to the span's,
///   ending (`terminating_flow_ids`) at the span's next slice event: the
///   end of its open slice, else its next begin. Where it starts: a cause
///   whose slice is open starts it at an instant named after the span,
///   inside that slice (the one open on this thread, else on another
///   thread). A cause whose slice is over (a request that has returned,
///   its task following from it later) starts it at that slice's end:
///   every slice end on a thread track carries a flow id of its own
///   (`flow_ids`), which Perfetto's importer binds to the slice the end
///   closes, and the first span to follow from it ends that flow; a
///   second follower of the same slice gets an instant inside it instead,
///   at a time it was open. A cause that has had no slice yet carries the
///   flow (`flow_ids`) on its first one, and the two ends are then joined
///   in the order they happen. After a span closes, `tracing` may reuse
///   its id, so a closed cause gets no mark.
///
/// Everything goes under one category, so a session turns the layer on or
/// off like any other category.
///
/// What it knows of open spans lives in the layer value itself (span ids
/// are per subscriber): give each subscriber a layer of its own.
#[derive(Debug)]
pub struct PerfettoLayer {
    category: &'static Category,
    async_tracks: bool,
    spans: Arc<SpanTable<SpanState>>,
}

/// A callsite's slot in the writers' tables of known points.
#[inline]
fn site_key(meta: &'static Metadata<'static>) -> Option<SiteKey> {
    Some(SiteKey::Metadata(meta as *const Metadata<'static> as usize))
}

impl PerfettoLayer {
    /// Records spans and events under `category` (register it with
    /// [`TrackEvent::register`] or an in-process session).
    pub fn new(category: &'static Category) -> PerfettoLayer {
        PerfettoLayer {
            category,
            async_tracks: false,
            spans: Arc::new(SpanTable::default()),
        }
    }

    /// Gives every span instance a track of its own (under the process
    /// track) holding one slice from its creation to its close: for spans
    /// that move between threads or are entered many times (async tasks).
    pub fn with_async_tracks(mut self) -> PerfettoLayer {
        self.async_tracks = true;
        self
    }

    /// Begins a slice of span `id`: on its own track `track` (created
    /// here), else on the calling thread's track.
    fn begin(&self, id: &Id, track: Option<u64>) {
        self.spans
            .with(id.into_u64(), |state| self.begin_in(state, track));
    }

    /// [`Self::begin`] on the span's state.
    fn begin_in(&self, state: &mut SpanState, track: Option<u64>) {
        let cat = self.category;
        let Some(meta) = state.meta else {
            return;
        };
        let recorded = state.fields.values.len();
        let (fields, flows) = (&state.fields, &state.flows);
        let mut opened = None;
        TrackEvent::with_writer(cat, |w| {
            let ts = boottime_ns();
            let name = meta.name();
            if let Some(t) = track {
                let parent = Some(TrackEvent::process_track().uuid);
                w.define_track(ts, &TrackSpec::named(t, name, parent));
                let mut opts = EventOptions::new().track_uuid(t);
                if let Some(loc) = location(meta) {
                    opts = opts.location(loc);
                }
                fields.with_annotations(|fields| {
                    w.emit(
                        ts,
                        EventKind::SliceBegin,
                        Some(cat),
                        Some(name),
                        &opts,
                        fields,
                        |e| write_flows(e, flows),
                    );
                });
                opened = Some(OpenSlice {
                    thread: 0,
                    track: t,
                    begin: ts,
                    fields: recorded,
                });
            } else {
                // The span's fields are written from where they are kept.
                w.site_event(
                    ts,
                    site_key(meta),
                    EventKind::SliceBegin,
                    cat,
                    name,
                    || location(meta),
                    fields,
                    |e| write_flows(e, flows),
                );
                opened = Some(OpenSlice {
                    thread: thread_key(),
                    track: w.thread_track().uuid,
                    begin: ts,
                    fields: recorded,
                });
            }
        });
        if let Some(o) = opened {
            state.flows.clear();
            state.open.push(o);
        }
    }

    /// Ends the slice of span `id` this thread began last (`on_thread`),
    /// or its slice on its own track.
    fn end(&self, id: &Id, on_thread: bool) {
        self.spans
            .with(id.into_u64(), |state| self.end_in(state, on_thread));
    }

    /// [`Self::end`] on the span's state.
    #[inline]
    fn end_in(&self, state: &mut SpanState, on_thread: bool) {
        let cat = self.category;
        {
            // Only a slice this layer began is ended (the category may have
            // been switched on while the span was entered), and only by the
            // thread that began it (a span entered on two threads has a
            // slice on each).
            let key = if on_thread { thread_key() } else { 0 };
            let Some(pos) = state.open.iter().rposition(|o| o.thread == key) else {
                return;
            };
            // Usually the last one (no memmove then).
            let slice = if pos + 1 == state.open.len() {
                state.open.pop()
            } else {
                Some(state.open.remove(pos))
            };
            let Some(slice) = slice else {
                return;
            };
            let flows = &state.flows;
            let mut ended = None;
            // A slice on a thread track ends with a flow id of its own: a
            // span that follows from this one after the slice ended (a
            // task spawned by a request that has returned) ends that flow,
            // and Perfetto's importer binds an end's `flow_ids` to the
            // slice it ends. (A span's own track ends at its close, after
            // which nothing can follow from it.)
            let end_flow = if on_thread { end_flow_id() } else { 0 };
            if slice.fields == state.fields.values.len() && flows.is_empty() {
                // The usual end: nothing recorded while open, no other flow.
                TrackEvent::with_writer(cat, |w| {
                    let ts = boottime_ns();
                    if end_flow != 0 {
                        w.slice_end_fast_flow(ts, cat, Some(slice.track), end_flow);
                    } else {
                        w.slice_end_fast(ts, cat, Some(slice.track));
                    }
                    ended = Some(ts);
                });
            } else {
                let opts = EventOptions::new().track_uuid(slice.track);
                // Fields recorded while the slice was open annotate its end
                // (the importer adds an end's annotations to its slice).
                state.fields.with_annotations_from(slice.fields, |fields| {
                    TrackEvent::with_writer(cat, |w| {
                        let ts = boottime_ns();
                        w.emit(
                            ts,
                            EventKind::SliceEnd,
                            Some(cat),
                            None,
                            &opts,
                            fields,
                            |e| {
                                write_flows(e, flows);
                                if end_flow != 0 {
                                    e.add_flow_ids(end_flow);
                                }
                            },
                        );
                        ended = Some(ts);
                    });
                });
            }
            if let Some(ts) = ended {
                state.flows.clear();
                if on_thread {
                    state.last = Ended {
                        track: slice.track,
                        begin: slice.begin,
                        end: ts,
                        flow: end_flow,
                    };
                }
            }
        }
    }

    /// Marks the start of a flow in `cause`'s slice and returns its id,
    /// which the follower's next slice event terminates: an instant named
    /// `name` now, carrying `flow`, inside a slice of it that is open (the
    /// one this thread began, else any); else the flow id that the end of
    /// its last slice already carries; else (that id taken by an earlier
    /// follower) an instant carrying `flow` inside that slice, at a time
    /// it was open. Returns `None`, and leaves `flow` to the cause's next
    /// slice event, when it has no slice to mark.
    fn mark_cause(&self, cause: &Id, flow: u64, name: &'static str) -> Option<u64> {
        self.spans
            .with(cause.into_u64(), |state| self.mark_in(state, flow, name))
            .flatten()
    }

    /// [`Self::mark_cause`] on the cause's state.
    fn mark_in(&self, state: &mut SpanState, flow: u64, name: &'static str) -> Option<u64> {
        let cat = self.category;
        let key = thread_key();
        let open = state.open.iter().rev();
        let last = state.last;
        if state.open.is_empty() && last.flow != 0 {
            // The usual case: a span created while its cause runs, or
            // later, that follows from it once the cause's slice is over.
            // Its end carries the flow already; one follower ends it.
            state.last.flow = 0;
            return Some(last.flow);
        }
        let target = open
            .clone()
            .find(|o| o.thread == key)
            .or_else(|| state.open.last())
            .map(|o| (o.track, None))
            .or_else(|| {
                // Strictly inside the ended slice, so the instant nests in
                // it. A reader that sorts a streamed trace in windows may
                // have passed that time already: only a second follower of
                // one slice comes here.
                (last.track != 0 && last.end.saturating_sub(last.begin) >= 2)
                    .then(|| (last.track, Some(last.begin + (last.end - last.begin) / 2)))
            });
        let Some((track, at)) = target else {
            state.flows.push(Flow {
                id: flow,
                ends: false,
            });
            return None;
        };
        let mut marked = false;
        TrackEvent::with_writer(cat, |w| {
            let ts = at.unwrap_or_else(boottime_ns);
            let opts = EventOptions::new().track_uuid(track).flow(flow);
            w.emit(
                ts,
                EventKind::Instant,
                Some(cat),
                Some(name),
                &opts,
                &[],
                |_| {},
            );
            marked = true;
        });
        if !marked {
            state.flows.push(Flow {
                id: flow,
                ends: false,
            });
            return None;
        }
        Some(flow)
    }
}

impl<S> Layer<S> for PerfettoLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        if !self.category.is_enabled() {
            return;
        }
        let meta = attrs.metadata();
        let track = self
            .async_tracks
            .then(|| TrackEvent::new_flow_id() | 1 << 62);
        // The fields' `Debug` may trace: they are recorded into this
        // thread's scratch before the table is locked, then moved in.
        let recorded = SCRATCH.try_with(|s| {
            let Ok(mut scratch) = s.try_borrow_mut() else {
                return false;
            };
            attrs.record(&mut *scratch);
            self.start(id, meta, track, &mut scratch);
            scratch.clear();
            true
        });
        if recorded != Ok(true) {
            self.start_unscratched(attrs, id, meta, track);
        }
    }

    fn on_record(&self, id: &Id, values: &tracing::span::Record<'_>, _ctx: Context<'_, S>) {
        // Recorded outside the table's lock (a field's `Debug` may trace),
        // then appended.
        let recorded = SCRATCH.try_with(|s| {
            let Ok(mut scratch) = s.try_borrow_mut() else {
                return false;
            };
            values.record(&mut *scratch);
            self.spans
                .with(id.into_u64(), |state| state.fields.append(&scratch));
            scratch.clear();
            true
        });
        if recorded != Ok(true) {
            let mut fields = Fields::default();
            values.record(&mut fields);
            self.spans
                .with(id.into_u64(), |state| state.fields.append(&fields));
        }
    }

    fn on_follows_from(&self, id: &Id, follows: &Id, _ctx: Context<'_, S>) {
        if !self.category.is_enabled() || id == follows {
            return;
        }
        // Both ends carry the flow while both spans are open. It leaves
        // the cause's slice now (an instant inside it) and ends at the
        // span's next slice event: its end if a slice of it is open, else
        // its next begin. A cause with no slice yet leaves it to the
        // cause's next slice event; then neither end terminates it, so it
        // joins the two in the order they happen. One span's entry is
        // locked at a time (two may share a shard).
        let Some(name) = self
            .spans
            .with(id.into_u64(), |s| s.meta.map(|m| m.name()))
            .flatten()
        else {
            return;
        };
        let flow = TrackEvent::new_flow_id();
        let marked = self.mark_cause(follows, flow, name);
        self.spans.with(id.into_u64(), |state| {
            state.flows.push(Flow {
                id: marked.unwrap_or(flow),
                ends: marked.is_some(),
            });
        });
    }

    fn on_enter(&self, id: &Id, _ctx: Context<'_, S>) {
        if self.async_tracks || !self.category.is_enabled() {
            return;
        }
        self.begin(id, None);
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        if self.async_tracks {
            return;
        }
        self.end(id, true);
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        let async_tracks = self.async_tracks;
        self.spans.remove_with(id.into_u64(), |state| {
            if async_tracks {
                self.end_in(state, false);
            }
        });
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let cat = self.category;
        if !cat.is_enabled() {
            return;
        }
        // This thread's scratch fields, so an event allocates nothing in
        // steady state either (fresh ones if an event is recorded while
        // another is: a field's `Debug` may log).
        let recorded = SCRATCH.try_with(|s| {
            let Ok(mut fields) = s.try_borrow_mut() else {
                return false;
            };
            self.event(event, &mut fields);
            fields.clear();
            true
        });
        if recorded != Ok(true) {
            self.event(event, &mut Fields::default());
        }
    }
}

impl PerfettoLayer {
    /// Gives span `id` its slot, `fields` (recorded) moved in, and begins
    /// its slice on its own track `track` if it has one. Inlined in both
    /// callers: a span's creation is on the hot path.
    #[inline(always)]
    fn start(
        &self,
        id: &Id,
        meta: &'static Metadata<'static>,
        track: Option<u64>,
        fields: &mut Fields,
    ) {
        // An id is only reused after its span closed; a leftover (a close
        // this layer did not see) is emptied first.
        self.spans.insert_with(id.into_u64(), |state| {
            state.meta = Some(meta);
            // The recorded fields move in; the slot's empty buffers go
            // back to the caller's.
            std::mem::swap(&mut state.fields, fields);
            if track.is_some() {
                self.begin_in(state, track);
            }
        });
    }

    /// [`Self::start`] with fields of its own: this thread's scratch is in
    /// use (a field's `Debug` created a span) or gone (thread exit).
    #[cold]
    #[inline(never)]
    fn start_unscratched(
        &self,
        attrs: &Attributes<'_>,
        id: &Id,
        meta: &'static Metadata<'static>,
        track: Option<u64>,
    ) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        self.start(id, meta, track, &mut fields);
    }

    /// Writes `event`, its fields recorded into `fields` (empty).
    fn event(&self, event: &Event<'_>, fields: &mut Fields) {
        let cat = self.category;
        event.record(fields);
        let meta = event.metadata();
        // `counter.NAME = value` fields with a numeric (or bool) value are
        // samples of counter track NAME; the other fields, a `counter.`
        // field with a text value included, annotate an instant.
        let is_counter = |k: &str, v: &Owned| k.starts_with(COUNTER_PREFIX) && is_sample(v);
        let counters = fields
            .values
            .iter()
            .filter(|(k, v)| is_counter(k, v))
            .count();
        TrackEvent::with_writer(cat, |w| {
            let ts = boottime_ns();
            for (k, v) in fields.values.iter().filter(|(k, v)| is_counter(k, v)) {
                let track_name = &k[COUNTER_PREFIX.len()..];
                let track = TrackSpec::counter(counter_uuid(track_name), track_name, None, 0, "");
                w.define_track(ts, &track);
                match *v {
                    Owned::Int(x) => w.counter(ts, track.uuid, x),
                    // `is_sample` kept only those that fit.
                    Owned::Uint(x) => {
                        w.counter(ts, track.uuid, i64::try_from(x).unwrap_or(i64::MAX))
                    }
                    Owned::Double(x) => w.counter_f64(ts, track.uuid, x),
                    Owned::Bool(x) => w.counter(ts, track.uuid, x as i64),
                    Owned::Str(..) => {}
                }
            }
            // An event that only carries counters is not an instant too.
            let others = fields.values.iter().filter(|(k, v)| !is_counter(k, v));
            if counters == 0 || others.clone().any(|(k, _)| *k != "message") {
                fields.with_annotations_where(
                    0,
                    |k, v| !is_counter(k, v),
                    |annotations| {
                        w.site_event(
                            ts,
                            site_key(meta),
                            EventKind::Instant,
                            cat,
                            meta.name(),
                            || location(meta),
                            annotations,
                            |_| {},
                        );
                    },
                );
            }
        });
    }
}
