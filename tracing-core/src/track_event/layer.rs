//! A `tracing-subscriber` Layer (feature `tracing`): spans become slices on
//! the thread track (from enter to exit) with their fields as debug
//! annotations, and events become instants with theirs (the message
//! included). Everything goes under one category, so a session turns the
//! layer on or off like any other category.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use super::backend::TrackEvent;
use super::category::Category;
use super::event_writer::{DebugValue, TrackSpec};
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

/// Marks a span whose slice this layer began.
#[derive(Debug, Clone, Copy)]
struct Begun;

/// The Layer.
#[derive(Debug, Clone, Copy)]
pub struct PerfettoLayer {
    category: &'static Category,
}

impl PerfettoLayer {
    /// Records spans and events under `category` (register it with
    /// [`TrackEvent::register`] or an in-process session).
    pub fn new(category: &'static Category) -> PerfettoLayer {
        PerfettoLayer { category }
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
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let cat = self.category;
        if !cat.is_enabled() {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        let name = span.metadata().name();
        let ext = span.extensions();
        let fields = ext
            .get::<Fields>()
            .map(Fields::annotations)
            .unwrap_or_default();
        let mut begun = false;
        TrackEvent::with_writer(cat, |w| {
            w.slice_begin(boottime_ns(), cat, name, &fields);
            begun = true;
        });
        drop(ext);
        if begun {
            span.extensions_mut().replace(Begun);
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        let cat = self.category;
        // Only a slice this layer began is ended (the category may have
        // been switched on while the span was entered).
        let Some(span) = ctx.span(id) else { return };
        if span.extensions_mut().remove::<Begun>().is_some() {
            TrackEvent::with_writer(cat, |w| w.slice_end(boottime_ns(), cat));
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
        let name = event.metadata().name();
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
                w.instant(ts, cat, name, None, &annotations);
            }
        });
    }
}
