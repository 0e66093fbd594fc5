//! The counters of one trace, by the names of the `stats` vocabulary
//! (`stat_vocabulary.rs`): what this loader increments as it reads. Beside
//! them wait the import log entries counted where only the stats are at
//! hand (`import_logs.rs` turns them into rows).

use std::collections::BTreeMap;

use super::args::ArgValue;
use super::import_logs::{LogPlace, PendingLog};
pub use crate::stat_vocabulary::STATS;
use crate::stat_vocabulary::stat_index;

/// One machine's counters: single values by stat index, indexed values
/// by (stat index, idx).
#[derive(Debug, Default, Clone)]
struct Counters {
    single: BTreeMap<usize, i64>,
    indexed: BTreeMap<(usize, i64), i64>,
}

/// The counters of one trace. Upstream keeps every stat but a few global
/// ones per machine (`stat_scopes.rs`): the host's and the global ones are
/// counted in one place, another machine's in its own, chosen by
/// [`Stats::machine`] as each is counted.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    host: Counters,
    /// Other machines' counters, by machine (`machine` table id).
    remote: BTreeMap<u32, Counters>,
    /// The machine whose packet is being parsed (0: the host), which the
    /// parser sets: what is counted now is counted for it.
    pub machine: u32,
    /// Import log entries not yet rows (see [`Stats::log_tokenization`]).
    pub(super) pending_logs: Vec<PendingLog>,
    /// The byte offset in the trace of the packet being read, which the
    /// loader sets as it splits the stream: where a tokenization log says
    /// it happened.
    pub packet_offset: Option<i64>,
}

impl Stats {
    /// The counters stat `i` is counted in now.
    fn counters_mut(&mut self, i: usize) -> &mut Counters {
        if self.machine == 0 || is_global(i) {
            &mut self.host
        } else {
            self.remote.entry(self.machine).or_default()
        }
    }

    /// The counters stat `i` is read from now (None: a machine that
    /// counted nothing yet).
    fn counters(&self, i: usize) -> Option<&Counters> {
        if self.machine == 0 || is_global(i) {
            Some(&self.host)
        } else {
            self.remote.get(&self.machine)
        }
    }

    /// Adds `by` to a single-valued stat (unknown names are ignored).
    pub fn add(&mut self, name: &str, by: i64) {
        if let Some(i) = stat_index(name) {
            let v = self.counters_mut(i).single.entry(i).or_insert(0);
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
            self.counters_mut(i).single.insert(i, value);
        }
    }

    /// Sets one index of an indexed stat.
    pub fn set_indexed(&mut self, name: &str, idx: i64, value: i64) {
        if let Some(i) = stat_index(name) {
            self.counters_mut(i).indexed.insert((i, idx), value);
        }
    }

    /// Adds to one index of an indexed stat.
    pub fn add_indexed(&mut self, name: &str, idx: i64, by: i64) {
        if let Some(i) = stat_index(name) {
            let v = self.counters_mut(i).indexed.entry((i, idx)).or_insert(0);
            *v = v.saturating_add(by);
        }
    }

    /// The value of one index of an indexed stat (0 when never set).
    pub fn get_indexed(&self, name: &str, idx: i64) -> i64 {
        stat_index(name)
            .and_then(|i| self.counters(i)?.indexed.get(&(i, idx)).copied())
            .unwrap_or(0)
    }

    /// The sum of an indexed stat over its indices.
    pub fn sum_indexed(&self, name: &str) -> i64 {
        stat_index(name).map_or(0, |i| {
            self.counters(i).map_or(0, |c| {
                c.indexed
                    .range((i, i64::MIN)..=(i, i64::MAX))
                    .fold(0i64, |t, (_, v)| t.saturating_add(*v))
            })
        })
    }

    /// Whether one index of an indexed stat was set.
    pub fn has_indexed(&self, name: &str, idx: i64) -> bool {
        stat_index(name).is_some_and(|i| {
            self.counters(i)
                .is_some_and(|c| c.indexed.contains_key(&(i, idx)))
        })
    }

    /// Whether a single-valued stat was set or counted.
    pub fn has(&self, name: &str) -> bool {
        stat_index(name)
            .is_some_and(|i| self.counters(i).is_some_and(|c| c.single.contains_key(&i)))
    }

    /// The value of a single-valued stat (0 when never counted).
    pub fn get(&self, name: &str) -> i64 {
        stat_index(name)
            .and_then(|i| self.counters(i)?.single.get(&i).copied())
            .unwrap_or(0)
    }

    /// The host's and the global stats as rows of the `stats` table:
    /// every single stat (0 when untouched), then each indexed stat's set
    /// indexes, in definition order: (name index, idx, value).
    pub fn rows(&self) -> Vec<(usize, Option<i64>, i64)> {
        let mut out = Vec::new();
        rows_of(&self.host, 0, false, &mut out);
        out.into_iter().map(|(i, idx, v, _)| (i, idx, v)).collect()
    }

    /// The rows of the `stats` table as upstream lists them: the host's
    /// and the global stats as [`Stats::rows`] gives them; then the same
    /// for each other machine of the `machines` the trace has (ids 1 to
    /// `machines - 1`, and any that counted), without the global stats:
    /// (name index, idx, value, machine).
    pub fn rows_by_machine(&self, machines: u32) -> Vec<(usize, Option<i64>, i64, u32)> {
        let mut out = Vec::new();
        rows_of(&self.host, 0, false, &mut out);
        let empty = Counters::default();
        let mut ids: Vec<u32> = (1..machines).collect();
        ids.extend(self.remote.keys().filter(|&&m| m >= machines.max(1)));
        for m in ids {
            rows_of(self.remote.get(&m).unwrap_or(&empty), m, true, &mut out);
        }
        out
    }
}

/// Whether stat `i` is one of the whole session (counted once, whatever
/// the machine).
fn is_global(i: usize) -> bool {
    STATS
        .get(i)
        .is_some_and(|d| crate::stat_scopes::stat_ids(d.0).0.is_none())
}

/// The rows of one machine's counters (`skip_global`: leaving out the
/// global stats, which only the host's rows carry).
fn rows_of(
    c: &Counters,
    machine: u32,
    skip_global: bool,
    out: &mut Vec<(usize, Option<i64>, i64, u32)>,
) {
    for (i, def) in STATS.iter().enumerate() {
        if skip_global && is_global(i) {
            continue;
        }
        if def.1 {
            for ((_, idx), v) in c.indexed.range((i, i64::MIN)..=(i, i64::MAX)) {
                out.push((i, Some(*idx), *v, machine));
            }
        } else {
            out.push((i, None, c.single.get(&i).copied().unwrap_or(0), machine));
        }
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

    /// Upstream counts a stat per machine (but for the few of the whole
    /// session): what a remote machine's packets count is its own, read
    /// back while it is the machine, and each machine has its rows.
    #[test]
    fn stats_are_counted_per_machine() {
        let mut s = Stats::default();
        s.set_indexed("ftrace_cpu_entries_begin", 0, 7);
        s.incr("clock_sync_cache_miss");
        s.machine = 1;
        s.set_indexed("ftrace_cpu_entries_begin", 0, 11);
        s.incr("track_event_parser_errors");
        s.incr("clock_sync_cache_miss");
        assert_eq!(s.get_indexed("ftrace_cpu_entries_begin", 0), 11);
        assert_eq!(s.get("clock_sync_cache_miss"), 2);
        s.machine = 0;
        assert_eq!(s.get_indexed("ftrace_cpu_entries_begin", 0), 7);
        assert_eq!(s.get("track_event_parser_errors"), 0);
        let rows = s.rows_by_machine(2);
        let e = stat_index("ftrace_cpu_entries_begin").unwrap();
        let got: Vec<_> = rows.iter().filter(|r| r.0 == e).collect();
        assert_eq!(got, [&(e, Some(0), 7, 0), &(e, Some(0), 11, 1)]);
        let te = stat_index("track_event_parser_errors").unwrap();
        assert!(rows.contains(&(te, None, 0, 0)));
        assert!(rows.contains(&(te, None, 1, 1)));
        let cm = stat_index("clock_sync_cache_miss").unwrap();
        let global: Vec<_> = rows.iter().filter(|r| r.0 == cm).collect();
        assert_eq!(global, [&(cm, None, 2, 0)]);
    }
}
