//! Pixel kernels' own events, as upstream's ftrace parser imports them:
//!
//! - firmware trace points (`fwtp_perfetto_counter`, `fwtp_perfetto_slice`):
//!   a counter named by the point, at the firmware's own timestamp
//!   (`pixel_fwtp_counters`), and slices at the firmware's timestamps on a
//!   track named by the point (`pixel_fwtp_slices`), a begin first closing
//!   what is open there (`ftrace.rs` drops, as upstream's tokenizer does,
//!   such an event without its timestamp);
//! - CPM parameter writes (`param_set_value_cpm`): a counter named by the
//!   parameter, at the event's own timestamp (`pixel_cpm_counters`);
//! - interconnect events (`google_icc_event`, `google_irm_event`): instants
//!   named by the event on the `Interconnect Events` track, in category
//!   `google_icc_event` or `google_irm_event`;
//! - kswapd's runs (`pixel_mm_kswapd_wake`/`_done`): a `kswapd_efficiency`
//!   slice on the thread, the done event adding the pages scanned,
//!   reclaimed and allocated it reports, and the percentage reclaimed of
//!   scanned, rounded, when it reports both.

use super::Parser;
use super::fields::Fields;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

/// `FtraceEvent.google_icc_event` {event 1}.
const GOOGLE_ICC_EVENT: u32 = 502;
/// `FtraceEvent.google_irm_event` {event 1}.
const GOOGLE_IRM_EVENT: u32 = 503;
/// `FtraceEvent.pixel_mm_kswapd_wake`.
const KSWAPD_WAKE: u32 = 538;
/// `FtraceEvent.pixel_mm_kswapd_done` {delta_nr_scanned 1,
/// delta_nr_reclaimed 2, delta_nr_allocated 3}.
const KSWAPD_DONE: u32 = 539;
/// `FtraceEvent.param_set_value_cpm` {body 1, value 2, timestamp 3}.
const PARAM_SET_VALUE_CPM: u32 = 543;
/// `FtraceEvent.fwtp_perfetto_counter` {timestamp 1, name 4, value 5}.
const FWTP_COUNTER: u32 = 596;
/// `FtraceEvent.fwtp_perfetto_slice` {category 3, name 4, begin 5}.
const FWTP_SLICE: u32 = 600;

/// The events this module handles (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (GOOGLE_ICC_EVENT, google_icc_event),
    (GOOGLE_IRM_EVENT, google_irm_event),
    (KSWAPD_WAKE, kswapd_wake),
    (KSWAPD_DONE, kswapd_done),
    (PARAM_SET_VALUE_CPM, param_set_value_cpm),
    (FWTP_COUNTER, fwtp_counter),
    (FWTP_SLICE, fwtp_slice),
];

/// A value on the counter named `name` of `classification` (its name is
/// also its `name` dimension).
fn named_counter(p: &mut Parser, classification: &str, name: &str, ts: i64, value: f64) {
    let key = p.storage.strings.intern(name);
    let mut spec = TrackSpec::new(Some(name), classification, EventType::Counter);
    spec.dimensions = vec![("name", ArgValue::String(key))];
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts,
        track_id,
        value,
        arg_set_id: OptU32::NONE,
    });
}

/// The time an event carries (field `id`; `ftrace.rs` drops the events
/// without it).
fn own_time(f: &Fields<'_>, id: u32) -> Option<i64> {
    f.int(id)
}

fn fwtp_counter(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let Some(ts) = own_time(&f, 1) else {
        return;
    };
    let name = f.str(4).unwrap_or_default();
    let value = f.uint(5).unwrap_or(0) as u32;
    named_counter(p, "pixel_fwtp_counters", &name, ts, f64::from(value));
}

fn param_set_value_cpm(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let Some(ts) = own_time(&f, 3) else {
        return;
    };
    let name = f.str(1).unwrap_or_default();
    let value = f.uint(2).unwrap_or(0) as u32;
    named_counter(p, "pixel_cpm_counters", &name, ts, f64::from(value));
}

fn fwtp_slice(p: &mut Parser, e: &FtraceInput<'_>) {
    let f = Fields::new(e.body);
    let Some(ts) = own_time(&f, 1) else {
        return;
    };
    let name = f.str(4).unwrap_or_default();
    let spec = TrackSpec::new(Some(&name), "pixel_fwtp_slices", EventType::Slice);
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    // A begin first closes what is open, so that nothing stays open.
    p.slices.end(&mut p.storage, track_id, ts, None);
    if f.uint(5).unwrap_or(0) as u32 == 0 {
        return;
    }
    let category = p.storage.strings.intern(&f.str(3).unwrap_or_default());
    let name = p.storage.strings.intern(&name);
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts,
            dur: -1,
            track_id,
            category,
            name,
            ..SliceRow::default()
        },
    );
}

fn interconnect(p: &mut Parser, e: &FtraceInput<'_>, category: &str) {
    let spec = TrackSpec::new(
        Some("Interconnect Events"),
        "interconnect_events",
        EventType::Slice,
    );
    let track_id = p.tracks.interned_counter(&mut p.storage, &spec);
    let name = p
        .storage
        .strings
        .intern(&Fields::new(e.body).str(1).unwrap_or_default());
    let category = p.storage.strings.intern(category);
    p.slices.instant(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            track_id,
            category,
            name,
            ..SliceRow::default()
        },
    );
}

fn google_icc_event(p: &mut Parser, e: &FtraceInput<'_>) {
    interconnect(p, e, "google_icc_event");
}

fn google_irm_event(p: &mut Parser, e: &FtraceInput<'_>) {
    interconnect(p, e, "google_irm_event");
}

fn kswapd_track(p: &mut Parser, e: &FtraceInput<'_>) -> u32 {
    let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
    p.tracks.thread_track(&mut p.storage, utid)
}

fn kswapd_wake(p: &mut Parser, e: &FtraceInput<'_>) {
    let track_id = kswapd_track(p, e);
    let name = p.storage.strings.intern("kswapd_efficiency");
    p.slices.begin(
        &mut p.storage,
        SliceRow {
            ts: e.ts,
            dur: -1,
            track_id,
            name,
            ..SliceRow::default()
        },
    );
}

fn kswapd_done(p: &mut Parser, e: &FtraceInput<'_>) {
    let track_id = kswapd_track(p, e);
    let Some(id) = p.slices.end(&mut p.storage, track_id, e.ts, None) else {
        return;
    };
    let f = Fields::new(e.body);
    let (scanned, reclaimed, allocated) = (f.uint(1), f.uint(2), f.uint(3));
    let efficiency = match (scanned, reclaimed) {
        (Some(s), Some(r)) => Some((r as f64 * 100.0 / s as f64).round() as u64),
        _ => None,
    };
    let mut b = ArgSetBuilder::default();
    if let Some(set) = p
        .storage
        .slices
        .get(id as usize)
        .and_then(|s| s.arg_set_id.get())
    {
        let old: Vec<_> = p.storage.args.set(set).copied().collect();
        for a in old {
            b.add(a.flat_key, a.key, a.value);
        }
    }
    for (key, value) in [
        ("pages scanned", scanned),
        ("pages reclaimed", reclaimed),
        ("efficiency %", efficiency),
        ("pages allocated", allocated),
    ] {
        if let Some(v) = value {
            let k = p.storage.strings.intern(key);
            b.add(k, k, ArgValue::Uint(v));
        }
    }
    let set = p.storage.args.add_set(&b);
    if let Some(s) = p.storage.slices.get_mut(id as usize) {
        s.arg_set_id = set.into();
    }
}
