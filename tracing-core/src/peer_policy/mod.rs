//! Who each listener of the project lets in, decided in one place. Every
//! endpoint that accepts peers (the daemon's producer and consumer sockets,
//! the relay's producer socket, the WebSocket bridge, the trace
//! processor's RPC server) follows one rule: no endpoint gives a peer more
//! than its kernel-vouched uid would get. Each says which form of that
//! rule it follows with a [`Policy`], and accepts only through a gate of
//! this module ([`TcpGate`], [`ServiceGate`]), whose arrivals become an
//! [`AdmittedPeer`] or a [`RefusedPeer`] only by [`Arrival::judge`]. No
//! other code calls a raw `accept`: a test of the workspace's sources
//! (`tests/all/listeners_admit_through_policy.rs`) fails when one does.
//!
//! The policies, and what each listener keeps from Perfetto:
//!
//! - [`Policy::ProducerSocket`]: anyone who reaches the socket, with the
//!   identity the kernel gives (`SO_PEERCRED` over a unix socket; over TCP
//!   and vsock no uid, as Perfetto's `traced` gives `kInvalidUid`).
//! - [`Policy::ConsumerSocket`]: whoever the kernel let connect, which for
//!   a socket file is its owner, group and mode (`consumer_access.rs`), with
//!   the same identity.
//! - [`Policy::LikeConsumerSocket`]: an endpoint that opens consumer
//!   connections on a peer's behalf through the daemon's door (the bridge
//!   inside `zerotraced`): a uid the consumer socket itself would let in.
//! - [`Policy::OwnUid`]: an endpoint that lends its own uid (the bridge in
//!   front of a consumer socket): that uid only.
//! - [`Policy::OwnUidAndRoot`]: the trace processor's RPC server, which
//!   runs SQL over its user's trace: its own uid and root.
//!
//! Who a TCP peer is comes from the kernel too: a local process on
//! loopback is listed in `/proc/net/tcp{,6}` with its socket's owner
//! (`tcp_owner.rs`). A peer the kernel names nobody for (another machine,
//! no row) is *unvouched*: the service sockets treat it as a peer of no
//! uid, as Perfetto does; the others refuse it unless told explicitly to
//! admit such peers.
//!
//! * this file: the policies and the judgement, a pure function;
//! * `gate.rs`: the listening sockets and their accept;
//! * `tcp_owner.rs`: a loopback TCP peer's uid from `/proc/net/tcp`;
//! * `consumer_access.rs`: who the consumer socket lets in, the rule that
//!   [`Policy::LikeConsumerSocket`] (the daemon's door) applies.

mod consumer_access;
mod gate;
mod tcp_owner;

use crate::ipc::Endpoint;

pub use consumer_access::{AccessRefusal, group_id, may_connect};
pub use gate::{
    AdmittedPeer, Arrival, Judged, RefusedPeer, ServiceGate, TcpGate, own_loopback_pair,
};
pub use tcp_owner::{peer_uid, uid_in_table};

/// Whom a listener lets in (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    /// A producer socket: anyone, with the identity the kernel gives.
    ProducerSocket,
    /// A consumer socket: whoever the kernel let connect to it.
    ConsumerSocket,
    /// Consumer connections opened on a peer's behalf: a vouched uid that
    /// could connect to the consumer socket `socket` itself.
    LikeConsumerSocket {
        /// The consumer socket whose permissions decide.
        socket: Endpoint,
        /// Admits peers the kernel vouches for no uid, as consumers of no
        /// uid. RISK: such a peer may record with every data source the
        /// service offers.
        admit_unvouched: bool,
    },
    /// An endpoint that lends this process's uid: only that uid, vouched.
    OwnUid,
    /// This process's uid and root only (the trace processor's RPC
    /// server).
    OwnUidAndRoot {
        /// Admits peers the kernel vouches for no uid (a remote peer of a
        /// server bound beyond loopback). RISK: any such peer reads the
        /// loaded trace and runs SQL over it.
        admit_unvouched: bool,
    },
}

impl Policy {
    /// Whether a TCP peer's uid is looked up in `/proc/net/tcp`. The
    /// service sockets keep Perfetto's rule (a TCP peer has no uid), so a
    /// TCP producer's packets say `trusted_uid` -1 as upstream's do.
    fn looks_up_tcp_owner(&self) -> bool {
        !matches!(self, Policy::ProducerSocket | Policy::ConsumerSocket)
    }
}

/// Who a peer is, as the kernel tells it (never as the peer claims).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Vouched {
    /// The peer's uid; `None` where the kernel names nobody.
    pub uid: Option<u32>,
    /// The peer's pid, where the transport tells it (unix sockets).
    pub pid: Option<i32>,
}

/// Why a peer is not let in, as the peer is told it (a 403's body).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The consumer socket would not let this peer in (or nobody vouches
    /// for it).
    #[error("{0}")]
    Access(#[from] AccessRefusal),
    /// An endpoint that lends its own uid lets in only that uid's
    /// processes.
    #[error(
        "this bridge connects to the consumer socket as uid {own}, so it serves only that \
         user's processes, not uid {peer}; connect to the consumer socket yourself, or use \
         zerotraced --websocket, which gives each peer its own identity"
    )]
    NotOwnUid {
        /// This process's uid.
        own: u32,
        /// The peer's.
        peer: u32,
    },
    /// The trace processor's RPC server serves its own uid and root.
    #[error(
        "this trace processor serves uid {own} and root only; uid {peer} is refused: it \
         would read uid {own}'s trace and run SQL as uid {own}. Start a trace processor \
         of your own (zerotrace sql --httpd)"
    )]
    NotOwnUidOrRoot {
        /// This process's uid.
        own: u32,
        /// The peer's.
        peer: u32,
    },
    /// The trace processor's RPC server does not serve a peer whose uid
    /// the kernel does not vouch for.
    #[error(
        "this trace processor serves uid {own} and root only, and the kernel does not vouch \
         for this peer's uid (not a local process on loopback), so it is refused; connect \
         from this machine, or start the server with --insecure-serve-remote-peers to let \
         any peer that reaches it read the trace and run SQL over it"
    )]
    UnvouchedNotServed {
        /// This process's uid.
        own: u32,
    },
}

/// Whether `peer` may use a listener of `policy`, in a process of uid
/// `own`.
pub fn admit(policy: &Policy, peer: Vouched, own: u32) -> Result<(), Refusal> {
    match (policy, peer.uid) {
        (Policy::ProducerSocket | Policy::ConsumerSocket, _) => Ok(()),
        (Policy::LikeConsumerSocket { socket, .. }, Some(uid)) => Ok(may_connect(socket, uid)?),
        (
            Policy::LikeConsumerSocket {
                admit_unvouched: true,
                ..
            },
            None,
        ) => Ok(()),
        (Policy::LikeConsumerSocket { .. } | Policy::OwnUid, None) => {
            Err(AccessRefusal::Unvouched.into())
        }
        (Policy::OwnUid, Some(uid)) if uid == own => Ok(()),
        (Policy::OwnUid, Some(uid)) => Err(Refusal::NotOwnUid { own, peer: uid }),
        (Policy::OwnUidAndRoot { .. }, Some(uid)) if uid == own || uid == 0 => Ok(()),
        (Policy::OwnUidAndRoot { .. }, Some(uid)) => {
            Err(Refusal::NotOwnUidOrRoot { own, peer: uid })
        }
        (
            Policy::OwnUidAndRoot {
                admit_unvouched: true,
            },
            None,
        ) => Ok(()),
        (
            Policy::OwnUidAndRoot {
                admit_unvouched: false,
            },
            None,
        ) => Err(Refusal::UnvouchedNotServed { own }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: u32 = 1000;

    fn uid(u: u32) -> Vouched {
        Vouched {
            uid: Some(u),
            pid: None,
        }
    }

    const NOBODY: Vouched = Vouched {
        uid: None,
        pid: None,
    };

    #[test]
    fn the_service_sockets_admit_anyone_the_kernel_let_connect() {
        for p in [Policy::ProducerSocket, Policy::ConsumerSocket] {
            assert!(admit(&p, uid(4242), OWN).is_ok());
            assert!(admit(&p, NOBODY, OWN).is_ok());
        }
    }

    #[test]
    fn an_endpoint_lending_its_uid_admits_that_uid_only() {
        assert!(admit(&Policy::OwnUid, uid(OWN), OWN).is_ok());
        // Not even root: the bridge would lend it uid 1000's sessions.
        let e = admit(&Policy::OwnUid, uid(0), OWN).unwrap_err();
        assert!(matches!(e, Refusal::NotOwnUid { own: OWN, peer: 0 }), "{e}");
        // Never a peer nobody vouches for.
        assert!(matches!(
            admit(&Policy::OwnUid, NOBODY, OWN),
            Err(Refusal::Access(AccessRefusal::Unvouched))
        ));
        // The reason says what to do.
        let text = Refusal::Access(AccessRefusal::Unvouched).to_string();
        assert!(
            text.contains("--insecure-websocket-admit-unvouched-peers"),
            "{text}"
        );
    }

    #[test]
    fn the_rpc_server_admits_its_uid_and_root() {
        for admit_unvouched in [false, true] {
            let p = Policy::OwnUidAndRoot { admit_unvouched };
            assert!(admit(&p, uid(OWN), OWN).is_ok());
            assert!(admit(&p, uid(0), OWN).is_ok());
            // A vouched other uid is refused, flag or not.
            let e = admit(&p, uid(65534), OWN).unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains("serves uid 1000 and root only; uid 65534 is refused"),
                "{text}"
            );
        }
        let strict = Policy::OwnUidAndRoot {
            admit_unvouched: false,
        };
        let e = admit(&strict, NOBODY, OWN).unwrap_err();
        assert!(
            e.to_string().contains("--insecure-serve-remote-peers"),
            "{e}"
        );
        let open = Policy::OwnUidAndRoot {
            admit_unvouched: true,
        };
        assert!(admit(&open, NOBODY, OWN).is_ok());
    }

    #[cfg(unix)]
    #[test]
    #[cfg_attr(miri, ignore = "binds a unix socket")]
    fn a_door_admits_what_the_consumer_socket_would() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("zt-policy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("consumer");
        let _l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let me = crate::platform::current_uid();
        let p = |admit_unvouched| Policy::LikeConsumerSocket {
            socket: Endpoint::Path(path.clone()),
            admit_unvouched,
        };
        assert!(admit(&p(false), uid(me), me).is_ok());
        assert!(matches!(
            admit(&p(false), NOBODY, me),
            Err(Refusal::Access(AccessRefusal::Unvouched))
        ));
        assert!(admit(&p(true), NOBODY, me).is_ok());
        let gone = Policy::LikeConsumerSocket {
            socket: Endpoint::Path(dir.join("absent")),
            admit_unvouched: false,
        };
        if me != 0 {
            assert!(admit(&gone, uid(me), me).is_err());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
