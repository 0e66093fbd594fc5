//! What the interval operators refuse, as typed errors: intervals they
//! cannot take (a negative start or duration), calls that do not fit
//! (too many tables or partition columns, partition lists that disagree)
//! and values that are not the operators' own encoded sets.

/// An interval operator's error; SQLite reports its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum IntervalError {
    /// An interval starting before 0.
    #[error("Interval intersect only accepts positive `ts` values.")]
    NegativeTs,
    /// An interval with a negative duration.
    #[error("Interval intersect only works on intervals with non negative duration.")]
    NegativeDur,
    /// An id, start or duration that is not an integer.
    #[error("interval {what} must be an integer")]
    NotInteger {
        /// Which argument.
        what: &'static str,
    },
    /// A partition column's name that is not text, or a partition value
    /// that is a blob.
    #[error("interval intersect: partition {what}")]
    BadPartition {
        /// What is wrong.
        what: &'static str,
    },
    /// More tables than the operator intersects.
    #[error("interval intersect: Can intersect at most {max} tables")]
    TooManyTables {
        /// The most it takes.
        max: usize,
    },
    /// More partition columns than the operator takes.
    #[error("interval intersect: Can take at most {max} partitions.")]
    TooManyPartitions {
        /// The most it takes.
        max: usize,
    },
    /// A partition list naming a different number of columns than the
    /// tables were partitioned by.
    #[error(
        "interval intersect: the number of partition columns in the partition list does not match the number of partition columns in the input table"
    )]
    PartitionCount,
    /// A partition column whose every value is NULL: its type is unknown.
    #[error("Partition has unknown type in column {index}")]
    UnknownPartitionType {
        /// The column's index in the list.
        index: usize,
    },
    /// A required argument is missing.
    #[error("{operator}: argument '{name}' must be given")]
    MissingArgument {
        /// The operator.
        operator: &'static str,
        /// The argument.
        name: &'static str,
    },
    /// A value that is not one of the operators' encoded sets.
    #[error("{operator}: argument is not an interval set made by {maker}")]
    NotASet {
        /// The operator that read it.
        operator: &'static str,
        /// The aggregate that makes such values.
        maker: &'static str,
    },
}

impl From<IntervalError> for rusqlite::Error {
    fn from(e: IntervalError) -> Self {
        rusqlite::Error::UserFunctionError(Box::new(e))
    }
}
