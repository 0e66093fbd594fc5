//! `__intrinsic_slice_flattened`, the operator behind `slices.flat_slices`:
//! each slice tree laid flat on its track's timeline, every instant of a
//! root given to one slice of its stack. Upstream's rules:
//! - only roots and descendants with a positive duration take part;
//! - within a root, a descendant's start makes it the active slice and
//!   its end makes its parent active; of the events at one timestamp a
//!   start beats an end, and among equals the one of the smaller slice id
//!   (the outer slice) wins;
//! - each stretch from one event to the next that lasts is a row;
//! - the root holds the stretch from its start to the first such row and
//!   from the last row's end to its own end, when they last;
//! - a root no descendant is a direct child of is one row, all of it.
//!
//! Rows: `slice_id`, `ts`, `dur`, `root_id`, by root then time (declared
//! to SQLite, so that an ORDER BY root_id, ts sorts nothing).

use std::sync::Arc;

use super::{col, parents};
use crate::column_store::table::Table;

/// The table's columns.
pub(crate) const COLUMNS: &[&str] = &["slice_id", "ts", "dur", "root_id"];

/// No row (a root of none, no parent).
const NONE: u32 = u32::MAX;

/// One event of a root's timeline, ordered by time, then a start before
/// an end, then the slice that starts or ends (the key packs the rank in
/// its top bit, that slice below it and the slice active from then on in
/// the low 32 bits, which never decides: one slice has one start and one
/// end, at different times).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    ts: i64,
    key: u64,
}

impl Event {
    fn new(ts: i64, end: bool, slice: u32, active: u32) -> Self {
        Event {
            ts,
            key: (u64::from(end) << 63) | (u64::from(slice) << 32) | u64::from(active),
        }
    }

    /// The slice active from this event on.
    fn active(self) -> u32 {
        self.key as u32
    }
}

/// The flattened rows, column by column: each stretch's slice, start,
/// duration and root.
#[derive(Debug, Default)]
pub(crate) struct Flat {
    /// The slice (row) holding the stretch.
    pub slice: Vec<u32>,
    /// Its start.
    pub ts: Vec<i64>,
    /// Its duration.
    pub dur: Vec<i64>,
    /// The root (row) of its stack.
    pub root: Vec<u32>,
}

impl Flat {
    fn push(&mut self, slice: u32, ts: i64, dur: i64, root: u32) {
        self.slice.push(slice);
        self.ts.push(ts);
        self.dur.push(dur);
        self.root.push(root);
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.slice.len()
    }
}

/// The flattened rows of `slices`, `COLUMNS` values each.
pub(crate) fn compute(slices: &Arc<Table>) -> Vec<i64> {
    let flat = rows(slices);
    let mut out = Vec::with_capacity(flat.len() * COLUMNS.len());
    for i in 0..flat.len() {
        out.extend([
            i64::from(flat.slice[i]),
            flat.ts[i],
            flat.dur[i],
            i64::from(flat.root[i]),
        ]);
    }
    out
}

/// The flattened rows of `slices`, by root then start. A table of 2^31
/// slices or more (more than a row number of 32 bits keeps) has none.
pub(crate) fn rows(slices: &Table) -> Flat {
    let t = slices;
    let n = t.len;
    if u32::try_from(n).map_or(true, |n| n >= 1 << 31) {
        return Flat::default();
    }
    let column = |name: &str| col(t, name).and_then(|c| t.columns.get(c));
    let (ts_col, dur_col, parent_col) = (column("ts"), column("dur"), column("parent_id"));
    let ts: Vec<Option<i64>> = (0..n).map(|r| ts_col.and_then(|c| c.int_at(r))).collect();
    let dur: Vec<Option<i64>> = (0..n).map(|r| dur_col.and_then(|c| c.int_at(r))).collect();
    let has_parent: Vec<bool> = (0..n)
        .map(|r| parent_col.and_then(|c| c.int_at(r)).is_some())
        .collect();
    let parent: Vec<u32> = parents(t)
        .into_iter()
        .map(|p| p.map_or(NONE, |p| p as u32))
        .collect();
    let positive = |row: usize| dur.get(row).copied().flatten().is_some_and(|d| d > 0);
    // Each slice's root (parents come before children); which slices are
    // events of their root's timeline; how many events each root has.
    let mut root = vec![NONE; n];
    let mut is_event = vec![false; n];
    let mut has_child = vec![false; n];
    let mut count = vec![0u32; n + 1];
    for row in 0..n {
        let p = parent[row];
        root[row] = if p == NONE {
            row as u32
        } else {
            root.get(p as usize).copied().unwrap_or(p)
        };
        // A slice whose parent is unknown is neither a root nor a child.
        if p == NONE {
            continue;
        }
        let r = root[row] as usize;
        if !has_parent[row] || !positive(row) || !positive(r) || ts[row].is_none() {
            continue;
        }
        if p as usize == r {
            has_child[r] = true;
        }
        is_event[row] = true;
        count[r] += 2;
    }
    // The events, grouped by root (each root's in row order).
    let mut start = Vec::with_capacity(n + 1);
    let mut at = 0u32;
    for c in &count {
        start.push(at);
        at += c;
    }
    drop(count);
    let mut fill = start.clone();
    let mut events = vec![Event { ts: 0, key: 0 }; at as usize];
    for row in 0..n {
        let (Some(t0), Some(d), true) = (ts[row], dur[row], is_event[row]) else {
            continue;
        };
        let r = root[row] as usize;
        let (p, slice) = (parent[row], row as u32);
        let i = fill[r] as usize;
        events[i] = Event::new(t0, false, slice, slice);
        events[i + 1] = Event::new(t0.saturating_add(d), true, slice, p);
        fill[r] += 2;
    }
    drop(fill);
    let mut out = Flat::default();
    let mut pieces: Vec<(u32, i64, i64)> = Vec::new();
    for r in 0..n {
        if has_parent[r] || !positive(r) {
            continue;
        }
        let (Some(root_ts), Some(root_dur)) = (ts[r], dur[r]) else {
            continue;
        };
        let root_end = root_ts.saturating_add(root_dur);
        let rr = r as u32;
        if !has_child[r] {
            out.push(rr, root_ts, root_dur, rr);
        }
        let list = &mut events[start[r] as usize..start[r + 1] as usize];
        if list.is_empty() {
            continue;
        }
        list.sort_unstable();
        // Of the events at one time the first wins.
        pieces.clear();
        let mut i = 0;
        let mut last: Option<Event> = None;
        while i < list.len() {
            let e = list[i];
            if let Some(prev) = last {
                let d = e.ts.saturating_sub(prev.ts);
                if d > 0 {
                    pieces.push((prev.active(), prev.ts, d));
                }
            }
            last = Some(e);
            while i < list.len() && list[i].ts == e.ts {
                i += 1;
            }
        }
        let (Some(first), Some(end)) = (pieces.first().copied(), pieces.last().copied()) else {
            continue;
        };
        if first.1 > root_ts {
            out.push(rr, root_ts, first.1 - root_ts, rr);
        }
        for &(slice, ts, dur) in &pieces {
            out.push(slice, ts, dur, rr);
        }
        let end = end.1.saturating_add(end.2);
        if root_end > end {
            out.push(rr, end, root_end - end, rr);
        }
    }
    by_root_then_time(out)
}

/// The rows ordered by root, then start (the order the table declares, so
/// that SQLite sorts nothing): they come so unless a descendant lies
/// outside its root, which a stable sort mends.
fn by_root_then_time(flat: Flat) -> Flat {
    let key = |i: usize| (flat.root[i], flat.ts[i]);
    if (1..flat.len()).all(|i| key(i - 1) <= key(i)) {
        return flat;
    }
    let mut order: Vec<usize> = (0..flat.len()).collect();
    order.sort_by_key(|&i| key(i));
    let mut out = Flat::default();
    for i in order {
        out.push(flat.slice[i], flat.ts[i], flat.dur[i], flat.root[i]);
    }
    out
}
