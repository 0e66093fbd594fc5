//! Firefox profiler (Gecko) JSON profiles, what the Firefox profiler and
//! samply write, as Perfetto imports them: each thread's stacks become
//! callsites (a frame per function, on a mapping named by the library in
//! the function's ` (in lib)` suffix, else on the `gecko` mapping), each
//! sample a `gecko` profiler sample of its thread, each marker a slice on
//! its thread's track of that category and name (instants of zero length,
//! intervals, start and end pairs), its category from `meta.categories`
//! and its `data` flattened into `data.*` args; the thread is named and
//! put in its process at its first sample or marker. Times are
//! milliseconds. The profile is one JSON document, parsed whole at the
//! end (as upstream parses it); what it holds is imported in time order.

pub mod profile;

use serde_json::Value;

use crate::column_store::strings::StrId;
use crate::error::TraceError;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::storage::args::{ArgSetBuilder, ArgValue};
use crate::storage::profiling_rows::{FrameRow, ProfilerSampleRow, TaskContextRow};
use crate::storage::rows::SliceRow;
use crate::tracker::process::NamePriority;
use crate::tracker::profiler_samples::ProfilerSampleTracker;
use crate::tracker::stack_profile::{MappingParams, StackProfileTracker};
use crate::tracker::tracks::{EventType, TrackSpec};

use super::reader::FormatReader;
use profile::{Cell, Profile, Thread};

/// Whether `head` opens a Gecko profile: an object whose first key is
/// `meta` or `libs` (told before Chrome JSON, as upstream tells it).
pub fn sniff(head: &[u8]) -> bool {
    let compact: Vec<u8> = head
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace() && *b != 0x0b)
        .collect();
    compact.starts_with(b"{\"meta\"") || compact.starts_with(b"{\"libs\"")
}

/// A marker's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Instant,
    Interval,
    Start,
    End,
}

/// What one thread contributes, at a time.
#[derive(Debug)]
enum Event {
    /// The thread's name and process.
    Thread { tid: u32, pid: u32, name: StrId },
    /// A sample of a callsite.
    Sample { tid: u32, callsite: u32 },
    /// A marker.
    Marker {
        tid: u32,
        phase: Phase,
        name: StrId,
        category: StrId,
        dur: i64,
        data: Option<Value>,
    },
}

/// The reader: the profile's bytes, parsed at the end.
#[derive(Debug, Default)]
pub struct GeckoLoad {
    bytes: Vec<u8>,
}

/// A stack's callsite and depth.
#[derive(Debug, Clone, Copy)]
struct Callsite {
    id: u32,
    depth: u32,
}

/// Frames and mappings made so far.
#[derive(Debug, Default)]
struct Frames {
    mappings: HashMap<String, u32>,
    frames: HashMap<(u32, StrId), u32>,
}

impl Frames {
    /// The frame of a function name (`name (in lib)` names its library).
    fn intern(&mut self, p: &mut Parser, full: &str) -> u32 {
        let (mapping_name, name) = match full.split_once(" (in ") {
            Some((name, rest)) => (rest.split(')').next().unwrap_or(rest), name),
            None => ("gecko", full),
        };
        let mapping = match self.mappings.get(mapping_name) {
            Some(m) => *m,
            None => {
                let m = p.profiling.stacks.intern_mapping(
                    &mut p.storage,
                    MappingParams {
                        end: u64::MAX,
                        name: mapping_name.to_owned(),
                        ..MappingParams::default()
                    },
                );
                self.mappings.insert(mapping_name.to_owned(), m);
                m
            }
        };
        let name_id = p.storage.strings.intern(name);
        if let Some(f) = self.frames.get(&(mapping, name_id)) {
            return *f;
        }
        let set = StackProfileTracker::create_symbol(&mut p.storage, name, None, None);
        let id = u32::try_from(p.storage.profiling.frames.len()).unwrap_or(u32::MAX);
        p.storage.profiling.frames.push(FrameRow {
            name: name_id,
            mapping,
            rel_pc: 0,
            symbol_set_id: Some(set),
            deobfuscated_name: StrId::NULL,
            frame_type: StrId::NULL,
        });
        self.frames.insert((mapping, name_id), id);
        id
    }
}

/// Interns a stack given its parent and frame.
fn stack(
    p: &mut Parser,
    callsites: &mut Vec<Option<Callsite>>,
    prefix: Option<u32>,
    frame: Option<u32>,
) {
    let parent = prefix.and_then(|i| callsites.get(i as usize).copied().flatten());
    let Some(frame) = frame else {
        callsites.push(None);
        return;
    };
    let depth = parent.map_or(0, |c| c.depth.saturating_add(1));
    let id = p
        .profiling
        .stacks
        .intern_callsite(&mut p.storage, parent.map(|c| c.id), frame, depth);
    callsites.push(Some(Callsite { id, depth }));
}

/// A thread's stacks as callsites, by stack index (None: a stack whose
/// frame is unknown).
fn callsites(
    p: &mut Parser,
    frames: &mut Frames,
    t: &Thread,
    strings: &[String],
) -> Vec<Option<Callsite>> {
    let mut out = Vec::new();
    if t.preprocessed {
        let ids: Vec<Option<u32>> = t
            .frame_funcs
            .iter()
            .map(|&f| {
                let name = t.func_names.get(f as usize)?;
                let s = strings.get(*name as usize)?;
                Some(frames.intern(p, s))
            })
            .collect();
        for (prefix, frame) in t.stack_prefixes.iter().zip(&t.stack_frames) {
            p.storage.work.step(1);
            let frame = ids.get(*frame as usize).copied().flatten();
            stack(p, &mut out, *prefix, frame);
        }
        return out;
    }
    let (Some(location), Some(prefix), Some(frame)) = (
        t.frame_table.column("location"),
        t.stack_table.column("prefix"),
        t.stack_table.column("frame"),
    ) else {
        return out;
    };
    let ids: Vec<Option<u32>> = t
        .frame_table
        .data
        .iter()
        .map(|row| match row.get(location) {
            Some(Cell::Index(i)) => strings.get(*i as usize).map(|s| frames.intern(p, s)),
            _ => None,
        })
        .collect();
    for row in &t.stack_table.data {
        p.storage.work.step(1);
        let pre = match row.get(prefix) {
            Some(Cell::Index(i)) => Some(*i),
            _ => None,
        };
        let f = match row.get(frame) {
            Some(Cell::Index(i)) => ids.get(*i as usize).copied().flatten(),
            _ => None,
        };
        stack(p, &mut out, pre, f);
    }
    out
}

/// A thread's samples: (ms, stack index).
fn samples(t: &Thread, legacy_tables: bool) -> Vec<(f64, u32)> {
    if !legacy_tables {
        return t
            .sample_stacks
            .iter()
            .zip(&t.sample_times)
            .filter_map(|(s, time)| s.map(|s| (*time, s)))
            .collect();
    }
    let (Some(stack), Some(time)) = (t.samples.column("stack"), t.samples.column("time")) else {
        return Vec::new();
    };
    t.samples
        .data
        .iter()
        .filter_map(|row| {
            let Some(Cell::Index(s)) = row.get(stack) else {
                return None;
            };
            let ms = match row.get(time) {
                Some(Cell::Index(u)) => f64::from(*u),
                Some(Cell::Number(d)) => *d,
                _ => 0.0,
            };
            Some((ms, *s))
        })
        .collect()
}

/// Milliseconds as ns (truncated, saturating).
fn ns(ms: f64) -> i64 {
    (ms * 1e6) as i64
}

impl GeckoLoad {
    /// The profile's events, in profile order, each at its time.
    fn events(p: &mut Parser, prof: &Profile) -> Vec<(i64, Event)> {
        let mut frames = Frames::default();
        let shared = prof.shared.as_ref();
        let shared_has_frames =
            shared.is_some_and(|s| !s.frame_funcs.is_empty() || !s.frame_table.data.is_empty());
        let shared_callsites = match shared {
            Some(s) if shared_has_frames => Some(callsites(p, &mut frames, s, &s.strings)),
            _ => None,
        };
        let mut out = Vec::new();
        for t in &prof.threads {
            let strings: &[String] = match shared {
                Some(s) if t.strings.is_empty() => &s.strings,
                _ => &t.strings,
            };
            let own;
            let (sites, legacy): (&[Option<Callsite>], bool) = match (&shared_callsites, shared) {
                (Some(c), Some(s)) => (c, !(t.preprocessed || s.preprocessed)),
                _ => {
                    own = callsites(p, &mut frames, t, strings);
                    (&own, !t.preprocessed)
                }
            };
            let mut named = false;
            let name = p.storage.strings.intern(&t.name);
            let mut meta = |out: &mut Vec<(i64, Event)>, ts: i64| {
                if !named {
                    named = true;
                    out.push((
                        ts,
                        Event::Thread {
                            tid: t.tid,
                            pid: t.pid,
                            name,
                        },
                    ));
                }
            };
            for (ms, s) in samples(t, legacy) {
                let Some(Some(site)) = sites.get(s as usize) else {
                    continue;
                };
                let ts = ns(ms);
                meta(&mut out, ts);
                out.push((
                    ts,
                    Event::Sample {
                        tid: t.tid,
                        callsite: site.id,
                    },
                ));
            }
            let n = [
                t.marker_names.len(),
                t.marker_starts.len(),
                t.marker_ends.len(),
                t.marker_phases.len(),
                t.marker_categories.len(),
            ]
            .into_iter()
            .min()
            .unwrap_or(0);
            for i in 0..n {
                let (Some(&name_idx), Some(&start), Some(&end), Some(&phase), Some(&cat)) = (
                    t.marker_names.get(i),
                    t.marker_starts.get(i),
                    t.marker_ends.get(i),
                    t.marker_phases.get(i),
                    t.marker_categories.get(i),
                ) else {
                    continue;
                };
                let Some(name) = strings.get(name_idx as usize) else {
                    continue;
                };
                let name = p.storage.strings.intern(name);
                let category = prof
                    .categories
                    .get(cat as usize)
                    .map_or(StrId::NULL, |c| p.storage.strings.intern(c));
                let phase = match phase & 0xff {
                    0 => Phase::Instant,
                    1 => Phase::Interval,
                    2 => Phase::Start,
                    3 => Phase::End,
                    _ => continue,
                };
                let ts = ns(if phase == Phase::End { end } else { start });
                let dur = if phase == Phase::Interval {
                    ns(end - start).max(0)
                } else {
                    0
                };
                meta(&mut out, ts);
                out.push((
                    ts,
                    Event::Marker {
                        tid: t.tid,
                        phase,
                        name,
                        category,
                        dur,
                        data: t.marker_data.get(i).cloned().flatten(),
                    },
                ));
            }
        }
        out
    }
}

/// Records a CPU sample of a profiler's own format for the profile views
/// (`zerotrace flamegraph`, `convert --format pprof`), as `linux.perf`'s
/// samples are, when the loader gathers them.
pub(crate) fn profile_facts(p: &mut Parser, row: u32, callsite: u32) {
    if p.storage.profile_facts.gathered {
        p.storage
            .profile_facts
            .perf_samples
            .push(crate::storage::profile_facts::PerfSampleFacts {
                row,
                sequence: 0,
                packet: 0,
                cpu: None,
                callstack_iid: Some(u64::from(callsite)),
                unresolved: None,
                timebase_count: None,
            });
    }
}

/// A marker's `data` as `data.*` args.
fn data_args(p: &mut Parser, data: &Option<Value>, out: &mut ArgSetBuilder) {
    let Some(Value::Object(_)) = data else {
        return;
    };
    let text = data.as_ref().map(Value::to_string).unwrap_or_default();
    // Args read before an error stay, as with Chrome JSON's args.
    let _ = super::json::args::add(&mut p.storage, text.as_bytes(), "data", out);
}

fn import(p: &mut Parser, mut events: Vec<(i64, Event)>) {
    events.sort_by_key(|(ts, _)| *ts);
    let source = p.storage.strings.intern("gecko");
    let mut open: HashMap<u32, ArgSetBuilder> = HashMap::default();
    // Marker tracks by thread, category and name.
    let mut tracks: HashMap<(u32, StrId, StrId), u32> = HashMap::default();
    for (ts, e) in &events {
        p.storage.work.step(1);
        let ts = *ts;
        match e {
            Event::Thread { tid, pid, name } => {
                let utid =
                    p.processes
                        .update_thread(&mut p.storage, i64::from(*tid), i64::from(*pid));
                p.processes
                    .set_thread_name(&mut p.storage, utid, *name, NamePriority::Other);
            }
            Event::Sample { tid, callsite } => {
                let utid = p
                    .processes
                    .get_or_create_thread(&mut p.storage, i64::from(*tid));
                let task = p.profiling.samples.task_context(
                    &mut p.storage,
                    TaskContextRow {
                        upid: None,
                        utid: Some(utid),
                        async_context_id: None,
                    },
                );
                let row = ProfilerSampleTracker::add_sample(
                    &mut p.storage,
                    ProfilerSampleRow {
                        ts,
                        source,
                        task_context_id: Some(task),
                        execution_context_id: None,
                        callsite_id: Some(*callsite),
                        unwind_error: StrId::NULL,
                        session_id: None,
                        counter_set_id: None,
                    },
                );
                profile_facts(p, row, *callsite);
            }
            Event::Marker {
                tid,
                phase,
                name,
                category,
                dur,
                data,
            } => {
                let utid = p
                    .processes
                    .get_or_create_thread(&mut p.storage, i64::from(*tid));
                let track = match tracks.get(&(utid, *category, *name)) {
                    Some(t) => *t,
                    None => {
                        let track_name = p.storage.strings.get(*name).unwrap_or("").to_owned();
                        let mut spec =
                            TrackSpec::new(Some(&track_name), "firefox_marker", EventType::Slice);
                        spec.utid = Some(utid);
                        spec.dimensions = vec![
                            ("firefox_marker_category", ArgValue::String(*category)),
                            ("firefox_marker_name", ArgValue::String(*name)),
                        ];
                        let t = p.tracks.interned_counter(&mut p.storage, &spec);
                        tracks.insert((utid, *category, *name), t);
                        t
                    }
                };
                let mut args = ArgSetBuilder::default();
                data_args(p, data, &mut args);
                let row = SliceRow {
                    ts,
                    dur: -1,
                    track_id: track,
                    category: *category,
                    name: *name,
                    ..Default::default()
                };
                match phase {
                    Phase::Instant | Phase::Interval => {
                        let row = SliceRow {
                            dur: *dur,
                            arg_set_id: p.storage.args.add_set(&args).into(),
                            ..row
                        };
                        p.slices.begin(&mut p.storage, row);
                    }
                    Phase::Start => {
                        if let Some(id) = p.slices.begin(&mut p.storage, row) {
                            open.insert(id, args);
                        }
                    }
                    Phase::End => {
                        if let Some(id) = p.slices.end(&mut p.storage, track, ts, None) {
                            let mut b = open.remove(&id).unwrap_or_default();
                            for a in args.args() {
                                b.add(a.flat_key, a.key, a.value);
                            }
                            let set = p.storage.args.add_set(&b);
                            if let Some(s) = p.storage.slices.get_mut(id as usize) {
                                s.arg_set_id = set.into();
                            }
                        }
                    }
                }
            }
        }
    }
    let mut left: Vec<(u32, ArgSetBuilder)> = open.into_iter().collect();
    left.sort_by_key(|(id, _)| *id);
    for (id, b) in left {
        let set = p.storage.args.add_set(&b);
        if let Some(s) = p.storage.slices.get_mut(id as usize) {
            s.arg_set_id = set.into();
        }
    }
}

impl FormatReader for GeckoLoad {
    fn push(&mut self, _p: &mut Parser, data: &[u8]) -> Result<(), TraceError> {
        self.bytes.extend_from_slice(data);
        Ok(())
    }

    fn held_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn finish(self: Box<Self>, p: &mut Parser) -> Result<(), TraceError> {
        let doc: Value =
            serde_json::from_slice(&self.bytes).map_err(|e| TraceError::Malformed {
                format: "gecko",
                offset: 0,
                message: format!("the profile is no JSON document ({e})"),
            })?;
        drop(self);
        let prof = Profile::read(&doc);
        drop(doc);
        let events = GeckoLoad::events(p, &prof);
        import(p, events);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Loader;
    use crate::storage::Storage;

    /// Preprocessed shape (samply's): two threads, one with samples of a
    /// two-frame stack and one of its root, one with markers of each phase.
    const PREPROCESSED: &str = r#"{
      "meta": {"categories": [{"name": "Other"}, {"name": "DOM"}]},
      "threads": [
        {"name": "worker", "tid": "11", "pid": 10,
         "stringArray": ["main (in /bin/app)", "work (in /bin/app)", "start"],
         "frameTable": {"func": [0, 1, 2]},
         "funcTable": {"name": [0, 1, 2]},
         "stackTable": {"prefix": [null, 0, null], "frame": [0, 1, 2]},
         "samples": {"stack": [1, 0, null, 2], "time": [1.5, 2.0, 3.0, 4.0]}},
        {"name": "ui", "tid": 12, "pid": 10,
         "stringArray": ["Click", "Boot", "DOMEvent"],
         "markers": {
           "name": [0, 1, 2, 2], "startTime": [10.0, 20.0, 30.0, 0.0],
           "endTime": [10.0, 25.0, 0.0, 35.0], "phase": [0, 1, 2, 3],
           "category": [0, 0, 1, 1],
           "data": [{"flow": 7}, null, {"target": "btn"}, null], "length": 4}}
      ]
    }"#;

    /// Legacy shape: schema + data tables, `stringTable`.
    const LEGACY: &str = r#"{
      "libs": [],
      "threads": [
        {"name": "old", "tid": 5, "pid": 5,
         "stringTable": ["root", "leaf (in libc.so)"],
         "frameTable": {"schema": {"location": 0}, "data": [[0], [1]]},
         "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[null, 0], [0, 1]]},
         "samples": {"schema": {"stack": 0, "time": 1}, "data": [[1, 7.25], [0, 8]]}}
      ]
    }"#;

    fn load(text: &str, step: usize) -> Storage {
        let mut l = Loader::new();
        for c in text.as_bytes().chunks(step) {
            l.push(c).unwrap();
        }
        l.finish().unwrap()
    }

    /// Each sample's (ts, thread name, frames leaf first, leaf mapping).
    fn samples(st: &Storage) -> Vec<(i64, String, Vec<String>, String)> {
        let p = &st.profiling;
        let s = |id| st.strings.get(id).unwrap_or("").to_owned();
        p.samples
            .iter()
            .map(|smp| {
                let task = &p.task_contexts[smp.task_context_id.unwrap() as usize];
                let thread = s(st.threads[task.utid.unwrap() as usize].name);
                let mut frames = Vec::new();
                let mut c = smp.callsite_id;
                let mut mapping = String::new();
                while let Some(id) = c {
                    let cs = &p.callsites[id as usize];
                    let f = &p.frames[cs.frame_id as usize];
                    if mapping.is_empty() {
                        mapping = s(p.mappings[f.mapping as usize].name);
                    }
                    frames.push(s(f.name));
                    c = cs.parent_id;
                }
                (smp.ts, thread, frames, mapping)
            })
            .collect()
    }

    /// A preprocessed Gecko profile loads: samples on their named
    /// threads with callsites root first, frames on the mapping of their
    /// ` (in lib)` suffix or `gecko`; markers as slices of each phase
    /// with their category and `data.*` args; whatever the chunks.
    #[test]
    fn gecko_profiles_load_samples_callsites_and_markers() {
        for step in [PREPROCESSED.len(), 1, 13] {
            let st = load(PREPROCESSED, step);
            let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
            assert_eq!(
                samples(&st),
                [
                    (
                        1_500_000,
                        "worker".into(),
                        own(&["work", "main"]),
                        "/bin/app".into()
                    ),
                    (
                        2_000_000,
                        "worker".into(),
                        own(&["main"]),
                        "/bin/app".into()
                    ),
                    (4_000_000, "worker".into(), own(&["start"]), "gecko".into()),
                ]
            );
            let worker = st.threads.iter().find(|t| t.tid == 11).unwrap();
            assert_eq!(st.processes[worker.upid.unwrap() as usize].pid, 10);
            let slices: Vec<(i64, i64, &str, Option<&str>)> = st
                .slices
                .iter()
                .map(|s| {
                    (
                        s.ts,
                        s.dur,
                        st.strings.get(s.name).unwrap_or(""),
                        st.strings.get(s.category),
                    )
                })
                .collect();
            assert_eq!(
                slices,
                [
                    (10_000_000, 0, "Click", Some("Other")),
                    (20_000_000, 5_000_000, "Boot", Some("Other")),
                    (30_000_000, 5_000_000, "DOMEvent", Some("DOM")),
                ]
            );
            let arg = |i: usize| {
                let a = st
                    .args
                    .set(st.slices[i].arg_set_id.get().unwrap())
                    .next()
                    .unwrap();
                (st.strings.get(a.key).unwrap().to_owned(), a.value)
            };
            assert_eq!(
                arg(0),
                (
                    "data.flow".to_owned(),
                    crate::storage::args::ArgValue::Int(7)
                )
            );
            let target = st.strings.find("btn").unwrap();
            assert_eq!(
                arg(2),
                (
                    "data.target".to_owned(),
                    crate::storage::args::ArgValue::String(target)
                )
            );
            let track = &st.tracks[st.slices[2].track_id as usize];
            let ui = st.threads.iter().position(|t| t.tid == 12).unwrap();
            assert_eq!(track.utid, Some(ui as u32));
        }
    }

    /// The profile views (`zerotrace flamegraph`, `convert --format
    /// pprof`) read a Gecko profile's samples as they read `linux.perf`'s.
    #[test]
    fn gecko_samples_reach_the_profile_views() {
        use crate::profile_view::{Filter, Profile, encode_pprof, folded};
        let prof = Profile::from_trace(PREPROCESSED.as_bytes()).unwrap();
        assert_eq!(
            folded(&prof, &Filter::default()).lines(),
            ["main 1", "main;work 1", "start 1"]
        );
        assert_eq!(prof.samples()[0].tid, 11);
        assert!(!encode_pprof(&prof, &Filter::default()).unwrap().is_empty());
    }

    /// A legacy Gecko profile (schema + data tables) loads its samples.
    #[test]
    fn legacy_gecko_profiles_load_their_samples() {
        let st = load(LEGACY, LEGACY.len());
        let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            samples(&st),
            [
                (
                    7_250_000,
                    "old".into(),
                    own(&["leaf", "root"]),
                    "libc.so".into()
                ),
                (8_000_000, "old".into(), own(&["root"]), "gecko".into()),
            ]
        );
    }
}
