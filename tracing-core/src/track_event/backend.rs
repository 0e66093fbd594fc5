//! The TrackEvent data source on a [`ProducerClient`]: registers
//! `track_event` with the categories in its descriptor, turns categories on
//! and off as sessions start and stop (by each session's TrackEventConfig),
//! and gives every thread its own [`EventWriter`] in thread-local storage,
//! with no lock on the event path. As in Perfetto's SDK, a thread's writer
//! is flushed when the thread ends, when it next writes after its session
//! changed, or by [`TrackEvent::flush`] on that thread; what idle threads
//! hold in chunks they still write is salvaged by the service's scrape at
//! flush and stop (the producer enables scraping).

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use protozero::Decoder;

use super::callsite::{Callsite, SiteKey};
use super::category::{Category, CategoryFilter};
use super::debug_value::DebugValue;
use super::event_writer::{EventKind, EventWriter};
use super::options::EventOptions;
use super::tracks::{ThreadTrack, TrackSpec};
use crate::producer::{
    BufferExhaustedPolicy, DataSourceEvent, DataSourceSpec, ProducerClient, ProducerClientError,
};

/// Most sessions a category keeps a bit for.
const MAX_INSTANCES: u32 = 8;

/// One running `track_event` instance.
#[derive(Debug, Clone, Copy)]
struct Active {
    id: u64,
    bit: u32,
    target_buffer: u16,
    /// The config's `buffer_exhausted_policy` (else the producer's default).
    policy: BufferExhaustedPolicy,
}

struct Backend {
    producer: Arc<ProducerClient>,
    categories: &'static [&'static Category],
    active: Mutex<Vec<Active>>,
    /// Bumped whenever instances change: threads then rebuild their writer.
    generation: AtomicU64,
    /// Bumped when the service asks to clear incremental state.
    clears: AtomicU64,
}

static BACKEND: OnceLock<Backend> = OnceLock::new();

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A thread's writer, flushed and dropped when the thread ends.
struct ThreadSlot {
    generation: u64,
    clears: u64,
    writer: Option<EventWriter>,
    /// The thread's name, looked up once (`None` until then).
    name: Option<Option<Box<str>>>,
}

impl Drop for ThreadSlot {
    fn drop(&mut self) {
        // From here on, events of this thread (the flush below may cause
        // some) find no slot.
        let _ = SLOT_ADDR.try_with(|a| a.set(std::ptr::null()));
        if let Some(w) = self.writer.as_mut() {
            w.writer().flush(None);
        }
    }
}

thread_local! {
    static SLOT: RefCell<ThreadSlot> = const {
        RefCell::new(ThreadSlot { generation: u64::MAX, clears: 0, writer: None, name: None })
    };
    /// [`SLOT`]'s address, once this thread has reached it, until its
    /// value is dropped (null before and after). `SLOT` has a destructor,
    /// so each access to it asks whether it is registered and alive, out
    /// of line; this cell has none, so reading it is one load, inline.
    static SLOT_ADDR: Cell<*const RefCell<ThreadSlot>> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with this thread's slot; `None` once the thread's
/// thread-locals are being destroyed.
#[inline]
fn with_slot<R>(f: impl FnOnce(&RefCell<ThreadSlot>) -> R) -> Option<R> {
    let addr = SLOT_ADDR.try_with(Cell::get).unwrap_or(std::ptr::null());
    if addr.is_null() {
        return with_slot_first(f);
    }
    // SAFETY: a non-null address was stored by `with_slot_first` on this
    // thread from `SLOT.try_with`, so it is this thread's `SLOT`, which
    // stays in place while alive; `ThreadSlot`'s `Drop` nulls it before the
    // value goes, and the value is only dropped when the thread ends, not
    // while this call runs on it. Only shared references are made; the
    // `RefCell` checks mutable access.
    Some(f(unsafe { &*addr }))
}

/// [`with_slot`] the first time on this thread (or after its slot went):
/// through `SLOT` itself, noting its address.
#[cold]
#[inline(never)]
fn with_slot_first<R>(f: impl FnOnce(&RefCell<ThreadSlot>) -> R) -> Option<R> {
    SLOT.try_with(|slot| {
        let _ = SLOT_ADDR.try_with(|a| a.set(slot as *const RefCell<ThreadSlot>));
        f(slot)
    })
    .ok()
}

fn thread_track() -> ThreadTrack {
    let tid = crate::platform::current_thread_id();
    let pid = std::process::id() as i32;
    // Unique per process and thread (the high bit keeps it clear of small
    // uuids users pick for their own tracks).
    let uuid = 1 << 63 | (pid as u32 as u64) << 32 | tid as u32 as u64;
    ThreadTrack { uuid, pid, tid }
}

/// This process's name for its track, as Perfetto's SDK names it (see
/// [`names`](super::names)), looked up once.
fn process_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| super::names::current_process_name().unwrap_or_default())
}

/// The TrackEvent system backend.
#[derive(Debug, Clone, Copy)]
pub struct TrackEvent;

/// The numbers behind this process's flow ids ([`TrackEvent::new_flow_id`]).
static NEXT_FLOW: AtomicU64 = AtomicU64::new(1);

/// The flow id of number `n` (from [`NEXT_FLOW`]): mixed with the pid, so
/// unlikely to meet another process's.
pub(crate) fn flow_id(n: u64) -> u64 {
    (std::process::id() as u64) << 40 ^ n
}

impl TrackEvent {
    /// Registers the `track_event` data source with `categories` on
    /// `producer`. Call once per process.
    pub fn register(
        producer: Arc<ProducerClient>,
        categories: &'static [&'static Category],
    ) -> Result<(), ProducerClientError> {
        let backend = Backend {
            producer: producer.clone(),
            categories,
            active: Mutex::new(Vec::new()),
            generation: AtomicU64::new(0),
            clears: AtomicU64::new(0),
        };
        if BACKEND.set(backend).is_err() {
            return Err(ProducerClientError::Refused(
                "a second TrackEvent registration",
            ));
        }
        let mut w = protozero::HeapWriter::new();
        {
            let mut m = w.root();
            let mut d = m.begin_nested(6);
            for c in categories {
                let mut cat = d.begin_nested(1);
                cat.append_string(1, c.name);
                if !c.description.is_empty() {
                    cat.append_string(2, c.description);
                }
                for t in c.tags {
                    cat.append_string(3, t);
                }
            }
        }
        let spec = DataSourceSpec {
            name: "track_event".into(),
            will_notify_on_stop: true,
            handles_incremental_state_clear: true,
            no_flush: false,
            extra_descriptor: w.finish().unwrap_or_default(),
            ..Default::default()
        };
        producer.register_data_source(spec, on_event)
    }

    /// This process's track: described at the start of every thread's
    /// sequence, the parent of its thread tracks, and the parent to give
    /// process-scoped async tracks (`TrackSpec::named(uuid, name,
    /// Some(TrackEvent::process_track().uuid))`).
    pub fn process_track() -> TrackSpec {
        let pid = std::process::id() as i32;
        // Thread tracks are 1<<63 | pid<<32 | tid; no thread has tid 0.
        let uuid = 1 << 63 | (pid as u32 as u64) << 32;
        TrackSpec::process(uuid, "", pid, process_name())
    }

    /// A flow id no other call in this process returns (and, mixed with the
    /// pid, unlikely to meet another process's), for `flow` /
    /// `terminating_flow` options.
    pub fn new_flow_id() -> u64 {
        flow_id(NEXT_FLOW.fetch_add(1, Ordering::Relaxed))
    }

    /// `n` flow ids at once, as the numbers `first..first + n` that
    /// [`flow_id`] turns into ids no other call returns: a thread that
    /// needs many takes a block and hands them out without an atomic each.
    #[cfg(feature = "tracing")]
    pub(crate) fn reserve_flow_ids(n: u64) -> u64 {
        NEXT_FLOW.fetch_add(n, Ordering::Relaxed)
    }

    /// Flushes this thread's writer and sends what the producer has
    /// committed.
    pub fn flush() {
        SLOT.with(|slot| {
            if let Some(w) = slot.borrow_mut().writer.as_mut() {
                w.writer().flush(None);
            }
        });
        if let Some(b) = BACKEND.get() {
            b.producer.flush(None);
        }
    }

    /// Runs `f` with this thread's writer if `category` is on.
    #[inline]
    pub fn with_writer(category: &'static Category, f: impl FnOnce(&mut EventWriter)) {
        if !category.is_enabled() {
            return;
        }
        let Some(b) = BACKEND.get() else {
            return;
        };
        with_slot(|slot| {
            let mut slot = slot.borrow_mut();
            let slot = &mut *slot;
            let generation = b.generation.load(Ordering::Acquire);
            if slot.generation != generation {
                renew_writer(b, slot, generation);
            }
            let clears = b.clears.load(Ordering::Acquire);
            let ThreadSlot {
                clears: seen,
                writer,
                ..
            } = slot;
            if let Some(w) = writer {
                if *seen != clears {
                    *seen = clears;
                    w.clear_incremental_state();
                }
                f(w);
            }
        });
    }
}

/// The instances changed (`generation`): `slot`'s writer, if any, is
/// flushed and replaced by one for the first active instance. Out of line:
/// an event's path only checks the generation (and keeps a small frame).
#[cold]
#[inline(never)]
fn renew_writer(b: &Backend, slot: &mut ThreadSlot, generation: u64) {
    if let Some(mut old) = slot.writer.take() {
        old.writer().flush(None);
    }
    slot.generation = generation;
    let target = lock(&b.active).first().map(|a| (a.target_buffer, a.policy));
    if let Some((target, policy)) = target
        && let Ok(tw) = b.producer.create_trace_writer_with_policy(target, policy)
    {
        let thread = thread_track();
        // The thread's name is looked up once per thread, when it first
        // gets a writer.
        let name = slot
            .name
            .get_or_insert_with(|| super::names::current_thread_name(thread.tid).map(Box::from))
            .as_deref();
        let mut w = EventWriter::new(tw, thread, name);
        w.set_process_track(TrackEvent::process_track());
        slot.writer = Some(w);
    }
}

/// Sends what the producer has committed (threads' writers flush on their
/// own; the service scrapes what idle threads still hold).
fn flush_all(b: &Backend) {
    TrackEvent::flush();
    b.producer.flush(None);
}

/// The data source's commands.
fn on_event(e: &DataSourceEvent) {
    let Some(b) = BACKEND.get() else {
        return;
    };
    match e {
        DataSourceEvent::Start(i) => {
            let mut active = lock(&b.active);
            let used: u32 = active.iter().fold(0, |m, a| m | 1 << a.bit);
            let Some(bit) = (0..MAX_INSTANCES).find(|b| used & (1 << b) == 0) else {
                return;
            };
            let filter = CategoryFilter::from_config(track_event_config(&i.config));
            for c in b.categories {
                c.set_instance(bit, filter.is_enabled(c));
            }
            active.push(Active {
                id: i.id,
                bit,
                target_buffer: i.target_buffer,
                policy: b.producer.policy_for(&i.config),
            });
            b.generation.fetch_add(1, Ordering::AcqRel);
        }
        DataSourceEvent::Stop(i) => {
            {
                let mut active = lock(&b.active);
                if let Some(pos) = active.iter().position(|a| a.id == i.id) {
                    let a = active.remove(pos);
                    for c in b.categories {
                        c.set_instance(a.bit, false);
                    }
                }
            }
            flush_all(b);
            b.generation.fetch_add(1, Ordering::AcqRel);
        }
        DataSourceEvent::Flush(_) => flush_all(b),
        DataSourceEvent::ClearIncrementalState(_) => {
            // Each thread clears its own state before its next event.
            b.clears.fetch_add(1, Ordering::AcqRel);
        }
        DataSourceEvent::Setup(_) => {}
    }
}

/// The `track_event_config` (field 113) of a DataSourceConfig.
fn track_event_config(config: &[u8]) -> &[u8] {
    Decoder::new(config)
        .find_last(113)
        .and_then(|f| f.as_bytes().ok())
        .unwrap_or(&[])
}

/// Ends its slice when dropped (see [`trace_event!`](crate::trace_event)).
#[derive(Debug)]
pub struct SliceGuard {
    category: &'static Category,
    /// The track the slice is on (the thread track if `None`).
    track: Option<u64>,
    active: bool,
}

impl SliceGuard {
    /// Begins a slice now (or at the options' timestamp); it ends when the
    /// guard drops, on the same track.
    #[inline]
    pub fn begin(
        category: &'static Category,
        name: &'static str,
        opts: &EventOptions<'_>,
        args: &[(&'static str, DebugValue<'_>)],
    ) -> SliceGuard {
        let mut active = false;
        TrackEvent::with_writer(category, |w| {
            let ts = crate::platform::boottime_ns();
            w.emit(
                ts,
                EventKind::SliceBegin,
                Some(category),
                Some(name),
                opts,
                args,
                |_| {},
            );
            active = true;
        });
        SliceGuard {
            category,
            track: opts.target_track(),
            active,
        }
    }

    /// Begins a slice now from the trace point `site` (what
    /// [`trace_event!`](crate::trace_event) without options expands to):
    /// on the thread track, with the point's location.
    #[inline]
    pub fn begin_at(
        site: &'static Callsite,
        category: &'static Category,
        name: &'static str,
        args: &[(&'static str, DebugValue<'_>)],
    ) -> SliceGuard {
        let mut active = false;
        TrackEvent::with_writer(category, |w| {
            let ts = crate::platform::boottime_ns();
            w.site_event_plain(
                ts,
                site.index().map(SiteKey::Dense),
                EventKind::SliceBegin,
                category,
                name,
                || Some(site.location()),
                args,
            );
            active = true;
        });
        SliceGuard {
            category,
            track: None,
            active,
        }
    }

    /// A guard that ends nothing (the category was off).
    #[inline]
    pub fn disabled(category: &'static Category) -> SliceGuard {
        SliceGuard {
            category,
            track: None,
            active: false,
        }
    }
}

impl Drop for SliceGuard {
    #[inline]
    fn drop(&mut self) {
        if self.active {
            let (cat, track) = (self.category, self.track);
            TrackEvent::with_writer(cat, |w| {
                w.slice_end_fast(crate::platform::boottime_ns(), cat, track)
            });
        }
    }
}

/// Writes one event of `kind` if `category` is on (what the macros expand
/// to): now unless the options carry a timestamp.
#[inline]
pub fn emit_event(
    category: &'static Category,
    kind: EventKind,
    name: Option<&'static str>,
    opts: &EventOptions<'_>,
    args: &[(&'static str, DebugValue<'_>)],
) {
    TrackEvent::with_writer(category, |w| {
        let ts = crate::platform::boottime_ns();
        w.emit(ts, kind, Some(category), name, opts, args, |_| {});
    });
}

/// Writes one slice begin or instant from trace point `site`, on the
/// thread track, if `category` is on (what the macros without options
/// expand to).
#[inline]
pub fn emit_at_site(
    site: &'static Callsite,
    category: &'static Category,
    kind: EventKind,
    name: &'static str,
    args: &[(&'static str, DebugValue<'_>)],
) {
    TrackEvent::with_writer(category, |w| {
        let ts = crate::platform::boottime_ns();
        w.site_event_plain(
            ts,
            site.index().map(SiteKey::Dense),
            kind,
            category,
            name,
            || Some(site.location()),
            args,
        );
    });
}

/// Ends the innermost slice on the thread track if `category` is on (what
/// [`trace_end!`](crate::trace_end) without options expands to).
#[inline]
pub fn end_fast(category: &'static Category) {
    TrackEvent::with_writer(category, |w| {
        w.slice_end_fast(crate::platform::boottime_ns(), category, None)
    });
}

/// A scoped slice on the thread track, ended when the returned guard drops:
/// `let _g = trace_event!(CATEGORY, "name", "arg" => value, ...);`. Options
/// after a `;` set the track, flows or timestamp by [`EventOptions`]' method
/// names: `trace_event!(CAT, "load", "id" => 7; track = &ASYNC, flow = f)`.
/// The call site is recorded as the source location. Neither arguments nor
/// options are evaluated when the category is off.
#[macro_export]
macro_rules! trace_event {
    ($cat:expr, $name:expr $(, $k:expr => $v:expr)*; $($opt:ident = $oval:expr),+ $(,)?) => {
        if $cat.is_enabled() {
            $crate::track_event::SliceGuard::begin(
                &$cat,
                $name,
                &$crate::track_event::EventOptions::new()
                    .location($crate::source_location!())
                    $(.$opt($oval))+,
                &[$(($k, $crate::track_event::DebugValue::from($v))),*],
            )
        } else {
            $crate::track_event::SliceGuard::disabled(&$cat)
        }
    };
    ($cat:expr, $name:expr $(, $k:expr => $v:expr)*) => {
        if $cat.is_enabled() {
            static __ZT_SITE: $crate::track_event::__private::Callsite =
                $crate::track_event::__private::Callsite::new($crate::source_location!());
            $crate::track_event::SliceGuard::begin_at(
                &__ZT_SITE,
                &$cat,
                $name,
                &[$(($k, $crate::track_event::DebugValue::from($v))),*],
            )
        } else {
            $crate::track_event::SliceGuard::disabled(&$cat)
        }
    };
}

/// A counter sample on a counter track (a `static TrackSpec` made with
/// [`TrackSpec::counter`]): `trace_counter!(CATEGORY, TRACK, value)`; an
/// `f64` value is a double counter. Options as for [`trace_event!`](crate::trace_event).
#[macro_export]
macro_rules! trace_counter {
    ($cat:expr, $track:expr, $value:expr $(; $($opt:ident = $oval:expr),+ $(,)?)?) => {
        if $cat.is_enabled() {
            $crate::track_event::TrackEvent::with_writer(&$cat, |w| {
                let opts = $crate::track_event::EventOptions::new()
                    .track(&$track)
                    $($(.$opt($oval))+)?;
                $crate::track_event::CounterValue::write($value, w, &opts);
            });
        }
    };
}

/// Begins a slice (on the thread track unless a `track` option says
/// otherwise), ended by [`trace_end!`](crate::trace_end) with the same
/// track: for slices that do not fit a scope, and async slices.
#[macro_export]
macro_rules! trace_begin {
    ($cat:expr, $name:expr $(, $k:expr => $v:expr)*; $($opt:ident = $oval:expr),+ $(,)?) => {
        if $cat.is_enabled() {
            $crate::track_event::__private::emit_event(
                &$cat,
                $crate::track_event::EventKind::SliceBegin,
                Some($name),
                &$crate::track_event::EventOptions::new()
                    .location($crate::source_location!())
                    $(.$opt($oval))+,
                &[$(($k, $crate::track_event::DebugValue::from($v))),*],
            );
        }
    };
    ($cat:expr, $name:expr $(, $k:expr => $v:expr)*) => {
        if $cat.is_enabled() {
            static __ZT_SITE: $crate::track_event::__private::Callsite =
                $crate::track_event::__private::Callsite::new($crate::source_location!());
            $crate::track_event::__private::emit_at_site(
                &__ZT_SITE,
                &$cat,
                $crate::track_event::EventKind::SliceBegin,
                $name,
                &[$(($k, $crate::track_event::DebugValue::from($v))),*],
            );
        }
    };
}

/// Ends the innermost slice begun with [`trace_begin!`](crate::trace_begin)
/// on the thread track, or on the track an option names.
#[macro_export]
macro_rules! trace_end {
    ($cat:expr; $($opt:ident = $oval:expr),+ $(,)?) => {
        if $cat.is_enabled() {
            $crate::track_event::__private::emit_event(
                &$cat,
                $crate::track_event::EventKind::SliceEnd,
                None,
                &$crate::track_event::EventOptions::new() $(.$opt($oval))+,
                &[],
            );
        }
    };
    ($cat:expr) => {
        if $cat.is_enabled() {
            $crate::track_event::__private::end_fast(&$cat);
        }
    };
}

/// An instant event (on the thread track unless an option says otherwise),
/// e.g. the end of a flow: `trace_instant!(CAT, "done"; terminating_flow = f)`.
#[macro_export]
macro_rules! trace_instant {
    ($cat:expr, $name:expr $(, $k:expr => $v:expr)*; $($opt:ident = $oval:expr),+ $(,)?) => {
        if $cat.is_enabled() {
            $crate::track_event::__private::emit_event(
                &$cat,
                $crate::track_event::EventKind::Instant,
                Some($name),
                &$crate::track_event::EventOptions::new()
                    .location($crate::source_location!())
                    $(.$opt($oval))+,
                &[$(($k, $crate::track_event::DebugValue::from($v))),*],
            );
        }
    };
    ($cat:expr, $name:expr $(, $k:expr => $v:expr)*) => {
        if $cat.is_enabled() {
            static __ZT_SITE: $crate::track_event::__private::Callsite =
                $crate::track_event::__private::Callsite::new($crate::source_location!());
            $crate::track_event::__private::emit_at_site(
                &__ZT_SITE,
                &$cat,
                $crate::track_event::EventKind::Instant,
                $name,
                &[$(($k, $crate::track_event::DebugValue::from($v))),*],
            );
        }
    };
}

impl From<i64> for DebugValue<'_> {
    fn from(v: i64) -> Self {
        DebugValue::Int(v)
    }
}
impl From<i32> for DebugValue<'_> {
    fn from(v: i32) -> Self {
        DebugValue::Int(v as i64)
    }
}
impl From<u64> for DebugValue<'_> {
    fn from(v: u64) -> Self {
        DebugValue::Uint(v)
    }
}
impl From<f64> for DebugValue<'_> {
    fn from(v: f64) -> Self {
        DebugValue::Double(v)
    }
}
impl From<bool> for DebugValue<'_> {
    fn from(v: bool) -> Self {
        DebugValue::Bool(v)
    }
}
impl<'a> From<&'a str> for DebugValue<'a> {
    fn from(v: &'a str) -> Self {
        DebugValue::Str(v)
    }
}

/// A value a counter track takes: integers and floats.
pub trait CounterValue {
    /// Writes the sample with `opts` (which name the counter track).
    fn write(self, w: &mut EventWriter, opts: &EventOptions<'_>);
}

impl CounterValue for i64 {
    fn write(self, w: &mut EventWriter, opts: &EventOptions<'_>) {
        let ts = crate::platform::boottime_ns();
        w.emit(ts, EventKind::Counter, None, None, opts, &[], |e| {
            e.set_counter_value(self);
        });
    }
}

impl CounterValue for f64 {
    fn write(self, w: &mut EventWriter, opts: &EventOptions<'_>) {
        let ts = crate::platform::boottime_ns();
        w.emit(ts, EventKind::Counter, None, None, opts, &[], |e| {
            e.set_double_counter_value(self);
        });
    }
}
