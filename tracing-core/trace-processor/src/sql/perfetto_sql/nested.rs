//! Running a function's body from inside SQLite: a `CREATE PERFETTO
//! FUNCTION` (scalar or table-valued) computes its result by running its
//! SELECT on the very connection that calls it, in the middle of the
//! caller's statement, which SQLite allows.
//!
//! rusqlite offers a `Connection` over such a handle (`from_handle`,
//! `Context::get_connection`), but dropping one removes the connection's
//! hooks (its authorizer and progress handler: `file_access.rs` and the
//! query deadline), so this runs statements on the raw handle through
//! SQLite's C API instead: prepare, bind, step, read, finalize.

use std::ffi::{CStr, CString, c_char, c_int};

use rusqlite::ffi;
use rusqlite::types::Value;

/// A connection's handle, for running statements from its own functions
/// and virtual tables.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NestedDb(*mut ffi::sqlite3);

// SAFETY: the handle is only used from a function or virtual table of its
// own connection, on the thread running that connection's statement
// (SQLite calls them from `sqlite3_step`); the bundled SQLite is built
// thread-safe.
unsafe impl Send for NestedDb {}
// SAFETY: as for Send: no state of ours is behind the pointer.
unsafe impl Sync for NestedDb {}

/// The rows a statement answered with.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Rows {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<Value>>,
}

/// A prepared statement, finalized when dropped.
struct Stmt(*mut ffi::sqlite3_stmt);

impl Drop for Stmt {
    fn drop(&mut self) {
        // SAFETY: the statement came from sqlite3_prepare_v2 and is
        // finalized once, here.
        unsafe {
            ffi::sqlite3_finalize(self.0);
        }
    }
}

impl NestedDb {
    /// The handle of `conn`.
    ///
    /// # Safety
    /// The handle must only be used while `conn` is open: from functions
    /// or virtual tables registered on `conn` (SQLite drops those before
    /// it closes the connection).
    pub(crate) unsafe fn of(conn: &rusqlite::Connection) -> NestedDb {
        // SAFETY: the caller keeps the use within the connection's life.
        NestedDb(unsafe { conn.handle() })
    }

    /// SQLite's last message on this connection.
    fn message(&self) -> String {
        // SAFETY: the handle is open (see `of`); sqlite3_errmsg returns a
        // NUL-terminated string owned by SQLite, copied at once.
        unsafe {
            let m = ffi::sqlite3_errmsg(self.0);
            if m.is_null() {
                return "unknown SQLite error".to_owned();
            }
            CStr::from_ptr(m).to_string_lossy().into_owned()
        }
    }

    /// Runs the first statement of `sql` with `binds` (a parameter's name
    /// such as `$x`, or None for the next position, and its value) and
    /// returns its rows, at most `max_rows` of them (one more is an error
    /// saying so).
    pub(crate) fn query(
        &self,
        sql: &str,
        binds: &[(Option<&str>, Value)],
        max_rows: usize,
    ) -> Result<Rows, String> {
        let len = c_int::try_from(sql.len()).map_err(|_| "function body too long".to_owned())?;
        let mut raw: *mut ffi::sqlite3_stmt = std::ptr::null_mut();
        // SAFETY: the handle is open; `sql` is valid for `len` bytes; the
        // out-pointer is a local.
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(
                self.0,
                sql.as_ptr().cast::<c_char>(),
                len,
                &mut raw,
                std::ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(self.message());
        }
        if raw.is_null() {
            return Err("the body holds no statement".to_owned());
        }
        let stmt = Stmt(raw);
        for (i, (name, value)) in binds.iter().enumerate() {
            let index = match name {
                Some(name) => {
                    let c = CString::new(*name).map_err(|_| "bad parameter name".to_owned())?;
                    // SAFETY: the statement is live; `c` is NUL-terminated.
                    let index = unsafe { ffi::sqlite3_bind_parameter_index(stmt.0, c.as_ptr()) };
                    if index == 0 {
                        // The body does not use this argument.
                        continue;
                    }
                    index
                }
                None => c_int::try_from(i + 1).map_err(|_| "too many arguments".to_owned())?,
            };
            // SAFETY: the statement is live; text and blobs are copied by
            // SQLite (SQLITE_TRANSIENT) before the call returns.
            let rc = unsafe {
                match value {
                    Value::Null => ffi::sqlite3_bind_null(stmt.0, index),
                    Value::Integer(v) => ffi::sqlite3_bind_int64(stmt.0, index, *v),
                    Value::Real(v) => ffi::sqlite3_bind_double(stmt.0, index, *v),
                    Value::Text(s) => ffi::sqlite3_bind_text64(
                        stmt.0,
                        index,
                        s.as_ptr().cast::<c_char>(),
                        s.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                        ffi::SQLITE_UTF8 as u8,
                    ),
                    Value::Blob(b) => ffi::sqlite3_bind_blob64(
                        stmt.0,
                        index,
                        b.as_ptr().cast(),
                        b.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                    ),
                }
            };
            if rc != ffi::SQLITE_OK {
                return Err(self.message());
            }
        }
        // SAFETY: the statement is live.
        let n = unsafe { ffi::sqlite3_column_count(stmt.0) }.max(0);
        let mut out = Rows::default();
        for i in 0..n {
            // SAFETY: `i` is below the column count; the name is copied.
            let name = unsafe {
                let p = ffi::sqlite3_column_name(stmt.0, i);
                if p.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            };
            out.columns.push(name);
        }
        loop {
            // SAFETY: the statement is live.
            let rc = unsafe { ffi::sqlite3_step(stmt.0) };
            if rc == ffi::SQLITE_DONE {
                return Ok(out);
            }
            if rc != ffi::SQLITE_ROW {
                return Err(self.message());
            }
            if out.rows.len() >= max_rows {
                return Err(format!("more than {max_rows} rows"));
            }
            let mut row = Vec::with_capacity(out.columns.len());
            for i in 0..n {
                // SAFETY: the statement has a row and `i` is below its
                // column count; text and blobs are copied before the next
                // call on the statement.
                let v = unsafe {
                    match ffi::sqlite3_column_type(stmt.0, i) {
                        ffi::SQLITE_INTEGER => Value::Integer(ffi::sqlite3_column_int64(stmt.0, i)),
                        ffi::SQLITE_FLOAT => Value::Real(ffi::sqlite3_column_double(stmt.0, i)),
                        ffi::SQLITE_TEXT => {
                            let p = ffi::sqlite3_column_text(stmt.0, i);
                            let len =
                                usize::try_from(ffi::sqlite3_column_bytes(stmt.0, i)).unwrap_or(0);
                            if p.is_null() {
                                Value::Text(String::new())
                            } else {
                                let bytes = std::slice::from_raw_parts(p, len);
                                Value::Text(String::from_utf8_lossy(bytes).into_owned())
                            }
                        }
                        ffi::SQLITE_BLOB => {
                            let p = ffi::sqlite3_column_blob(stmt.0, i);
                            let len =
                                usize::try_from(ffi::sqlite3_column_bytes(stmt.0, i)).unwrap_or(0);
                            if p.is_null() {
                                Value::Blob(Vec::new())
                            } else {
                                Value::Blob(
                                    std::slice::from_raw_parts(p.cast::<u8>(), len).to_vec(),
                                )
                            }
                        }
                        _ => Value::Null,
                    }
                };
                row.push(v);
            }
            out.rows.push(row);
        }
    }
}
