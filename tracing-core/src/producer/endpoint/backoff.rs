//! When to try connecting again: a back-off that starts at one delay and
//! doubles after every failed attempt up to a cap, with an optional time by
//! which the first connection must have come. Pure arithmetic on the
//! endpoint's nanosecond clock, so the schedule is testable as deadlines.

use std::time::Duration;

/// A back-off schedule: the first delay and the largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The delay before the first retry.
    pub initial: Duration,
    /// The largest delay (doubling stops there).
    pub max: Duration,
}

impl Backoff {
    /// The schedule `ProducerClient::connect` retries its first connection
    /// with: 20 ms doubling to 1 s.
    pub const FIRST_CONNECT: Backoff = Backoff {
        initial: Duration::from_millis(20),
        max: Duration::from_secs(1),
    };

    /// The schedule after losing the service (and of
    /// `ProducerClient::start`): 50 ms doubling to 2 s.
    pub const RECONNECT: Backoff = Backoff {
        initial: Duration::from_millis(50),
        max: Duration::from_secs(2),
    };
}

/// Nanoseconds of a duration, saturating.
pub(crate) fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The connection attempts of an endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Reconnect {
    schedule: Backoff,
    /// The delay after the next failure.
    delay: u64,
    /// When to try next (`None`: not waiting).
    pub(crate) next_attempt: Option<u64>,
    /// An attempt is under way (asked for, not yet answered).
    pub(crate) connecting: bool,
    /// Give up when the next attempt would come after this.
    give_up_at: Option<u64>,
    /// No more attempts (closed, or given up).
    pub(crate) stopped: bool,
}

/// What a failed attempt leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterFailure {
    /// Try again at this time.
    RetryAt(u64),
    /// The first connection did not come in time.
    GiveUp,
}

impl Reconnect {
    /// Attempts on `schedule`, the first at once; with `give_up_at`, none
    /// after that time.
    pub(crate) fn new(schedule: Backoff, give_up_at: Option<u64>) -> Reconnect {
        Reconnect {
            schedule,
            delay: ns(schedule.initial),
            next_attempt: None,
            connecting: true,
            give_up_at,
            stopped: false,
        }
    }

    /// An attempt failed at `now`.
    pub(crate) fn failed(&mut self, now: u64) -> AfterFailure {
        self.connecting = false;
        if self
            .give_up_at
            .is_some_and(|g| now.saturating_add(self.delay) > g)
        {
            self.stopped = true;
            return AfterFailure::GiveUp;
        }
        let at = now.saturating_add(self.delay);
        self.next_attempt = Some(at);
        self.delay = self.delay.saturating_mul(2).min(ns(self.schedule.max));
        AfterFailure::RetryAt(at)
    }

    /// An attempt succeeded: from now on the reconnect schedule applies.
    pub(crate) fn succeeded(&mut self, schedule: Backoff) {
        self.connecting = false;
        self.next_attempt = None;
        self.give_up_at = None;
        self.schedule = schedule;
        self.delay = ns(schedule.initial);
    }

    /// The connection was lost at `now`: the first attempt waits one
    /// initial delay (a restarting service gets a moment).
    pub(crate) fn lost(&mut self, now: u64) {
        self.delay = ns(self.schedule.initial);
        self.next_attempt = Some(now.saturating_add(self.delay));
    }

    /// Whether an attempt is due at `now` (and marks it under way).
    pub(crate) fn due(&mut self, now: u64) -> bool {
        match self.next_attempt {
            Some(at) if at <= now && !self.stopped => {
                self.next_attempt = None;
                self.connecting = true;
                true
            }
            _ => false,
        }
    }
}
