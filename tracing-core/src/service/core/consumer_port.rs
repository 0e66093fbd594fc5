//! ConsumerPort: sessions created, controlled, read and freed by consumers.

use zerotrace_protos::protos::{
    AttachResponse, EnableTracingResponse, GetTraceStatsResponse, QueryCapabilitiesResponse,
    QueryServiceStateResponse, TracingServiceState,
};

use super::TracingService;
use super::state::{FlushPurpose, Session, SessionKind, SessionState, Timer};
use crate::protocol::BufferId;
use crate::service::action::{Action, Peer, Reply};
use crate::service::calls::ConsumerCall;
use crate::service::config::{SessionConfig, TriggerMode};
use crate::service::ids::{ConsumerId, RequestId, SessionId};
use crate::service::service_packets::encode;
use crate::service::trace_buffer::{FillPolicy, TraceBuffer};

impl TracingService {
    /// A call from consumer `id` that came with no file descriptor.
    pub fn handle_consumer_call(
        &mut self,
        now: u64,
        id: ConsumerId,
        request: RequestId,
        call: ConsumerCall,
    ) {
        self.handle_consumer_call_with_fd(now, id, request, call, false);
    }

    /// A call from consumer `id`; `fd_passed` says whether a file
    /// descriptor came with it (EnableTracing's output file: a
    /// `write_into_file` session needs either it or an `output_path`, not
    /// both). The driver holds the descriptor; the core decides, and says
    /// it keeps it with [`Action::AdoptPassedOutput`].
    pub fn handle_consumer_call_with_fd(
        &mut self,
        now: u64,
        id: ConsumerId,
        request: RequestId,
        call: ConsumerCall,
        fd_passed: bool,
    ) {
        self.advance(now);
        let to = Peer::Consumer(id);
        let Some(c) = self.consumers.get(&id) else {
            return;
        };
        let session = c.session;
        match call {
            ConsumerCall::EnableTracing {
                config,
                attach_notification_only,
            } => {
                if attach_notification_only {
                    match session.and_then(|s| self.sessions.get_mut(&s)) {
                        Some(s) if s.state == SessionState::Stopped => {
                            let reply = super::file_output::ended_reply(s.end_error.as_deref());
                            self.reply(to, request, reply);
                        }
                        Some(s) => s.enable_reply = Some((id, request)),
                        None => {
                            self.reply(to, request, Reply::Err("no session to attach to".into()))
                        }
                    }
                    return;
                }
                if session.is_some() {
                    self.enable_error(id, request, "this consumer already has a tracing session");
                    return;
                }
                if let Err(msg) = self.enable_tracing(id, request, &config, fd_passed) {
                    self.enable_error(id, request, &msg);
                }
            }
            ConsumerCall::DisableTracing => {
                self.reply(to, request, Reply::done(Vec::new()));
                if let Some(s) = session {
                    self.stop_session(s);
                }
            }
            ConsumerCall::ReadBuffers => match session.and_then(|s| self.sessions.get(&s)) {
                None => self.reply(to, request, Reply::Err("no tracing session".into())),
                Some(s) if s.config.write_into_file => self.reply(
                    to,
                    request,
                    Reply::Err("a write_into_file session cannot be read over IPC".into()),
                ),
                Some(s) => {
                    let sid = s.id;
                    self.read_buffers(sid, id, request);
                }
            },
            ConsumerCall::FreeBuffers => {
                if let Some(s) = session {
                    self.free_session(s);
                }
                self.reply(to, request, Reply::done(Vec::new()));
            }
            ConsumerCall::Flush { timeout_ms, flags } => match session {
                Some(s)
                    if self
                        .sessions
                        .get(&s)
                        .is_some_and(|s| s.state == SessionState::Started) =>
                {
                    self.flush(s, timeout_ms, flags, FlushPurpose::Consumer(id, request));
                }
                _ => self.reply(to, request, Reply::Err("no running tracing session".into())),
            },
            ConsumerCall::StartTracing => match session.and_then(|s| self.sessions.get(&s)) {
                Some(s)
                    if s.state == SessionState::Configured
                        && s.config.deferred_start
                        && !s.file.pending =>
                {
                    let sid = s.id;
                    self.reply(to, request, Reply::done(Vec::new()));
                    self.start_session(sid);
                }
                _ => self.reply(
                    to,
                    request,
                    Reply::Err("no deferred session to start".into()),
                ),
            },
            ConsumerCall::ChangeTraceConfig { config } => {
                self.change_trace_config(id, request, session, &config)
            }
            ConsumerCall::Detach { key } => self.detach(id, request, session, key),
            ConsumerCall::Attach { key } => self.attach(id, request, session, &key),
            ConsumerCall::GetTraceStats => match session {
                Some(s) => {
                    let data = encode(|m| {
                        let mut r = GetTraceStatsResponse::from_message(m);
                        let stats = r.begin_trace_stats();
                        if let Some(sess) = self.sessions.get(&s) {
                            self.write_trace_stats(sess, stats.into_message());
                        }
                    });
                    self.reply(to, request, Reply::done(data));
                }
                None => self.reply(to, request, Reply::Err("no tracing session".into())),
            },
            ConsumerCall::ObserveEvents { types } => {
                let mask = types
                    .iter()
                    .filter(|t| (1..=30).contains(*t))
                    .fold(0u32, |m, t| m | (1 << t));
                let old = self.consumers.get_mut(&id).and_then(|c| {
                    c.observe_mask = mask;
                    std::mem::replace(&mut c.observe_request, (mask != 0).then_some(request))
                });
                // A new subscription ends the previous stream.
                if let Some(old) = old {
                    self.reply(to, old, Reply::done(Vec::new()));
                }
                if mask == 0 {
                    self.reply(to, request, Reply::done(Vec::new()));
                }
                if let Some(s) = session {
                    if let Some(sess) = self.sessions.get_mut(&s) {
                        sess.all_started_notified = false;
                    }
                    self.check_all_started(s);
                }
            }
            ConsumerCall::QueryServiceState { sessions_only } => {
                let data = self.service_state(id, sessions_only);
                self.reply(to, request, Reply::done(data));
            }
            ConsumerCall::QueryCapabilities => {
                let data = encode(|m| {
                    let mut r = QueryCapabilitiesResponse::from_message(m);
                    let mut c = r.begin_capabilities();
                    c.set_has_query_capabilities(true);
                    for t in [1, 2, 4] {
                        c.add_observable_events_raw(t);
                    }
                    c.set_has_trace_config_output_path(self.opts.allow_output_path);
                    c.set_has_clone_session(true);
                });
                self.reply(to, request, Reply::done(data));
            }
            ConsumerCall::SaveTraceForBugreport => self.reply(
                to,
                request,
                Reply::Err("SaveTraceForBugreport is not supported; use CloneSession".into()),
            ),
            ConsumerCall::CloneSession(args) => self.clone_session(id, request, session, args),
        }
    }

    /// Consumer `id` is gone: its session goes too, unless detached.
    pub fn consumer_disconnected(&mut self, now: u64, id: ConsumerId) {
        self.advance(now);
        self.pending_reads.remove(&id);
        let Some(c) = self.consumers.remove(&id) else {
            return;
        };
        if let Some(s) = c.session {
            self.free_session(s);
        }
    }

    pub(super) fn enable_error(&mut self, id: ConsumerId, request: RequestId, msg: &str) {
        let data = encode(|m| {
            EnableTracingResponse::from_message(m).set_error(msg);
        });
        self.reply(Peer::Consumer(id), request, Reply::done(data));
    }

    /// Creates a session from `raw` for consumer `id`.
    fn enable_tracing(
        &mut self,
        id: ConsumerId,
        request: RequestId,
        raw: &[u8],
        fd_passed: bool,
    ) -> Result<(), String> {
        let config = SessionConfig::parse(raw, &self.opts.limits).map_err(|e| e.to_string())?;
        let uid = self.consumer_uid(id);
        if config.extra_guardrails {
            // As Perfetto: one guardrailed session per name (empty included)
            // every few minutes, on BOOTTIME.
            let (now, interval) = (
                self.now,
                self.opts.limits.guardrail_session_name_interval_ms * 1_000_000,
            );
            self.guardrail_names
                .retain(|_, began| now.saturating_sub(*began) <= interval);
            let name = config.unique_session_name.clone().unwrap_or_default();
            if let Some(began) = self.guardrail_names.get(&name) {
                return Err(format!(
                    "a session named {name:?} began {} s ago, less than {} s \
                     (enable_extra_guardrails)",
                    now.saturating_sub(*began) / 1_000_000_000,
                    interval / 1_000_000_000
                ));
            }
            self.guardrail_names.insert(name, now);
        }
        let limits = &self.opts.limits;
        let live = self
            .sessions
            .values()
            .filter(|s| s.kind == SessionKind::Normal);
        if live.clone().count() >= limits.max_sessions {
            return Err(format!(
                "too many tracing sessions (max_sessions {})",
                limits.max_sessions
            ));
        }
        if live.clone().filter(|s| s.consumer_uid == uid).count() >= limits.max_sessions_per_uid {
            return Err(format!(
                "too many tracing sessions for uid {uid} (max_sessions_per_uid {})",
                limits.max_sessions_per_uid
            ));
        }
        let used = self.buffers.bytes_of(|_| true);
        if used + config.total_buffer_bytes() > limits.max_total_buffer_bytes {
            return Err(format!(
                "trace buffers would take {} bytes of {} (max_total_buffer_bytes)",
                used + config.total_buffer_bytes(),
                limits.max_total_buffer_bytes
            ));
        }
        // One user's share of the budget, so that one user cannot take it
        // all (the service's own uid, which runs it, is not held to it).
        if uid != self.opts.service_uid {
            let sessions = &self.sessions;
            let mine = self
                .buffers
                .bytes_of(|sid| sessions.get(&sid).is_some_and(|s| s.consumer_uid == uid));
            if mine + config.total_buffer_bytes() > limits.max_buffer_bytes_per_uid {
                return Err(format!(
                    "trace buffers of uid {uid} would take {} bytes, more than its share of {} \
                     (max_buffer_bytes_per_uid)",
                    mine + config.total_buffer_bytes(),
                    limits.max_buffer_bytes_per_uid
                ));
            }
        }
        if let Some(name) = &config.unique_session_name
            && self.sessions.values().any(|s| {
                s.kind == SessionKind::Normal && s.config.unique_session_name.as_ref() == Some(name)
            })
        {
            return Err(format!(
                "a session named {name:?} already exists (unique_session_name)"
            ));
        }
        for (name, max_other) in &config.session_semaphores {
            // As Perfetto counts them: every session not yet ended (clones
            // and stopped sessions hold nothing), against the smallest
            // limit of the new session and every holder.
            let mut holders = 0u64;
            let mut limit = *max_other;
            for s in self
                .sessions
                .values()
                .filter(|s| s.kind == SessionKind::Normal && s.state != SessionState::Stopped)
            {
                for (_, m) in s
                    .config
                    .session_semaphores
                    .iter()
                    .filter(|(n, _)| n == name)
                {
                    holders += 1;
                    limit = limit.min(*m);
                }
            }
            if holders > limit {
                return Err(format!(
                    "session semaphore {name:?} is held by {holders} other sessions, more than \
                     the {limit} its holders allow (max_other_session_count)"
                ));
            }
        }
        if config.output_path.is_some() {
            if let Some(why) = self.output_path_refusal(uid) {
                return Err(why);
            }
        }
        if config.write_into_file && fd_passed == config.output_path.is_some() {
            return Err(super::file_output::NEEDS_ONE_FILE.into());
        }
        if self.buffers.len() + config.buffers.len() > u16::MAX as usize - 1 {
            return Err("no free buffer ids".into());
        }
        if config.lockdown.is_some()
            && let Some(why) = self.lockdown_refusal(uid)
        {
            return Err(why);
        }
        if let Some(lock) = config.lockdown {
            self.lockdown = lock;
        }
        let sid = self.sessions.new_id();
        let mut buffer_ids = Vec::new();
        for spec in &config.buffers {
            let policy = if spec.discard {
                FillPolicy::Discard
            } else {
                FillPolicy::RingBuffer
            };
            let buffer = TraceBuffer::new(spec.size, policy).map_err(|e| e.to_string())?;
            let bid = self.allocate_buffer_id();
            self.buffers.insert(bid, (sid, buffer));
            buffer_ids.push(bid);
        }
        let uuid = match config.trace_uuid {
            Some(u) => u,
            None => self.env.new_uuid(),
        };
        let create_file = config
            .output_path
            .clone()
            .filter(|_| config.write_into_file);
        // Checked above: a passed descriptor is then the only file named.
        let adopt_passed = config.write_into_file && fd_passed;
        self.sessions.insert(
            sid,
            Session::new(sid, id, uid, config, buffer_ids, (id, request), uuid),
        );
        if let Some(c) = self.consumers.get_mut(&id) {
            c.session = Some(sid);
        }
        if adopt_passed {
            self.push(Action::AdoptPassedOutput {
                consumer: id,
                session: sid,
            });
        }
        self.snapshot_clocks(sid);
        match create_file {
            // The session begins once the driver has created the file.
            Some(path) => self.request_output_file(sid, path),
            None => self.begin_session(sid),
        }
        Ok(())
    }

    /// Sets up a new session's data sources, activates its triggers and
    /// starts it (unless it waits for StartTracing or a start trigger).
    pub(super) fn begin_session(&mut self, sid: SessionId) {
        let Some(s) = self.sessions.get(&sid) else {
            return;
        };
        let uid = s.consumer_uid;
        let config = &s.config;
        let activate = config.activate_triggers.clone();
        let no_data_sources = config.data_sources.is_empty();
        let start_now =
            !config.deferred_start && config.trigger_mode != Some(TriggerMode::StartTracing);
        let trigger_timeout = config.trigger_timeout_ms;
        let has_trigger = config.trigger_mode.is_some();
        let producers: Vec<_> = self.producers.keys().copied().collect();
        for p in producers {
            self.setup_data_sources_on(sid, p, None);
        }
        for t in &activate {
            self.activate_trigger(t, "", uid);
        }
        if start_now {
            self.start_session(sid);
        }
        if has_trigger && trigger_timeout > 0 {
            self.arm(trigger_timeout as u64, Timer::TriggerTimeout(sid));
        }
        if no_data_sources && !activate.is_empty() {
            // A trigger-only session (`perfetto --trigger`) ends at once.
            self.stop_session(sid);
        }
    }

    pub(super) fn allocate_buffer_id(&mut self) -> BufferId {
        self.buffers.free_id()
    }

    /// Stops (if needed) and deletes a session and its buffers.
    pub(super) fn free_session(&mut self, session: SessionId) {
        if self
            .sessions
            .get(&session)
            .is_some_and(|s| s.state != SessionState::Stopped)
        {
            self.stop_session(session);
            if self
                .sessions
                .get(&session)
                .is_some_and(|s| s.state == SessionState::Stopping)
            {
                self.finish_stop(session);
            }
        }
        let Some(s) = self.sessions.remove(&session) else {
            return;
        };
        self.pending_reads.retain(|_, (sid, _)| *sid != session);
        for b in &s.buffers {
            self.buffers.remove(b);
            for p in self.producers.values_mut() {
                p.allowed_buffers.remove(b);
            }
        }
        if let Some(c) = s.consumer.and_then(|c| self.consumers.get_mut(&c)) {
            c.session = None;
        }
        self.pending_flushes.retain(|_, f| f.session != session);
        self.disarm(|t| t.session() == Some(session));
        if s.config.write_into_file && !s.file.closed {
            self.push(Action::CloseFile { session });
        }
    }

    fn change_trace_config(
        &mut self,
        id: ConsumerId,
        request: RequestId,
        session: Option<SessionId>,
        raw: &[u8],
    ) {
        let to = Peer::Consumer(id);
        let Some(sid) = session else {
            self.reply(to, request, Reply::Err("no tracing session".into()));
            return;
        };
        let new = match SessionConfig::parse(raw, &self.opts.limits) {
            Ok(c) => c,
            Err(e) => {
                self.reply(to, request, Reply::Err(e.to_string()));
                return;
            }
        };
        // As in Perfetto, only the producer filters of existing data
        // sources may change; new matches get instances.
        if let Some(s) = self.sessions.get_mut(&sid) {
            for ds in &mut s.config.data_sources {
                if let Some(n) = new.data_sources.iter().find(|n| n.name == ds.name) {
                    ds.producer_name_filter = n.producer_name_filter.clone();
                    ds.producer_name_regex_filter = n.producer_name_regex_filter.clone();
                }
            }
        }
        self.reply(to, request, Reply::done(Vec::new()));
        let producers: Vec<_> = self.producers.keys().copied().collect();
        for p in producers {
            self.setup_data_sources_on(sid, p, None);
        }
    }

    fn detach(
        &mut self,
        id: ConsumerId,
        request: RequestId,
        session: Option<SessionId>,
        key: String,
    ) {
        let to = Peer::Consumer(id);
        let uid = self.consumer_uid(id);
        let Some(sid) = session else {
            self.reply(
                to,
                request,
                Reply::Err("no tracing session to detach".into()),
            );
            return;
        };
        if key.is_empty() {
            self.reply(
                to,
                request,
                Reply::Err("Detach needs a non-empty key".into()),
            );
            return;
        }
        let taken = self.sessions.values().any(|s| {
            Self::same_user(s.consumer_uid, uid) && s.detach_key.as_deref() == Some(key.as_str())
        });
        if taken {
            self.reply(
                to,
                request,
                Reply::Err(format!("a session is already detached with key {key:?}")),
            );
            return;
        }
        if let Some(s) = self.sessions.get_mut(&sid) {
            s.consumer = None;
            s.detach_key = Some(key);
            s.enable_reply = None;
        }
        if let Some(c) = self.consumers.get_mut(&id) {
            c.session = None;
        }
        self.reply(to, request, Reply::done(Vec::new()));
    }

    fn attach(
        &mut self,
        id: ConsumerId,
        request: RequestId,
        session: Option<SessionId>,
        key: &str,
    ) {
        let to = Peer::Consumer(id);
        let uid = self.consumer_uid(id);
        if session.is_some() {
            self.reply(
                to,
                request,
                Reply::Err("this consumer already has a tracing session".into()),
            );
            return;
        }
        if key.is_empty() {
            self.reply(
                to,
                request,
                Reply::Err("Attach needs a non-empty key".into()),
            );
            return;
        }
        let found = self.sessions.values_mut().find(|s| {
            s.consumer.is_none()
                && Self::same_user(s.consumer_uid, uid)
                && s.detach_key.as_deref() == Some(key)
        });
        let Some(s) = found else {
            self.reply(
                to,
                request,
                Reply::Err(format!("no session detached with key {key:?}")),
            );
            return;
        };
        s.consumer = Some(id);
        s.detach_key = None;
        let (sid, raw) = (s.id, s.config.raw.clone());
        if let Some(c) = self.consumers.get_mut(&id) {
            c.session = Some(sid);
        }
        let data = encode(|m| {
            AttachResponse::from_message(m).set_trace_config_raw(&raw);
        });
        self.reply(to, request, Reply::done(data));
    }

    /// `TracingServiceState`, as QueryServiceState returns it.
    fn service_state(&self, id: ConsumerId, sessions_only: bool) -> Vec<u8> {
        let uid = self.consumer_uid(id);
        encode(|m| {
            let mut r = QueryServiceStateResponse::from_message(m);
            let mut st: TracingServiceState<'_> = r.begin_service_state();
            if !sessions_only {
                // As Perfetto's: a producer exists once it initialized (a
                // relay's own connection never does).
                for p in self.producers.values().filter(|p| p.initialized) {
                    let mut e = st.add_producers();
                    e.set_id(p.id.0 as i32);
                    e.set_name(&p.name);
                    e.set_uid(p.identity.uid as i32);
                    if let Some(pid) = p.identity.pid {
                        e.set_pid(pid);
                    }
                    e.set_sdk_version(&p.sdk_version);
                }
                for p in self.producers.values() {
                    for d in p.data_sources.values() {
                        let mut e = st.add_data_sources();
                        e.set_ds_descriptor_raw(&d.raw);
                        e.set_producer_id(p.id.0 as i32);
                    }
                }
            }
            let mut started = 0;
            for s in self.sessions.values() {
                if s.state == SessionState::Started {
                    started += 1;
                }
                // Like Perfetto, a consumer sees the details of its uid's
                // sessions only.
                if !self.may_read_session_of(uid, s.consumer_uid) {
                    continue;
                }
                let mut e = st.add_tracing_sessions();
                e.set_id(s.id.0);
                e.set_consumer_uid(s.consumer_uid as i32);
                e.set_state(match s.state {
                    SessionState::Configured => "CONFIGURED",
                    SessionState::Started => "STARTED",
                    SessionState::Stopping => "DISABLING_WAITING_STOP_ACKS",
                    SessionState::Stopped => "DISABLED",
                });
                if let Some(n) = &s.config.unique_session_name {
                    e.set_unique_session_name(n);
                }
                for b in &s.config.buffers {
                    e.add_buffer_size_kb((b.size / 1024) as u32);
                }
                e.set_duration_ms(s.config.duration_ms);
                e.set_num_data_sources(s.instances.len() as u32);
                e.set_bugreport_score(s.config.bugreport_score);
                e.set_is_started(s.state == SessionState::Started);
            }
            st.set_supports_tracing_sessions(true);
            st.set_num_sessions(self.sessions.len() as i32);
            st.set_num_sessions_started(started);
            st.set_tracing_service_version(concat!("zerotrace ", env!("CARGO_PKG_VERSION")));
        })
    }
}

impl Session {
    /// A new session of `consumer`, configured but not started.
    pub(super) fn new(
        id: SessionId,
        consumer: ConsumerId,
        consumer_uid: u32,
        config: SessionConfig,
        buffers: Vec<BufferId>,
        enable_reply: (ConsumerId, RequestId),
        uuid: u128,
    ) -> Session {
        Session {
            id,
            kind: SessionKind::Normal,
            consumer: Some(consumer),
            consumer_uid,
            detach_key: None,
            config,
            buffers,
            state: SessionState::Configured,
            instances: Vec::new(),
            enable_reply: Some(enable_reply),
            sequences: Default::default(),
            producer_meta: Default::default(),
            uuid,
            clocks: Default::default(),
            events: Vec::new(),
            preamble_written: false,
            remote_written: Default::default(),
            read: Default::default(),
            last_sync_marker: None,
            started_at: None,
            invalid_packets: 0,
            flushes: Default::default(),
            file: Default::default(),
            end_error: None,
            triggers_received: Vec::new(),
            all_started_notified: false,
            clone_trigger: None,
        }
    }
}
