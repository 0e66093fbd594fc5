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
}
