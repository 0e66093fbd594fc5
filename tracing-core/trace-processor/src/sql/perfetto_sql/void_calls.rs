//! Functions that return nothing: upstream's void functions
//! (`CREATE_FUNCTION`, `EXPERIMENTAL_MEMOIZE`, `RUN_METRIC`, `IMPORT`, ...)
//! say so while SQLite steps their statement, and the engine asks after
//! the statement whether one did, so that its one column is no output, as
//! `trace_processor_shell` treats it.

use std::cell::Cell;

thread_local! {
    /// Whether a function that returns nothing ran since the last
    /// [`take_void`] on this thread (SQLite calls functions on the thread
    /// that steps the statement).
    static VOID_CALLED: Cell<bool> = const { Cell::new(false) };
}

/// Said by a function that returns nothing (upstream's void functions:
/// `CREATE_FUNCTION`, `EXPERIMENTAL_MEMOIZE`, `RUN_METRIC`, ...): its
/// statement's one column is no output, as `trace_processor_shell` treats
/// it.
pub(crate) fn mark_void() {
    VOID_CALLED.with(|v| v.set(true));
}

/// Whether a function that returns nothing ran since the last call.
pub(crate) fn take_void() -> bool {
    VOID_CALLED.with(|v| v.replace(false))
}
