//! V8's legacy CPU profile in Chrome JSON (`P` events, what Chrome and
//! Node write as `Profile`/`ProfileChunk`), as upstream imports it: an
//! event's `id` names a profiling session; its `args.data.startTime`
//! (µs) starts the session's clock for its process; its
//! `args.data.cpuProfile.nodes` are call tree nodes (an `id`, a `parent`
//! or `children`, a `callFrame` with `functionName` and `url`) that become
//! callsites over frames of the session's own dummy mapping; and its
//! `cpuProfile.samples` with `timeDeltas` (µs, each from the previous
//! sample) are samples of the event's thread, rows of
//! `cpu_profile_stack_sample` from the `legacy_v8` source.
//!
//! Nodes and the sessions' clocks are read as the events are read (the
//! samples' times depend on the events' order in the file, as upstream's);
//! the samples join the sorted events (phase `P`, the session as `id`, the
//! node as `dur`) and find their callsite when parsed. A node that cannot
//! be placed counts `legacy_v8_cpu_profile_invalid_callsite`, a sample
//! whose session or node is unknown `legacy_v8_cpu_profile_invalid_sample`,
//! a session id or sample list that does not read `json_tokenizer_failure`.

use serde_json::Value;

use crate::column_store::strings::StrId;
use crate::hash::HashMap;
use crate::parser::Parser;
use crate::storage::Storage;
use crate::storage::profiling_rows::{ProfilerSampleRow, TaskContextRow};
use crate::tracker::profiler_samples::ProfilerSampleTracker;
use crate::tracker::stack_profile::DummyOwner;

use super::event::{Id, JsonEvent};
use super::store::EventStore;

/// One session of one process.
#[derive(Debug, Default)]
struct Session {
    /// The clock: the last sample's time (ns).
    ts: i64,
    /// Node id → callsite.
    callsites: HashMap<u32, u32>,
    /// Node id → the parent a node's `children` gave it.
    parents: HashMap<u32, u32>,
}

/// Every session's state.
#[derive(Debug, Default)]
pub struct V8Profiles {
    sessions: HashMap<(u64, i64), Session>,
}

/// A node of the call tree.
struct Node<'a> {
    id: u32,
    parent: Option<u32>,
    children: Vec<u32>,
    function: &'a str,
    url: Option<&'a str>,
}

fn u32_of(v: &Value) -> Option<u32> {
    v.as_u64().and_then(|n| u32::try_from(n).ok())
}

fn node(v: &Value) -> Option<Node<'_>> {
    let o = v.as_object()?;
    let frame = o.get("callFrame").and_then(Value::as_object);
    Some(Node {
        id: o.get("id").and_then(u32_of).unwrap_or(0),
        parent: o.get("parent").and_then(u32_of),
        children: o
            .get("children")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(u32_of).collect())
            .unwrap_or_default(),
        function: frame
            .and_then(|f| f.get("functionName"))
            .and_then(Value::as_str)
            .unwrap_or(""),
        url: frame
            .and_then(|f| f.get("url"))
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty()),
    })
}

/// The session id of a `P` event: an integer, or a string of hex digits.
fn session_id(storage: &Storage, id: Option<Id>) -> Result<Option<u64>, ()> {
    match id {
        None => Ok(None),
        Some(Id::Int(i)) => Ok(Some(i)),
        Some(Id::Str(s)) => {
            let s = storage.strings.get(s).unwrap_or("");
            let s = s
                .strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .unwrap_or(s);
            u64::from_str_radix(s, 16).map(Some).map_err(|_| ())
        }
    }
}

impl V8Profiles {
    /// Reads a `P` event: its session's start, nodes and samples (pushed
    /// to `out` at their times).
    pub fn read(&mut self, p: &mut Parser, e: &JsonEvent, out: &mut EventStore) {
        let session = match session_id(&p.storage, e.id) {
            Ok(Some(s)) => s,
            Ok(None) => return,
            Err(()) => {
                p.storage.stats.incr("json_tokenizer_failure");
                return;
            }
        };
        let Some(args) = e.args.as_deref() else {
            return;
        };
        // Args that do not read are no profile.
        let Ok(args) = serde_json::from_slice::<Value>(args) else {
            return;
        };
        let Some(data) = args.get("data").filter(|d| d.is_object()) else {
            return;
        };
        let key = (session, e.pid);
        if let Some(start) = data.get("startTime").and_then(Value::as_i64) {
            self.sessions.entry(key).or_default().ts = start.saturating_mul(1000);
            return;
        }
        let profile = data.get("cpuProfile").filter(|c| c.is_object());
        let nodes = profile
            .and_then(|c| c.get("nodes"))
            .and_then(Value::as_array);
        for n in nodes.into_iter().flatten().filter_map(node) {
            if self.add_node(p, key, &n).is_none() {
                p.storage
                    .stats
                    .incr("legacy_v8_cpu_profile_invalid_callsite");
            }
        }
        let numbers = |v: Option<&Value>, of: fn(&Value) -> Option<i64>| -> Vec<i64> {
            v.and_then(Value::as_array)
                .map(|a| a.iter().filter_map(of).collect())
                .unwrap_or_default()
        };
        let samples = numbers(profile.and_then(|c| c.get("samples")), |v| {
            u32_of(v).map(i64::from)
        });
        let deltas = numbers(data.get("timeDeltas"), Value::as_i64);
        if samples.len() != deltas.len() {
            p.storage.stats.incr("json_tokenizer_failure");
            return;
        }
        for (node, delta) in samples.into_iter().zip(deltas) {
            let Some(s) = self.sessions.get_mut(&key) else {
                p.storage.stats.incr("json_tokenizer_failure");
                return;
            };
            s.ts = s.ts.saturating_add(delta.saturating_mul(1000));
            let sample = JsonEvent {
                phase: b'P',
                pid: e.pid,
                tid: e.tid,
                id: Some(Id::Int(session)),
                dur: Some(node),
                ..JsonEvent::default()
            };
            out.push(s.ts, &sample, None, &[]);
        }
    }

    /// A node of a session's call tree as a callsite; None when it cannot
    /// be placed (no session, a node seen twice, an unknown parent, a
    /// child claimed twice).
    fn add_node(&mut self, p: &mut Parser, key: (u64, i64), n: &Node<'_>) -> Option<()> {
        let s = self.sessions.get_mut(&key)?;
        if s.callsites.contains_key(&n.id) {
            return None;
        }
        let stacks = &mut p.profiling.stacks;
        let pid = u32::try_from(key.1).unwrap_or(0);
        let frame = stacks.intern_dummy_frame(
            &mut p.storage,
            DummyOwner::LegacyV8(key.0, pid),
            n.function,
            n.url,
            None,
        );
        let parent = n.parent.or_else(|| s.parents.get(&n.id).copied());
        let (callsite, depth) = match parent {
            Some(parent) => {
                let parent = *s.callsites.get(&parent)?;
                let depth = p
                    .storage
                    .profiling
                    .callsites
                    .get(parent as usize)?
                    .depth
                    .saturating_add(1);
                let id = stacks.intern_callsite(&mut p.storage, Some(parent), frame, depth);
                (id, depth)
            }
            None => (stacks.intern_callsite(&mut p.storage, None, frame, 0), 0),
        };
        s.callsites.insert(n.id, callsite);
        for &child in &n.children {
            if s.parents.insert(child, n.id).is_some() {
                return None;
            }
            // A child read before its parent moves under it.
            if let Some(&c) = s.callsites.get(&child) {
                if let Some(row) = p.storage.profiling.callsites.get_mut(c as usize) {
                    row.depth = depth.saturating_add(1);
                    row.parent_id = Some(callsite);
                }
            }
        }
        Some(())
    }

    /// A sample (a `P` event [`V8Profiles::read`] made) into the tables.
    pub fn sample(&self, p: &mut Parser, ts: i64, e: &JsonEvent, source: StrId) {
        let callsite = match (e.id, e.dur) {
            (Some(Id::Int(session)), Some(node)) => self
                .sessions
                .get(&(session, e.pid))
                .and_then(|s| s.callsites.get(&u32::try_from(node).ok()?))
                .copied(),
            _ => None,
        };
        let Some(callsite) = callsite else {
            p.storage.stats.incr("legacy_v8_cpu_profile_invalid_sample");
            return;
        };
        let utid = p.processes.update_thread(&mut p.storage, e.tid, e.pid);
        let upid = p.processes.get_or_create_process(&mut p.storage, e.pid);
        let task = p.profiling.samples.task_context(
            &mut p.storage,
            TaskContextRow {
                upid: Some(upid),
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
                callsite_id: Some(callsite),
                unwind_error: StrId::NULL,
                session_id: None,
                counter_set_id: None,
            },
        );
        crate::load::gecko::profile_facts(p, row, callsite);
    }
}

#[cfg(test)]
mod tests {
    use crate::Loader;
    use crate::storage::Storage;

    fn load(text: &str) -> Storage {
        let mut l = Loader::new();
        l.push(text.as_bytes()).unwrap();
        l.finish().unwrap()
    }

    /// A session's start, then a chunk of nodes (one given by its parent,
    /// one by its parent's `children`, before that parent) and samples
    /// timed by deltas: three callsites, two samples on the event's thread
    /// at the start plus the summed deltas.
    #[test]
    fn v8_profile_chunks_become_callsites_and_samples() {
        let st = load(
            r#"[
{"ph":"P","name":"Profile","id":"0x2","pid":7,"tid":9,"ts":1,"args":{"data":{"startTime":1000}}},
{"ph":"P","name":"ProfileChunk","id":"0x2","pid":7,"tid":9,"ts":2,"args":{"data":{
  "cpuProfile":{"nodes":[
    {"id":3,"callFrame":{"functionName":"leaf","url":"app.js"}},
    {"id":1,"children":[3,2],"callFrame":{"functionName":"(root)"}},
    {"id":2,"callFrame":{"functionName":"other"}}],
   "samples":[3,2]},
  "timeDeltas":[5,10]}}},
{"ph":"X","name":"work","pid":7,"tid":9,"ts":1000,"dur":20}
]"#,
        );
        assert_eq!(st.stats.get("legacy_v8_cpu_profile_invalid_callsite"), 0);
        let cs = &st.profiling.callsites;
        assert_eq!(cs.len(), 3);
        let frames = &st.profiling.frames;
        let name = |c: u32| {
            let f = cs[c as usize].frame_id as usize;
            st.strings.get(frames[f].name).unwrap().to_string()
        };
        let samples: Vec<(i64, String, u32)> = st
            .profiling
            .samples
            .iter()
            .map(|s| {
                let c = s.callsite_id.unwrap();
                (s.ts, name(c), cs[c as usize].depth)
            })
            .collect();
        assert_eq!(
            samples,
            vec![
                (1_005_000, "leaf".to_string(), 1),
                (1_015_000, "other".to_string(), 1)
            ]
        );
        let leaf = st.profiling.samples[0].callsite_id.unwrap() as usize;
        assert_eq!(cs[leaf].parent_id.map(name), Some("(root)".to_string()));
        assert_eq!(
            st.strings.get(st.profiling.samples[0].source),
            Some("legacy_v8")
        );
    }

    /// A sample of a session never started is counted, not imported.
    #[test]
    fn a_chunk_without_its_session_counts_its_nodes_and_samples() {
        let st = load(
            r#"[{"ph":"P","id":5,"pid":1,"tid":1,"ts":2,"args":{"data":{
  "cpuProfile":{"nodes":[{"id":1,"callFrame":{"functionName":"f"}}],"samples":[1]},
  "timeDeltas":[1]}}}]"#,
        );
        assert_eq!(st.stats.get("legacy_v8_cpu_profile_invalid_callsite"), 1);
        assert_eq!(st.stats.get("json_tokenizer_failure"), 1);
        assert!(st.profiling.samples.is_empty());
    }
}
