//! Who the bridge lets in, and how many of each: which form of the peer
//! policy it follows (a peer gets what its kernel-vouched uid would get on
//! the consumer socket, and nothing more; judged in
//! `zerotrace_core::peer_policy`), and a share of the bridge's connections
//! per uid, so that one user holding many WebSockets open does not lock
//! another out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use zerotrace_core::peer_policy::Policy;

use super::Target;

/// The peer policy of a bridge to `target`: inside `zerotraced` (the
/// door), a uid the consumer socket itself would let in; in front of a
/// consumer socket, the bridge's own uid only. `admit_unvouched` lets in
/// peers nobody vouches for through the door, never in front of a socket
/// (the bridge would lend them its uid).
pub(super) fn policy(target: &Target, admit_unvouched: bool) -> Policy {
    match target {
        Target::Door(door) => Policy::LikeConsumerSocket {
            socket: door.consumer_socket().clone(),
            admit_unvouched,
        },
        Target::Socket(_) => Policy::OwnUid,
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
    fn a_socket_bridge_lends_its_uid_only_whatever_the_flag() {
        let socket = Target::Socket(zerotrace_core::ipc::Endpoint::Path("/nonexistent".into()));
        for admit_unvouched in [false, true] {
            assert_eq!(policy(&socket, admit_unvouched), Policy::OwnUid);
        }
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
