//! What the graph operators refuse, as typed errors: rows that are not
//! the aggregate's, a node id that is not an integer, a tree that is not
//! one, a dominator root outside the graph and a scan whose columns or
//! step query do not fit.

/// A graph operator's error; SQLite reports its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum GraphError {
    /// An argument that is not a blob made by `__intrinsic_graph_rows_agg`.
    #[error("graph operators: an argument must be made by __intrinsic_graph_rows_agg")]
    NotRows,
    /// The aggregate called with no argument, too many, or a count that
    /// changed between rows.
    #[error("__intrinsic_graph_rows_agg: {given} arguments (1 to 255, the same for every row)")]
    Arity {
        /// How many were given.
        given: usize,
    },
    /// A value that must be an integer.
    #[error("graph operators: {what} must be an integer")]
    NotInteger {
        /// Which column.
        what: &'static str,
    },
    /// The rows lack a column the operator needs.
    #[error("graph operators: {what} needs {needed} columns, got {given}")]
    Columns {
        /// Which argument.
        what: &'static str,
        /// Columns needed.
        needed: usize,
        /// Columns given.
        given: usize,
    },
    /// A tree with more than one row whose parent is NULL.
    #[error(
        "tree_partition: multiple NULL parent_ids. Only one root (i.e. one NULL parent_id) expected."
    )]
    ManyRoots,
    /// A tree without a root.
    #[error("tree_partition: no root in tree")]
    NoRoot,
    /// The dominator tree's root is in no edge.
    #[error("dominator_tree: root node is not in the graph")]
    RootNotInGraph,
    /// A scan's column list that is not the first rows' columns.
    #[error("{operator}: column list '{list}' does not match initial table list '{init}'")]
    ColumnMismatch {
        /// The operator.
        operator: &'static str,
        /// The list given.
        list: String,
        /// The first rows' columns.
        init: String,
    },
    /// A scan's step or aggregate query failed or answered other columns.
    #[error("{operator}: {message}")]
    Step {
        /// The operator.
        operator: &'static str,
        /// What went wrong.
        message: String,
    },
}

impl From<GraphError> for rusqlite::Error {
    fn from(e: GraphError) -> Self {
        rusqlite::Error::UserFunctionError(Box::new(e))
    }
}
