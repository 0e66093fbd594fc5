//! The core's timers, ordered by their BOOTTIME deadline. A timer that
//! must not count suspended time also carries a MONOTONIC deadline: due on
//! BOOTTIME while the machine slept through part of it, it is put back for
//! the rest. What a timer does when it fires is the core's (`fire` in
//! `triggers.rs`); when it is armed, and on which clock, is `arm` in
//! `mod.rs`.

use std::collections::BTreeMap;

use super::state::Timer;

/// Less than this left on MONOTONIC is the lag between the driver's clock
/// reading and the core's: due.
const MONOTONIC_SLACK_NS: u64 = 1_000_000;

/// Timers by (BOOTTIME deadline, arming order), with their MONOTONIC
/// deadline where they must not count suspended time.
#[derive(Debug, Default)]
pub(super) struct Timers {
    by_deadline: BTreeMap<(u64, u64), (Timer, Option<u64>)>,
    seq: u64,
}

impl Timers {
    /// The earliest BOOTTIME deadline.
    pub(super) fn next_deadline(&self) -> Option<u64> {
        self.by_deadline.keys().next().map(|&(t, _)| t)
    }

    /// Arms `timer` for BOOTTIME `at`, and MONOTONIC `monotonic_at` if it
    /// must not count suspended time.
    pub(super) fn arm(&mut self, at: u64, monotonic_at: Option<u64>, timer: Timer) {
        self.seq += 1;
        self.by_deadline
            .insert((at, self.seq), (timer, monotonic_at));
    }

    /// The next timer due at BOOTTIME `now`, in deadline and arming order.
    /// One whose MONOTONIC deadline (read with `monotonic_now`) is still
    /// ahead is put back for what is left.
    pub(super) fn pop_due(
        &mut self,
        now: u64,
        mut monotonic_now: impl FnMut() -> Option<u64>,
    ) -> Option<Timer> {
        loop {
            let (&key, _) = self.by_deadline.iter().next()?;
            if key.0 > now {
                return None;
            }
            let (timer, monotonic_at) = self.by_deadline.remove(&key)?;
            let left = monotonic_at
                .and_then(|at| monotonic_now().map(|mono| at.saturating_sub(mono)))
                .unwrap_or(0);
            if left >= MONOTONIC_SLACK_NS {
                self.arm(now.saturating_add(left), monotonic_at, timer);
                continue;
            }
            return Some(timer);
        }
    }

    /// Keeps only the timers for which `keep` says so.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&Timer) -> bool) {
        self.by_deadline.retain(|_, (t, _)| keep(t));
    }
}
