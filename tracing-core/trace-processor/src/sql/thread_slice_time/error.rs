//! What the thread-slice operators refuse, as typed errors: a frequency
//! piece whose columns are not numbers, or the pieces unreadable.

/// A thread-slice operator's error; SQLite reports its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SliceTimeError {
    /// A piece's column that is neither a number nor NULL.
    #[error("_cpu_freq_per_thread: {what} must be a number")]
    NotNumber {
        /// Which column.
        what: &'static str,
    },
    /// The pieces could not be read (SQLite's message).
    #[error("_cpu_freq_per_thread: {0}")]
    Query(String),
}

impl From<SliceTimeError> for rusqlite::Error {
    fn from(e: SliceTimeError) -> Self {
        rusqlite::Error::UserFunctionError(Box::new(e))
    }
}
