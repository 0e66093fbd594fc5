//! The ways a span join can fail, each a typed error whose message reads
//! as upstream's `SPAN_JOIN: …` messages do, so that SQLite reports them
//! for the `CREATE VIRTUAL TABLE` or the query that hit them.

use thiserror::Error;

/// A span join's refusal of its arguments or of a side's rows.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub(crate) enum SpanJoinError {
    /// Not exactly two table arguments.
    #[error("SPAN_JOIN: expected exactly two arguments")]
    ArgumentCount,
    /// An argument with no table name.
    #[error("SPAN_JOIN: Missing table name")]
    MissingTable,
    /// A word after the table name other than `PARTITIONED`.
    #[error("SPAN_JOIN: Invalid token")]
    InvalidToken,
    /// `PARTITIONED` with no column after it.
    #[error("SPAN_JOIN: Missing partitioning column")]
    MissingPartition,
    /// A partition column named `ts` or `dur`.
    #[error("SPAN_JOIN: partition column cannot be any of {{ts, dur}} for table {0}")]
    PartitionIsTime(String),
    /// The two sides partitioned by different columns.
    #[error(
        "SPAN_JOIN: mismatching partitions between the two tables; \
         (partition {0} in table {1}, partition {2} in table {3})"
    )]
    MismatchedPartitions(String, String, String, String),
    /// A side with no columns: no such table or view.
    #[error("Unknown table or view name '{0}'")]
    UnknownTable(String),
    /// A side without exactly one `ts` column.
    #[error("SPAN_JOIN: Missing ts column in table {0}")]
    MissingTs(String),
    /// A side without its partition column.
    #[error("SPAN_JOIN: Missing partition column '{0}' in table '{1}'")]
    MissingPartitionColumn(String, String),
    /// Neither side has a `dur` column.
    #[error("SPAN_JOIN: column dur must be present in at least one of tables {0} and {1}")]
    MissingDur(String, String),
    /// A column name (other than ts, dur and the partition) on both sides,
    /// or twice on one.
    #[error("SPAN_JOIN: column {0} present in both tables {1} and {2}")]
    DuplicateColumn(String, String, String),
    /// A partition value that is neither NULL nor an integer.
    #[error("SPAN_JOIN: partition is not an INT column")]
    PartitionNotInt,
    /// SQLite's refusal of a side's query or of the schema lookup.
    #[error("SPAN_JOIN: {0}")]
    Sqlite(String),
    /// The query plan handed back to the cursor is not one this module
    /// wrote.
    #[error("SPAN_JOIN: malformed plan '{0}'")]
    BadPlan(String),
}

impl From<SpanJoinError> for rusqlite::Error {
    fn from(e: SpanJoinError) -> Self {
        rusqlite::Error::ModuleError(e.to_string())
    }
}
