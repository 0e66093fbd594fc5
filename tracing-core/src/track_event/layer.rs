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

/// A field's value, kept until the span is entered.
#[derive(Debug, Clone)]
enum Owned {
    Int(i64),
    Uint(u64),
    Double(f64),
    Bool(bool),
    Str(String),
}

impl Owned {
    fn as_debug(&self) -> DebugValue<'_> {
        match self {
            Owned::Int(v) => DebugValue::Int(*v),
            Owned::Uint(v) => DebugValue::Uint(*v),
            Owned::Double(v) => DebugValue::Double(*v),
            Owned::Bool(v) => DebugValue::Bool(*v),
            Owned::Str(v) => DebugValue::Str(v),
        }
    }
}

/// Fields of a span or event.
#[derive(Debug, Default, Clone)]
struct Fields(Vec<(&'static str, Owned)>);

impl Visit for Fields {
    fn record_i64(&mut self, f: &Field, v: i64) {
        self.0.push((f.name(), Owned::Int(v)));
    }
    fn record_u64(&mut self, f: &Field, v: u64) {
        self.0.push((f.name(), Owned::Uint(v)));
    }
    fn record_f64(&mut self, f: &Field, v: f64) {
        self.0.push((f.name(), Owned::Double(v)));
    }
    fn record_bool(&mut self, f: &Field, v: bool) {
        self.0.push((f.name(), Owned::Bool(v)));
    }
    fn record_str(&mut self, f: &Field, v: &str) {
        self.0.push((f.name(), Owned::Str(v.to_owned())));
    }
    fn record_debug(&mut self, f: &Field, v: &dyn fmt::Debug) {
        self.0.push((f.name(), Owned::Str(format!("{v:?}"))));
    }
}

impl Fields {
    fn annotations(&self) -> Vec<(&'static str, DebugValue<'_>)> {
        self.0.iter().map(|(k, v)| (*k, v.as_debug())).collect()
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

/// Marks a span whose slice this layer began (and on which track).
#[derive(Debug, Clone, Copy)]
struct Begun(Option<u64>);

/// Flows a span takes part in, written with its next slice event:
/// `outgoing` start at it, `incoming` arrive at it.
#[derive(Debug, Default)]
struct Flows {
    outgoing: Vec<u64>,
    incoming: Vec<u64>,
}

impl Flows {
    /// Takes every pending flow id (outgoing first).
    fn take(&mut self) -> Vec<u64> {
        let mut all = std::mem::take(&mut self.outgoing);
        all.append(&mut self.incoming);
        all
    }
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
        let flows = ext.get_mut::<Flows>().map(Flows::take).unwrap_or_default();
        let owned = ext.get_mut::<Fields>().map(std::mem::take);
        let fields = owned.as_ref().map(Fields::annotations).unwrap_or_default();
        let mut opts = EventOptions::new().flows(&flows);
        if let Some(loc) = location(meta) {
            opts = opts.location(loc);
        }
        if let Some(t) = track {
            opts = opts.track_uuid(t);
        }
        let mut begun = false;
        TrackEvent::with_writer(cat, |w| {
            if let Some(t) = track {
                let spec = TrackSpec::named(t, meta.name(), Some(TrackEvent::process_track().uuid));
                w.define_track(boottime_ns(), &spec);
            }
            let ts = boottime_ns();
            w.emit(
                ts,
                EventKind::SliceBegin,
                Some(cat),
                Some(meta.name()),
                &opts,
                &fields,
                |_| {},
            );
            begun = true;
        });
        drop(fields);
        if let Some(owned) = owned {
            ext.replace(owned);
        }
        if begun {
            ext.replace(Begun(track));
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
        let Some(Begun(track)) = ext.remove::<Begun>() else {
            return;
        };
        let flows = ext.get_mut::<Flows>().map(Flows::take).unwrap_or_default();
        let mut opts = EventOptions::new().flows(&flows);
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
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let Some(span) = ctx.span(id) else { return };
        span.extensions_mut().insert(fields);
        if self.async_tracks {
            let track = TrackEvent::new_flow_id() | 1 << 62;
            self.begin(&span, Some(track));
        }
    }

    fn on_record(&self, id: &Id, values: &tracing::span::Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(fields);
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
        // end when it is open now) and arrives at the span's next begin.
        let flow = TrackEvent::new_flow_id();
        let mut ext = cause.extensions_mut();
        match ext.get_mut::<Flows>() {
            Some(f) => f.outgoing.push(flow),
            None => ext.insert(Flows {
                outgoing: vec![flow],
                incoming: Vec::new(),
            }),
        }
        drop(ext);
        let mut ext = span.extensions_mut();
        match ext.get_mut::<Flows>() {
            Some(f) => f.incoming.push(flow),
            None => ext.insert(Flows {
                outgoing: Vec::new(),
                incoming: vec![flow],
            }),
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
        if !self.async_tracks {
            return;
        }
        if let Some(span) = ctx.span(&id) {
            self.end(&span);
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let cat = self.category;
        if !cat.is_enabled() {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        // `counter.NAME = value` fields are samples of counter track NAME;
        // the other fields annotate an instant.
        let (counters, others): (Vec<_>, Vec<_>) = fields
            .0
            .into_iter()
            .partition(|(k, _)| k.starts_with(COUNTER_PREFIX));
        let meta = event.metadata();
        TrackEvent::with_writer(cat, |w| {
            let ts = boottime_ns();
            for (k, v) in &counters {
                let track_name = &k[COUNTER_PREFIX.len()..];
                let track = TrackSpec::counter(counter_uuid(track_name), track_name, None, 0, "");
                w.define_track(ts, &track);
                match v {
                    Owned::Int(x) => w.counter(ts, track.uuid, *x),
                    Owned::Uint(x) => w.counter(ts, track.uuid, *x as i64),
                    Owned::Double(x) => w.counter_f64(ts, track.uuid, *x),
                    Owned::Bool(x) => w.counter(ts, track.uuid, *x as i64),
                    Owned::Str(_) => {}
                }
            }
            // An event that only carries counters is not an instant too.
            if counters.is_empty() || others.iter().any(|(k, _)| *k != "message") {
                let annotations: Vec<_> = others.iter().map(|(k, v)| (*k, v.as_debug())).collect();
                let mut opts = EventOptions::new();
                if let Some(loc) = location(meta) {
                    opts = opts.location(loc);
                }
                let name = Some(meta.name());
                w.emit(
                    ts,
                    EventKind::Instant,
                    Some(cat),
                    name,
                    &opts,
                    &annotations,
                    |_| {},
                );
            }
        });
    }
}
