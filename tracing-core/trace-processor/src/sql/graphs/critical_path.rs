//! The critical path walk of `sched.thread_executing_span`: which thread
//! a root thread's time waited on, through the wakeup graph. A node is a
//! span of a thread (id, utid) that runs over [ts, ts + dur) after being
//! idle for idle_dur (unknown when NULL), woken by node waker_id (NULL
//! when woken from an interrupt or unknown), and preceded on its thread
//! by node prev_id. From each root, the window [ts - idle_dur, ts + dur)
//! is attributed: a node's running part to the node itself, its idle part
//! to its waker one level deeper (to itself when it has no waker but a
//! predecessor), and any part of the window before its idle time to its
//! predecessor at the same level. Each row says which node blocks the
//! root over [ts, ts + dur), at which depth; rows come in the order the
//! walk (a stack, last pushed first) finds them.

use std::collections::HashMap;

use super::error::GraphError;
use super::rows::{Rows, int};

/// A node of the wakeup graph.
#[derive(Debug, Clone, Copy, Default)]
struct Node {
    utid: i64,
    ts: i64,
    dur: i64,
    idle_dur: Option<i64>,
    waker_id: Option<i64>,
    prev_id: Option<i64>,
}

/// A stretch of a root's time attributed to a blocking node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Blocked {
    /// The root node.
    pub root_id: i64,
    /// How many wakeups away from the root's thread.
    pub depth: i64,
    /// When the stretch begins.
    pub ts: i64,
    /// How long it lasts.
    pub dur: i64,
    /// The blocking node.
    pub blocker_id: i64,
    /// Its thread.
    pub blocker_utid: i64,
    /// The frame's parent: the root.
    pub parent_id: i64,
}

/// The wakeup graph of node rows (id, utid, ts, dur, idle_dur, waker_id,
/// prev_id); a later row of an id replaces an earlier one.
fn nodes(rows: &Rows) -> Result<HashMap<i64, Node>, GraphError> {
    let mut out = HashMap::new();
    if rows.values.is_empty() {
        return Ok(out);
    }
    if rows.arity < 7 {
        return Err(GraphError::Columns {
            what: "the wakeup graph",
            needed: 7,
            given: rows.arity,
        });
    }
    for r in rows.iter() {
        let at = |i: usize, what| int(r.get(i), what);
        let Some(id) = at(0, "id")? else { continue };
        out.insert(
            id,
            Node {
                utid: at(1, "utid")?.unwrap_or(0),
                ts: at(2, "ts")?.unwrap_or(0),
                dur: at(3, "dur")?.unwrap_or(0),
                idle_dur: at(4, "idle_dur")?,
                waker_id: at(5, "waker_id")?,
                prev_id: at(6, "prev_id")?,
            },
        );
    }
    Ok(out)
}

/// A window of a root's time to attribute from a node.
struct Frame {
    node: i64,
    start: i64,
    end: i64,
    depth: i64,
}

/// The blocking stretches of each root (ids without a node have none).
pub(crate) fn walk(graph: &Rows, roots: &[i64]) -> Result<Vec<Blocked>, GraphError> {
    let g = nodes(graph)?;
    let mut out = Vec::new();
    let mut stack = Vec::new();
    for &root_id in roots {
        let Some(root) = g.get(&root_id) else {
            continue;
        };
        stack.clear();
        stack.push(Frame {
            node: root_id,
            start: root.ts.saturating_sub(root.idle_dur.unwrap_or(0)),
            end: root.ts.saturating_add(root.dur),
            depth: 0,
        });
        while let Some(f) = stack.pop() {
            let Some(n) = g.get(&f.node).filter(|_| f.start < f.end) else {
                continue;
            };
            let idle_start = n.idle_dur.map_or(f.start, |d| n.ts.saturating_sub(d));
            let run_end = n.ts.saturating_add(n.dur);
            let (start, end) = (f.start.max(idle_start), f.end.min(run_end));
            let mut row = |ts: i64, end: i64| {
                out.push(Blocked {
                    root_id,
                    depth: f.depth,
                    ts,
                    dur: end - ts,
                    blocker_id: f.node,
                    blocker_utid: n.utid,
                    parent_id: root_id,
                });
            };
            // Time before this node's idle stretch is its predecessor's.
            if let (Some(_), Some(prev)) = (n.idle_dur, n.prev_id)
                && f.start < idle_start
            {
                stack.push(Frame {
                    node: prev,
                    start: f.start,
                    end: f.end.min(idle_start),
                    depth: f.depth,
                });
            }
            if start >= end {
                continue;
            }
            let idle_end = end.min(n.ts);
            if start < idle_end {
                match (n.waker_id, n.prev_id) {
                    (Some(waker), _) => stack.push(Frame {
                        node: waker,
                        start,
                        end: idle_end,
                        depth: f.depth + 1,
                    }),
                    (None, Some(_)) => row(start, idle_end),
                    (None, None) => {}
                }
            }
            let run_start = start.max(n.ts);
            if run_start < end {
                row(run_start, end);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::graphs::rows::{decode, encode};
    use rusqlite::types::Value;

    type Spec = (i64, i64, i64, i64, Option<i64>, Option<i64>, Option<i64>);

    fn graph(spec: &[Spec]) -> Rows {
        let o = |x: Option<i64>| x.map_or(Value::Null, Value::Integer);
        let v: Vec<Value> = spec
            .iter()
            .flat_map(|&(id, utid, ts, dur, idle, waker, prev)| {
                [
                    Value::Integer(id),
                    Value::Integer(utid),
                    Value::Integer(ts),
                    Value::Integer(dur),
                    o(idle),
                    o(waker),
                    o(prev),
                ]
            })
            .collect();
        decode(&encode(7, &v)).unwrap()
    }

    #[test]
    fn idle_time_goes_to_the_waker_and_earlier_time_to_the_predecessor() {
        // Thread 1 runs [0, 10) (node 1), sleeps, is woken by thread 2's
        // node 2 (running [5, 30)) and runs [30, 40) (node 3).
        let g = graph(&[
            (1, 1, 0, 10, None, None, None),
            (2, 2, 5, 25, Some(5), None, Some(9)),
            (3, 1, 30, 10, Some(20), Some(2), Some(1)),
        ]);
        let rows: Vec<(i64, i64, i64, i64)> = walk(&g, &[3])
            .unwrap()
            .iter()
            .map(|b| (b.depth, b.ts, b.dur, b.blocker_id))
            .collect();
        // Node 3 runs [30, 40); its idle [10, 30) is node 2's, which ran
        // [10, 30) of it; nothing precedes node 3's idle in the window.
        assert_eq!(rows, [(0, 30, 10, 3), (1, 10, 20, 2)]);
        // From node 2: its idle [0, 5) is self-attributed (no waker, a
        // predecessor), then its run.
        let from2: Vec<(i64, i64, i64)> = walk(&g, &[2, 99])
            .unwrap()
            .iter()
            .map(|b| (b.ts, b.dur, b.blocker_id))
            .collect();
        assert_eq!(from2, [(0, 5, 2), (5, 25, 2)]);
    }

    #[test]
    fn a_window_reaching_before_the_idle_time_walks_back_on_the_thread() {
        // Node 3's window is clipped by a waker whose idle began earlier.
        let g = graph(&[
            (1, 1, 0, 10, None, None, None),
            (3, 1, 30, 10, Some(20), Some(4), Some(1)),
            (4, 2, 0, 40, Some(0), None, None),
            (5, 3, 50, 10, Some(45), Some(3), None),
        ]);
        let rows: Vec<(i64, i64, i64, i64)> = walk(&g, &[5])
            .unwrap()
            .iter()
            .map(|b| (b.depth, b.ts, b.dur, b.blocker_id))
            .collect();
        // Node 5 runs [50, 60); its idle [5, 50) goes to node 3, which ran
        // [30, 40); node 3's idle [10, 30) goes to node 4 (running); the
        // window's [5, 10) before node 3's idle goes to node 1.
        assert_eq!(
            rows,
            [(0, 50, 10, 5), (1, 30, 10, 3), (2, 10, 20, 4), (1, 5, 5, 1)]
        );
    }
}
