//! `ProcessStatsConfig.proc_stats_cache_ttl_ms`: a poll writes only what
//! changed since the counters were last written, and the cache is cleared
//! every `max(ttl / poll period, 1)` polls, so that every value is written
//! again that often (upstream's rule: with no TTL the cache is cleared at
//! every poll, and every counter of every process is written each time).

use std::collections::HashMap;

use crate::procfs::walk::ProcessMemory;

/// What was last written of one process.
#[derive(Debug, Default)]
struct Written {
    counters: [Option<u64>; 8],
    oom_score_adj: Option<i64>,
    runtime: Option<(u64, u64)>,
    rollup: [Option<u64>; 6],
}

/// The counters written per process, and when the cache is cleared.
#[derive(Debug)]
pub struct StatsCache {
    written: HashMap<i32, Written>,
    /// Polls between two clears.
    ttl_polls: u32,
    polls: u32,
}

impl StatsCache {
    /// A cache cleared every `max(ttl_ms / poll_ms, 1)` polls.
    pub fn new(ttl_ms: u32, poll_ms: u32) -> StatsCache {
        StatsCache {
            written: HashMap::new(),
            ttl_polls: ttl_ms.checked_div(poll_ms).unwrap_or(0).max(1),
            polls: 0,
        }
    }

    /// Keeps of `memory` what changed since it was last written (`None`
    /// for the rest) and leaves out the processes with nothing new (their
    /// descriptors count as new). Then counts the poll, clearing the
    /// cache when its time comes.
    pub fn keep_changed(&mut self, memory: &mut Vec<ProcessMemory>) {
        if self.ttl_polls > 1 {
            let live: std::collections::HashSet<i32> = memory.iter().map(|m| m.pid).collect();
            self.written.retain(|pid, _| live.contains(pid));
            memory.retain_mut(|m| self.keep(m));
        }
        self.polls += 1;
        if self.polls >= self.ttl_polls {
            self.polls = 0;
            self.written.clear();
        }
    }

    fn keep(&mut self, m: &mut ProcessMemory) -> bool {
        let w = self.written.entry(m.pid).or_default();
        let mut any = !m.fds.is_empty();
        let s = &mut m.status;
        let counters = [
            &mut s.vm_size_kb,
            &mut s.vm_rss_kb,
            &mut s.rss_anon_kb,
            &mut s.rss_file_kb,
            &mut s.rss_shmem_kb,
            &mut s.vm_swap_kb,
            &mut s.vm_locked_kb,
            &mut s.vm_hwm_kb,
        ];
        for (now, last) in counters.into_iter().zip(w.counters.iter_mut()) {
            any |= changed(now, last);
        }
        any |= changed(&mut m.oom_score_adj, &mut w.oom_score_adj);
        any |= changed(&mut m.runtime_ticks, &mut w.runtime);
        if let Some(r) = m.smaps_rollup.as_mut() {
            let rollup = [
                &mut r.rss_kb,
                &mut r.pss_kb,
                &mut r.pss_anon_kb,
                &mut r.pss_file_kb,
                &mut r.pss_shmem_kb,
                &mut r.swap_pss_kb,
            ];
            for (now, last) in rollup.into_iter().zip(w.rollup.iter_mut()) {
                any |= changed(now, last);
            }
        }
        any
    }
}

/// Whether `now` is a new value (remembered in `last`); an unchanged one
/// is cleared so that it is not written.
fn changed<T: PartialEq + Copy>(now: &mut Option<T>, last: &mut Option<T>) -> bool {
    match *now {
        Some(v) if *last == Some(v) => {
            *now = None;
            false
        }
        Some(v) => {
            *last = Some(v);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs::pid_status::PidStatus;

    fn mem(pid: i32, rss: u64, adj: i64) -> ProcessMemory {
        ProcessMemory {
            pid,
            status: PidStatus {
                vm_size_kb: Some(1000),
                vm_rss_kb: Some(rss),
                ..PidStatus::default()
            },
            oom_score_adj: Some(adj),
            runtime_ticks: None,
            smaps_rollup: None,
            fds: Vec::new(),
        }
    }

    #[test]
    fn only_changes_until_the_ttl_clears_the_cache() {
        // TTL 300 ms at a 100 ms poll: cleared every third poll.
        let mut c = StatsCache::new(300, 100);
        let mut m = vec![mem(1, 10, 0), mem(2, 20, 0)];
        c.keep_changed(&mut m);
        assert_eq!(m.len(), 2, "all at first");
        let mut m = vec![mem(1, 10, 0), mem(2, 21, 0)];
        c.keep_changed(&mut m);
        assert_eq!(m.len(), 1, "only the process that changed");
        assert_eq!(
            (m[0].pid, m[0].status.vm_rss_kb, m[0].status.vm_size_kb),
            (2, Some(21), None)
        );
        assert_eq!(m[0].oom_score_adj, None);
        let mut m = vec![mem(1, 10, 0), mem(2, 21, 0)];
        c.keep_changed(&mut m);
        assert!(m.is_empty(), "nothing changed");
        // The third poll cleared the cache: everything again.
        let mut m = vec![mem(1, 10, 0), mem(2, 21, 0)];
        c.keep_changed(&mut m);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].status.vm_size_kb, Some(1000));
        // No TTL: cleared at every poll, everything every time.
        let mut c = StatsCache::new(0, 100);
        for _ in 0..3 {
            let mut m = vec![mem(1, 10, 0)];
            c.keep_changed(&mut m);
            assert_eq!(m.len(), 1);
            assert_eq!(m[0].status.vm_rss_kb, Some(10));
        }
    }
}
