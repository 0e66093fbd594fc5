//! What the counter operator refuses, as typed errors: a sample whose
//! id, timestamp, track or value is not a number, and an argument that
//! is not the samples its aggregate made.

/// A counter operator's error; SQLite reports its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CounterError {
    /// A sample's column that is neither a number nor NULL.
    #[error("counter intervals: {what} must be a number")]
    NotNumber {
        /// Which column.
        what: &'static str,
    },
    /// An argument that is not a blob of samples.
    #[error(
        "__intrinsic_counter_leading_intervals: the samples must be made by __intrinsic_counter_samples_agg"
    )]
    NotSamples,
    /// The trace's end is not an integer (nor NULL).
    #[error("__intrinsic_counter_leading_intervals: the trace's end must be an integer")]
    BadEnd,
}

impl From<CounterError> for rusqlite::Error {
    fn from(e: CounterError) -> Self {
        rusqlite::Error::UserFunctionError(Box::new(e))
    }
}
