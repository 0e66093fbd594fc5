//! Errors of the producer side.

use crate::abi::AbiError;

/// Why the arbiter could not be created or could not create a writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProducerError {
    /// The buffer geometry was rejected by the ABI.
    #[error(transparent)]
    Abi(#[from] AbiError),
    /// The page layout to partition with is `NotPartitioned`.
    #[error("writers need a partitioned page layout")]
    InvalidLayout,
    /// Another arbiter already claimed this shared memory region.
    #[error("the shared memory region is already used by another arbiter")]
    RegionInUse,
    /// All 32767 writer ids are in use.
    #[error("no free writer id (32767 writers alive)")]
    WriterIdsExhausted,
    /// The arbiter already has a commit sink (it was bound before).
    #[error("the arbiter is already bound to a commit sink")]
    AlreadyBound,
    /// The arbiter has no commit sink yet, so a writer with a real target
    /// buffer could not be registered (use a startup writer instead).
    #[error("the arbiter is not bound to a commit sink yet")]
    NotBound,
    /// All 65535 startup reservation ids are in use.
    #[error("no free startup reservation id")]
    ReservationsExhausted,
    /// No such startup reservation (never made, or forgotten once settled).
    #[error("unknown startup reservation")]
    UnknownReservation,
    /// The startup reservation was aborted (no session claimed it in time).
    #[error("the startup reservation was aborted")]
    ReservationAborted,
    /// The startup reservation is already bound to a buffer.
    #[error("the startup reservation is already bound")]
    ReservationAlreadyBound,
}
