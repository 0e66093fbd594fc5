//! A `tracing-subscriber` Layer (feature `tracing`): spans become slices on
//! the thread track (from enter to exit), or with
//! [`PerfettoLayer::with_async_tracks`] one slice per span instance on a
//! track of its own (from creation to close); their fields are debug
//! annotations and their callsite the source location. Events become
//! instants with their fields (the message included), `counter.NAME`
//! fields samples of counter track NAME, and `follows_from` a flow.
//! Everything goes under one category, so a session turns the layer on or
//! off like any other category.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use super::backend::TrackEvent;
use super::category::Category;
use super::event_writer::{DebugValue, EventKind, EventOptions, TrackSpec};
use super::interning::SourceLocation;
use crate::os_env::boottime_ns;

/// A field's value, kept until the span is entered (strings live in the
/// owner's text buffer, as a range).
#[derive(Debug, Clone, Copy)]
enum Owned {
    Int(i64),
    Uint(u64),
    Double(f64),
    Bool(bool),
    Str(u32, u32),
}

/// Fields of a span or event: values, and one buffer for all their text
/// (so a span with string fields costs one allocation, reused via the pool).
#[derive(Debug, Default)]
struct Fields {
    values: Vec<(&'static str, Owned)>,
    text: String,
}

impl Fields {
    fn push_text(&mut self, f: &Field, write: impl FnOnce(&mut String)) {
        let start = self.text.len() as u32;
        write(&mut self.text);
        let end = self.text.len() as u32;
        self.values.push((f.name(), Owned::Str(start, end)));
    }

    fn value(&self, v: Owned) -> DebugValue<'_> {
        match v {
            Owned::Int(v) => DebugValue::Int(v),
            Owned::Uint(v) => DebugValue::Uint(v),
            Owned::Double(v) => DebugValue::Double(v),
            Owned::Bool(v) => DebugValue::Bool(v),
            Owned::Str(a, b) => {
                DebugValue::Str(self.text.get(a as usize..b as usize).unwrap_or(""))
            }
        }
    }

    fn clear(&mut self) {
        self.values.clear();
        self.text.clear();
    }

    /// Runs `f` with the fields as annotations, on the stack when few.
    fn with_annotations<R>(&self, f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R) -> R {
        self.with_annotations_where(|_| true, f)
    }

    /// [`Self::with_annotations`] for the fields whose name passes `keep`.
    fn with_annotations_where<R>(
        &self,
        keep: impl Fn(&str) -> bool,
        f: impl FnOnce(&[(&'static str, DebugValue<'_>)]) -> R,
    ) -> R {
        const ON_STACK: usize = 8;
        let kept = self.values.iter().filter(|(k, _)| keep(k));
        if kept.clone().count() <= ON_STACK {
            let mut buf = [("", DebugValue::Bool(false)); ON_STACK];
            let mut n = 0;
            for (k, v) in kept {
                buf[n] = (*k, self.value(*v));
                n += 1;
            }
            f(&buf[..n])
        } else {
            let all: Vec<_> = kept.map(|(k, v)| (*k, self.value(*v))).collect();
            f(&all)
        }
    }
}

impl Visit for Fields {
    fn record_i64(&mut self, f: &Field, v: i64) {
        self.values.push((f.name(), Owned::Int(v)));
    }
    fn record_u64(&mut self, f: &Field, v: u64) {
        self.values.push((f.name(), Owned::Uint(v)));
    }
    fn record_f64(&mut self, f: &Field, v: f64) {
        self.values.push((f.name(), Owned::Double(v)));
    }
    fn record_bool(&mut self, f: &Field, v: bool) {
        self.values.push((f.name(), Owned::Bool(v)));
    }
    fn record_str(&mut self, f: &Field, v: &str) {
        self.push_text(f, |t| t.push_str(v));
    }
    fn record_debug(&mut self, f: &Field, v: &dyn fmt::Debug) {
        use std::fmt::Write;
        self.push_text(f, |t| {
            let _ = write!(t, "{v:?}");
        });
    }
}

/// Fields named `counter.NAME` are counter samples.
const COUNTER_PREFIX: &str = "counter.";

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

/// What the layer keeps per span: its fields, whether its slice is open
/// (and on which track), and the flows waiting for its next slice event
/// (`outgoing` start at it, `incoming` arrive at it). One extension per
/// span, recycled through a per-thread pool.
#[derive(Debug, Default)]
struct SpanState {
    fields: Fields,
    /// `Some(track)` while this layer's slice is open (`None`: thread track).
    begun: Option<Option<u64>>,
    flows: Vec<u64>,
}

thread_local! {
    /// Span states of closed spans, kept for new ones.
    static POOL: std::cell::RefCell<Vec<SpanState>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Most span states a thread keeps for reuse.
const POOL_SIZE: usize = 64;

fn pooled_state() -> SpanState {
    POOL.try_with(|p| p.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_default()
}

fn recycle(mut state: SpanState) {
    state.fields.clear();
    state.begun = None;
    state.flows.clear();
    let _ = POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < POOL_SIZE {
            p.push(state);
        }
    });
}

/// The source location of a callsite, when its metadata has one.
fn location(meta: &'static tracing::Metadata<'static>) -> Option<SourceLocation> {
    Some(SourceLocation::new(
        meta.file()?,
        meta.module_path().unwrap_or(""),
        meta.line()?,
    ))
}

/// The Layer.
#[derive(Debug, Clone, Copy)]
pub struct PerfettoLayer {
    category: &'static Category,
    async_tracks: bool,
}

impl PerfettoLayer {
    /// Records spans and events under `category` (register it with
    /// [`TrackEvent::register`] or an in-process session).
    pub fn new(category: &'static Category) -> PerfettoLayer {
        PerfettoLayer {
            category,
            async_tracks: false,
        }
    }

    /// Gives every span instance a track of its own (under the process
    /// track) holding one slice from its creation to its close: for spans
    /// that move between threads or are entered many times (async tasks).
    pub fn with_async_tracks(mut self) -> PerfettoLayer {
        self.async_tracks = true;
        self
    }

    /// Begins `span`'s slice on `track` (the thread track if `None`).
    fn begin<S>(&self, span: &tracing_subscriber::registry::SpanRef<'_, S>, track: Option<u64>)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let cat = self.category;
        let meta = span.metadata();
        let mut ext = span.extensions_mut();
        let Some(state) = ext.get_mut::<SpanState>() else {
            return;
        };
        let mut opts = EventOptions::new().flows(&state.flows);
        if let Some(loc) = location(meta) {
            opts = opts.location(loc);
        }
        if let Some(t) = track {
            opts = opts.track_uuid(t);
        }
        let mut begun = false;
        state.fields.with_annotations(|fields| {
            TrackEvent::with_writer(cat, |w| {
                let ts = boottime_ns();
                if let Some(t) = track {
                    let parent = Some(TrackEvent::process_track().uuid);
                    w.define_track(ts, &TrackSpec::named(t, meta.name(), parent));
                }
                let name = Some(meta.name());
                w.emit(
                    ts,
                    EventKind::SliceBegin,
                    Some(cat),
                    name,
                    &opts,
                    fields,
                    |_| {},
                );
                begun = true;
            });
        });
        if begun {
            state.flows.clear();
            state.begun = Some(track);
        }
    }

    /// Ends `span`'s slice if this layer began it.
    fn end<S>(&self, span: &tracing_subscriber::registry::SpanRef<'_, S>)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let cat = self.category;
        let mut ext = span.extensions_mut();
        // Only a slice this layer began is ended (the category may have
        // been switched on while the span was entered).
        let Some(state) = ext.get_mut::<SpanState>() else {
            return;
        };
        let Some(track) = state.begun.take() else {
            return;
        };
        let mut opts = EventOptions::new().flows(&state.flows);
        if let Some(t) = track {
            opts = opts.track_uuid(t);
        }
        TrackEvent::with_writer(cat, |w| {
            w.emit(
                boottime_ns(),
                EventKind::SliceEnd,
                Some(cat),
                None,
                &opts,
                &[],
                |_| {},
            );
        });
        state.flows.clear();
    }
}

impl<S> Layer<S> for PerfettoLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !self.category.is_enabled() {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        let mut state = pooled_state();
        attrs.record(&mut state.fields);
        span.extensions_mut().insert(state);
        if self.async_tracks {
            let track = TrackEvent::new_flow_id() | 1 << 62;
            self.begin(&span, Some(track));
        }
    }

    fn on_record(&self, id: &Id, values: &tracing::span::Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(state) = span.extensions_mut().get_mut::<SpanState>()
        {
            values.record(&mut state.fields);
        }
    }

    fn on_follows_from(&self, id: &Id, follows: &Id, ctx: Context<'_, S>) {
        if !self.category.is_enabled() {
            return;
        }
        let (Some(span), Some(cause)) = (ctx.span(id), ctx.span(follows)) else {
            return;
        };
        // The flow leaves the cause's slice at its next slice event (its
        // end when it is open now) and arrives at the span's next one.
        let flow = TrackEvent::new_flow_id();
        for s in [&cause, &span] {
            if let Some(state) = s.extensions_mut().get_mut::<SpanState>() {
                state.flows.push(flow);
            }
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if self.async_tracks || !self.category.is_enabled() {
            return;
        }
        if let Some(span) = ctx.span(id) {
            self.begin(&span, None);
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        if self.async_tracks {
            return;
        }
        if let Some(span) = ctx.span(id) {
            self.end(&span);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        if self.async_tracks {
            self.end(&span);
        }
        if let Some(state) = span.extensions_mut().remove::<SpanState>() {
            recycle(state);
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let cat = self.category;
        if !cat.is_enabled() {
            return;
        }
        // A pooled state's buffers, so an event allocates nothing in
        // steady state either.
        let mut state = pooled_state();
        let fields = &mut state.fields;
        event.record(fields);
        let meta = event.metadata();
        // `counter.NAME = value` fields are samples of counter track NAME;
        // the other fields annotate an instant.
        let is_counter = |k: &str| k.starts_with(COUNTER_PREFIX);
        let counters = fields.values.iter().filter(|(k, _)| is_counter(k)).count();
        TrackEvent::with_writer(cat, |w| {
            let ts = boottime_ns();
            for (k, v) in fields.values.iter().filter(|(k, _)| is_counter(k)) {
                let track_name = &k[COUNTER_PREFIX.len()..];
                let track = TrackSpec::counter(counter_uuid(track_name), track_name, None, 0, "");
                w.define_track(ts, &track);
                match *v {
                    Owned::Int(x) => w.counter(ts, track.uuid, x),
                    Owned::Uint(x) => w.counter(ts, track.uuid, x as i64),
                    Owned::Double(x) => w.counter_f64(ts, track.uuid, x),
                    Owned::Bool(x) => w.counter(ts, track.uuid, x as i64),
                    Owned::Str(..) => {}
                }
            }
            // An event that only carries counters is not an instant too.
            let others = fields.values.iter().filter(|(k, _)| !is_counter(k));
            if counters == 0 || others.clone().any(|(k, _)| *k != "message") {
                let mut opts = EventOptions::new();
                if let Some(loc) = location(meta) {
                    opts = opts.location(loc);
                }
                let name = Some(meta.name());
                fields.with_annotations_where(
                    |k| !is_counter(k),
                    |annotations| {
                        w.emit(
                            ts,
                            EventKind::Instant,
                            Some(cat),
                            name,
                            &opts,
                            annotations,
                            |_| {},
                        );
                    },
                );
            }
        });
        recycle(state);
    }
}
