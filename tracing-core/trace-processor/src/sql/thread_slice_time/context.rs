//! Each slice's thread context as `slices.with_context`'s `thread_slice`
//! gives it (its thread track's thread: utid, tid, name; the thread's
//! process: upid, pid, name, NULL without one), read
//! from the frozen tables, and the strings of a table built from them:
//! the trace's own pool when every table read shares it (the loader's one
//! pool), so a string is its id and nothing is copied; else a pool of the
//! table's own.

use std::sync::Arc;

use crate::column_store::strings::{StrId, StringPool};
use crate::column_store::table::{Column, Table};

use super::inputs::{Tables, column};

/// A thread slice's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Context {
    /// The thread.
    pub utid: i64,
    /// Its tid.
    pub tid: Option<i64>,
    /// Its name.
    pub thread_name: StrId,
    /// Its process (NULL without one).
    pub upid: Option<i64>,
    /// The process's pid (NULL without a process row).
    pub pid: Option<i64>,
    /// The process's name.
    pub process_name: StrId,
}

/// The columns of [`Contexts::thread_table`], in order.
pub(crate) const THREAD_COLUMNS: [&str; 6] =
    ["utid", "tid", "thread_name", "upid", "pid", "process_name"];

/// The string of `col` at `row` of `t` (NULL for another kind of column).
fn str_at(t: &Table, col: Option<usize>, row: usize) -> StrId {
    col.and_then(|c| t.str_id(row, c)).unwrap_or(StrId::NULL)
}

/// Column `name`'s index in `t`.
fn index(t: &Table, name: &str) -> Option<usize> {
    t.columns.iter().position(|c| c.name == name)
}

/// The thread context of the slices on each thread track (None for
/// another track), from which a slice's is read by its track: names as
/// ids of the trace's tables' pools.
pub(crate) struct Contexts {
    /// Per thread (by utid), its context.
    per_thread: Vec<Context>,
    per_track: Vec<Option<Context>>,
    slice: Option<Arc<Table>>,
    track_id: Option<usize>,
}

impl Contexts {
    /// Reads the contexts.
    pub(crate) fn read(t: &Tables) -> Self {
        let process = t.process.as_deref();
        let (Some(slice), Some(track), Some(thread)) = (&t.slice, &t.track, &t.thread) else {
            return Contexts {
                per_thread: Vec::new(),
                per_track: Vec::new(),
                slice: None,
                track_id: None,
            };
        };
        let kind = index(track, "event_type");
        let track_utid = column(track, "utid");
        let (tid, thread_name, thread_upid) = (
            column(thread, "tid"),
            index(thread, "name"),
            column(thread, "upid"),
        );
        let (pid, process_name) = match process {
            Some(p) => (column(p, "pid"), index(p, "name")),
            None => (None, None),
        };
        let per_thread: Vec<Context> = (0..thread.len)
            .map(|row| {
                let upid = thread_upid.and_then(|c| c.int_at(row));
                let prow = upid
                    .and_then(|u| usize::try_from(u).ok())
                    .filter(|&u| process.is_some_and(|p| u < p.len));
                Context {
                    utid: row as i64,
                    tid: tid.and_then(|c| c.int_at(row)),
                    thread_name: str_at(thread, thread_name, row),
                    upid,
                    pid: prow.and_then(|r| pid.and_then(|c| c.int_at(r))),
                    process_name: match (process, prow) {
                        (Some(p), Some(r)) => str_at(p, process_name, r),
                        _ => StrId::NULL,
                    },
                }
            })
            .collect();
        let per_track = (0..track.len)
            .map(|row| {
                let is_slice = track.strings.get(str_at(track, kind, row)) == Some("slice");
                let utid = track_utid.and_then(|c| c.int_at(row))?;
                let thread = usize::try_from(utid).ok()?;
                is_slice.then(|| per_thread.get(thread).copied()).flatten()
            })
            .collect();
        Contexts {
            per_thread,
            per_track,
            track_id: index(slice, "track_id"),
            slice: Some(slice.clone()),
        }
    }

    /// The threads' contexts as a table of their own, a row per thread
    /// (its row number its utid) of [`THREAD_COLUMNS`]: strings as ids of
    /// the trace's pool when `t`'s tables share it, else copied into a
    /// pool of the table's own.
    pub(crate) fn thread_table(&self, t: &Tables) -> Arc<Table> {
        let pool = |table: &Option<Arc<Table>>| table.as_ref().map(|t| t.strings.clone());
        let (thread_pool, process_pool) = (pool(&t.thread), pool(&t.process));
        let shared = match (&thread_pool, &process_pool) {
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) => Some(a.clone()),
            (Some(a), None) => Some(a.clone()),
            _ => None,
        };
        let mut own = StringPool::default();
        let mut copy = |from: &Option<Arc<StringPool>>, id: StrId| match (&shared, from) {
            (Some(_), _) => id,
            (None, Some(p)) => own.intern_opt(p.get(id)),
            (None, None) => StrId::NULL,
        };
        let c = &self.per_thread;
        let thread_name = c
            .iter()
            .map(|c| copy(&thread_pool, c.thread_name))
            .collect();
        let process_name = c
            .iter()
            .map(|c| copy(&process_pool, c.process_name))
            .collect();
        let columns = vec![
            Column::int("utid", c.iter().map(|c| c.utid).collect()),
            Column::opt_int("tid", c.iter().map(|c| c.tid).collect()),
            Column::str("thread_name", thread_name),
            Column::opt_int("upid", c.iter().map(|c| c.upid).collect()),
            Column::opt_int("pid", c.iter().map(|c| c.pid).collect()),
            Column::str("process_name", process_name),
        ];
        Arc::new(Table {
            name: "__zt_thread_context",
            columns,
            len: c.len(),
            has_id: false,
            sorted_by: None,
            strings: shared.unwrap_or_else(|| Arc::new(own)),
            orders: Default::default(),
        })
    }

    /// The thread of slice row `row`, when it is a thread slice.
    pub(crate) fn utid(&self, row: usize) -> Option<i64> {
        let slice = self.slice.as_deref()?;
        let track = slice.columns.get(self.track_id?)?.int_at(row)?;
        Some(
            self.per_track
                .get(usize::try_from(track).ok()?)?
                .as_ref()?
                .utid,
        )
    }
}

/// The pool a built table's strings live in: the trace's, when every
/// source pool is it, else one of the table's own that the sources'
/// strings are copied into.
pub(crate) struct Strings {
    shared: Option<Arc<StringPool>>,
    own: StringPool,
}

impl Strings {
    /// The pool for strings of `sources`' pools.
    pub(crate) fn over(sources: &[&Arc<StringPool>]) -> Self {
        let first = sources.first().copied();
        let shared = first
            .filter(|f| sources.iter().all(|s| Arc::ptr_eq(s, f)))
            .cloned();
        Strings {
            shared,
            own: StringPool::default(),
        }
    }

    /// The id in this pool of `id` of pool `src`.
    pub(crate) fn id(&mut self, src: &StringPool, id: StrId) -> StrId {
        if self.shared.is_some() {
            return id;
        }
        let s = src.get(id);
        self.own.intern_opt(s)
    }

    /// The trace's pool, when every source pool is it.
    pub(crate) fn shared(&self) -> Option<&Arc<StringPool>> {
        self.shared.as_ref()
    }

    /// The pool.
    pub(crate) fn finish(self) -> Arc<StringPool> {
        self.shared.unwrap_or_else(|| Arc::new(self.own))
    }
}
