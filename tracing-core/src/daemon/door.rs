//! Consumer connections that code in the daemon's own process opens on
//! behalf of someone else, with the identity that code can vouch for, and
//! only for someone the consumer socket itself would let in
//! ([`may_connect`](crate::peer_policy::may_connect)).
//!
//! The WebSocket bridge serves browsers and other local programs. Through
//! the consumer socket its connections would carry the daemon's own
//! credentials (root, for a system service), lending them to whoever
//! reached the bridge. Through the door, each connection gets the uid the
//! bridge learned from the kernel for its peer, or none
//! ([`UNKNOWN_UID`](crate::service::UNKNOWN_UID)): a socket pair whose
//! daemon end is handed over, with that identity, on a channel the event
//! loop is woken to drain.

use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};

use crate::ipc::socket::Endpoint;
use crate::peer_policy::{AccessRefusal, may_connect};
use crate::service::{PeerIdentity, UNKNOWN_UID};

/// A connection waiting to be admitted, and who is on its other end.
pub(super) type Entry = (UnixStream, PeerIdentity);

/// Opens consumer connections to a running [`Daemon`](super::Daemon) with
/// an identity the caller vouches for. Cheap to clone; a door whose daemon
/// has stopped fails to open.
#[derive(Debug, Clone)]
pub struct ConsumerDoor {
    tx: Arc<Mutex<Sender<Entry>>>,
    wake: Arc<UnixStream>,
    /// The consumer socket whose permissions decide who is let in.
    socket: Arc<Endpoint>,
}

/// Why a door did not open.
#[derive(Debug, thiserror::Error)]
pub enum DoorError {
    /// The peer could not have connected to the consumer socket itself.
    #[error(transparent)]
    Refused(#[from] AccessRefusal),
    /// The service has stopped, or a socket pair could not be made.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The daemon's side of its door: what arrives, and the fd that wakes it.
#[derive(Debug)]
pub(super) struct DoorInbox {
    pub(super) rx: Receiver<Entry>,
    pub(super) wake: UnixStream,
}

/// A door and its inbox, joined.
pub(super) fn door(socket: Endpoint) -> io::Result<(ConsumerDoor, DoorInbox)> {
    let (tx, rx) = channel();
    let (wake_tx, wake_rx) = UnixStream::pair()?;
    wake_tx.set_nonblocking(true)?;
    wake_rx.set_nonblocking(true)?;
    Ok((
        ConsumerDoor {
            tx: Arc::new(Mutex::new(tx)),
            wake: Arc::new(wake_tx),
            socket: Arc::new(socket),
        },
        DoorInbox { rx, wake: wake_rx },
    ))
}

impl ConsumerDoor {
    /// A new consumer connection whose peer is the user `uid`, as the
    /// kernel told the caller, with its pid where known; refused
    /// ([`DoorError::Refused`]) if that user could not connect to the
    /// consumer socket itself. The returned stream speaks Perfetto's
    /// consumer IPC, as a connection to the consumer socket would.
    pub fn open(&self, uid: u32, pid: Option<i32>) -> Result<UnixStream, DoorError> {
        may_connect(&self.socket, uid)?;
        Ok(self.hand_over(PeerIdentity {
            uid,
            pid,
            machine_id: None,
        })?)
    }

    /// A new consumer connection for a peer nobody vouches for
    /// ([`UNKNOWN_UID`]): such a consumer gets nothing a uid grants, but it
    /// may record and read its own sessions with every data source the
    /// service offers, whoever it is. Only for a caller told explicitly to
    /// admit such peers.
    pub fn open_unvouched(&self) -> io::Result<UnixStream> {
        self.hand_over(PeerIdentity {
            uid: UNKNOWN_UID,
            pid: None,
            machine_id: None,
        })
    }

    /// Whether `uid` could connect to the consumer socket: what
    /// [`ConsumerDoor::open`] checks first.
    pub fn may_open(&self, uid: u32) -> Result<(), AccessRefusal> {
        may_connect(&self.socket, uid)
    }

    /// The consumer socket whose permissions decide whom the door lets
    /// in.
    pub fn consumer_socket(&self) -> &Endpoint {
        &self.socket
    }

    fn hand_over(&self, identity: PeerIdentity) -> io::Result<UnixStream> {
        let (ours, theirs) = UnixStream::pair()?;
        let sent = match self.tx.lock() {
            Ok(tx) => tx.send((theirs, identity)).is_ok(),
            Err(_) => false,
        };
        if !sent {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the tracing service has stopped",
            ));
        }
        // One byte wakes the loop; a full wake buffer already will.
        match (&*self.wake).write(&[1]) {
            Ok(_) => Ok(ours),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(ours),
            Err(e) => Err(e),
        }
    }
}

impl DoorInbox {
    /// Empties the wake fd and takes every connection waiting.
    pub(super) fn drain(&mut self) -> Vec<Entry> {
        let mut buf = [0u8; 64];
        while matches!(io::Read::read(&mut self.wake, &mut buf), Ok(n) if n > 0) {}
        let mut out = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(e) => out.push(e),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return out,
            }
        }
    }
}
