//! `viz.summary.slices`' `_slice_track_summary` in one pass over the slice
//! table: per track, its slices' count, smallest and largest duration and
//! largest depth, by track id, as `SELECT track_id AS id, count(*),
//! min(dur), max(dur), max(depth) FROM slice GROUP BY track_id` gives
//! them (a NULL track id one group, first; NULL durations and depths
//! skipped by min and max). SQLite took that through its VM and a sort
//! of every slice by track. Built as the module's table's columns
//! (`perfetto_sql/native.rs`). Also each track's earliest slice
//! (`SELECT track_id AS id, min(ts) ... GROUP BY track_id`), which
//! `viz.summary.track_event` orders tracks by.

use std::sync::Arc;

use super::super::perfetto_sql::native::Built;
use super::col;
use crate::column_store::table::{Column, Table};
use crate::hash::HashMap;

/// The table's columns.
pub(crate) const COLUMNS: &[&str] = &["id", "cnt", "min_dur", "max_dur", "max_depth"];

/// The earliest slices' table's columns.
pub(crate) const MIN_TS: &[&str] = &["id", "min_ts"];

/// One track's figures.
#[derive(Debug, Clone, Copy, Default)]
struct Track {
    count: i64,
    min_dur: Option<i64>,
    max_dur: Option<i64>,
    max_depth: Option<i64>,
    min_ts: Option<i64>,
}

impl Track {
    fn add(&mut self, ts: Option<i64>, dur: Option<i64>, depth: Option<i64>) {
        self.count += 1;
        let least = |a: Option<i64>, b: Option<i64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let most = |a: Option<i64>, b: Option<i64>| a.max(b);
        self.min_ts = least(self.min_ts, ts);
        self.min_dur = least(self.min_dur, dur);
        self.max_dur = most(self.max_dur, dur);
        self.max_depth = most(self.max_depth, depth);
    }
}

/// Tracks of ids up to this many are counted in a list, others in a map.
const DENSE: i64 = 1 << 24;

/// Each track's figures over `slices`, by track id (NULL first).
fn tracks(slices: &Table) -> Vec<(Option<i64>, Track)> {
    let column = |name: &str| col(slices, name).and_then(|c| slices.columns.get(c));
    let (track, ts, dur, depth) = (
        column("track_id"),
        column("ts"),
        column("dur"),
        column("depth"),
    );
    let mut dense: Vec<Option<Track>> = Vec::new();
    let mut sparse: HashMap<Option<i64>, Track> = HashMap::default();
    for row in 0..slices.len {
        let id = track.and_then(|c| c.int_at(row));
        let int = |c: Option<&Column>| c.and_then(|c| c.int_at(row));
        let (t, d, k) = (int(ts), int(dur), int(depth));
        match id.filter(|&i| (0..DENSE).contains(&i)).map(|i| i as usize) {
            Some(i) => {
                if dense.len() <= i {
                    dense.resize(i + 1, None);
                }
                if let Some(slot) = dense.get_mut(i) {
                    slot.get_or_insert_with(Track::default).add(t, d, k);
                }
            }
            None => sparse.entry(id).or_default().add(t, d, k),
        }
    }
    let mut rows: Vec<(Option<i64>, Track)> = sparse.into_iter().collect();
    rows.extend(
        dense
            .into_iter()
            .enumerate()
            .filter_map(|(i, t)| Some((Some(i as i64), t?))),
    );
    rows.sort_unstable_by_key(|r| r.0);
    rows
}

/// A column of integers as a select's would be stored.
fn ints(name: &'static str, v: Vec<Option<i64>>) -> Column {
    if !v.is_empty() && v.iter().all(Option::is_some) {
        Column::int(name, v.into_iter().flatten().collect())
    } else {
        Column::opt_int(name, v)
    }
}

/// The summary's rows over `slices`.
pub(crate) fn columns(slices: &Table) -> Built {
    let rows = tracks(slices);
    Built {
        columns: vec![
            ints("id", rows.iter().map(|r| r.0).collect()),
            ints("cnt", rows.iter().map(|r| Some(r.1.count)).collect()),
            ints("min_dur", rows.iter().map(|r| r.1.min_dur).collect()),
            ints("max_dur", rows.iter().map(|r| r.1.max_dur).collect()),
            ints("max_depth", rows.iter().map(|r| r.1.max_depth).collect()),
        ],
        len: rows.len(),
        strings: Arc::default(),
    }
}

/// Each track's earliest slice over `slices`.
pub(crate) fn min_ts(slices: &Table) -> Built {
    let rows = tracks(slices);
    Built {
        columns: vec![
            ints("id", rows.iter().map(|r| r.0).collect()),
            ints("min_ts", rows.iter().map(|r| r.1.min_ts).collect()),
        ],
        len: rows.len(),
        strings: Arc::default(),
    }
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::tables::core::SliceRow;
    use crate::{TraceProcessor, Value};

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect(sql).rows
    }

    #[test]
    fn the_summary_is_the_grouped_select() {
        for seed in 0u64..20 {
            let mut s = Storage::default();
            let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let mut next = |n: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                i64::try_from(x % n).unwrap_or(0)
            };
            for i in 0..(seed * 13 % 70) {
                s.slices.push(SliceRow {
                    ts: i64::try_from(i).unwrap_or(0) - next(3),
                    dur: next(50) - 1,
                    track_id: u32::try_from(next(5) * (1 + next(3) * 40)).unwrap_or(0),
                    depth: u32::try_from(next(4)).unwrap_or(0),
                    ..Default::default()
                });
            }
            let tp = TraceProcessor::from_storage(s).expect("engine");
            let native = rows(
                &tp,
                "INCLUDE PERFETTO MODULE viz.summary.slices;
                 SELECT * FROM _slice_track_summary",
            );
            let reference = rows(
                &tp,
                "SELECT track_id, count(*), min(dur), max(dur), max(depth)
                 FROM slice GROUP BY track_id ORDER BY track_id",
            );
            assert_eq!(native, reference, "seed {seed}");
            let native = rows(&tp, "SELECT * FROM __intrinsic_slice_min_ts_per_track");
            let reference = rows(
                &tp,
                "SELECT track_id, min(ts) FROM slice GROUP BY track_id ORDER BY track_id",
            );
            assert_eq!(native, reference, "seed {seed}");
        }
    }
}
