//! Triggers and timers: what a trigger does to the sessions that name it
//! (start, stop after its delay, or a clone-snapshot notice; within
//! `max_per_24_h` and `skip_probability`), and what each of the core's
//! timers does when it goes off.

use zerotrace_protos::protos::ObservableEvents;

use super::TracingService;
use super::lifecycle::{FLUSH_PERIODIC, OBSERVE_CLONE_TRIGGER};
use super::state::{FlushPurpose, SessionKind, SessionState, Timer};
use crate::service::config::TriggerMode;
use crate::service::ids::SessionId;
use crate::service::service_packets::encode;

impl TracingService {
    /// A trigger, from a producer (or a consumer's `activate_triggers`).
    pub(super) fn activate_trigger(&mut self, name: &str, producer_name: &str, uid: u32) {
        let now = self.now;
        // `max_per_24_h` counts this trigger's hits of the last 24 hours,
        // across sessions (as Perfetto: a hit is a trigger that reached at
        // least one session, counted once).
        let hits = self.trigger_book.hits_in_last_day(now, name);
        let mut hit = false;
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for session in ids {
            let Some(s) = self.sessions.get(&session) else {
                continue;
            };
            // A clone carries its source's config, triggers included, but
            // only live sessions react to them.
            if s.kind == SessionKind::Clone {
                continue;
            }
            let Some(mode) = s.config.trigger_mode else {
                continue;
            };
            let Some(t) = s.config.triggers.iter().find(|t| {
                t.name == name
                    && t.producer_name_regex
                        .as_ref()
                        .is_none_or(|r| r.is_match(producer_name))
            }) else {
                continue;
            };
            let (delay, skip_probability, max_per_24_h) =
                (t.stop_delay_ms, t.skip_probability, t.max_per_24_h);
            // A random number in [0, 1) under skip_probability drops it.
            if skip_probability > 0.0 && self.env.random_unit() < skip_probability {
                continue;
            }
            if max_per_24_h > 0 && hits >= max_per_24_h as u64 {
                continue;
            }
            hit = true;
            let Some(s) = self.sessions.get_mut(&session) else {
                continue;
            };
            let first = s.triggers_received.is_empty();
            if s.triggers_received.len() < 1024 {
                s.triggers_received
                    .push((name.to_owned(), producer_name.to_owned(), uid, now));
            }
            match (mode, s.state) {
                (TriggerMode::StartTracing, SessionState::Configured)
                    if !s.config.deferred_start =>
                {
                    // As Perfetto: the trigger's stop delay becomes the
                    // session's duration (so it follows that clock).
                    s.config.duration_ms = delay;
                    self.start_session(session)
                }
                // As Perfetto: the first stop trigger sets the stop; later
                // ones change nothing.
                (TriggerMode::StopTracing, SessionState::Started) if first => {
                    self.disarm(|t| *t == Timer::TriggerTimeout(session));
                    self.arm(delay as u64, Timer::TriggerStop(session));
                }
                (TriggerMode::CloneSnapshot, _) => {
                    let data = encode(|m| {
                        let mut e = ObservableEvents::from_message(m);
                        let mut h = e.begin_clone_trigger_hit();
                        h.set_tracing_session_id(session.0 as i64);
                        h.set_trigger_name(name);
                        h.set_producer_name(producer_name);
                        h.set_producer_uid(uid);
                        h.set_boot_time_ns(now);
                        h.set_trigger_delay_ms(delay as u64);
                    });
                    // As Perfetto: the consumer hears of the trigger once
                    // its `stop_delay_ms` has passed (the trigger's own time
                    // stays in the event), so the clone it asks for holds
                    // what came after the trigger too.
                    if delay == 0 {
                        if let Some(consumer) = s.consumer {
                            self.observe(consumer, OBSERVE_CLONE_TRIGGER, data);
                        }
                    } else if let Some(id) = self.trigger_book.hold_clone_hit(data) {
                        // Counted awake, told to whoever consumes it then.
                        self.arm(delay as u64, Timer::CloneTriggerHit(session, id));
                    }
                }
                _ => {}
            }
        }
        if hit {
            self.trigger_book.record_hit(now, name);
        }
    }

    /// A timer went off.
    pub(super) fn fire(&mut self, timer: Timer) {
        match timer {
            Timer::FlushTimeout(id) => self.complete_flush(id, false),
            Timer::StopTimeout(session) => {
                if self
                    .sessions
                    .get(&session)
                    .is_some_and(|s| s.state == SessionState::Stopping)
                {
                    self.finish_stop(session);
                }
            }
            Timer::Duration(session) | Timer::TriggerStop(session) => self.flush_and_stop(session),
            Timer::CloneTriggerHit(session, id) => {
                let data = self.trigger_book.take_clone_hit(id);
                let consumer = self.sessions.get(&session).and_then(|s| s.consumer);
                if let (Some(data), Some(consumer)) = (data, consumer) {
                    self.observe(consumer, OBSERVE_CLONE_TRIGGER, data);
                }
            }
            Timer::TriggerTimeout(session) => {
                // No start trigger came: the session ends. No stop trigger
                // came: as Perfetto (whose duration this is), flush and
                // stop.
                let start = self
                    .sessions
                    .get(&session)
                    .is_some_and(|s| s.config.trigger_mode == Some(TriggerMode::StartTracing));
                if start {
                    self.stop_session(session);
                } else {
                    self.flush_and_stop(session);
                }
            }
            Timer::FileWrite(session) => {
                let flush_first = self.sessions.get(&session).is_some_and(|s| {
                    s.state == SessionState::Started && s.config.flush_before_write
                });
                if flush_first {
                    // The write follows the flush's end (complete_flush).
                    self.flush(session, 0, FLUSH_PERIODIC, FlushPurpose::BeforeWrite);
                } else {
                    self.write_into_file_and_rearm(session);
                }
            }
            Timer::PeriodicFlush(session) => {
                if let Some(s) = self
                    .sessions
                    .get(&session)
                    .filter(|s| s.state == SessionState::Started)
                {
                    let (period, timeout) =
                        (s.config.flush_period_ms as u64, s.config.flush_timeout_ms);
                    self.flush(session, timeout, FLUSH_PERIODIC, FlushPurpose::Periodic);
                    self.arm(period, Timer::PeriodicFlush(session));
                }
            }
            Timer::ClearIncrementalState(session) => {
                if let Some(s) = self
                    .sessions
                    .get(&session)
                    .filter(|s| s.state == SessionState::Started)
                {
                    let period = s.config.clear_period_ms as u64;
                    self.clear_incremental_state(session);
                    self.arm(period, Timer::ClearIncrementalState(session));
                }
            }
            Timer::ClockSnapshot(session) => {
                if let Some(s) = self
                    .sessions
                    .get(&session)
                    .filter(|s| s.state == SessionState::Started)
                {
                    let period = s.config.snapshot_interval_ms as u64;
                    self.snapshot_clocks(session);
                    self.arm(period, Timer::ClockSnapshot(session));
                }
            }
        }
    }
}
