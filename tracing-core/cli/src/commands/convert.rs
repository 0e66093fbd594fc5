//! `zerotrace convert`: Chrome's JSON trace format (slices as B/E,
//! instants, counters, flows as s/t/f steps, process and thread names as
//! metadata events, args with dicts and arrays) for tools that read it,
//! written from the trace processor's tables (`slice`, `track` and its
//! kinds, `thread`, `process`, `args`, `counter`, `flow`): the one reader
//! of TrackEvents, so names, tracks, clocks and interning resolve as they
//! do in `zerotrace sql`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{Map, Value, json};
use zerotrace_trace_processor::{LoadOptions, TraceProcessor, Value as Sql};

use super::json_args::{arg_value, insert};
use super::sql::load_trace;
use super::{CliError, write_output};

/// The first lane number given to a track that is not a thread's (an
/// async or named track): Chrome's model has threads only, so each such
/// track shows as a thread of its own, named after the track.
const FIRST_LANE: i64 = 1_000_000;

/// How many parents are followed to find a track's process (a hostile
/// trace may chain tracks without end).
const MAX_PARENT_DEPTH: usize = 64;

/// Where a track's events go in Chrome's model.
#[derive(Debug, Clone, Copy, Default)]
struct Lane {
    pid: i64,
    tid: i64,
    /// A process-scoped track (its instants are `"s": "p"`).
    process_scoped: bool,
}

/// A track as the tables give it.
#[derive(Debug, Default)]
struct Track {
    name: Option<String>,
    parent: Option<i64>,
    utid: Option<i64>,
    upid: Option<i64>,
    counter: bool,
    /// A TrackEvent track that is neither a thread's nor a process's own
    /// (`type` `track_event`, or one of the `*_merged_track_event` tracks
    /// sibling descriptor tracks merge into): an async or named track, a
    /// lane of its own.
    own_lane: bool,
}

/// The rows of `sql`, or a trace error naming `path`.
fn rows(tp: &TraceProcessor, path: &str, sql: &str) -> Result<Vec<Vec<Sql>>, CliError> {
    tp.query(sql)
        .map(|r| r.rows)
        .map_err(|e| CliError::BadTrace {
            path: path.to_owned(),
            reason: format!("reading the trace processor's tables: {e}"),
        })
}

fn int(v: Option<&Sql>) -> Option<i64> {
    match v {
        Some(Sql::Int(i)) => Some(*i),
        _ => None,
    }
}

fn text(v: Option<&Sql>) -> Option<String> {
    match v {
        Some(Sql::Text(s)) => Some(s.clone()),
        _ => None,
    }
}

/// Nanoseconds as the format's microseconds (three decimals: exact).
fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// A metadata event naming a process or thread (`what`: `process_name`
/// or `thread_name`).
fn naming(what: &str, pid: i64, tid: i64, name: &str) -> Value {
    json!({"ph": "M", "name": what, "pid": pid, "tid": tid, "args": {"name": name}})
}

/// The tracks, threads' pids and tids, and the metadata events naming
/// processes, threads and lanes.
struct Model {
    lanes: HashMap<i64, Lane>,
    tracks: BTreeMap<i64, Track>,
    metadata: Vec<Value>,
}

fn model(tp: &TraceProcessor, path: &str) -> Result<Model, CliError> {
    let mut metadata = Vec::new();
    let mut pids: HashMap<i64, i64> = HashMap::new();
    for r in rows(
        tp,
        path,
        "SELECT upid, pid, name FROM process ORDER BY upid",
    )? {
        let (Some(upid), Some(pid)) = (int(r.first()), int(r.get(1))) else {
            continue;
        };
        pids.insert(upid, pid);
        if let Some(n) = text(r.get(2)) {
            metadata.push(naming("process_name", pid, 0, &n));
        }
    }
    let mut threads: HashMap<i64, (i64, i64)> = HashMap::new();
    let sql = "SELECT utid, tid, upid, name, is_idle FROM thread ORDER BY utid";
    for r in rows(tp, path, sql)? {
        let [utid, tid, upid] = [0, 1, 2].map(|i| int(r.get(i)));
        let (Some(utid), Some(tid)) = (utid, tid) else {
            continue;
        };
        let pid = upid.and_then(|u| pids.get(&u).copied()).unwrap_or(0);
        threads.insert(utid, (pid, tid));
        // The swapper the trace processor always has is no thread of the trace.
        if let (Some(n), Some(0)) = (text(r.get(3)), int(r.get(4))) {
            metadata.push(naming("thread_name", pid, tid, &n));
        }
    }
    let mut tracks = BTreeMap::new();
    for r in rows(
        tp,
        path,
        "SELECT t.id, t.name, t.parent_id, \
           COALESCE(tt.utid, tct.utid), COALESCE(pt.upid, pct.upid), ct.id IS NOT NULL, \
           (t.type IN ('track_event', 'global_track_event', 'thread_track_event', \
                       'global_merged_track_event', 'process_merged_track_event', \
                       'thread_merged_track_event') \
            OR (t.type = 'process_track_event' AND t.parent_id IS NOT NULL)) \
         FROM track t \
         LEFT JOIN thread_track tt ON tt.id = t.id \
         LEFT JOIN process_track pt ON pt.id = t.id \
         LEFT JOIN thread_counter_track tct ON tct.id = t.id \
         LEFT JOIN process_counter_track pct ON pct.id = t.id \
         LEFT JOIN counter_track ct ON ct.id = t.id \
         ORDER BY t.id",
    )? {
        let Some(id) = int(r.first()) else { continue };
        tracks.insert(
            id,
            Track {
                name: text(r.get(1)),
                parent: int(r.get(2)),
                utid: int(r.get(3)),
                upid: int(r.get(4)),
                counter: int(r.get(5)) == Some(1),
                own_lane: int(r.get(6)) == Some(1),
            },
        );
    }
    // A track's process: its own, its thread's, or its nearest parent's.
    let pid_of = |mut id: i64| -> i64 {
        for _ in 0..MAX_PARENT_DEPTH {
            let Some(t) = tracks.get(&id) else { break };
            if let Some(p) = t.upid.and_then(|u| pids.get(&u)) {
                return *p;
            }
            if let Some((p, _)) = t.utid.and_then(|u| threads.get(&u)) {
                return *p;
            }
            match t.parent {
                Some(p) => id = p,
                None => break,
            }
        }
        0
    };
    let mut lanes = HashMap::new();
    let mut next_lane = FIRST_LANE;
    for (&id, t) in &tracks {
        let thread = t.utid.and_then(|u| threads.get(&u)).filter(|_| !t.own_lane);
        let lane = if let Some(&(pid, tid)) = thread {
            Lane {
                pid,
                tid,
                process_scoped: false,
            }
        } else if t.upid.is_some() && !t.own_lane {
            Lane {
                pid: pid_of(id),
                tid: 0,
                process_scoped: true,
            }
        } else if t.counter {
            Lane {
                pid: pid_of(id),
                ..Lane::default()
            }
        } else {
            // An async or named track: its process, a lane of its own.
            let lane = Lane {
                pid: pid_of(id),
                tid: next_lane,
                process_scoped: false,
            };
            next_lane += 1;
            if let Some(n) = &t.name {
                metadata.push(naming("thread_name", lane.pid, lane.tid, n));
            }
            lane
        };
        lanes.insert(id, lane);
    }
    Ok(Model {
        lanes,
        tracks,
        metadata,
    })
}

/// The args of every slice, by arg set.
fn slice_args(
    tp: &TraceProcessor,
    path: &str,
) -> Result<HashMap<i64, Map<String, Value>>, CliError> {
    let mut sets: HashMap<i64, Map<String, Value>> = HashMap::new();
    for r in rows(
        tp,
        path,
        "SELECT arg_set_id, key, value_type, int_value, string_value, real_value FROM args \
         WHERE arg_set_id IN (SELECT arg_set_id FROM slice WHERE arg_set_id IS NOT NULL) \
         ORDER BY id",
    )? {
        let (Some(set), Some(key)) = (int(r.first()), text(r.get(1))) else {
            continue;
        };
        let value_type = text(r.get(2)).unwrap_or_default();
        let null = Sql::Null;
        let value = arg_value(
            &value_type,
            r.get(3).unwrap_or(&null),
            r.get(4).unwrap_or(&null),
            r.get(5).unwrap_or(&null),
        );
        insert(sets.entry(set).or_default(), &key, value);
    }
    Ok(sets)
}

/// Events with their time (ns), to be sorted.
type Timed = Vec<(i64, Value)>;

/// Each slice's start and lane by slice id, for flows.
type SliceLanes = HashMap<i64, (i64, Lane)>;

/// A slice as the events need it.
struct Slice {
    ts: i64,
    dur: i64,
    lane: Lane,
    name: String,
    cat: String,
    args: Option<Map<String, Value>>,
}

/// Each lane's slices as B/E pairs (an unfinished slice, `dur` -1, has
/// no E) and instants: per lane in time order, ends before the begins at
/// the same time, children's ends before their parent's. The events and
/// each slice's lane and start, for flows.
fn slice_events(
    tp: &TraceProcessor,
    path: &str,
    model: &Model,
) -> Result<(Timed, SliceLanes), CliError> {
    let args = slice_args(tp, path)?;
    let mut by_lane: BTreeMap<(i64, i64), Vec<Slice>> = BTreeMap::new();
    let mut where_slices = HashMap::new();
    for r in rows(
        tp,
        path,
        "SELECT id, ts, dur, track_id, name, category, arg_set_id FROM slice \
         ORDER BY ts, depth, id",
    )? {
        let (Some(id), Some(ts), Some(track)) = (int(r.first()), int(r.get(1)), int(r.get(3)))
        else {
            continue;
        };
        let lane = model.lanes.get(&track).copied().unwrap_or_default();
        where_slices.insert(id, (ts, lane));
        let s = Slice {
            ts,
            dur: int(r.get(2)).unwrap_or(-1),
            lane,
            name: text(r.get(4)).unwrap_or_default(),
            cat: text(r.get(5)).unwrap_or_default(),
            // Arg sets are shared by equal args: cloned for each slice.
            args: int(r.get(6))
                .and_then(|a| args.get(&a).cloned())
                .filter(|m| !m.is_empty()),
        };
        by_lane.entry((lane.pid, lane.tid)).or_default().push(s);
    }
    let mut events = Vec::new();
    for (_, slices) in by_lane {
        // Open slices: their ends, innermost last.
        let mut open: Vec<(i64, Lane)> = Vec::new();
        let close_until = |open: &mut Vec<(i64, Lane)>, t: i64, events: &mut Timed| {
            while let Some(&(end, lane)) = open.last() {
                if end > t {
                    break;
                }
                open.pop();
                events.push((
                    end,
                    json!({"ph": "E", "ts": us(end), "pid": lane.pid, "tid": lane.tid}),
                ));
            }
        };
        for s in slices {
            close_until(&mut open, s.ts, &mut events);
            let mut ev = json!({"name": s.name, "cat": s.cat, "ts": us(s.ts),
                                "pid": s.lane.pid, "tid": s.lane.tid});
            if let Some(a) = s.args {
                ev["args"] = Value::Object(a);
            }
            if s.dur == 0 {
                ev["ph"] = json!("i");
                ev["s"] = json!(if s.lane.process_scoped { "p" } else { "t" });
                events.push((s.ts, ev));
                continue;
            }
            ev["ph"] = json!("B");
            events.push((s.ts, ev));
            // Unfinished (-1): never closed. A slice ending after its
            // parent (a hostile trace) closes with it.
            let end = if s.dur < 0 {
                i64::MAX
            } else {
                s.ts.saturating_add(s.dur)
            };
            let end = open.last().map_or(end, |&(parent, _)| end.min(parent));
            open.push((end, s.lane));
        }
        // Close what ended; the unfinished stay open.
        close_until(&mut open, i64::MAX - 1, &mut events);
    }
    Ok((events, where_slices))
}

/// The values of the TrackEvent counter tracks, named after their track.
fn counter_events(tp: &TraceProcessor, path: &str, model: &Model) -> Result<Timed, CliError> {
    let mut events = Vec::new();
    for r in rows(
        tp,
        path,
        "SELECT c.ts, c.track_id, c.value FROM counter c \
         JOIN counter_track t ON c.track_id = t.id \
         WHERE t.type GLOB '*_counter_track_event' \
         ORDER BY c.ts, c.id",
    )? {
        let (Some(ts), Some(track)) = (int(r.first()), int(r.get(1))) else {
            continue;
        };
        let value = match r.get(2) {
            Some(Sql::Int(i)) => json!(i),
            // An integer counter is stored as a double: written back as one.
            Some(Sql::Real(v)) if v.fract() == 0.0 && v.abs() < 9.0e15 => json!(*v as i64),
            Some(Sql::Real(v)) => json!(v),
            _ => Value::Null,
        };
        let name = model
            .tracks
            .get(&track)
            .and_then(|t| t.name.clone())
            .unwrap_or_else(|| "counter".into());
        let pid = model.lanes.get(&track).map_or(0, |l| l.pid);
        events.push((
            ts,
            json!({"ph": "C", "name": name, "ts": us(ts), "pid": pid, "args": {"value": value}}),
        ));
    }
    Ok(events)
}

/// Flows: the slices a flow id links, in time order, as one start (`s`),
/// steps (`t`) and an end (`f`), under the trace's flow id (the flow's
/// row id when it has none).
fn flow_events(tp: &TraceProcessor, path: &str, slices: &SliceLanes) -> Result<Timed, CliError> {
    let mut flows: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for r in rows(
        tp,
        path,
        "SELECT id, slice_out, slice_in, trace_id FROM flow ORDER BY id",
    )? {
        let (Some(id), Some(out), Some(into)) = (int(r.first()), int(r.get(1)), int(r.get(2)))
        else {
            continue;
        };
        let steps = flows.entry(int(r.get(3)).unwrap_or(id)).or_default();
        steps.extend([out, into]);
    }
    let mut events = Vec::new();
    for (id, mut steps) in flows {
        steps.sort_by_key(|s| (slices.get(s).map_or(0, |(ts, _)| *ts), *s));
        steps.dedup();
        let last = steps.len().saturating_sub(1);
        for (i, s) in steps.iter().enumerate() {
            let Some(&(ts, lane)) = slices.get(s) else {
                continue;
            };
            let ph = match i {
                0 => "s",
                i if i == last => "f",
                _ => "t",
            };
            events.push((
                ts,
                json!({"ph": ph, "id": id, "name": "flow", "cat": "flow", "ts": us(ts),
                       "pid": lane.pid, "tid": lane.tid, "bp": "e"}),
            ));
        }
    }
    Ok(events)
}

/// Converts a loaded trace: metadata first, then every event in time
/// order (a stable sort: each lane's order at equal times stays).
fn convert(tp: &TraceProcessor, path: &str) -> Result<Value, CliError> {
    let model = model(tp, path)?;
    let (mut events, slices) = slice_events(tp, path, &model)?;
    events.extend(counter_events(tp, path, &model)?);
    events.extend(flow_events(tp, path, &slices)?);
    events.sort_by_key(|(ts, _)| *ts);
    let mut all = model.metadata;
    all.extend(events.into_iter().map(|(_, e)| e));
    Ok(json!({"traceEvents": all, "displayTimeUnit": "ns"}))
}

/// Runs `convert` (`--json`, the only format, is optional).
pub fn run(path: &Path, out: Option<&Path>) -> Result<(), CliError> {
    let tp = load_trace(path, LoadOptions::default())?;
    let name = path.display().to_string();
    // A trace cut inside a packet is not converted in part: an invalid
    // trace, as for `dump` and `stats`.
    if let Some(w) = tp.load_warnings().first() {
        return Err(CliError::BadTrace {
            path: name,
            reason: w.to_string(),
        });
    }
    let json = convert(&tp, &name)?;
    let text = serde_json::to_string(&json).map_err(|e| CliError::Usage(e.to_string()))?;
    write_output(out.unwrap_or(Path::new("-")), text.as_bytes(), false)
}
