//! Errors from creating or mapping shared memory.

/// Why a shared memory region could not be created or mapped.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    /// The size is zero or not a multiple of 4 KiB.
    #[error("invalid shared memory size {size}")]
    InvalidSize {
        /// The requested size.
        size: usize,
    },
    /// The page-aligned heap allocation failed.
    #[error("allocation of {size} bytes failed")]
    AllocationFailed {
        /// The requested size.
        size: usize,
    },
    /// A system call failed.
    #[error("{op} failed: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A received fd is smaller than the size it should map.
    #[error("shared memory file is {actual} bytes, expected at least {expected}")]
    TooSmall {
        /// Size of the file.
        actual: u64,
        /// Size requested.
        expected: usize,
    },
    /// A received memfd lacks the seals that make its size immutable.
    #[error("shared memory fd is missing the SHRINK|GROW|SEAL seals")]
    MissingSeals,
}

#[cfg(unix)]
impl ShmError {
    #[cold]
    pub(crate) fn io(op: &'static str, e: impl Into<std::io::Error>) -> ShmError {
        ShmError::Io {
            op,
            source: e.into(),
        }
    }
}
