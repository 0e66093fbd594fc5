//! Session lifecycle: data source setup and start, stop with its wait for
//! notifications, flushes and their acks, clock snapshots (triggers and
//! timers are in `triggers.rs`, clone flushes in `clone_session.rs`).

use std::collections::BTreeSet;

use zerotrace_protos::protos::{GetAsyncCommandResponse, ObservableEvents};

use super::TracingService;
use super::state::{DataSourceState, FlushPurpose, Instance, PendingFlush, SessionState, Timer};
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

/// FlushFlags: reason periodic / trace stop; initiator traced.
pub(super) const FLUSH_PERIODIC: u64 = 1 | (1 << 4);
const FLUSH_STOP: u64 = 2 | (1 << 4);

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
            let Some(s) = self.sessions.get(&session) else {
                return;
            };
            if s.buffers.get(buffer_index).is_none() {
                continue;
            }
            let id = self.sessions.new_instance_id();
            let Some(s) = self.sessions.get_mut(&session) else {
                return;
            };
            let Some(&buffer) = s.buffers.get(buffer_index) else {
                continue;
            };
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
        s.events.push((now, ServiceEvent::TracingStarted as u32, 1));
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
            .push((now, ServiceEvent::AllDataSourcesStarted as u32, 1));
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
            .and_then(|s| s.clocks.last_snapshot_at)
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
        s.events
            .push((now, ServiceEvent::TracingDisabled as u32, 1));
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
            match purpose {
                FlushPurpose::Consumer(c, r) | FlushPurpose::Clone(c, r) => self.reply(
                    Peer::Consumer(c),
                    r,
                    Reply::Err("too many pending flushes".into()),
                ),
                // The file is written all the same, without the flush.
                FlushPurpose::BeforeWrite => self.write_into_file_and_rearm(session),
                FlushPurpose::Periodic | FlushPurpose::Stop => {}
            }
            return;
        }
        s.flushes.requested += 1;
        s.events.push((now, ServiceEvent::FlushStarted as u32, 1));
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
        let id = self.pending_flushes.new_id();
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
        // As upstream's service records them: a final flush (stop, clone)
        // that timed out says so, and every flush that ended, acknowledged
        // or timed out, counts as "all data sources flushed" (the trace
        // processor's sort window takes it as a safe point).
        let is_final = matches!(f.purpose, FlushPurpose::Stop | FlushPurpose::Clone(..));
        if let Some(s) = self.sessions.get_mut(&session) {
            if success {
                s.flushes.succeeded += 1;
            } else {
                s.flushes.failed += 1;
                if is_final {
                    s.events
                        .push((now, ServiceEvent::LastFlushSlowDataSources as u32, 1));
                }
            }
            s.events
                .push((now, ServiceEvent::AllDataSourcesFlushed as u32, 1));
            // The outcome of the last flush before the end.
            s.flushes.final_outcome = if success { 1 } else { 2 };
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
            FlushPurpose::BeforeWrite => self.write_into_file_and_rearm(session),
            FlushPurpose::Stop => self.stop_session(session),
            FlushPurpose::Clone(c, r) => self.finish_clone(session, c, r),
        }
    }

    /// The periodic write into the file, and the next one's timer while
    /// the session runs.
    pub(super) fn write_into_file_and_rearm(&mut self, session: SessionId) {
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
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
    pub(super) fn clear_incremental_state(&mut self, session: SessionId) {
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
            s.clocks.last_snapshot_at = Some(now);
            if s.clocks.initial.is_none() {
                s.clocks.initial = Some(readings);
            } else {
                s.clocks.snapshots.push(readings);
                // Keep the trace bounded: old periodic snapshots go.
                if s.clocks.snapshots.len() > 64 {
                    s.clocks.snapshots.remove(0);
                }
            }
        }
    }
}
