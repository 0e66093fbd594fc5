//! Stopping a running query from outside the session: a server that sees
//! its client go away (or a watcher whose clock passed the query's time
//! limit) must not leave SQLite stepping through rows nobody will read
//! while it holds the session. A [`QueryCancel`] is a flag and a reason
//! shared with the session's SQLite progress handler: once set, the
//! running statement ends with `SQLITE_INTERRUPT` and the answer's error
//! says why. A flag, not a bare `sqlite3_interrupt`, so that a cancel that
//! lands between two statements of one query still stops the next one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Stops the query a session is running (or its next one, if none runs
/// yet); cloned freely, sent to any thread.
#[derive(Debug, Clone, Default)]
pub struct QueryCancel(Arc<State>);

#[derive(Debug, Default)]
struct State {
    stopped: AtomicBool,
    reason: Mutex<Option<String>>,
}

impl QueryCancel {
    /// Stops the query, `reason` becoming its error (the first reason
    /// given stays).
    pub fn cancel(&self, reason: &str) {
        {
            let mut r = self.0.reason.lock().unwrap_or_else(PoisonError::into_inner);
            if r.is_none() {
                *r = Some(reason.to_owned());
            }
        }
        self.0.stopped.store(true, Ordering::Release);
    }

    /// Whether [`QueryCancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.stopped.load(Ordering::Acquire)
    }

    /// Why the query was stopped, once it was.
    pub fn reason(&self) -> Option<String> {
        if !self.is_cancelled() {
            return None;
        }
        self.0
            .reason
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The progress handler's test for one query: stopped by hand, or
    /// past `deadline`. The deadline's stop is the query's own (the
    /// returned handle, whose reason names the limit), not this handle's,
    /// so it does not carry over to the next query.
    pub(crate) fn stop_check(
        self,
        deadline: Option<(Instant, Duration)>,
    ) -> (impl FnMut() -> bool + Send + 'static, QueryCancel) {
        let timer = QueryCancel::default();
        let timed_out = timer.clone();
        let check = move || {
            if self.is_cancelled() || timed_out.is_cancelled() {
                return true;
            }
            match deadline {
                Some((at, limit)) if Instant::now() >= at => {
                    timed_out.cancel(&format!(
                        "the query ran past its time limit of {} s (--query-timeout)",
                        limit.as_secs_f64()
                    ));
                    true
                }
                _ => false,
            }
        };
        (check, timer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_stays_and_a_deadline_stops() {
        let c = QueryCancel::default();
        assert!(!c.is_cancelled());
        assert_eq!(c.reason(), None);
        let (mut check, _) = c.clone().stop_check(None);
        assert!(!check());
        c.cancel("the client went away");
        c.cancel("later");
        assert!(check());
        assert_eq!(c.reason().as_deref(), Some("the client went away"));

        let d = QueryCancel::default();
        let (mut check, timer) = d
            .clone()
            .stop_check(Some((Instant::now(), Duration::from_millis(1500))));
        assert!(check());
        assert!(!d.is_cancelled());
        assert!(timer.reason().unwrap().contains("time limit of 1.5 s"));
    }
}
