//! What the thread-slice operators read, taken from the frozen trace
//! tables instead of through SQL: the thread slices (`thread_slice`'s
//! rows: a slice on a track of kind `slice` that has a thread, a thread
//! the `thread` table holds) with a positive duration and a thread other
//! than the swapper's (utid 0), in id order; and any table of per-thread
//! intervals (`thread_state`, `sched`) grouped by thread, sorted by start,
//! with what it takes to find the intervals overlapping a span without a
//! scan of the thread's whole list.

use crate::hash::HashMap;
use std::sync::Arc;

use crate::column_store::table::{Column, Table};

/// The frozen tables the operators read (None when the trace has no such
/// table, which reads as empty).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tables {
    /// `__intrinsic_slice`.
    pub slice: Option<Arc<Table>>,
    /// `__intrinsic_track`.
    pub track: Option<Arc<Table>>,
    /// `__intrinsic_thread`.
    pub thread: Option<Arc<Table>>,
    /// `__intrinsic_thread_state`.
    pub thread_state: Option<Arc<Table>>,
    /// `__intrinsic_sched_slice`.
    pub sched: Option<Arc<Table>>,
    /// `__intrinsic_process`.
    pub process: Option<Arc<Table>>,
}

impl Tables {
    /// The tables among `all`, by name.
    pub(crate) fn find(all: &[Arc<Table>]) -> Self {
        let by = |name: &str| all.iter().find(|t| t.name == name).cloned();
        Tables {
            slice: by("__intrinsic_slice"),
            track: by("__intrinsic_track"),
            thread: by("__intrinsic_thread"),
            thread_state: by("__intrinsic_thread_state"),
            sched: by("__intrinsic_sched_slice"),
            process: by("__intrinsic_process"),
        }
    }
}

/// Column `name` of `t`.
pub(crate) fn column<'a>(t: &'a Table, name: &str) -> Option<&'a Column> {
    t.columns.iter().find(|c| c.name == name)
}

/// A thread slice taking part: its id, span and thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThreadSlice {
    /// The slice's id.
    pub id: usize,
    /// Its start.
    pub start: i64,
    /// Its end.
    pub end: i64,
    /// Its thread.
    pub utid: i64,
}

/// The thread slices with a positive duration of a thread other than
/// utid 0, in id order.
pub(crate) fn thread_slices(t: &Tables) -> Vec<ThreadSlice> {
    let (Some(slice), Some(track), Some(thread)) = (&t.slice, &t.track, &t.thread) else {
        return Vec::new();
    };
    // Each track's thread, when it is a thread track (of kind `slice`,
    // with a thread the thread table holds).
    let kind = column(track, "event_type");
    let track_utid = column(track, "utid");
    let threads = i64::try_from(thread.len).unwrap_or(i64::MAX);
    let thread_of: Vec<Option<i64>> = (0..track.len)
        .map(|row| {
            let is_slice = kind
                .and_then(|c| c.str_at(row))
                .and_then(|id| track.strings.get(id))
                == Some("slice");
            track_utid
                .and_then(|c| c.int_at(row))
                .filter(|u| is_slice && (0..threads).contains(u))
        })
        .collect();
    let (ts, dur, track_id) = (
        column(slice, "ts"),
        column(slice, "dur"),
        column(slice, "track_id"),
    );
    let mut out = Vec::new();
    for row in 0..slice.len {
        let Some(utid) = track_id
            .and_then(|c| c.int_at(row))
            .and_then(|k| usize::try_from(k).ok())
            .and_then(|k| thread_of.get(k).copied().flatten())
        else {
            continue;
        };
        let (Some(start), Some(d)) = (
            ts.and_then(|c| c.int_at(row)),
            dur.and_then(|c| c.int_at(row)),
        ) else {
            continue;
        };
        if utid > 0 && d > 0 {
            out.push(ThreadSlice {
                id: row,
                start,
                end: start.saturating_add(d),
                utid,
            });
        }
    }
    out
}

/// One interval of a thread: its row and span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: i64,
    end: i64,
    row: usize,
}

/// One thread's intervals, by start, and for each the largest end among
/// it and those before it (which only grows, so a search finds the first
/// interval that may reach past a point).
#[derive(Debug, Default)]
struct Lane {
    spans: Vec<Span>,
    reach: Vec<i64>,
}

/// The intervals with a positive duration of a per-thread table, by
/// thread: in a list indexed by utid for the utids below [`DENSE`], in a
/// map for others.
#[derive(Debug, Default)]
pub(crate) struct Lanes {
    dense: Vec<Lane>,
    by_thread: HashMap<i64, Lane>,
}

/// The utids whose lanes are found by index.
const DENSE: i64 = 1 << 20;

impl Lanes {
    /// The intervals of `t` (columns `ts`, `dur`, `utid`) whose duration is
    /// positive, grouped by thread.
    pub(crate) fn of(t: Option<&Table>) -> Self {
        let Some(t) = t else {
            return Lanes::default();
        };
        let (ts, dur, utid) = (column(t, "ts"), column(t, "dur"), column(t, "utid"));
        Lanes::from_spans((0..t.len).filter_map(|row| {
            let start = ts.and_then(|c| c.int_at(row))?;
            let d = dur.and_then(|c| c.int_at(row))?;
            let u = utid.and_then(|c| c.int_at(row))?;
            Some((u, start, start.saturating_add(d), row))
        }))
    }

    /// The intervals `(thread, start, end, row)` that last (end after
    /// start), grouped by thread.
    pub(crate) fn from_spans(spans: impl Iterator<Item = (i64, i64, i64, usize)>) -> Self {
        let mut by_thread: HashMap<i64, Lane> = HashMap::default();
        for (u, start, end, row) in spans {
            if end > start {
                by_thread
                    .entry(u)
                    .or_default()
                    .spans
                    .push(Span { start, end, row });
            }
        }
        let mut dense: Vec<Lane> = Vec::new();
        let top = by_thread
            .keys()
            .filter(|u| (0..DENSE).contains(*u))
            .max()
            .map_or(0, |&u| u as usize + 1);
        dense.resize_with(top, Lane::default);
        by_thread.retain(
            |&u, lane| match usize::try_from(u).ok().filter(|&i| i < top) {
                Some(i) => {
                    if let Some(slot) = dense.get_mut(i) {
                        *slot = std::mem::take(lane);
                    }
                    false
                }
                None => true,
            },
        );
        for lane in by_thread.values_mut().chain(dense.iter_mut()) {
            // Stable: rows of one start stay in row order.
            lane.spans.sort_by_key(|s| s.start);
            let mut far = i64::MIN;
            lane.reach = lane
                .spans
                .iter()
                .map(|s| {
                    far = far.max(s.end);
                    far
                })
                .collect();
        }
        Lanes { dense, by_thread }
    }

    /// Calls `found(row, overlap)` for each interval of thread `utid` that
    /// overlaps `[start, end)` by a positive time, in the order of starts.
    pub(crate) fn overlaps(
        &self,
        utid: i64,
        start: i64,
        end: i64,
        mut found: impl FnMut(usize, i64),
    ) {
        let lane = match usize::try_from(utid) {
            Ok(i) if i < self.dense.len() => self.dense.get(i),
            _ => self.by_thread.get(&utid),
        };
        let Some(lane) = lane else {
            return;
        };
        let first = lane.reach.partition_point(|&r| r <= start);
        let last = lane.spans.partition_point(|s| s.start < end);
        for s in lane.spans.get(first..last).unwrap_or(&[]) {
            let overlap = s.end.min(end).saturating_sub(s.start.max(start));
            if overlap > 0 {
                found(s.row, overlap);
            }
        }
    }
}
