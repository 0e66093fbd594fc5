//! What can go wrong in a PerfettoSQL statement, as typed errors; each is
//! reported as the engine's SQL error with the byte offset in the user's
//! text it points at (for an error inside an included module, the offset
//! of the `INCLUDE` and, in the message, the module and the offset in the
//! module's text).

use crate::error::Error;

/// A PerfettoSQL error (the offset it points at travels beside it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PerfettoSqlError {
    /// The text is longer than the tokenizer reads (4 GiB).
    #[error("the SQL text is {len} bytes, more than the 4 GiB the tokenizer reads")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// A byte the tokenizer stopped at (a NUL).
    #[error("the SQL text cannot be read past byte {offset}")]
    Unreadable {
        /// Where.
        offset: usize,
    },
    /// A PerfettoSQL statement that does not follow its grammar.
    #[error("{statement}: expected {expected}")]
    Syntax {
        /// Which statement (`CREATE PERFETTO TABLE`).
        statement: &'static str,
        /// What was expected where it points.
        expected: &'static str,
    },
    /// A type name PerfettoSQL does not have.
    #[error("{statement}: unknown type '{name}'")]
    UnknownType {
        /// Which statement.
        statement: &'static str,
        /// The name.
        name: String,
    },
    /// `name!(…)` of no macro.
    #[error("macro '{name}' does not exist")]
    UnknownMacro {
        /// The name.
        name: String,
    },
    /// A macro called with the wrong number of arguments.
    #[error("macro '{name}' takes {expected} arguments, {given} given")]
    MacroArity {
        /// The name.
        name: String,
        /// Its parameters.
        expected: usize,
        /// The call's arguments.
        given: usize,
    },
    /// A macro call whose `(` is never closed.
    #[error("macro '{name}': the call's '(' is not closed")]
    MacroUnclosed {
        /// The name.
        name: String,
    },
    /// Expansions nested deeper than the limit (a macro expanding to itself).
    #[error("macro '{name}': expansions nested more than {limit} deep (a recursive macro?)")]
    MacroDepth {
        /// The macro whose expansion went past the limit.
        name: String,
        /// The limit.
        limit: usize,
    },
    /// An expansion longer than the limit (a macro doubling its argument, nested).
    #[error("macro '{name}': its expansion grows past {limit} bytes")]
    MacroTooLong {
        /// The macro whose expansion went past the limit.
        name: String,
        /// The limit.
        limit: usize,
    },
    /// `CREATE PERFETTO MACRO` of a name already defined, without `OR REPLACE`.
    #[error("CREATE PERFETTO MACRO: macro '{name}' already exists")]
    MacroExists {
        /// The name.
        name: String,
    },
    /// `CREATE PERFETTO FUNCTION` of a name already defined, without `OR REPLACE`.
    #[error("CREATE PERFETTO FUNCTION: function '{name}' already exists")]
    FunctionExists {
        /// The name.
        name: String,
    },
    /// Two parameters, arguments or columns of one name.
    #[error("{statement}: multiple columns are named: {names}")]
    Duplicate {
        /// Which statement.
        statement: &'static str,
        /// The names, comma-separated.
        names: String,
    },
    /// A result column whose name cannot be a column's.
    #[error(
        "{statement}: column {index}: name '{name}' must start with a letter or '_' and hold only letters, digits and '_'"
    )]
    BadColumnName {
        /// Which statement.
        statement: &'static str,
        /// Its index.
        index: usize,
        /// Its name.
        name: String,
    },
    /// The query's columns and the declared schema differ.
    #[error("{statement}: {detail}")]
    SchemaMismatch {
        /// Which statement.
        statement: &'static str,
        /// Which columns are missing where.
        detail: String,
    },
    /// A function's body that is not one statement returning columns.
    #[error("{statement}: the body must be a single SELECT statement")]
    NotASelect {
        /// Which statement.
        statement: &'static str,
    },
    /// `INCLUDE PERFETTO MODULE` of a package no module belongs to.
    #[error("INCLUDE: Package '{key}' not found")]
    UnknownPackage {
        /// The module's name as written.
        key: String,
    },
    /// `INCLUDE PERFETTO MODULE` of a module its package does not have.
    #[error("INCLUDE: unknown module '{key}'")]
    UnknownModule {
        /// The module's name.
        key: String,
    },
    /// A module that includes itself, directly or through others.
    #[error("INCLUDE: module '{key}' includes itself (cycle: {cycle})")]
    IncludeCycle {
        /// The module.
        key: String,
        /// The modules being included, outermost first.
        cycle: String,
    },
    /// A module with a statement that returns rows.
    #[error("INCLUDE: module '{key}' has a statement returning rows")]
    ModuleReturnsRows {
        /// The module.
        key: String,
    },
    /// An error in an included module's text.
    #[error("in module '{key}' at byte {offset}: {message}")]
    InModule {
        /// The module.
        key: String,
        /// Byte offset in the module's text, when known.
        offset: usize,
        /// The error.
        message: String,
    },
    /// An error in the text of a module of a user's package.
    #[error("in module '{key}' ({file}, line {line}, column {column}): {message}")]
    InUserModule {
        /// The module.
        key: String,
        /// The file it was read from.
        file: String,
        /// The line (1-based) the error points at.
        line: usize,
        /// The column (1-based, in bytes).
        column: usize,
        /// The error.
        message: String,
    },
    /// SQLite refused what a PerfettoSQL statement asked of it.
    #[error("{statement}: {message}")]
    Sqlite {
        /// Which statement.
        statement: &'static str,
        /// SQLite's message.
        message: String,
    },
}

impl PerfettoSqlError {
    /// The engine's SQL error for this, pointing at byte `offset` of the text.
    pub(crate) fn at(self, offset: Option<usize>) -> Error {
        Error::Sql {
            message: self.to_string(),
            offset,
        }
    }
}

/// The message and offset of the engine's error `e` (an offset only for a
/// SQL error that has one).
pub(crate) fn parts(e: &Error) -> (String, Option<usize>) {
    match e {
        Error::Sql { message, offset } => (message.clone(), *offset),
        other => (other.to_string(), None),
    }
}
