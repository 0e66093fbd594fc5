//! The flattening (`flatten.rs`) against a straightforward reference of
//! the same rules (a list of events per root, sorted and walked) on
//! random slice forests, malformed ones too: children outside their
//! parents, equal times, zero and negative durations, NULL and forward
//! parent ids.

use std::sync::Arc;

use super::flatten::compute;
use super::{col, parents};
use crate::column_store::table::{Column, Table};

/// One event of a root's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    ts: i64,
    rank: u8,
    slice: usize,
    active: usize,
}

/// The rows by root, then start, a stable sort.
fn sorted(out: Vec<i64>) -> Vec<i64> {
    let mut rows: Vec<&[i64]> = out.chunks_exact(4).collect();
    rows.sort_by_key(|r| (r.get(3).copied(), r.get(1).copied()));
    rows.concat()
}

fn reference(slices: &Arc<Table>) -> Vec<i64> {
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
    sorted(out)
}

/// A random forest of `n` slices.
fn forest(seed: u64, n: usize) -> Arc<Table> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        i64::try_from(x % m).unwrap_or(0)
    };
    let (mut ts, mut dur, mut parent) = (Vec::new(), Vec::new(), Vec::new());
    for row in 0..n {
        let r = i64::try_from(row).unwrap_or(0);
        let p = match next(8) {
            0 | 1 => None,
            2 => Some(r + 1 + next(3)),
            _ if r == 0 => None,
            _ => Some(r - 1 - next(r.min(4).unsigned_abs())),
        };
        // A child starts at or after its parent mostly, sometimes before.
        let base = p
            .and_then(|p| usize::try_from(p).ok())
            .and_then(|p| ts.get(p).copied())
            .unwrap_or(next(3) * 40);
        ts.push(base + next(12) - 1);
        dur.push(match next(7) {
            0 => 0,
            1 => -1,
            _ => next(30),
        });
        parent.push(p);
    }
    Arc::new(Table {
        name: "__intrinsic_slice",
        columns: vec![
            Column::int("ts", ts),
            Column::int("dur", dur),
            Column::opt_int("parent_id", parent),
        ],
        len: n,
        has_id: false,
        sorted_by: None,
        strings: Arc::default(),
        orders: Default::default(),
    })
}

#[test]
fn the_flattening_agrees_with_the_reference() {
    for seed in 0..300u64 {
        let n = usize::try_from(seed % 60).unwrap_or(0);
        let t = forest(seed, n);
        assert_eq!(compute(&t), reference(&t), "seed {seed}");
    }
}
