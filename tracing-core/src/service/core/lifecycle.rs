//! Session lifecycle: data source setup and start, stop with its wait for
//! notifications, flushes and their acks, triggers, periodic work.

use std::collections::BTreeSet;

use zerotrace_protos::protos::{GetAsyncCommandResponse, ObservableEvents};

use super::TracingService;
use super::state::{
    DataSourceState, FlushPurpose, Instance, PendingFlush, SessionKind, SessionState, Timer,
};
use crate::service::action::{Peer, Reply};
use crate::service::config::{DataSourceOverrides, TriggerMode, rewrite_data_source_config};
use crate::service::ids::{
    ConsumerId, DataSourceInstanceId, FlushRequestId, ProducerId, SessionId,
};
use crate::service::service_packets::{ServiceEvent, encode};

/// `ObservableEvents.Type` bits.
pub(super) const OBSERVE_INSTANCES: u32 = 1 << 1;
pub(super) const OBSERVE_ALL_STARTED: u32 = 1 << 2;
pub(super) const OBSERVE_CLONE_TRIGGER: u32 = 1 << 4;

/// FlushFlags: reason periodic / trace stop / trace clone; initiator traced.
const FLUSH_PERIODIC: u64 = 1 | (1 << 4);
const FLUSH_STOP: u64 = 2 | (1 << 4);
const FLUSH_CLONE: u64 = 3 | (1 << 4);
/// FlushFlags clone target: bugreport.
const FLUSH_CLONE_FOR_BUGREPORT: u64 = 1 << 8;

/// The window of `max_per_24_h`.
const TRIGGER_WINDOW_NS: u64 = 24 * 3600 * 1_000_000_000;

/// Trigger hits remembered for `max_per_24_h` (a producer flooding
/// triggers cannot grow the history without bound; beyond this many hits a
/// day, newer ones are not counted).
const MAX_TRIGGER_HISTORY: usize = 64 * 1024;

/// CLONE_SNAPSHOT trigger hits waiting for their delay, at most.
const MAX_PENDING_CLONE_TRIGGER_HITS: usize = 1024;

/// A clock snapshot this recent makes the end-of-session one redundant.
const RECENT_SNAPSHOT_NS: u64 = 1_000_000_000;

impl TracingService {
    /// Creates the instances `session` wants on producer `producer` (only
    /// data source `only` if given) and sends their setup (and start, if the
    /// session is running).
    pub(super) fn setup_data_sources_on(
        &mut self,
        session: SessionId,
        producer: ProducerId,
        only: Option<&str>,
    ) {
        let Some(p) = self.producers.get(&producer) else {
            return;
        };
        // In lockdown, as with Perfetto, only the service's own uid gets
        // data sources set up, producers that connected before included.
        if self.lockdown && p.identity.uid != self.opts.service_uid {
            return;
        }
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
        let mut wanted = Vec::new();
        for spec in &s.config.data_sources {
            if only.is_some_and(|n| n != spec.name) {
                continue;
            }
            let Some(desc) = p.data_sources.get(&spec.name) else {
                continue;
            };
            let local = p.identity.machine_id.is_none();
            if !spec.matches_machine(&p.machine_name, local, s.config.trace_all_machines)
                || !spec.matches_producer(&p.name)
            {
                continue;
            }
            let exists = s
                .instances
                .iter()
                .any(|i| i.producer == producer && i.data_source == spec.name);
            if exists {
                continue;
            }
            wanted.push((spec.config.clone(), spec.buffer_index, desc.clone()));
        }
        if wanted.is_empty() {
            return;
        }
        let producer_name = p.name.clone();
        let identity = p.identity;
        if !self.ensure_smb(producer, session) {
            return;
        }
        for (consumer_config, buffer_index, desc) in wanted {
            let Some(s) = self.sessions.get_mut(&session) else {
                return;
            };
            let Some(&buffer) = s.buffers.get(buffer_index) else {
                continue;
            };
            self.last_instance_id += 1;
            let id = DataSourceInstanceId(self.last_instance_id);
            let config = rewrite_data_source_config(
                &consumer_config,
                &DataSourceOverrides {
                    target_buffer: buffer.0 as u32,
                    trace_duration_ms: s.config.duration_ms,
                    tracing_session_id: session.0,
                    enable_extra_guardrails: s.config.extra_guardrails,
                    stop_timeout_ms: s.config.stop_timeout_ms,
                    session_initiator: 0,
                    prefer_suspend_clock_for_duration: s.config.prefer_suspend_clock_for_duration,
                },
            );
            s.producer_meta.insert(producer.0, identity);
            let running = s.state == SessionState::Started;
            s.instances.push(Instance {
                id,
                producer,
                producer_name: producer_name.clone(),
                data_source: desc.name.clone(),
                config: config.clone(),
                state: DataSourceState::Configured,
                will_notify_on_start: desc.will_notify_on_start,
                will_notify_on_stop: desc.will_notify_on_stop,
                no_flush: desc.no_flush,
                handles_incremental_state_clear: desc.handles_incremental_state_clear,
            });
            if let Some(p) = self.producers.get_mut(&producer) {
                p.allowed_buffers.insert(buffer);
            }
            self.send_instance_command(producer, id, &config, false);
            // Like Perfetto, a new instance is announced as stopped.
            self.notify_instance_change(session, id);
            if running {
                self.start_instance(session, id);
            }
        }
    }

    /// Sends `start_data_source` to one instance.
    fn start_instance(&mut self, session: SessionId, id: DataSourceInstanceId) {
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        let Some(i) = s.instances.iter_mut().find(|i| i.id == id) else {
            return;
        };
        i.state = if i.will_notify_on_start {
            DataSourceState::Starting
        } else {
            DataSourceState::Started
        };
        let (producer, config, started) = (
            i.producer,
            i.config.clone(),
            i.state == DataSourceState::Started,
        );
        self.send_instance_command(producer, id, &config, true);
        if started {
            self.notify_instance_change(session, id);
        }
        self.check_all_started(session);
    }

    /// Starts a configured session: its data sources and its timers.
    pub(super) fn start_session(&mut self, session: SessionId) {
        let now = self.now;
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        if s.state != SessionState::Configured {
            return;
        }
        s.state = SessionState::Started;
        s.started_at = Some(now);
        s.events.push((now, ServiceEvent::TracingStarted as u32));
        let c = s.config.clone();
        let ids: Vec<_> = s.instances.iter().map(|i| i.id).collect();
        self.disarm(|t| {
            *t == Timer::TriggerTimeout(session)
                && c.trigger_mode == Some(TriggerMode::StartTracing)
        });
        self.snapshot_clocks(session);
        for id in ids {
            self.start_instance(session, id);
        }
        if c.duration_ms > 0 {
            self.arm(c.duration_ms as u64, Timer::Duration(session));
        }
        if c.flush_period_ms > 0 {
            self.arm(c.flush_period_ms as u64, Timer::PeriodicFlush(session));
        }
        if c.clear_period_ms > 0 {
            self.arm(
                c.clear_period_ms as u64,
                Timer::ClearIncrementalState(session),
            );
        }
        if c.write_into_file {
            self.arm(c.file_write_period_ms as u64, Timer::FileWrite(session));
        }
        if !c.disable_clock_snapshotting {
            self.arm(c.snapshot_interval_ms as u64, Timer::ClockSnapshot(session));
        }
        self.check_all_started(session);
    }

    /// Emits ALL_DATA_SOURCES_STARTED once every instance runs.
    pub(super) fn check_all_started(&mut self, session: SessionId) {
        let now = self.now;
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        if s.state != SessionState::Started || s.all_started_notified {
            return;
        }
        if s.instances
            .iter()
            .any(|i| i.state != DataSourceState::Started)
        {
            return;
        }
        s.all_started_notified = true;
        s.events
            .push((now, ServiceEvent::AllDataSourcesStarted as u32));
        if let Some(consumer) = s.consumer {
            let data = encode(|m| {
                ObservableEvents::from_message(m).set_all_data_sources_started(true);
            });
            self.observe(consumer, OBSERVE_ALL_STARTED, data);
        }
    }

    /// Sends an observable event to `consumer` if it asked for `bit`.
    pub(super) fn observe(&mut self, consumer: ConsumerId, bit: u32, events: Vec<u8>) {
        let Some(c) = self.consumers.get(&consumer) else {
            return;
        };
        let Some(request) = c.observe_request.filter(|_| c.observe_mask & bit != 0) else {
            return;
        };
        let data = encode(|mut m| m.append_bytes(1, &events));
        self.reply(Peer::Consumer(consumer), request, Reply::more(data));
    }

    /// Tells the session's consumer that an instance started or stopped.
    fn notify_instance_change(&mut self, session: SessionId, id: DataSourceInstanceId) {
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
        let Some(consumer) = s.consumer else {
            return;
        };
        let Some(i) = s.instances.iter().find(|i| i.id == id) else {
            return;
        };
        let state = match i.state {
            DataSourceState::Started => 2,
            DataSourceState::Stopped | DataSourceState::Configured => 1,
            _ => return,
        };
        let data = encode(|m| {
            let mut e = ObservableEvents::from_message(m);
            let mut c = e.add_instance_state_changes();
            c.set_producer_name(&i.producer_name);
            c.set_data_source_name(&i.data_source);
            c.set_state_raw(state);
        });
        self.observe(consumer, OBSERVE_INSTANCES, data);
    }

    /// `NotifyDataSourceStarted` from `producer`.
    pub(super) fn instance_started(&mut self, producer: ProducerId, id: DataSourceInstanceId) {
        let Some(session) = self.session_of_instance(producer, id) else {
            return;
        };
        if let Some(i) = self.instance_mut(session, id)
            && i.state == DataSourceState::Starting
        {
            i.state = DataSourceState::Started;
            self.notify_instance_change(session, id);
            self.check_all_started(session);
        }
    }

    /// `NotifyDataSourceStopped` from `producer`.
    pub(super) fn instance_stopped(&mut self, producer: ProducerId, id: DataSourceInstanceId) {
        let Some(session) = self.session_of_instance(producer, id) else {
            return;
        };
        if let Some(i) = self.instance_mut(session, id)
            && i.state == DataSourceState::Stopping
        {
            i.state = DataSourceState::Stopped;
            self.notify_instance_change(session, id);
            self.maybe_finish_stop(session);
        }
    }

    fn session_of_instance(
        &self,
        producer: ProducerId,
        id: DataSourceInstanceId,
    ) -> Option<SessionId> {
        self.sessions
            .values()
            .find(|s| {
                s.instances
                    .iter()
                    .any(|i| i.id == id && i.producer == producer)
            })
            .map(|s| s.id)
    }

    fn instance_mut(
        &mut self,
        session: SessionId,
        id: DataSourceInstanceId,
    ) -> Option<&mut Instance> {
        self.sessions
            .get_mut(&session)?
            .instances
            .iter_mut()
            .find(|i| i.id == id)
    }

    /// Removes the instances matching `pred` from every session (their
    /// producer went away or unregistered the data source).
    pub(super) fn drop_instances(&mut self, pred: impl Fn(&Instance) -> bool) {
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for session in ids {
            let Some(s) = self.sessions.get_mut(&session) else {
                continue;
            };
            let before = s.instances.len();
            s.instances.retain(|i| !pred(i));
            if s.instances.len() != before {
                match s.state {
                    SessionState::Stopping => self.maybe_finish_stop(session),
                    SessionState::Started => self.check_all_started(session),
                    _ => {}
                }
            }
        }
    }

    /// Stops `session`: every instance is told to stop; the stop completes
    /// when the ones that notify on stop have (or after the stop timeout).
    pub(super) fn stop_session(&mut self, session: SessionId) {
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        match s.state {
            SessionState::Stopping | SessionState::Stopped => return,
            SessionState::Configured | SessionState::Started => {}
        }
        s.state = SessionState::Stopping;
        let timeout = s.config.stop_timeout_ms as u64;
        let mut to_stop = Vec::new();
        for i in &mut s.instances {
            match i.state {
                DataSourceState::Stopped => {}
                _ if i.will_notify_on_stop => {
                    i.state = DataSourceState::Stopping;
                    to_stop.push((i.producer, i.id, false));
                }
                _ => {
                    i.state = DataSourceState::Stopped;
                    to_stop.push((i.producer, i.id, true));
                }
            }
        }
        for (producer, id, stopped) in to_stop {
            self.send_stop(producer, id);
            if stopped {
                self.notify_instance_change(session, id);
            }
        }
        self.arm(timeout, Timer::StopTimeout(session));
        self.maybe_finish_stop(session);
    }

    /// Completes a stop once no instance is still stopping.
    fn maybe_finish_stop(&mut self, session: SessionId) {
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
        if s.state != SessionState::Stopping
            || s.instances
                .iter()
                .any(|i| i.state == DataSourceState::Stopping)
        {
            return;
        }
        self.finish_stop(session);
    }

    /// The session has stopped: salvage what producers left in their SMBs,
    /// record the end, answer the EnableTracing call, finish the file.
    pub(super) fn finish_stop(&mut self, session: SessionId) {
        let producers: BTreeSet<ProducerId> = match self.sessions.get(&session) {
            Some(s) => s.instances.iter().map(|i| i.producer).collect(),
            None => return,
        };
        for p in producers {
            self.scrape_producer(p, Some(session));
        }
        // An end snapshot, unless a recent one (the final flush's) covers it.
        let recent = self
            .sessions
            .get(&session)
            .and_then(|s| s.last_snapshot_at)
            .is_some_and(|t| self.now.saturating_sub(t) < RECENT_SNAPSHOT_NS);
        if !recent {
            self.snapshot_clocks(session);
        }
        let now = self.now;
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        s.state = SessionState::Stopped;
        for i in &mut s.instances {
            i.state = DataSourceState::Stopped;
        }
        s.events.push((now, ServiceEvent::TracingDisabled as u32));
        let write_into_file = s.config.write_into_file;
        // A clone trigger's hit still reaches the consumer of the stopped
        // session (as Perfetto's delayed task: the session still exists).
        self.disarm(|t| t.session() == Some(session) && !matches!(t, Timer::CloneTriggerHit(..)));
        if write_into_file {
            self.write_into_file(session, true);
        }
        // With a file, once the driver has closed it.
        self.send_end_reply(session);
    }

    /// Asks the session's producers to flush; `timeout_ms` bounds the wait.
    pub(super) fn flush(
        &mut self,
        session: SessionId,
        timeout_ms: u32,
        flags: u64,
        purpose: FlushPurpose,
    ) {
        let now = self.now;
        let max_pending = self.opts.limits.max_pending_flushes;
        let pending = self
            .pending_flushes
            .values()
            .filter(|f| f.session == session)
            .count();
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        if pending >= max_pending {
            if let FlushPurpose::Consumer(c, r) | FlushPurpose::Clone(c, r) = purpose {
                self.reply(
                    Peer::Consumer(c),
                    r,
                    Reply::Err("too many pending flushes".into()),
                );
            }
            return;
        }
        s.flushes_requested += 1;
        s.events.push((now, ServiceEvent::FlushStarted as u32));
        let timeout = if timeout_ms == 0 {
            s.config.flush_timeout_ms
        } else {
            timeout_ms
        };
        let mut per_producer: std::collections::BTreeMap<ProducerId, Vec<u64>> = Default::default();
        for i in &s.instances {
            if matches!(
                i.state,
                DataSourceState::Started | DataSourceState::Starting
            ) && !i.no_flush
            {
                per_producer.entry(i.producer).or_default().push(i.id.0);
            }
        }
        self.last_flush_id += 1;
        let id = FlushRequestId(self.last_flush_id);
        for (producer, ids) in &per_producer {
            let data = encode(|m| {
                let mut c = GetAsyncCommandResponse::from_message(m);
                let mut f = c.begin_flush();
                for ds in ids {
                    f.add_data_source_ids(*ds);
                }
                f.set_request_id(id.0);
                f.set_flags(flags);
            });
            self.send_command(*producer, data, false);
        }
        self.pending_flushes.insert(
            id,
            PendingFlush {
                session,
                producers: per_producer.keys().copied().collect(),
                purpose,
            },
        );
        if per_producer.is_empty() {
            self.complete_flush(id, true);
        } else {
            self.arm(timeout as u64, Timer::FlushTimeout(id));
        }
    }

    /// A producer committed with `flush_request_id`: it has flushed
    /// everything up to that request.
    pub(super) fn flush_acked(&mut self, producer: ProducerId, upto: u64) {
        let ids: Vec<FlushRequestId> = self
            .pending_flushes
            .range(..=FlushRequestId(upto))
            .map(|(k, _)| *k)
            .collect();
        for id in ids {
            if let Some(f) = self.pending_flushes.get_mut(&id) {
                f.producers.remove(&producer);
                if f.producers.is_empty() {
                    self.complete_flush(id, true);
                }
            }
        }
    }

    /// A flush is over, acknowledged by all or timed out.
    pub(super) fn complete_flush(&mut self, id: FlushRequestId, success: bool) {
        let Some(f) = self.pending_flushes.remove(&id) else {
            return;
        };
        self.disarm(|t| *t == Timer::FlushTimeout(id));
        let session = f.session;
        let producers: BTreeSet<ProducerId> = match self.sessions.get(&session) {
            Some(s) => s.instances.iter().map(|i| i.producer).collect(),
            None => return,
        };
        for p in producers {
            self.scrape_producer(p, Some(session));
        }
        self.snapshot_clocks(session);
        let now = self.now;
        if let Some(s) = self.sessions.get_mut(&session) {
            if success {
                s.flushes_succeeded += 1;
                s.events
                    .push((now, ServiceEvent::AllDataSourcesFlushed as u32));
            } else {
                s.flushes_failed += 1;
                s.events
                    .push((now, ServiceEvent::LastFlushSlowDataSources as u32));
            }
            // The outcome of the last flush before the end.
            s.final_flush_outcome = if success { 1 } else { 2 };
        }
        match f.purpose {
            FlushPurpose::Consumer(c, r) => {
                let reply = if success {
                    Reply::done(Vec::new())
                } else {
                    Reply::Err("flush timed out".into())
                };
                self.reply(Peer::Consumer(c), r, reply);
            }
            FlushPurpose::Periodic => {}
            FlushPurpose::Stop => self.stop_session(session),
            FlushPurpose::Clone(c, r) => self.finish_clone(session, c, r),
        }
    }

    /// Flush, then stop (duration expiry, stop triggers).
    pub(super) fn flush_and_stop(&mut self, session: SessionId) {
        let timeout = match self.sessions.get(&session) {
            Some(s) if s.state == SessionState::Started => s.config.flush_timeout_ms,
            Some(s) if s.state == SessionState::Configured => {
                self.stop_session(session);
                return;
            }
            _ => return,
        };
        self.flush(session, timeout, FLUSH_STOP, FlushPurpose::Stop);
    }

    /// Sends `clear_incremental_state` to the instances that handle it.
    fn clear_incremental_state(&mut self, session: SessionId) {
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
        let mut per_producer: std::collections::BTreeMap<ProducerId, Vec<u64>> = Default::default();
        for i in &s.instances {
            if i.state == DataSourceState::Started && i.handles_incremental_state_clear {
                per_producer.entry(i.producer).or_default().push(i.id.0);
            }
        }
        for (producer, ids) in per_producer {
            let data = encode(|m| {
                let mut c = GetAsyncCommandResponse::from_message(m);
                let mut cl = c.begin_clear_incremental_state();
                for ds in &ids {
                    cl.add_data_source_ids(*ds);
                }
            });
            self.send_command(producer, data, false);
        }
    }

    /// Takes a clock snapshot for `session` (unless it opted out).
    pub(super) fn snapshot_clocks(&mut self, session: SessionId) {
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
        if s.config.disable_clock_snapshotting {
            return;
        }
        let readings = self.env.clock_snapshot();
        let now = self.now;
        if let Some(s) = self.sessions.get_mut(&session) {
            s.last_snapshot_at = Some(now);
            if s.initial_clock.is_none() {
                s.initial_clock = Some(readings);
            } else {
                s.clock_snapshots.push(readings);
                // Keep the trace bounded: old periodic snapshots go.
                if s.clock_snapshots.len() > 64 {
                    s.clock_snapshots.remove(0);
                }
            }
        }
    }

    /// A trigger, from a producer (or a consumer's `activate_triggers`).
    pub(super) fn activate_trigger(&mut self, name: &str, producer_name: &str, uid: u32) {
        let now = self.now;
        // `max_per_24_h` counts this trigger's hits of the last 24 hours,
        // across sessions (as Perfetto: a hit is a trigger that reached at
        // least one session, counted once).
        self.trigger_history
            .retain(|(at, _)| now.saturating_sub(*at) <= TRIGGER_WINDOW_NS);
        let hits = self
            .trigger_history
            .iter()
            .filter(|(_, n)| n == name)
            .count() as u64;
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
                    } else if self.clone_trigger_hits.len() < MAX_PENDING_CLONE_TRIGGER_HITS {
                        // Counted awake, told to whoever consumes it then.
                        self.last_clone_trigger_hit += 1;
                        let id = self.last_clone_trigger_hit;
                        self.clone_trigger_hits.insert(id, data);
                        self.arm(delay as u64, Timer::CloneTriggerHit(session, id));
                    }
                }
                _ => {}
            }
        }
        if hit && self.trigger_history.len() < MAX_TRIGGER_HISTORY {
            self.trigger_history.push_back((now, name.to_owned()));
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
                let data = self.clone_trigger_hits.remove(&id);
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
                if let Some(s) = self.sessions.get(&session) {
                    let period = s.config.file_write_period_ms as u64;
                    self.write_into_file(session, false);
                    if self
                        .sessions
                        .get(&session)
                        .is_some_and(|s| s.state == SessionState::Started)
                    {
                        self.arm(period, Timer::FileWrite(session));
                    }
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

    /// Starts a clone flush of `session` for `consumer`.
    pub(super) fn clone_flush(
        &mut self,
        session: SessionId,
        consumer: ConsumerId,
        request: crate::service::ids::RequestId,
        for_bugreport: bool,
    ) {
        let flags = if for_bugreport {
            FLUSH_CLONE | FLUSH_CLONE_FOR_BUGREPORT
        } else {
            FLUSH_CLONE
        };
        let timeout = self
            .sessions
            .get(&session)
            .map(|s| s.config.flush_timeout_ms)
            .unwrap_or(5000);
        self.flush(
            session,
            timeout,
            flags,
            FlushPurpose::Clone(consumer, request),
        );
    }
}
