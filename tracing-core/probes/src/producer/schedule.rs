//! When each periodic probe is due: a set of timers, each with its own
//! period, computed from `now` alone (no clock, no sleeping here), so the
//! runtime's thread only sleeps until [`Schedule::next_deadline`] and tests
//! drive the same code with a fake clock.
//!
//! Every timer fires first at the start and then on the grid `start + k ×
//! period`. A poll that comes late (a slow scan, a loaded machine) fires
//! each late timer once, not once per missed slot, and moves it to the next
//! slot after `now`; the slots skipped are counted, so a probe that cannot
//! keep up says so instead of drifting silently.

/// One periodic timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Timer<K> {
    key: K,
    period_ns: u64,
    next_ns: u64,
}

/// Periodic timers keyed by `K` (a probe's sources).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule<K> {
    start_ns: u64,
    timers: Vec<Timer<K>>,
    skipped: u64,
}

impl<K: Copy + PartialEq> Schedule<K> {
    /// Timers started at `start_ns`, one per `(key, period_ms)`; a period
    /// of 0 is no timer.
    pub fn new(start_ns: u64, periods: impl IntoIterator<Item = (K, u32)>) -> Self {
        let timers = periods
            .into_iter()
            .filter(|&(_, ms)| ms > 0)
            .map(|(key, ms)| Timer {
                key,
                period_ns: u64::from(ms) * 1_000_000,
                next_ns: start_ns,
            })
            .collect();
        Schedule {
            start_ns,
            timers,
            skipped: 0,
        }
    }

    /// Whether there are no timers at all.
    pub fn is_empty(&self) -> bool {
        self.timers.is_empty()
    }

    /// The earliest time a timer is due, if any.
    pub fn next_deadline(&self) -> Option<u64> {
        self.timers.iter().map(|t| t.next_ns).min()
    }

    /// The timers due at `now` (each once), in the order they were given;
    /// each moves to its first slot after `now`.
    pub fn due(&mut self, now_ns: u64) -> Vec<K> {
        let mut due = Vec::new();
        for t in &mut self.timers {
            if t.next_ns > now_ns {
                continue;
            }
            due.push(t.key);
            // Slots since start up to and including now; the next is one more.
            let elapsed = now_ns.saturating_sub(self.start_ns);
            let slot = elapsed / t.period_ns + 1;
            let next = self
                .start_ns
                .saturating_add(slot.saturating_mul(t.period_ns));
            // Slots strictly between the one that fired and `next`.
            let fired_slot = t.next_ns.saturating_sub(self.start_ns) / t.period_ns;
            self.skipped = self
                .skipped
                .saturating_add(slot.saturating_sub(fired_slot).saturating_sub(1));
            t.next_ns = next;
        }
        due
    }

    /// How many slots were skipped because a poll came after the next one
    /// was already due.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn fires_at_start_then_on_its_grid() {
        let mut s = Schedule::new(1000, [("a", 100), ("b", 250)]);
        assert_eq!(s.next_deadline(), Some(1000));
        assert_eq!(s.due(1000), ["a", "b"]);
        assert_eq!(s.next_deadline(), Some(1000 + 100 * MS));
        assert!(s.due(1000 + 100 * MS - 1).is_empty());
        assert_eq!(s.due(1000 + 100 * MS), ["a"]);
        assert_eq!(s.due(1000 + 200 * MS), ["a"]);
        assert_eq!(s.next_deadline(), Some(1000 + 250 * MS));
        assert_eq!(s.due(1000 + 250 * MS), ["b"]);
        assert_eq!(s.due(1000 + 300 * MS), ["a"]);
        assert_eq!(s.skipped(), 0);
    }

    #[test]
    fn a_late_poll_fires_once_and_counts_the_skipped_slots() {
        let mut s = Schedule::new(0, [(1u8, 10)]);
        assert_eq!(s.due(0), [1]);
        // Due at 10 ms; polled at 35 ms: fires once, the slots at 20 and
        // 30 ms are skipped, the next is at 40 ms (no drift).
        assert_eq!(s.due(35 * MS), [1]);
        assert_eq!(s.skipped(), 2);
        assert_eq!(s.next_deadline(), Some(40 * MS));
        assert!(s.due(39 * MS).is_empty());
        assert_eq!(s.due(40 * MS), [1]);
        assert_eq!(s.skipped(), 2);
    }

    #[test]
    fn zero_periods_are_no_timers() {
        let mut s = Schedule::new(5, [(1u8, 0), (2, 0)]);
        assert!(s.is_empty());
        assert_eq!(s.next_deadline(), None);
        assert!(s.due(u64::MAX).is_empty());
    }

    #[test]
    fn huge_times_saturate_instead_of_overflowing() {
        let mut s = Schedule::new(u64::MAX - 5, [(1u8, 1)]);
        assert_eq!(s.due(u64::MAX), [1]);
        assert_eq!(s.next_deadline(), Some(u64::MAX));
    }
}
