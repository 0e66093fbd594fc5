//! CloneSession: a read-only snapshot of another session's buffers for a
//! consumer, taken at once or after a clone flush of a started session;
//! which session may be cloned (by id, by unique name, or the best
//! bugreport candidate) and by whom.

use zerotrace_protos::protos::CloneSessionResponse;

use super::TracingService;
use super::state::{FlushPurpose, Session, SessionKind, SessionState};
use crate::service::action::{Peer, Reply};
use crate::service::calls::CloneArgs;
use crate::service::ids::{ConsumerId, RequestId, SessionId};
use crate::service::service_packets::{ServiceEvent, encode};
use crate::service::trace_buffer::TraceBuffer;

/// FlushFlags: reason trace clone; initiator traced.
const FLUSH_CLONE: u64 = 3 | (1 << 4);
/// FlushFlags clone target: bugreport.
const FLUSH_CLONE_FOR_BUGREPORT: u64 = 1 << 8;

impl TracingService {
    pub(super) fn clone_session(
        &mut self,
        id: ConsumerId,
        request: RequestId,
        session: Option<SessionId>,
        args: CloneArgs,
    ) {
        let uid = self.consumer_uid(id);
        if session.is_some() {
            self.clone_error(id, request, "this consumer already has a tracing session");
            return;
        }
        let readable = |s: &&Session| {
            s.kind == SessionKind::Normal && self.may_read_session_of(uid, s.consumer_uid)
        };
        let target = if let Some(name) = &args.unique_session_name {
            self.sessions
                .values()
                .filter(readable)
                .find(|s| s.config.unique_session_name.as_ref() == Some(name))
        } else if args.session_id == Some(u64::MAX) {
            // As Perfetto: the started session with the highest positive
            // score (the oldest of equals), whoever owns it; one this
            // consumer may not read is refused, not passed over.
            let best = self
                .sessions
                .values()
                .filter(|s| {
                    s.kind == SessionKind::Normal
                        && s.state == SessionState::Started
                        && s.config.bugreport_score > 0
                })
                .fold(None::<&Session>, |best, s| match best {
                    Some(b) if b.config.bugreport_score >= s.config.bugreport_score => Some(b),
                    _ => Some(s),
                });
            if best.is_none() {
                self.clone_error(
                    id,
                    request,
                    "no tracing session is eligible for a bugreport",
                );
                return;
            }
            best.filter(readable)
        } else {
            args.session_id
                .and_then(|sid| self.sessions.get(&SessionId(sid)))
                .filter(|s| readable(s))
        };
        let Some(target) = target.map(|s| s.id) else {
            self.clone_error(
                id,
                request,
                "no such session, or not readable by this consumer",
            );
            return;
        };
        let now = self.now;
        if let Some(c) = self.consumers.get_mut(&id) {
            c.clone_trigger = args.clone_trigger;
            c.clone_started = Some(now);
        }
        // As Perfetto: a bugreport clone (asked, or by the highest score)
        // tells the producers so in the flush's CloneTarget.
        let for_bugreport = args.for_bugreport || args.session_id == Some(u64::MAX);
        match self.sessions.get(&target).map(|s| s.state) {
            Some(SessionState::Started) => self.clone_flush(target, id, request, for_bugreport),
            _ => self.finish_clone(target, id, request),
        }
    }

    /// Starts a clone flush of `session` for `consumer`.
    pub(super) fn clone_flush(
        &mut self,
        session: SessionId,
        consumer: ConsumerId,
        request: RequestId,
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

    fn clone_error(&mut self, id: ConsumerId, request: RequestId, msg: &str) {
        let data = encode(|m| {
            let mut r = CloneSessionResponse::from_message(m);
            r.set_success(false);
            r.set_error(msg);
        });
        self.reply(Peer::Consumer(id), request, Reply::done(data));
    }

    /// Snapshots `source`'s buffers into a new read-only session of `consumer`.
    pub(super) fn finish_clone(
        &mut self,
        source: SessionId,
        consumer: ConsumerId,
        request: RequestId,
    ) {
        let Some(src) = self.sessions.get(&source) else {
            self.clone_error(
                consumer,
                request,
                "the session ended before it could be cloned",
            );
            return;
        };
        if self
            .consumers
            .get(&consumer)
            .is_none_or(|c| c.session.is_some())
        {
            return;
        }
        let uid = self.consumer_uid(consumer);
        let clone_trigger = self
            .consumers
            .get_mut(&consumer)
            .and_then(|c| c.clone_trigger.take());
        let now = self.now;
        let clone_started = self
            .consumers
            .get_mut(&consumer)
            .and_then(|c| c.clone_started.take())
            .unwrap_or(now);
        let src_buffers = src.buffers.clone();
        let mut config = src.config.clone();
        let was_write_into_file = config.write_into_file;
        config.write_into_file = false;
        config.output_path = None;
        let meta = src.producer_meta.clone();
        let seq = (src.sequences.ids.clone(), src.sequences.next);
        let clocks = (src.clocks.initial.clone(), src.clocks.snapshots.clone());
        let mut events = src.events.clone();
        // The triggers received so far go with the snapshot, as Perfetto
        // does: a CLONE_SNAPSHOT session snapshotted again and again then
        // carries each trigger in one clone only.
        let triggers = self
            .sessions
            .get_mut(&source)
            .map(|s| std::mem::take(&mut s.triggers_received))
            .unwrap_or_default();
        let uuid = self.env.new_uuid();
        let sid = self.sessions.new_id();
        let mut ids = Vec::new();
        for (i, b) in src_buffers.iter().enumerate() {
            let transfer = config.buffers.get(i).is_some_and(|s| s.transfer_on_clone);
            let Some((_, buffer)) = self.buffers.get_mut(b) else {
                continue;
            };
            // transfer_on_clone: the clone takes the data, the session goes
            // on with an empty buffer of the same size and policy.
            let copy = if transfer {
                match TraceBuffer::new(buffer.size(), buffer.policy()) {
                    Ok(fresh) => std::mem::replace(buffer, fresh),
                    Err(_) => buffer.clone(),
                }
            } else {
                buffer.clone()
            };
            let bid = self.allocate_buffer_id();
            self.buffers.insert(bid, (sid, copy));
            ids.push(bid);
            // As Perfetto's service: when each buffer was copied, by its
            // index in the session.
            events.push((now, ServiceEvent::BufferCloned as u32, i as u32));
        }
        events.push((clone_started, ServiceEvent::CloneStarted as u32, 1));
        let mut s = Session::new(sid, consumer, uid, config, ids, (consumer, request), uuid);
        s.kind = SessionKind::Clone;
        s.state = SessionState::Stopped;
        s.enable_reply = None;
        s.producer_meta = meta;
        (s.sequences.ids, s.sequences.next) = seq;
        (s.clocks.initial, s.clocks.snapshots) = clocks;
        s.events = events;
        s.triggers_received = triggers;
        s.clone_trigger = clone_trigger;
        self.sessions.insert(sid, s);
        if let Some(c) = self.consumers.get_mut(&consumer) {
            c.session = Some(sid);
        }
        let data = encode(|m| {
            let mut r = CloneSessionResponse::from_message(m);
            r.set_success(true);
            r.set_uuid_msb((uuid >> 64) as i64);
            r.set_uuid_lsb(uuid as u64 as i64);
            r.set_was_write_into_file(was_write_into_file);
        });
        self.reply(Peer::Consumer(consumer), request, Reply::done(data));
    }
}
