//! A sorted JSON event into the tables, as Perfetto's JSON parser puts
//! it: `B`/`E`/`X` slices on thread tracks (an `X` that cannot nest goes
//! to a `thread_overlapping_slice` track), `b`/`e`/`n` on async tracks
//! shared by cookie, `i`/`I`/`R` instants on the global, process or
//! thread track their scope names, `C` counters (one track per arg key),
//! `s`/`t`/`f` (v1) and `bind_id` (v2) flows, `T` thread states, `M`
//! process and thread names. Events that cannot be placed are counted.

use crate::hash::HashMap;
use crate::tables::opt_u32::OptU32;

use crate::column_store::strings::StrId;
use crate::parser::Parser;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::import_logs::LogPlace;
use crate::tables::sched::{SchedSliceRow, ThreadStateRow};
use crate::tracker::flows::FlowTracker;
use crate::tracker::process::NamePriority;
use crate::tracker::tracks::{EventType, TrackSpec};

use super::event::{CookieKind, Id, JsonEvent, Scope};
use super::scan::{Fields, Value};
use super::slices::JsonSlices;

/// Overflow tracks of a thread searched for room: a hostile trace of
/// events each overlapping the last would otherwise make every event
/// search all the tracks the earlier ones made.
const MAX_LANES_SEARCHED: usize = 256;

/// Series of one counter event name whose tracks are cached.
const MAX_CACHED_SERIES: usize = 16;

/// What parsing keeps from one event to the next.
#[derive(Debug, Default)]
pub struct JsonParser {
    /// The slice stacks.
    pub slices: JsonSlices,
    /// V8 CPU profile sessions, whose samples (`P`) find their callsites.
    pub v8: super::v8_profile::V8Profiles,
    flows: FlowTracker,
    global_instants: Option<u32>,
    process_instants: HashMap<u32, u32>,
    /// Per thread: its overflow tracks and the ends of the slices open on
    /// each.
    overlapping: HashMap<u32, Vec<(u32, Vec<i64>)>>,
    /// Async tracks' first names, per (process scope, cookie).
    async_names: HashMap<(Option<u32>, i64), StrId>,
    /// The track compressor's pool key of async tracks, per (process
    /// scope, first name): made once, not per event.
    async_keys: HashMap<(Option<u32>, StrId), String>,
    /// The UI's sort index hints of processes (by upid) and threads (by
    /// utid), stored as args at the end.
    process_sort: HashMap<u32, i64>,
    thread_sort: HashMap<u32, i64>,
    /// Counter tracks by (owner, event name, string id), then by series
    /// key: a `C` event's series find their tracks without their names
    /// being built (an event has one to a few series).
    counter_tracks: HashMap<CounterEvent, Vec<(Box<str>, u32)>>,
}

/// A counter event's (owner, name, string id): its series' tracks.
type CounterEvent = (CounterOwner, StrId, Option<StrId>);

/// What a JSON counter track belongs to: the event's process, or its
/// thread when the thread has no process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum CounterOwner {
    Process(u32),
    Thread(u32),
}

fn chrome_source(p: &mut Parser) -> Vec<(&'static str, ArgValue)> {
    vec![(
        "source",
        ArgValue::String(p.storage.strings.intern("chrome")),
    )]
}

impl JsonParser {
    /// The event's args under `args` (keyed when the event was read), in a
    /// builder the slice stacks gave (see [`JsonSlices::builder`]).
    fn args(&mut self, p: &mut Parser, e: &JsonEvent) -> ArgSetBuilder {
        let mut b = self.slices.builder();
        for a in &e.arg_list {
            b.add(a.flat_key, a.key, a.value);
        }
        if e.args_failed {
            p.storage.stats.incr("json_parser_failure");
        }
        b
    }

    fn slice_name(p: &mut Parser, e: &JsonEvent) -> StrId {
        if e.name.is_null() {
            p.storage.strings.intern("[No name]")
        } else {
            e.name
        }
    }

    /// A slice began on `track`: flows waiting for it arrive.
    /// Counts and logs a complete event (at `ts`, lasting `dur`) that
    /// cannot nest because it partly overlaps the open slice `conflicting`:
    /// the log names the event, its phase, the time both share, and the
    /// slice it conflicts with.
    fn log_overlap(p: &mut Parser, ts: i64, dur: i64, e: &JsonEvent, conflicting: u32) {
        let (c_ts, c_dur, c_name) = p
            .storage
            .slices
            .get(conflicting as usize)
            .map_or((ts, 0, StrId::NULL), |s| (s.ts, s.dur, s.name));
        let end = ts.saturating_add(dur).min(c_ts.saturating_add(c_dur));
        let phase = p.storage.strings.intern(&char::from(e.phase).to_string());
        let args = [
            ("event_name", ArgValue::String(e.name)),
            ("event_phase", ArgValue::String(phase)),
            ("overlap_start", ArgValue::Int(ts.max(c_ts))),
            ("overlap_end", ArgValue::Int(end)),
            ("conflicting_slice_name", ArgValue::String(c_name)),
            ("conflicting_slice_ts", ArgValue::Int(c_ts)),
            ("conflicting_slice_dur", ArgValue::Int(c_dur)),
        ];
        p.storage.record_import_log_typed(
            "slice_spill_overlapping_complete_event",
            LogPlace {
                ts: Some(ts),
                byte_offset: None,
            },
            &args,
        );
    }

    fn began(&mut self, p: &mut Parser, track: u32, id: Option<u32>) {
        if let Some(id) = id {
            self.flows.slice_began(&mut p.storage, track, id);
        }
    }

    /// A v1 or v2 flow id.
    fn flow_id(p: &Parser, id: Option<Id>) -> Option<u64> {
        match id? {
            Id::Int(i) => Some(i),
            Id::Str(s) => {
                let s = p.storage.strings.get(s)?;
                let s = s
                    .strip_prefix("0x")
                    .or_else(|| s.strip_prefix("0X"))
                    .unwrap_or(s);
                u64::from_str_radix(s, 16).ok()
            }
        }
    }

    /// The v2 flow of an event that made a slice on `track`.
    fn maybe_add_flow(&mut self, p: &mut Parser, track: u32, e: &JsonEvent) {
        let Some(flow) = Self::flow_id(p, e.bind_id) else {
            return;
        };
        let Some(slice) = self.slices.topmost(track) else {
            p.storage.stats.incr("flow_no_enclosing_slice");
            return;
        };
        match (e.flow_in, e.flow_out) {
            (true, true) => self.flows.step(&mut p.storage, slice, flow),
            (false, true) => self.flows.begin(&mut p.storage, slice, flow),
            (true, false) => self.flows.end(&mut p.storage, slice, flow, false),
            (false, false) => p.storage.stats.incr("flow_without_direction"),
        }
    }

    /// The overflow track of a thread a complete event that cannot nest
    /// goes on: the first whose open slices it nests in or follows (of the
    /// first [`MAX_LANES_SEARCHED`]; past them, a new one).
    fn overlapping_track(&mut self, p: &mut Parser, utid: u32, ts: i64, dur: i64) -> u32 {
        let end = ts.saturating_add(dur);
        let lanes = self.overlapping.entry(utid).or_default();
        for (track, open) in lanes.iter_mut().take(MAX_LANES_SEARCHED) {
            while open.last().is_some_and(|&e| e <= ts) {
                open.pop();
            }
            if open.last().is_none_or(|&e| end <= e) {
                open.push(end);
                return *track;
            }
        }
        let idx = lanes.len() as i64;
        let mut spec = TrackSpec::new(None, "thread_overlapping_slice", EventType::Slice);
        spec.utid = Some(utid);
        spec.dimensions = vec![("track_compressor_idx", ArgValue::Int(idx))];
        let track = p.tracks.create(&mut p.storage, &spec);
        if let Some(lanes) = self.overlapping.get_mut(&utid) {
            lanes.push((track, vec![end]));
        }
        track
    }

    /// The async track of a `b`/`e`/`n` event.
    fn async_track(&mut self, p: &mut Parser, e: &JsonEvent, upid: u32, phase: u8) -> u32 {
        let Some((kind, cookie)) = e.cookie else {
            return 0;
        };
        let local = kind == CookieKind::Local;
        let scope_upid = local.then_some(upid);
        let name = *self
            .async_names
            .entry((scope_upid, cookie))
            .or_insert(e.name);
        let classification = if local {
            "legacy_async_process_slice"
        } else {
            "legacy_async_global_slice"
        };
        let key = self
            .async_keys
            .entry((scope_upid, name))
            .or_insert_with(|| format!("{classification}|{scope_upid:?}|{}", name.0));
        let event_name = e.name;
        let mut make = |idx: u32| {
            let raw_name = p.storage.strings.get(event_name).map(str::to_owned);
            let mut spec = TrackSpec::new(raw_name.as_deref(), classification, EventType::Slice);
            spec.upid = scope_upid;
            spec.dimensions = vec![
                ("scope", ArgValue::Null),
                ("name", ArgValue::String(name)),
                ("track_compressor_idx", ArgValue::Int(i64::from(idx))),
            ];
            let chrome = p.storage.strings.intern("chrome");
            spec.source_args = vec![
                ("source", ArgValue::String(chrome)),
                ("trace_id_is_process_scoped", ArgValue::Bool(local)),
                ("upid", ArgValue::Uint(u64::from(upid))),
                ("source_scope", ArgValue::Null),
            ];
            p.tracks.create(&mut p.storage, &spec)
        };
        let compressor = &mut p.async_tracks;
        match phase {
            b'b' => compressor.begin(key, cookie, &mut make),
            b'e' => match compressor.end(key, cookie) {
                Some(t) => t,
                None => {
                    let t = compressor.begin(key, cookie, &mut make);
                    compressor.end(key, cookie);
                    t
                }
            },
            _ => {
                let t = compressor.begin(key, cookie, &mut make);
                compressor.end(key, cookie);
                t
            }
        }
    }

    /// Parses one event at `ts`.
    pub fn parse(&mut self, p: &mut Parser, ts: i64, e: &JsonEvent) {
        if let Some(name) = e.pid_name {
            let upid = p.processes.get_or_create_process(&mut p.storage, e.pid);
            p.processes
                .set_process_name(&mut p.storage, upid, name, NamePriority::Other);
        }
        if let Some(name) = e.tid_name {
            let utid = p.processes.get_or_create_thread(&mut p.storage, e.tid);
            p.processes
                .set_thread_name(&mut p.storage, utid, name, NamePriority::Other);
        }
        let utid = p.processes.update_thread(&mut p.storage, e.tid, e.pid);
        match e.phase {
            b'B' => {
                let track = p.tracks.thread_track(&mut p.storage, utid);
                let name = Self::slice_name(p, e);
                let mut args = self.args(p, e);
                let id = self
                    .slices
                    .begin(&mut p.storage, track, ts, -1, e.cat, name, &mut args)
                    .ok()
                    .flatten();
                self.slices.recycle(args);
                if let (Some(id), Some(tts)) = (id, e.tts) {
                    p.storage.slice_threads.update(id, |t| t.ts = Some(tts));
                }
                self.began(p, track, id);
                self.maybe_add_flow(p, track, e);
            }
            b'E' => {
                let track = p.tracks.thread_track(&mut p.storage, utid);
                let args = self.args(p, e);
                let id = self
                    .slices
                    .end(&mut p.storage, track, ts, e.cat, e.name, &args);
                self.slices.recycle(args);
                if let (Some(id), Some(tts)) = (id, e.tts) {
                    if let Some(start) = p.storage.slice_threads.get(id).ts {
                        (p.storage.slice_threads)
                            .update(id, |t| t.dur = Some(tts.saturating_sub(start)));
                    }
                }
            }
            b'b' | b'e' | b'n' => {
                if !e.pid_exists || e.cookie.is_none() {
                    p.storage.stats.incr("json_parser_failure");
                    return;
                }
                let upid = p.processes.get_or_create_process(&mut p.storage, e.pid);
                let track = self.async_track(p, e, upid, e.phase);
                let mut args = self.args(p, e);
                match e.phase {
                    b'b' => {
                        let name = Self::slice_name(p, e);
                        let id = self
                            .slices
                            .begin(&mut p.storage, track, ts, -1, e.cat, name, &mut args)
                            .ok()
                            .flatten();
                        self.began(p, track, id);
                        self.maybe_add_flow(p, track, e);
                    }
                    b'e' => {
                        self.slices
                            .end(&mut p.storage, track, ts, e.cat, e.name, &args);
                    }
                    _ => {
                        let id = self
                            .slices
                            .begin(&mut p.storage, track, ts, 0, e.cat, e.name, &mut args)
                            .ok()
                            .flatten();
                        self.began(p, track, id);
                        self.maybe_add_flow(p, track, e);
                    }
                }
                self.slices.recycle(args);
            }
            b'X' => {
                let Some(dur) = e.dur else {
                    p.storage.stats.incr("json_parser_failure");
                    return;
                };
                let mut track = p.tracks.thread_track(&mut p.storage, utid);
                // As upstream's slice tracker takes a scoped slice: one
                // with a negative duration is dropped and logged (after its
                // thread's track exists), never nested or spilled.
                if dur < 0 {
                    p.storage.record_import_log_typed(
                        "slice_negative_duration",
                        LogPlace {
                            ts: Some(ts),
                            byte_offset: None,
                        },
                        &[],
                    );
                    return;
                }
                let name = Self::slice_name(p, e);
                let mut args = self.args(p, e);
                let id =
                    match self
                        .slices
                        .begin(&mut p.storage, track, ts, dur, e.cat, name, &mut args)
                    {
                        Ok(id) => id,
                        Err(overlap) => {
                            Self::log_overlap(p, ts, dur, e, overlap.conflicting);
                            track = self.overlapping_track(p, utid, ts, dur);
                            self.slices
                                .begin(&mut p.storage, track, ts, dur, e.cat, name, &mut args)
                                .ok()
                                .flatten()
                        }
                    };
                self.slices.recycle(args);
                if let Some(id) = id.filter(|_| e.tts.is_some() || e.tdur.is_some()) {
                    p.storage.slice_threads.update(id, |t| {
                        t.ts = e.tts.or(t.ts);
                        t.dur = e.tdur.or(t.dur);
                    });
                }
                self.began(p, track, id);
                self.maybe_add_flow(p, track, e);
            }
            b'C' => self.counter(p, ts, e, utid),
            b'R' | b'I' | b'i' => {
                let track = match e.scope {
                    Scope::Global => match self.global_instants {
                        Some(t) => t,
                        None => {
                            let mut spec = TrackSpec::new(
                                None,
                                "legacy_chrome_global_instants",
                                EventType::Slice,
                            );
                            spec.source_args = chrome_source(p);
                            let t = p.tracks.create(&mut p.storage, &spec);
                            self.global_instants = Some(t);
                            t
                        }
                    },
                    Scope::Process => {
                        if !e.pid_exists {
                            p.storage.stats.incr("json_parser_failure");
                            return;
                        }
                        let upid = p.processes.get_or_create_process(&mut p.storage, e.pid);
                        match self.process_instants.get(&upid) {
                            Some(t) => *t,
                            None => {
                                let mut spec = TrackSpec::new(
                                    None,
                                    "chrome_process_instant",
                                    EventType::Slice,
                                );
                                spec.upid = Some(upid);
                                spec.source_args = chrome_source(p);
                                let t = p.tracks.create(&mut p.storage, &spec);
                                self.process_instants.insert(upid, t);
                                t
                            }
                        }
                    }
                    Scope::Thread | Scope::None => {
                        if !e.tid_exists {
                            p.storage.stats.incr("json_parser_failure");
                            return;
                        }
                        let track = p.tracks.thread_track(&mut p.storage, utid);
                        let name = Self::slice_name(p, e);
                        let mut args = self.args(p, e);
                        let id = self
                            .slices
                            .begin(&mut p.storage, track, ts, 0, e.cat, name, &mut args)
                            .ok()
                            .flatten();
                        self.slices.recycle(args);
                        if let (Some(id), Some(tts)) = (id, e.tts) {
                            p.storage.slice_threads.update(id, |t| t.ts = Some(tts));
                        }
                        self.began(p, track, id);
                        return;
                    }
                };
                let mut args = self.args(p, e);
                let id = self
                    .slices
                    .begin(&mut p.storage, track, ts, 0, e.cat, e.name, &mut args)
                    .ok()
                    .flatten();
                self.slices.recycle(args);
                self.began(p, track, id);
            }
            b's' | b't' | b'f' => {
                let track = p.tracks.thread_track(&mut p.storage, utid);
                let Some(source) = Self::flow_id(p, e.id) else {
                    p.storage.stats.incr("flow_invalid_id");
                    return;
                };
                let flow = self.flows.v1_id(source, e.cat, e.name);
                if e.phase == b'f' && !e.bind_enclosing {
                    self.flows.end_at_next_slice(track, flow);
                    return;
                }
                let Some(slice) = self.slices.topmost(track) else {
                    p.storage.stats.incr("flow_no_enclosing_slice");
                    return;
                };
                match e.phase {
                    b's' => self.flows.begin(&mut p.storage, slice, flow),
                    b't' => self.flows.step(&mut p.storage, slice, flow),
                    _ => self.flows.end(&mut p.storage, slice, flow, false),
                }
            }
            b'T' => self.thread_state(p, ts, e, utid),
            b'P' => {
                let source = p.storage.strings.intern("legacy_v8");
                self.v8.sample(p, ts, e, source);
            }
            b'M' => self.metadata(p, e, utid),
            _ => {}
        }
    }

    /// A `C` event: one counter per numeric arg.
    fn counter(&mut self, p: &mut Parser, ts: i64, e: &JsonEvent, utid: u32) {
        let Some(args) = &e.args else {
            p.storage.stats.incr("json_parser_failure");
            return;
        };
        let Ok(mut fields) = Fields::new(args, 0) else {
            p.storage.stats.incr("json_parser_failure");
            return;
        };
        let upid = p.storage.threads.get(utid as usize).and_then(|t| t.upid);
        let str_id = match e.id {
            Some(Id::Str(id)) => Some(id),
            _ => None,
        };
        let owner = match upid {
            Some(u) => CounterOwner::Process(u),
            None => CounterOwner::Thread(utid),
        };
        let series_key = (owner, e.name, str_id);
        loop {
            let (key, v) = match fields.next_field() {
                Ok(Some(kv)) => kv,
                Ok(None) => break,
                Err(_) => {
                    p.storage.stats.incr("json_parser_failure");
                    break;
                }
            };
            let value = match &v {
                Value::Int(i) => *i as f64,
                Value::Float(d) => *d,
                Value::Str(s) => match s.trim().parse::<f64>() {
                    Ok(d) => d,
                    Err(_) => {
                        p.storage.stats.incr("json_parser_failure");
                        continue;
                    }
                },
                _ => {
                    p.storage.stats.incr("json_parser_failure");
                    continue;
                }
            };
            let series = self.counter_tracks.entry(series_key).or_default();
            let track = match series.iter().find(|(k, _)| **k == *key) {
                Some(&(_, track)) => track,
                None => {
                    let track = Self::counter_track(p, e, str_id, upid, utid, &key);
                    // Past a few series an event's keys are looked up by
                    // their names (a scan of many would cost more).
                    if series.len() < MAX_CACHED_SERIES {
                        series.push((Box::from(&*key), track));
                    }
                    track
                }
            };
            p.storage.counters.push(crate::storage::rows::CounterRow {
                ts,
                track_id: track,
                value,
                arg_set_id: OptU32::NONE,
            });
        }
    }

    /// The counter track of one series of a `C` event (named by the
    /// event's name, its string id and the series' key), made or found
    /// through the track tracker.
    fn counter_track(
        p: &mut Parser,
        e: &JsonEvent,
        str_id: Option<StrId>,
        upid: Option<u32>,
        utid: u32,
        key: &str,
    ) -> u32 {
        let mut name = p.storage.strings.get(e.name).unwrap_or("").to_owned();
        if let Some(id) = str_id {
            name.push_str(" id: ");
            name.push_str(p.storage.strings.get(id).unwrap_or(""));
        }
        name.push(' ');
        name.push_str(key);
        let name_id = p.storage.strings.intern(&name);
        let (classification, spec_utid, spec_upid) = match upid {
            Some(u) => ("json_counter", None, Some(u)),
            None => ("json_counter_thread_fallback", Some(utid), None),
        };
        let mut spec = TrackSpec::new(Some(&name), classification, EventType::Counter);
        spec.utid = spec_utid;
        spec.upid = spec_upid;
        spec.dimensions = vec![("name", ArgValue::String(name_id))];
        p.tracks.interned_counter(&mut p.storage, &spec)
    }

    /// A `T` event: a thread state (and a sched slice when it ran on a
    /// known CPU).
    fn thread_state(&mut self, p: &mut Parser, ts: i64, e: &JsonEvent, utid: u32) {
        let Some(dur) = e.dur else {
            p.storage.stats.incr("json_parser_failure");
            return;
        };
        let state = Self::slice_name(p, e);
        let mut row = ThreadStateRow {
            ts,
            dur,
            utid,
            state,
            ..ThreadStateRow::default()
        };
        let mut cpu = None;
        if let Some(args) = &e.args {
            match Fields::new(args, 0) {
                Ok(mut f) => loop {
                    match f.next_field() {
                        Ok(Some((k, v))) => match (&*k, v) {
                            ("cpu", Value::Int(c)) => cpu = Some(c as u32),
                            ("io_wait", Value::Int(w)) => row.io_wait = Some(w != 0),
                            ("blocked_function", Value::Str(s)) => {
                                row.blocked_function = p.storage.strings.intern(&s);
                            }
                            _ => {}
                        },
                        Ok(None) => break,
                        Err(_) => {
                            p.storage.stats.incr("json_parser_failure");
                            break;
                        }
                    }
                },
                Err(_) => p.storage.stats.incr("json_parser_failure"),
            }
        }
        let running = p.storage.strings.get(state) == Some("Running");
        if let (true, Some(cpu)) = (running, cpu) {
            let ucpu = crate::tracker::profiler_samples::ucpu(&mut p.storage, cpu);
            row.ucpu = Some(ucpu);
            p.storage.sched.slices.push(SchedSliceRow {
                ts,
                dur,
                utid,
                ucpu,
                ..SchedSliceRow::default()
            });
        }
        p.storage.sched.thread_states.push(row);
    }

    /// An `M` event: a process's or thread's name.
    fn metadata(&mut self, p: &mut Parser, e: &JsonEvent, utid: u32) {
        let Some(args) = &e.args else { return };
        let which = p.storage.strings.get(e.name).unwrap_or("").to_owned();
        if !matches!(
            which.as_str(),
            "thread_name" | "process_name" | "process_sort_index" | "thread_sort_index"
        ) {
            return;
        }
        let Ok(mut f) = Fields::new(args, 0) else {
            p.storage.stats.incr("json_parser_failure");
            return;
        };
        loop {
            let (k, v) = match f.next_field() {
                Ok(Some(kv)) => kv,
                Ok(None) => break,
                Err(_) => {
                    p.storage.stats.incr("json_parser_failure");
                    break;
                }
            };
            if which.ends_with("sort_index") {
                if k != "sort_index" {
                    continue;
                }
                let index = match v {
                    Value::Int(i) => i as i32,
                    Value::Float(d) => d as i64 as i32,
                    _ => {
                        p.storage.stats.incr("json_parser_failure");
                        continue;
                    }
                };
                if which == "process_sort_index" {
                    let upid = p.processes.get_or_create_process(&mut p.storage, e.pid);
                    self.process_sort.insert(upid, i64::from(index));
                } else {
                    self.thread_sort.insert(utid, i64::from(index));
                }
                continue;
            }
            if k != "name" {
                continue;
            }
            let name = v.as_str().unwrap_or("");
            if name.is_empty() {
                p.storage.stats.incr("json_parser_failure");
                continue;
            }
            let id = p.storage.strings.intern(name);
            if which == "thread_name" {
                p.processes
                    .set_thread_name(&mut p.storage, utid, id, NamePriority::Other);
            } else {
                let upid = p.processes.get_or_create_process(&mut p.storage, e.pid);
                p.processes
                    .set_process_name(&mut p.storage, upid, id, NamePriority::Other);
            }
        }
    }

    /// The end of the trace: the args of slices still on their stacks,
    /// the sort index hints as args of their processes and threads.
    pub fn finish(&mut self, p: &mut Parser) {
        self.slices.flush(&mut p.storage);
        let mut processes: Vec<(u32, i64)> = self.process_sort.drain().collect();
        processes.sort_unstable();
        for (upid, index) in processes {
            let set = p
                .storage
                .processes
                .get(upid as usize)
                .and_then(|r| r.arg_set_id);
            let set = Self::with_arg(p, set, "process_sort_index_hint", index);
            if let Some(row) = p.storage.processes.get_mut(upid as usize) {
                row.arg_set_id = set;
            }
        }
        let mut threads: Vec<(u32, i64)> = self.thread_sort.drain().collect();
        threads.sort_unstable();
        for (utid, index) in threads {
            let set = p
                .storage
                .threads
                .get(utid as usize)
                .and_then(|r| r.arg_set_id);
            let set = Self::with_arg(p, set, "thread_sort_index_hint", index);
            if let Some(row) = p.storage.threads.get_mut(utid as usize) {
                row.arg_set_id = set;
            }
        }
    }

    /// The arg set `set` with one more integer arg.
    fn with_arg(p: &mut Parser, set: Option<u32>, key: &str, value: i64) -> Option<u32> {
        let mut b = ArgSetBuilder::default();
        if let Some(set) = set {
            let old: Vec<_> = p.storage.args.set(set).copied().collect();
            for a in old {
                b.add(a.flat_key, a.key, a.value);
            }
        }
        let k = p.storage.strings.intern(key);
        b.add(k, k, ArgValue::Int(value));
        p.storage.args.add_set(&b)
    }
}
