//! Fuchsia event records, in time order, into the tables as upstream puts
//! them: instants and duration events (begin/end, complete) as slices on
//! their thread's track with their arguments; counters as one
//! `fuchsia_counter` track per process, event name, argument name and
//! counter id (`name:arg:id`), numeric arguments only
//! (`fuchsia_non_numeric_counters` counts the rest); async begin, instant
//! and end as slices on legacy async tracks shared by correlation id; flow
//! begin, step and end as flows between the slices open on their threads,
//! their process-scoped correlation ids made global.

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::storage::args::{ArgSetBuilder, ArgValue as Stored};
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::flows::FlowTracker;
use crate::tracker::tracks::{EventType, TrackSpec};

use super::{Arg, ArgValue, EventRecord};

/// Event types (bits 16-19 of an event record's header).
const INSTANT: u32 = 0;
const COUNTER: u32 = 1;
const DURATION_BEGIN: u32 = 2;
const DURATION_END: u32 = 3;
const DURATION_COMPLETE: u32 = 4;
const ASYNC_BEGIN: u32 = 5;
const ASYNC_INSTANT: u32 = 6;
const ASYNC_END: u32 = 7;
const FLOW_BEGIN: u32 = 8;
const FLOW_STEP: u32 = 9;
const FLOW_END: u32 = 10;

/// The classification of the legacy async tracks.
const ASYNC_CLASSIFICATION: &str = "legacy_async_global_slice";

/// A flow's process-scoped id.
type ScopedFlow = (u32, u64);

/// What importing keeps from one event to the next.
#[derive(Debug, Default)]
pub struct EventImport {
    /// Args of the slices still open, by slice id: written when they end.
    open_args: HashMap<u32, ArgSetBuilder>,
    /// The first name each async correlation id was seen with.
    async_names: HashMap<i64, StrId>,
    flows: FlowTracker,
    /// Active flows: process-scoped id → global id.
    active_flows: HashMap<ScopedFlow, u64>,
    /// Correlation id → (the process that began it, whether another did
    /// too).
    flow_owners: HashMap<u64, (u32, bool)>,
    next_flow: u64,
}

/// An argument as the args table stores it.
fn stored(p: &mut Parser, v: ArgValue) -> Stored {
    match v {
        ArgValue::Null => Stored::String(p.storage.strings.intern("null")),
        ArgValue::I32(v) => Stored::Int(i64::from(v)),
        ArgValue::U32(v) => Stored::Int(i64::from(v)),
        ArgValue::I64(v) => Stored::Int(v),
        ArgValue::U64(v) | ArgValue::Koid(v) => Stored::Int(v as i64),
        ArgValue::F64(v) => Stored::Real(v),
        ArgValue::Str(s) => Stored::String(s),
        ArgValue::Pointer(v) => Stored::Pointer(v),
        ArgValue::Bool(v) => Stored::Bool(v),
        ArgValue::Unknown => Stored::String(p.storage.strings.intern("unknown")),
    }
}

/// Adds `args` to a set being built.
fn add_args(p: &mut Parser, b: &mut ArgSetBuilder, args: &[Arg]) {
    for a in args {
        let v = stored(p, a.value);
        b.add(a.name, a.name, v);
    }
}

/// A counter argument's value, if it is a number.
fn numeric(v: ArgValue) -> Option<f64> {
    match v {
        ArgValue::I32(v) => Some(f64::from(v)),
        ArgValue::U32(v) => Some(f64::from(v)),
        ArgValue::I64(v) => Some(v as f64),
        ArgValue::U64(v) => Some(v as f64),
        ArgValue::F64(v) => Some(v),
        _ => None,
    }
}

impl EventImport {
    /// One event at `ts`.
    pub fn event(&mut self, p: &mut Parser, ts: i64, e: EventRecord) {
        let (pid, tid) = (e.thread.0 as u32, e.thread.1 as u32);
        let needs_extra = !matches!(e.kind, INSTANT | DURATION_BEGIN | DURATION_END);
        if needs_extra && e.extra.is_none() && e.kind <= FLOW_END {
            p.storage.stats.incr("fuchsia_record_read_error");
            return;
        }
        let extra = e.extra.unwrap_or(0);
        let thread_track = |p: &mut Parser| {
            let utid = p
                .processes
                .update_thread(&mut p.storage, i64::from(tid), i64::from(pid));
            p.tracks.thread_track(&mut p.storage, utid)
        };
        match e.kind {
            INSTANT => {
                let track = thread_track(p);
                self.slice(p, ts, 0, track, &e);
            }
            COUNTER => self.counter(p, ts, pid, extra, &e),
            DURATION_BEGIN => {
                let track = thread_track(p);
                self.slice(p, ts, -1, track, &e);
            }
            DURATION_END => {
                let track = thread_track(p);
                self.end(p, ts, track, &e.args);
            }
            DURATION_COMPLETE => {
                let dur = e.end_ts.map(|end| end - ts);
                let Some(dur) = dur.filter(|d| *d >= 0) else {
                    p.storage.stats.incr("fuchsia_timestamp_overflow");
                    return;
                };
                let track = thread_track(p);
                self.slice(p, ts, dur, track, &e);
            }
            ASYNC_BEGIN | ASYNC_INSTANT | ASYNC_END => {
                let upid = p
                    .processes
                    .get_or_create_process(&mut p.storage, i64::from(pid));
                let track = self.async_track(p, upid, extra as i64, e.name, e.kind);
                match e.kind {
                    ASYNC_BEGIN => self.slice(p, ts, -1, track, &e),
                    ASYNC_INSTANT => self.slice(p, ts, 0, track, &e),
                    _ => self.end(p, ts, track, &e.args),
                }
            }
            FLOW_BEGIN | FLOW_STEP | FLOW_END => {
                let track = thread_track(p);
                self.flow(p, ts, track, pid, extra, e.kind);
            }
            _ => {}
        }
    }

    /// A slice (`dur` -1: open until its end) with the event's args.
    fn slice(&mut self, p: &mut Parser, ts: i64, dur: i64, track: u32, e: &EventRecord) {
        let mut b = ArgSetBuilder::default();
        add_args(p, &mut b, &e.args);
        let open = dur < 0;
        let row = SliceRow {
            ts,
            dur,
            track_id: track,
            category: e.category,
            name: e.name,
            arg_set_id: if open {
                None
            } else {
                p.storage.args.add_set(&b)
            }
            .into(),
            ..Default::default()
        };
        if let Some(id) = p.slices.begin(&mut p.storage, row) {
            if open {
                self.open_args.insert(id, b);
            }
        }
    }

    /// Ends the innermost open slice of `track`, adding `args` to its own.
    fn end(&mut self, p: &mut Parser, ts: i64, track: u32, args: &[Arg]) {
        let Some(id) = p.slices.end(&mut p.storage, track, ts, None) else {
            return;
        };
        let mut b = self.open_args.remove(&id).unwrap_or_default();
        add_args(p, &mut b, args);
        let set = p.storage.args.add_set(&b);
        if let Some(s) = p.storage.slices.get_mut(id as usize) {
            s.arg_set_id = set.into();
        }
    }

    fn counter(&mut self, p: &mut Parser, ts: i64, pid: u32, counter_id: u64, e: &EventRecord) {
        let upid = p
            .processes
            .get_or_create_process(&mut p.storage, i64::from(pid));
        let event_name = p.storage.strings.get(e.name).unwrap_or("").to_owned();
        for a in &e.args {
            let Some(value) = numeric(a.value) else {
                p.storage.stats.incr("fuchsia_non_numeric_counters");
                continue;
            };
            let arg_name = p.storage.strings.get(a.name).unwrap_or("");
            let name = format!("{event_name}:{arg_name}:{counter_id}");
            let name_id = p.storage.strings.intern(&name);
            let mut spec = TrackSpec::new(Some(&name), "fuchsia_counter", EventType::Counter);
            spec.upid = Some(upid);
            spec.dimensions = vec![("name", Stored::String(name_id))];
            let track = p.tracks.interned_counter(&mut p.storage, &spec);
            p.storage.counters.push(CounterRow {
                ts,
                track_id: track,
                value,
                arg_set_id: OptU32::NONE,
            });
        }
    }

    /// The legacy async track of a correlation id (not process-scoped:
    /// the id is global, the process is a source arg), shared by
    /// correlation id through the track compressor.
    fn async_track(
        &mut self,
        p: &mut Parser,
        upid: u32,
        cookie: i64,
        raw: StrId,
        kind: u32,
    ) -> u32 {
        let root = *self.async_names.entry(cookie).or_insert(raw);
        let key = format!("fuchsia|{ASYNC_CLASSIFICATION}|{}", root.0);
        let raw_name = p.storage.strings.get(raw).map(str::to_owned);
        let mut make = |idx: u32| {
            let mut spec =
                TrackSpec::new(raw_name.as_deref(), ASYNC_CLASSIFICATION, EventType::Slice);
            spec.dimensions = vec![
                // Upstream's NULL string id: a string arg without a value.
                ("scope", Stored::String(StrId::NULL)),
                ("name", Stored::String(root)),
                ("track_compressor_idx", Stored::Int(i64::from(idx))),
            ];
            let chrome = p.storage.strings.intern("chrome");
            spec.source_args = vec![
                ("source", Stored::String(chrome)),
                ("trace_id_is_process_scoped", Stored::Bool(false)),
                ("upid", Stored::Uint(u64::from(upid))),
                ("source_scope", Stored::String(StrId::NULL)),
            ];
            p.tracks.create(&mut p.storage, &spec)
        };
        let compressor = &mut p.async_tracks;
        match kind {
            ASYNC_BEGIN => compressor.begin(&key, cookie, &mut make),
            ASYNC_END => match compressor.end(&key, cookie) {
                Some(t) => t,
                None => {
                    let t = compressor.begin(&key, cookie, &mut make);
                    compressor.end(&key, cookie);
                    t
                }
            },
            _ => {
                let t = compressor.begin(&key, cookie, &mut make);
                compressor.end(&key, cookie);
                t
            }
        }
    }

    /// The global id of a process-scoped flow: its own when active; a
    /// begin makes a new one; a step or end of an id begun by one other
    /// process takes that process's flow.
    fn global_flow(&mut self, pid: u32, id: u64, begin: bool) -> Option<(u64, ScopedFlow)> {
        if let Some(g) = self.active_flows.get(&(pid, id)) {
            return Some((*g, (pid, id)));
        }
        if begin {
            self.next_flow += 1;
            let g = self.next_flow;
            self.active_flows.insert((pid, id), g);
            let owner = self.flow_owners.entry(id).or_insert((pid, false));
            if owner.0 != pid {
                owner.1 = true;
            }
            return Some((g, (pid, id)));
        }
        let (owner, ambiguous) = *self.flow_owners.get(&id)?;
        if ambiguous {
            return None;
        }
        let g = *self.active_flows.get(&(owner, id))?;
        Some((g, (owner, id)))
    }

    fn flow(&mut self, p: &mut Parser, ts: i64, track: u32, pid: u32, id: u64, kind: u32) {
        let Some((flow, scoped)) = self.global_flow(pid, id, kind == FLOW_BEGIN) else {
            return;
        };
        match p.slices.topmost(&mut p.storage, track, ts) {
            None => p.storage.stats.incr("flow_no_enclosing_slice"),
            Some(slice) => match kind {
                FLOW_BEGIN => self.flows.begin(&mut p.storage, slice, flow),
                FLOW_STEP => self.flows.step(&mut p.storage, slice, flow),
                _ => self.flows.end(&mut p.storage, slice, flow, true),
            },
        }
        // An end closes the flow whether or not it found its slice.
        if kind == FLOW_END {
            self.active_flows.remove(&scoped);
            self.flow_owners.remove(&scoped.1);
        }
    }

    /// Slices still open at the end keep the args of their begin.
    pub fn finish(self, p: &mut Parser) {
        let mut left: Vec<(u32, ArgSetBuilder)> = self.open_args.into_iter().collect();
        left.sort_by_key(|(id, _)| *id);
        for (id, b) in left {
            let set = p.storage.args.add_set(&b);
            if let Some(s) = p.storage.slices.get_mut(id as usize) {
                s.arg_set_id = set.into();
            }
        }
    }
}
