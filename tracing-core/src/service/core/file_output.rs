//! The output file of a `write_into_file` session, decided here and
//! opened, written and closed by the driver: a session names exactly one
//! file (a descriptor passed with EnableTracing, or an `output_path` the
//! service creates and never overwrites), and a file that fails ends the
//! session with the reason, while what it already holds stays.

use zerotrace_protos::protos::EnableTracingResponse;

use super::TracingService;
use super::state::SessionState;
use crate::service::action::{Action, Peer, Reply};
use crate::service::ids::SessionId;
use crate::service::service_packets::encode;

/// Why EnableTracing refuses a `write_into_file` session that names no
/// file, or two (Perfetto's service refuses both the same way).
pub(super) const NEEDS_ONE_FILE: &str = "write_into_file needs exactly one output file: \
     a file descriptor passed with EnableTracing or an output_path in the config, not both";

impl TracingService {
    /// Asks the driver to create `path` for `session`, which waits for it.
    pub(super) fn request_output_file(&mut self, session: SessionId, path: String) {
        if let Some(s) = self.sessions.get_mut(&session) {
            s.file.pending = true;
        }
        self.push(Action::CreateFile { session, path });
    }

    /// The driver's answer to [`Action::CreateFile`]: the file exists now
    /// and the session begins, or it could not be created (`Err` says why,
    /// e.g. it exists already) and EnableTracing fails.
    pub fn output_file_created(
        &mut self,
        now: u64,
        session: SessionId,
        result: Result<(), String>,
    ) {
        self.advance(now);
        let Some(s) = self.sessions.get_mut(&session) else {
            // The session went away meanwhile: the driver drops the file.
            if result.is_ok() {
                self.push(Action::CloseFile { session });
            }
            return;
        };
        if !s.file.pending {
            return;
        }
        s.file.pending = false;
        match result {
            Ok(()) => self.begin_session(session),
            Err(e) => {
                let path = s.config.output_path.clone().unwrap_or_default();
                s.file.closed = true;
                let reply = s.enable_reply.take();
                self.free_session(session);
                if let Some((consumer, request)) = reply {
                    let msg = format!("cannot create the trace file {path}: {e}");
                    self.enable_error(consumer, request, &msg);
                }
            }
        }
    }

    /// The driver closed the output file of `session`: after
    /// [`Action::CloseFile`] (`error` `None`, or why flushing failed), or
    /// on its own after a write failed (`error` says why). A failed file
    /// takes no more writes and disables the session, as in Perfetto; the
    /// consumer learns why from the EnableTracing reply's `error` (our
    /// addition: Perfetto only logs it).
    pub fn output_file_closed(&mut self, now: u64, session: SessionId, error: Option<String>) {
        self.advance(now);
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        let failed = error.is_some();
        if let Some(e) = error
            && s.end_error.is_none()
        {
            s.end_error = Some(format!(
                "writing the trace file failed ({e}); tracing stopped, the file keeps what was \
                 written before"
            ));
        }
        s.file.closed = true;
        s.file.close_pending = false;
        match s.state {
            SessionState::Configured | SessionState::Started if failed => {
                self.stop_session(session)
            }
            SessionState::Stopped => self.send_end_reply(session),
            _ => {}
        }
    }

    /// Answers the session's EnableTracing call (`disabled`, and the error
    /// that ended it, if any), once it has stopped and its file is closed.
    pub(super) fn send_end_reply(&mut self, session: SessionId) {
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        if s.state != SessionState::Stopped || s.file.close_pending {
            return;
        }
        let Some((consumer, request)) = s.enable_reply.take() else {
            return;
        };
        let reply = ended_reply(s.end_error.as_deref());
        self.reply(Peer::Consumer(consumer), request, reply);
    }
}

/// The EnableTracing reply that says a session has ended: `disabled`, with
/// the error that ended it, if any (to the enabling consumer, or to one
/// that attaches for the notification after the end).
pub(super) fn ended_reply(error: Option<&str>) -> Reply {
    Reply::done(encode(|m| {
        let mut r = EnableTracingResponse::from_message(m);
        r.set_disabled(true);
        if let Some(e) = error {
            r.set_error(e);
        }
    }))
}
