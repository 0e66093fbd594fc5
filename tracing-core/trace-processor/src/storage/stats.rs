//! The counters of one trace, by the names of the `stats` vocabulary
//! (`stat_vocabulary.rs`): what this loader increments as it reads. Beside
//! them wait the import log entries counted where only the stats are at
//! hand (`import_logs.rs` turns them into rows).

use std::collections::BTreeMap;

use super::args::ArgValue;
use super::import_logs::{LogPlace, PendingLog};
pub use crate::stat_vocabulary::STATS;
use crate::stat_vocabulary::stat_index;

/// The counters of one trace: single values by stat index, indexed values
/// by (stat index, idx).
#[derive(Debug, Default, Clone)]
pub struct Stats {
    single: BTreeMap<usize, i64>,
    indexed: BTreeMap<(usize, i64), i64>,
    /// Import log entries not yet rows (see [`Stats::log_tokenization`]).
    pub(super) pending_logs: Vec<PendingLog>,
    /// The byte offset in the trace of the packet being read, which the
    /// loader sets as it splits the stream: where a tokenization log says
    /// it happened.
    pub packet_offset: Option<i64>,
}

impl Stats {
    /// Adds `by` to a single-valued stat (unknown names are ignored).
    pub fn add(&mut self, name: &str, by: i64) {
        if let Some(i) = stat_index(name) {
            let v = self.single.entry(i).or_insert(0);
            *v = v.saturating_add(by);
        }
    }

    /// Adds one to a single-valued stat.
    pub fn incr(&mut self, name: &str) {
        self.add(name, 1);
    }

    /// Sets a single-valued stat.
    pub fn set(&mut self, name: &str, value: i64) {
        if let Some(i) = stat_index(name) {
            self.single.insert(i, value);
        }
    }

    /// Sets one index of an indexed stat.
    pub fn set_indexed(&mut self, name: &str, idx: i64, value: i64) {
        if let Some(i) = stat_index(name) {
            self.indexed.insert((i, idx), value);
        }
    }

    /// Adds to one index of an indexed stat.
    pub fn add_indexed(&mut self, name: &str, idx: i64, by: i64) {
        if let Some(i) = stat_index(name) {
            let v = self.indexed.entry((i, idx)).or_insert(0);
            *v = v.saturating_add(by);
        }
    }

    /// The value of one index of an indexed stat (0 when never set).
    pub fn get_indexed(&self, name: &str, idx: i64) -> i64 {
        stat_index(name)
            .and_then(|i| self.indexed.get(&(i, idx)).copied())
            .unwrap_or(0)
    }

    /// The sum of an indexed stat over its indices.
    pub fn sum_indexed(&self, name: &str) -> i64 {
        stat_index(name).map_or(0, |i| {
            self.indexed
                .range((i, i64::MIN)..=(i, i64::MAX))
                .fold(0i64, |t, (_, v)| t.saturating_add(*v))
        })
    }

    /// Whether one index of an indexed stat was set.
    pub fn has_indexed(&self, name: &str, idx: i64) -> bool {
        stat_index(name).is_some_and(|i| self.indexed.contains_key(&(i, idx)))
    }

    /// Whether a single-valued stat was set or counted.
    pub fn has(&self, name: &str) -> bool {
        stat_index(name).is_some_and(|i| self.single.contains_key(&i))
    }

    /// The value of a single-valued stat (0 when never counted).
    pub fn get(&self, name: &str) -> i64 {
        stat_index(name)
            .and_then(|i| self.single.get(&i).copied())
            .unwrap_or(0)
    }

    /// The rows of the `stats` table as upstream lists them: every single
    /// stat (0 when untouched), then each indexed stat's set indexes, in
    /// definition order: (name index, idx, value).
    pub fn rows(&self) -> Vec<(usize, Option<i64>, i64)> {
        let mut out = Vec::new();
        for (i, def) in STATS.iter().enumerate() {
            if def.1 {
                for ((_, idx), v) in self.indexed.range((i, i64::MIN)..=(i, i64::MAX)) {
                    out.push((i, Some(*idx), *v));
                }
            } else {
                out.push((i, None, self.single.get(&i).copied().unwrap_or(0)));
            }
        }
        out
    }
}

impl Stats {
    /// Counts `stat` and queues its log entry at `place` with `args`
    /// (number values: strings are not interned here). A stat name outside
    /// the vocabulary is neither counted nor logged.
    pub fn log_at(&mut self, stat: &str, place: LogPlace, args: &[(&'static str, ArgValue)]) {
        let Some(index) = stat_index(stat) else {
            return;
        };
        self.incr(stat);
        self.pending_logs.push(PendingLog {
            stat: index,
            place,
            args: args.to_vec(),
        });
    }

    /// A tokenization log (upstream's kind for what is found while the
    /// packets are split, before they are sorted): counted and queued at
    /// the byte offset of the packet being read.
    pub fn log_tokenization(&mut self, stat: &str, args: &[(&'static str, ArgValue)]) {
        let place = LogPlace {
            ts: None,
            byte_offset: self.packet_offset,
        };
        self.log_at(stat, place, args);
    }

    /// Whether entries wait to become rows.
    pub fn has_pending_logs(&self) -> bool {
        !self.pending_logs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_and_indexed_rows() {
        let mut s = Stats::default();
        s.incr("track_event_parser_errors");
        s.set_indexed("traced_buf_sequence_packet_loss", 2, 5);
        s.incr("no_such_stat");
        let rows = s.rows();
        let te = stat_index("track_event_parser_errors").unwrap();
        assert!(rows.contains(&(te, None, 1)));
        let pl = stat_index("traced_buf_sequence_packet_loss").unwrap();
        assert!(rows.contains(&(pl, Some(2), 5)));
        assert_eq!(rows.iter().filter(|r| r.0 == pl).count(), 1);
    }
}
