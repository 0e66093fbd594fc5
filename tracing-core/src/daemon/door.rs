//! Consumer connections that code in the daemon's own process opens on
//! behalf of someone else, with the identity that code can vouch for.
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
}

/// The daemon's side of its door: what arrives, and the fd that wakes it.
#[derive(Debug)]
pub(super) struct DoorInbox {
    pub(super) rx: Receiver<Entry>,
    pub(super) wake: UnixStream,
}

/// A door and its inbox, joined.
pub(super) fn door() -> io::Result<(ConsumerDoor, DoorInbox)> {
    let (tx, rx) = channel();
    let (wake_tx, wake_rx) = UnixStream::pair()?;
    wake_tx.set_nonblocking(true)?;
    wake_rx.set_nonblocking(true)?;
    Ok((
        ConsumerDoor {
            tx: Arc::new(Mutex::new(tx)),
            wake: Arc::new(wake_tx),
        },
        DoorInbox { rx, wake: wake_rx },
    ))
}

impl ConsumerDoor {
    /// A new consumer connection whose peer is the user `uid` (as the
    /// kernel told the caller), or a user nobody vouches for (`None`), with
    /// its pid where known. The returned stream speaks Perfetto's consumer
    /// IPC, as a connection to the consumer socket would.
    pub fn open(&self, uid: Option<u32>, pid: Option<i32>) -> io::Result<UnixStream> {
        let (ours, theirs) = UnixStream::pair()?;
        let identity = PeerIdentity {
            uid: uid.unwrap_or(UNKNOWN_UID),
            pid,
            machine_id: None,
        };
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
