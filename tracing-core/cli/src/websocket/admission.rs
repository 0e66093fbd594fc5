//! Who the bridge lets in, and how many of each: the one rule every
//! consumer endpoint follows (a peer gets what its kernel-vouched uid would
//! get on the consumer socket, and nothing more), and a share of the
//! bridge's connections per uid, so that one user holding many WebSockets
//! open does not lock another out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use zerotrace_core::daemon::AccessRefusal;

use super::Target;

/// Why a peer is not let in, as the peer is told it (the body of a 403).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The consumer socket would not let this peer in.
    #[error("{0}")]
    Access(#[from] AccessRefusal),
    /// A bridge in front of a consumer socket lends its own uid: it lets
    /// in only that uid's processes.
    #[error(
        "this bridge connects to the consumer socket as uid {own}, so it serves only that \
         user's processes, not uid {peer}; connect to the consumer socket yourself, or use \
         zerotraced --websocket, which gives each peer its own identity"
    )]
    NotOwnUid {
        /// The bridge's uid.
        own: u32,
        /// The peer's.
        peer: u32,
    },
}

/// Whether a peer whose uid the kernel vouches for (`Some`) or not
/// (`None`) may reach `target`; `admit_unvouched` lets the latter in.
pub(super) fn admit(
    target: &Target,
    uid: Option<u32>,
    admit_unvouched: bool,
) -> Result<(), Refusal> {
    match (target, uid) {
        (Target::Door(_), None) if admit_unvouched => Ok(()),
        (_, None) => Err(AccessRefusal::Unvouched.into()),
        (Target::Door(door), Some(uid)) => Ok(door.may_open(uid)?),
        (Target::Socket(_), Some(uid)) => {
            let own = rustix::process::getuid().as_raw();
            if uid == own {
                Ok(())
            } else {
                Err(Refusal::NotOwnUid { own, peer: uid })
            }
        }
    }
}

/// The open connections of each uid (`None`: unvouched peers, one class).
#[derive(Debug, Default)]
pub(super) struct PerUid {
    open: Mutex<HashMap<Option<u32>, usize>>,
}

/// One connection counted for its uid until dropped.
pub(super) struct Slot {
    book: Arc<PerUid>,
    uid: Option<u32>,
}

impl PerUid {
    /// A slot for `uid` if it has fewer than `max` connections open.
    pub(super) fn take(book: &Arc<PerUid>, uid: Option<u32>, max: usize) -> Option<Slot> {
        let mut open = book.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(uid).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(Slot {
            book: book.clone(),
            uid,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.book.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.uid) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.uid);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unvouched_peers_and_other_uids_in_front_of_a_socket_are_refused() {
        let socket = Target::Socket(zerotrace_core::ipc::Endpoint::Path("/nonexistent".into()));
        for admit_unvouched in [false, true] {
            // A socket bridge lends its own uid: never to a peer nobody
            // vouches for, whatever the flag.
            assert!(matches!(
                admit(&socket, None, admit_unvouched),
                Err(Refusal::Access(AccessRefusal::Unvouched))
            ));
        }
        let own = rustix::process::getuid().as_raw();
        assert!(admit(&socket, Some(own), false).is_ok());
        let e = admit(&socket, Some(own.wrapping_add(1)), false).unwrap_err();
        assert!(matches!(e, Refusal::NotOwnUid { .. }), "{e}");
        // The reason says what to do.
        let text = Refusal::Access(AccessRefusal::Unvouched).to_string();
        assert!(
            text.contains("--insecure-websocket-admit-unvouched-peers"),
            "{text}"
        );
    }

    #[test]
    fn each_uid_has_its_own_share() {
        let book = Arc::new(PerUid::default());
        let a: Vec<_> = (0..3)
            .map(|_| PerUid::take(&book, Some(1000), 3).unwrap())
            .collect();
        assert!(PerUid::take(&book, Some(1000), 3).is_none());
        // Another user, and unvouched peers, still get in.
        let _b = PerUid::take(&book, Some(1001), 3).unwrap();
        let _c = PerUid::take(&book, None, 3).unwrap();
        drop(a);
        assert!(PerUid::take(&book, Some(1000), 3).is_some());
    }
}
