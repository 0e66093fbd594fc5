//! Counter values kept sparse as upstream keeps the values of samplers
//! that report every track at every reading (CPU time per uid, kernel
//! wakelocks): a track gets a row when its value changes, and the value
//! before a change is repeated at its last time when that time had no row,
//! so that the track still steps where it changed. Rows wait here and go
//! into the counter table in time order at the end of the trace.

use crate::hash::HashMap;
use crate::tables::opt_u32::OptU32;

use crate::storage::Storage;
use crate::storage::rows::CounterRow;

/// A track's last value, its time, and whether that reading has a row.
#[derive(Debug, Clone, Copy)]
struct Last {
    value: f64,
    ts: i64,
    written: bool,
}

/// The sparse values of a set of tracks.
#[derive(Debug, Default)]
pub struct SparseCounters {
    last: HashMap<u32, Last>,
    /// The rows to write, in the order they were decided.
    pending: Vec<(i64, u32, f64)>,
}

impl SparseCounters {
    /// Records a reading of `track`.
    pub fn push(&mut self, ts: i64, track: u32, value: f64) {
        match self.last.get_mut(&track) {
            None => {
                self.pending.push((ts, track, value));
                self.last.insert(
                    track,
                    Last {
                        value,
                        ts,
                        written: true,
                    },
                );
            }
            Some(last) => {
                let different = last.value != value;
                if different && !last.written {
                    self.pending.push((last.ts, track, last.value));
                }
                last.written = different;
                if different {
                    self.pending.push((ts, track, value));
                }
                last.value = value;
                last.ts = ts;
            }
        }
    }

    /// Writes the rows decided so far into the counter table, by time
    /// (rows of equal time in the order they were decided).
    pub fn flush(&mut self, storage: &mut Storage) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_by_key(|(ts, _, _)| *ts);
        storage
            .counters
            .extend(pending.into_iter().map(|(ts, track_id, value)| CounterRow {
                ts,
                track_id,
                value,
                arg_set_id: OptU32::NONE,
            }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_kept_when_it_changes_and_repeated_before_a_change() {
        let mut s = SparseCounters::default();
        for (ts, v) in [(1, 5.0), (2, 5.0), (3, 5.0), (4, 7.0), (5, 7.0)] {
            s.push(ts, 0, v);
        }
        let mut storage = Storage::default();
        s.flush(&mut storage);
        let got: Vec<(i64, f64)> = storage.counters.iter().map(|c| (c.ts, c.value)).collect();
        assert_eq!(got, vec![(1, 5.0), (3, 5.0), (4, 7.0)]);
    }
}
