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
use crate::column_store::table::{Column, Table};

/// The table's columns.
pub(crate) const COLUMNS: &[&str] = &["slice_id", "ts", "dur", "root_id"];

/// One event of a root's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    ts: i64,
    /// 0 for a start (which wins), 1 for an end.
    rank: u8,
    /// The slice that starts or ends (ties go to the smallest).
    slice: usize,
    /// The slice active from then on.
    active: usize,
}

/// The flattened rows of `slices`, `COLUMNS` values each.
pub(crate) fn compute(slices: &Arc<Table>) -> Vec<i64> {
    let t = slices.as_ref();
    let column = |name: &str| col(t, name).and_then(|c| t.columns.get(c));
    let (ts_col, dur_col, parent_col) = (column("ts"), column("dur"), column("parent_id"));
    let int = |row: usize, c: Option<&Column>| c.and_then(|c| c.int_at(row));
    let parents = parents(t);
    let positive = |row: usize| int(row, dur_col).is_some_and(|d| d > 0);
    // Each slice's root (parents come before children), and whether the
    // slice has a parent at all.
    let mut root = vec![0usize; t.len];
    let mut events: Vec<Vec<Event>> = vec![Vec::new(); t.len];
    let mut has_child = vec![false; t.len];
    for row in 0..t.len {
        let has_parent = int(row, parent_col).is_some();
        root[row] = match parents.get(row).copied().flatten() {
            Some(p) => root.get(p).copied().unwrap_or(p),
            None => row,
        };
        // A slice whose parent is unknown is neither a root nor a child.
        let Some(p) = parents.get(row).copied().flatten() else {
            continue;
        };
        let r = root[row];
        if !has_parent || !positive(row) || !positive(r) {
            continue;
        }
        let (Some(ts), Some(dur)) = (int(row, ts_col), int(row, dur_col)) else {
            continue;
        };
        if p == r {
            has_child[r] = true;
        }
        if let Some(list) = events.get_mut(r) {
            list.push(Event {
                ts,
                rank: 0,
                slice: row,
                active: row,
            });
            list.push(Event {
                ts: ts.saturating_add(dur),
                rank: 1,
                slice: row,
                active: p,
            });
        }
    }
    let mut out = Vec::new();
    let mut push = |slice: usize, ts: i64, dur: i64, root: usize| {
        out.extend([slice as i64, ts, dur, root as i64]);
    };
    for r in 0..t.len {
        if int(r, parent_col).is_some() || !positive(r) {
            continue;
        }
        let (Some(root_ts), Some(root_dur)) = (int(r, ts_col), int(r, dur_col)) else {
            continue;
        };
        let root_end = root_ts.saturating_add(root_dur);
        if !has_child.get(r).copied().unwrap_or(true) {
            push(r, root_ts, root_dur, r);
        }
        let Some(list) = events.get_mut(r) else {
            continue;
        };
        list.sort_unstable();
        list.dedup_by_key(|e| e.ts);
        let mut rows = Vec::new();
        for w in list.windows(2) {
            let dur = w[1].ts.saturating_sub(w[0].ts);
            if dur > 0 {
                rows.push((w[0].active, w[0].ts, dur));
            }
        }
        let (Some(first), Some(last)) = (rows.first().copied(), rows.last().copied()) else {
            continue;
        };
        if first.1 > root_ts {
            push(r, root_ts, first.1 - root_ts, r);
        }
        for (slice, ts, dur) in &rows {
            push(*slice, *ts, *dur, r);
        }
        let end = last.1.saturating_add(last.2);
        if root_end > end {
            push(r, end, root_end - end, r);
        }
    }
    by_root_then_time(out)
}

/// The rows ordered by root, then start (the order the table declares, so
/// that SQLite sorts nothing): they come so unless a descendant lies
/// outside its root, which a stable sort mends.
fn by_root_then_time(out: Vec<i64>) -> Vec<i64> {
    let key = |r: &[i64]| (r.get(3).copied(), r.get(1).copied());
    let sorted = out
        .chunks_exact(COLUMNS.len())
        .zip(out.chunks_exact(COLUMNS.len()).skip(1))
        .all(|(a, b)| key(a) <= key(b));
    if sorted {
        return out;
    }
    let mut rows: Vec<&[i64]> = out.chunks_exact(COLUMNS.len()).collect();
    rows.sort_by_key(|r| key(r));
    rows.concat()
}
