//! A side's rows streamed out of SQLite: its query runs on the connection
//! that is running the span join (SQLite allows a statement to be stepped
//! from inside another's virtual table), one row at a time, its values
//! read in place. It works on the raw handle through SQLite's C API, as
//! `perfetto_sql/nested.rs` explains: a rusqlite `Connection` made from
//! the handle would remove the connection's hooks when dropped.

use std::ffi::{CStr, c_char, c_int};

use rusqlite::ffi;
use rusqlite::types::{Value, ValueRef};

use super::error::SpanJoinError;
use super::side::Rows;

/// The handle of the connection the span join is registered on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Db(*mut ffi::sqlite3);

impl Db {
    /// Wraps `handle`.
    ///
    /// # Safety
    /// `handle` must be the open connection a span join table of this
    /// module lives in, used only from that table's methods (SQLite
    /// disconnects the table before closing the connection).
    pub(crate) unsafe fn new(handle: *mut ffi::sqlite3) -> Db {
        Db(handle)
    }

    /// SQLite's last message on this connection.
    fn message(self) -> String {
        // SAFETY: the handle is open (see `new`); the message is a
        // NUL-terminated string owned by SQLite, copied at once.
        unsafe {
            let m = ffi::sqlite3_errmsg(self.0);
            if m.is_null() {
                return "unknown SQLite error".to_owned();
            }
            CStr::from_ptr(m).to_string_lossy().into_owned()
        }
    }
}

/// A prepared statement, finalized when dropped.
#[derive(Debug)]
pub(crate) struct Stmt {
    db: Db,
    raw: *mut ffi::sqlite3_stmt,
}

impl Drop for Stmt {
    fn drop(&mut self) {
        // SAFETY: `raw` came from sqlite3_prepare_v2 and is finalized
        // once, here.
        unsafe {
            ffi::sqlite3_finalize(self.raw);
        }
    }
}

impl Stmt {
    /// Prepares `sql` (one statement) with `binds` at ?1, ?2, ….
    pub(crate) fn prepare(db: Db, sql: &str, binds: &[Value]) -> Result<Stmt, SpanJoinError> {
        let len = c_int::try_from(sql.len())
            .map_err(|_| SpanJoinError::Sqlite("query too long".to_owned()))?;
        let mut raw: *mut ffi::sqlite3_stmt = std::ptr::null_mut();
        let mut tail: *const c_char = std::ptr::null();
        // SAFETY: the handle is open; `sql` is valid for `len` bytes; the
        // out-pointers are locals.
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(
                db.0,
                sql.as_ptr().cast::<c_char>(),
                len,
                &mut raw,
                &mut tail,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(SpanJoinError::Sqlite(db.message()));
        }
        if raw.is_null() {
            return Err(SpanJoinError::Sqlite("empty query".to_owned()));
        }
        let stmt = Stmt { db, raw };
        // A table name carrying a second statement is refused.
        let used = (tail as usize).saturating_sub(sql.as_ptr() as usize);
        if sql.get(used..).is_some_and(|rest| {
            !rest
                .trim_matches(|c: char| c.is_whitespace() || c == ';')
                .is_empty()
        }) {
            return Err(SpanJoinError::Sqlite(format!(
                "a side must be one table or view, not '{sql}'"
            )));
        }
        for (i, v) in binds.iter().enumerate() {
            let index = c_int::try_from(i + 1)
                .map_err(|_| SpanJoinError::Sqlite("too many constraints".to_owned()))?;
            // SAFETY: the statement is live; text and blobs are copied by
            // SQLite (SQLITE_TRANSIENT) before the call returns.
            let rc = unsafe {
                match v {
                    Value::Null => ffi::sqlite3_bind_null(raw, index),
                    Value::Integer(x) => ffi::sqlite3_bind_int64(raw, index, *x),
                    Value::Real(x) => ffi::sqlite3_bind_double(raw, index, *x),
                    Value::Text(s) => ffi::sqlite3_bind_text64(
                        raw,
                        index,
                        s.as_ptr().cast::<c_char>(),
                        s.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                        ffi::SQLITE_UTF8 as u8,
                    ),
                    Value::Blob(b) => ffi::sqlite3_bind_blob64(
                        raw,
                        index,
                        b.as_ptr().cast(),
                        b.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                    ),
                }
            };
            if rc != ffi::SQLITE_OK {
                return Err(SpanJoinError::Sqlite(db.message()));
            }
        }
        Ok(stmt)
    }

    /// Moves to the next row; false at the end.
    pub(crate) fn step(&mut self) -> Result<bool, SpanJoinError> {
        // SAFETY: the statement is live.
        match unsafe { ffi::sqlite3_step(self.raw) } {
            ffi::SQLITE_ROW => Ok(true),
            ffi::SQLITE_DONE => Ok(false),
            _ => Err(SpanJoinError::Sqlite(self.db.message())),
        }
    }

    /// Goes back to before the first row (the binds stay).
    pub(crate) fn reset(&mut self) -> Result<(), SpanJoinError> {
        // SAFETY: the statement is live.
        match unsafe { ffi::sqlite3_reset(self.raw) } {
            ffi::SQLITE_OK => Ok(()),
            _ => Err(SpanJoinError::Sqlite(self.db.message())),
        }
    }

    /// Column `i` of the current row as an integer (SQLite's conversion;
    /// NULL is 0).
    pub(crate) fn int(&self, i: c_int) -> i64 {
        // SAFETY: the statement is live; an index out of range reads 0.
        unsafe { ffi::sqlite3_column_int64(self.raw, i) }
    }

    /// Column `i` of the current row, borrowed until the next step.
    pub(crate) fn value(&self, i: c_int) -> ValueRef<'_> {
        // SAFETY: the statement is live; text and blob pointers stay valid
        // until the statement is stepped, reset or finalized, which needs
        // `&mut self` while the borrow lives; an index out of range reads
        // NULL.
        unsafe {
            match ffi::sqlite3_column_type(self.raw, i) {
                ffi::SQLITE_INTEGER => ValueRef::Integer(ffi::sqlite3_column_int64(self.raw, i)),
                ffi::SQLITE_FLOAT => ValueRef::Real(ffi::sqlite3_column_double(self.raw, i)),
                ffi::SQLITE_TEXT => {
                    let p = ffi::sqlite3_column_text(self.raw, i);
                    let n = usize::try_from(ffi::sqlite3_column_bytes(self.raw, i)).unwrap_or(0);
                    if p.is_null() {
                        ValueRef::Text(&[])
                    } else {
                        ValueRef::Text(std::slice::from_raw_parts(p, n))
                    }
                }
                ffi::SQLITE_BLOB => {
                    let p = ffi::sqlite3_column_blob(self.raw, i);
                    let n = usize::try_from(ffi::sqlite3_column_bytes(self.raw, i)).unwrap_or(0);
                    if p.is_null() {
                        ValueRef::Blob(&[])
                    } else {
                        ValueRef::Blob(std::slice::from_raw_parts(p.cast::<u8>(), n))
                    }
                }
                _ => ValueRef::Null,
            }
        }
    }
}

/// One side's query as the rows of its walk.
#[derive(Debug)]
pub(crate) struct SideRows {
    stmt: Stmt,
    ts: c_int,
    dur: Option<c_int>,
    part: Option<c_int>,
}

impl SideRows {
    /// The rows of `stmt`, whose columns `ts`, `dur` and `part` are the
    /// start, duration and partition.
    pub(crate) fn new(stmt: Stmt, ts: usize, dur: Option<usize>, part: Option<usize>) -> Self {
        let idx = |i: usize| c_int::try_from(i).unwrap_or(c_int::MAX);
        SideRows {
            stmt,
            ts: idx(ts),
            dur: dur.map(idx),
            part: part.map(idx),
        }
    }

    /// Column `i` of the current row.
    pub(crate) fn value(&self, i: usize) -> ValueRef<'_> {
        self.stmt.value(c_int::try_from(i).unwrap_or(c_int::MAX))
    }
}

impl Rows for SideRows {
    fn restart(&mut self) -> Result<(), SpanJoinError> {
        self.stmt.reset()
    }

    fn step(&mut self) -> Result<bool, SpanJoinError> {
        self.stmt.step()
    }

    fn ts(&self) -> i64 {
        self.stmt.int(self.ts)
    }

    fn dur(&self) -> i64 {
        self.dur.map_or(0, |d| self.stmt.int(d))
    }

    fn partition(&self) -> Result<Option<i64>, SpanJoinError> {
        let Some(p) = self.part else {
            return Ok(None);
        };
        match self.stmt.value(p) {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(v) => Ok(Some(v)),
            _ => Err(SpanJoinError::PartitionNotInt),
        }
    }
}
