//! What the service remembers of triggers between hits: the hits of the
//! last 24 hours, for `max_per_24_h`, and the CLONE_SNAPSHOT hits waiting
//! for their stop delay before their consumer hears of them. Both are
//! bounded: a producer flooding triggers cannot grow them.

use std::collections::{BTreeMap, VecDeque};

/// The window of `max_per_24_h`.
const TRIGGER_WINDOW_NS: u64 = 24 * 3600 * 1_000_000_000;

/// Trigger hits remembered for `max_per_24_h` (beyond this many hits a
/// day, newer ones are not counted).
const MAX_TRIGGER_HISTORY: usize = 64 * 1024;

/// CLONE_SNAPSHOT trigger hits waiting for their delay, at most.
const MAX_PENDING_CLONE_TRIGGER_HITS: usize = 1024;

/// Trigger hits remembered, and clone-trigger notices held back.
#[derive(Debug, Default)]
pub(super) struct TriggerBook {
    /// Hits (BOOTTIME ns, name) of the last 24 hours, oldest first.
    history: VecDeque<(u64, String)>,
    /// Encoded `ObservableEvents` by the id their timer carries.
    clone_hits: BTreeMap<u64, Vec<u8>>,
    last_clone_hit: u64,
}

impl TriggerBook {
    /// The hits of trigger `name` in the 24 hours before `now` (older ones
    /// are forgotten).
    pub(super) fn hits_in_last_day(&mut self, now: u64, name: &str) -> u64 {
        self.history
            .retain(|(at, _)| now.saturating_sub(*at) <= TRIGGER_WINDOW_NS);
        self.history.iter().filter(|(_, n)| n == name).count() as u64
    }

    /// Trigger `name` reached at least one session at `now`.
    pub(super) fn record_hit(&mut self, now: u64, name: &str) {
        if self.history.len() < MAX_TRIGGER_HISTORY {
            self.history.push_back((now, name.to_owned()));
        }
    }

    /// Holds a clone-trigger notice until its delay has passed; its id for
    /// the timer, or `None` when as many are held as may be.
    pub(super) fn hold_clone_hit(&mut self, event: Vec<u8>) -> Option<u64> {
        if self.clone_hits.len() >= MAX_PENDING_CLONE_TRIGGER_HITS {
            return None;
        }
        self.last_clone_hit += 1;
        self.clone_hits.insert(self.last_clone_hit, event);
        Some(self.last_clone_hit)
    }

    /// The notice held under `id`, taken (its timer fired or was disarmed).
    pub(super) fn take_clone_hit(&mut self, id: u64) -> Option<Vec<u8>> {
        self.clone_hits.remove(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_are_counted_for_a_day_and_notices_are_bounded() {
        let mut b = TriggerBook::default();
        b.record_hit(0, "a");
        b.record_hit(10, "a");
        b.record_hit(10, "b");
        assert_eq!(b.hits_in_last_day(20, "a"), 2);
        assert_eq!(
            b.hits_in_last_day(TRIGGER_WINDOW_NS + 5, "a"),
            1,
            "the first is a day old"
        );
        let ids: Vec<_> = (0..MAX_PENDING_CLONE_TRIGGER_HITS)
            .map(|i| b.hold_clone_hit(vec![i as u8]).unwrap())
            .collect();
        assert_eq!(b.hold_clone_hit(vec![0]), None, "bounded");
        assert_eq!(b.take_clone_hit(ids[3]), Some(vec![3]));
        assert_eq!(b.take_clone_hit(ids[3]), None);
        assert!(b.hold_clone_hit(vec![9]).is_some(), "room again");
    }
}
