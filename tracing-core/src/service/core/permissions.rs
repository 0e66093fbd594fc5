//! What a consumer's uid lets it do beyond its own session: clone, attach
//! to and see the details of another session, and have the service create
//! a file. One place, so that every rule treats a uid nobody vouches for
//! ([`UNKNOWN_UID`]: TCP consumers, WebSocket peers the kernel does not
//! name) as matching no one, not even another unknown peer.

use super::TracingService;
use crate::service::{ConsumerId, UNKNOWN_UID};

impl TracingService {
    /// The consumer's uid as its transport told it; [`UNKNOWN_UID`] for a
    /// consumer that is not (or no longer) connected.
    pub(super) fn consumer_uid(&self, id: ConsumerId) -> u32 {
        self.consumers
            .get(&id)
            .map(|c| c.identity.uid)
            .unwrap_or(UNKNOWN_UID)
    }

    /// Whether a consumer of `uid` may read (clone, see the details of) a
    /// session a consumer of `owner` started: its own uid's, or any as the
    /// service's own uid, as Perfetto; never with an unknown uid.
    pub(super) fn may_read_session_of(&self, uid: u32, owner: u32) -> bool {
        uid != UNKNOWN_UID && (uid == owner || uid == self.opts.service_uid)
    }

    /// Whether consumers of `a` and `b` are the same user (a detached
    /// session is found again by its key among its uid's); two unknown
    /// uids are not.
    pub(super) fn same_user(a: u32, b: u32) -> bool {
        a != UNKNOWN_UID && a == b
    }

    /// Why a consumer of `uid` may not have the service create an
    /// `output_path`, if it may not. The service creates the file with its
    /// own rights, so only a consumer already as privileged asks it to:
    /// the service's uid, or root. (Perfetto lets any consumer name one;
    /// a service running as root would then create files anywhere for any
    /// local user.) Others pass a file descriptor or read the trace back.
    pub(super) fn output_path_refusal(&self, uid: u32) -> Option<String> {
        if !self.opts.allow_output_path {
            return Some("output_path is not allowed by this service".into());
        }
        if uid == UNKNOWN_UID {
            return Some(
                "output_path is refused to a consumer whose uid nobody vouches for \
                 (a TCP or WebSocket peer); read the trace back instead"
                    .into(),
            );
        }
        if uid != self.opts.service_uid && uid != 0 {
            return Some(format!(
                "output_path is only honoured for the service's own uid ({}) or root, \
                 not uid {uid}; pass a file descriptor or read the trace back instead",
                self.opts.service_uid
            ));
        }
        None
    }

    /// Why a consumer of `uid` may not set or clear lockdown, if it may
    /// not. Lockdown refuses every producer but the service's own uid's, a
    /// switch over everyone's tracing: only the service's uid or root
    /// throws it. (Perfetto lets any consumer; its consumer socket is
    /// usually closed to all but a few.)
    pub(super) fn lockdown_refusal(&self, uid: u32) -> Option<String> {
        if uid == self.opts.service_uid || uid == 0 {
            return None;
        }
        let who = if uid == UNKNOWN_UID {
            "a consumer whose uid nobody vouches for".to_owned()
        } else {
            format!("uid {uid}")
        };
        Some(format!(
            "lockdown_mode may only be set or cleared by the service's own uid ({}) or root, \
             not by {who}",
            self.opts.service_uid
        ))
    }
}
