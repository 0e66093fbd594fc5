//! The errors of the flamegraph operator (`__intrinsic_flamegraph` and
//! its config function): every malformed source, configuration or value
//! is one of these, with upstream's wording, never a panic.

/// Why a flamegraph could not be configured, loaded or built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum FlamegraphError {
    /// An argument of `__intrinsic_flamegraph_config` is wrong.
    #[error("flamegraph_config: {0}")]
    Config(String),
    /// The source query's rows do not form a flamegraph source.
    #[error("flamegraph: {0}")]
    Source(String),
    /// The rows' ids and parent ids do not form a forest.
    #[error("tree: {0}")]
    Tree(String),
    /// A regular expression does not compile.
    #[error("flamegraph: invalid regex '{pattern}': {reason}")]
    Regex {
        /// The pattern.
        pattern: String,
        /// The compiler's reason.
        reason: String,
    },
    /// The configuration does not fit the source or itself.
    #[error("flamegraph: {0}")]
    Invalid(String),
    /// A value column holds a negative value.
    #[error("flamegraph: value columns must be non-negative")]
    Negative,
    /// An integer sum does not fit 64 bits.
    #[error("flamegraph: integer value overflow")]
    Overflow,
}

impl From<FlamegraphError> for rusqlite::Error {
    fn from(e: FlamegraphError) -> Self {
        rusqlite::Error::ModuleError(e.to_string())
    }
}
