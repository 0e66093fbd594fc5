//! SQL never touches the filesystem unless asked: the SQL of a trace's
//! reader (a peer of the RPC server, a query file) must not read or write
//! a file the process can reach. SQLite itself decides, through its
//! authorizer and its limits; the SQL text is never filtered.
//!
//! With file access off (the default; on with `--allow-sql-file-access`,
//! as upstream's shell spells it):
//!
//! - `ATTACH` opens in-memory databases only: `':memory:'` exactly, or a
//!   `file:` URI whose every `mode` is `memory` (or whose path is
//!   `:memory:`) and that names no other parameter than `mode` and
//!   `cache` (so no `vfs=`, `modeof=` or `immutable=`). `''` is allowed:
//!   it is SQLite's private temporary database, which lives in memory and
//!   spills, as temporary tables do, to an unnamed file of SQLite's own
//!   that is deleted on close. A file name that is not a literal string
//!   (an expression, a bound parameter) is refused, as it cannot be
//!   checked before it is opened.
//! - `VACUUM INTO` a file is refused: SQLite runs it as an internal
//!   `ATTACH` of the target, which the same rule sees.
//! - `PRAGMA temp_store_directory` and `data_store_directory` (they name
//!   where SQLite writes) are refused; `temp_store` stays free, its files
//!   being SQLite's unnamed ones.
//!
//! Always: extensions are never loaded (`load_extension()` is refused
//! and the connection's extension loading is switched off), and at most
//! [`MAX_ATTACHED`] databases are attached (`SQLITE_LIMIT_ATTACHED`).
//! SQLite's core has no other function that reads or writes files (the
//! shell's `readfile`/`writefile` are an extension we do not build in).
//!
//! SQLite reports a refusal as a bare "not authorized" (or "authorization
//! denied" when it comes while a statement runs, as `VACUUM INTO`'s
//! internal `ATTACH` does); the authorizer
//! notes why it refused, and [`FileAccess::explain`] puts that reason in
//! the error.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;

use crate::error::Error;

/// The most databases a connection attaches at once (SQLite's own
/// default): each attached in-memory database holds memory.
pub(crate) const MAX_ATTACHED: i32 = 10;

/// The advice every file-access refusal ends with.
const HOW_TO_ALLOW: &str = "SQL file access is off (run with --allow-sql-file-access)";

/// A connection's file-access switch, and the reason of its last refusal.
#[derive(Debug, Clone)]
pub(crate) struct FileAccess {
    allowed: Arc<AtomicBool>,
    refused: Arc<Mutex<Option<String>>>,
}

impl FileAccess {
    /// Installs the authorizer and the limits on `conn`, file access off.
    pub(crate) fn install(conn: &Connection) -> Result<Self, Error> {
        let access = FileAccess {
            allowed: Arc::new(AtomicBool::new(false)),
            refused: Arc::new(Mutex::new(None)),
        };
        conn.load_extension_disable()?;
        conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, MAX_ATTACHED)?;
        let hook = access.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            match decide(&ctx.action, hook.allowed.load(Ordering::Relaxed)) {
                Ok(()) => Authorization::Allow,
                Err(reason) => {
                    if let Ok(mut r) = hook.refused.lock() {
                        *r = Some(reason);
                    }
                    Authorization::Deny
                }
            }
        }));
        Ok(access)
    }

    /// Lets SQL read and write files (`--allow-sql-file-access`), or not.
    pub(crate) fn set_allowed(&self, allowed: bool) {
        self.allowed.store(allowed, Ordering::Relaxed);
    }

    /// Whether SQL may read and write files.
    pub(crate) fn allowed(&self) -> bool {
        self.allowed.load(Ordering::Relaxed)
    }

    /// Forgets an earlier refusal (before a query runs).
    pub(crate) fn forget(&self) {
        if let Ok(mut r) = self.refused.lock() {
            *r = None;
        }
    }

    /// `e`, with SQLite's bare "not authorized" replaced by the reason the
    /// authorizer refused for, when it did.
    pub(crate) fn explain(&self, e: Error) -> Error {
        let reason = self.refused.lock().ok().and_then(|mut r| r.take());
        match (e, reason) {
            (Error::Sql { message, offset }, Some(reason))
                if message.contains("not authorized")
                    || message.contains("authorization denied") =>
            {
                Error::Sql {
                    message: reason,
                    offset,
                }
            }
            (e, _) => e,
        }
    }
}

/// Whether `action` may run; the reason when not.
fn decide(action: &AuthAction<'_>, allowed: bool) -> Result<(), String> {
    match action {
        AuthAction::Function { function_name }
            if function_name.eq_ignore_ascii_case("load_extension") =>
        {
            Err("load_extension() is refused: SQLite extensions are never loaded".into())
        }
        _ if allowed => Ok(()),
        AuthAction::Attach { filename } if in_memory(filename) => Ok(()),
        AuthAction::Attach { filename } => Err(format!(
            "ATTACH of a file ({filename:?}) is refused: {HOW_TO_ALLOW}; in-memory \
             databases (':memory:') may be attached"
        )),
        AuthAction::Unknown {
            code: rusqlite::ffi::SQLITE_ATTACH,
            ..
        } => Err(format!(
            "ATTACH of a file name that is not a literal string is refused: {HOW_TO_ALLOW}"
        )),
        AuthAction::Pragma { pragma_name, .. }
            if pragma_name.eq_ignore_ascii_case("temp_store_directory")
                || pragma_name.eq_ignore_ascii_case("data_store_directory") =>
        {
            Err(format!("PRAGMA {pragma_name} is refused: {HOW_TO_ALLOW}"))
        }
        _ => Ok(()),
    }
}

/// Whether attaching `filename` opens an in-memory database, read as
/// SQLite reads it (URI file names are on); anything unsure is a file.
fn in_memory(filename: &str) -> bool {
    if filename == ":memory:" || filename.is_empty() {
        return true;
    }
    let Some(uri) = filename
        .get(..5)
        .filter(|s| s.eq_ignore_ascii_case("file:"))
        .and_then(|_| filename.get(5..))
    else {
        return false;
    };
    // The path ends at '?' or '#'; the query at '#'.
    let (path, query) = match uri.find(['?', '#']) {
        Some(at) if uri.as_bytes().get(at) == Some(&b'?') => {
            let query = uri.get(at + 1..).unwrap_or_default();
            let query = query.split('#').next().unwrap_or_default();
            (uri.get(..at).unwrap_or_default(), query)
        }
        Some(at) => (uri.get(..at).unwrap_or_default(), ""),
        None => (uri, ""),
    };
    let mut modes = 0usize;
    for param in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = param.split_once('=').unwrap_or((param, ""));
        let (Some(key), Some(value)) = (percent_decoded(key), percent_decoded(value)) else {
            return false;
        };
        match key.as_str() {
            "mode" if value == "memory" => modes += 1,
            "cache" => {}
            _ => return false,
        }
    }
    modes > 0 || percent_decoded(path).is_some_and(|p| p == ":memory:")
}

/// `s` with its `%HH` escapes decoded, as SQLite decodes a URI's parts;
/// None when the result holds a NUL or is not UTF-8 (refused).
fn percent_decoded(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let hex = |j: usize| b.get(j).and_then(|&h| (h as char).to_digit(16));
        match (c, hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).ok()?);
                i += 3;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    if out.contains(&0) {
        return None;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_memory_names_are_told_from_files() {
        for name in [
            ":memory:",
            "",
            "file::memory:",
            "FILE::memory:",
            "file:x?mode=memory",
            "file:/root/x.db?mode=memory&cache=shared",
            "file:x?mo%64e=memor%79",
            "file:%3amemory%3a",
            "file::memory:?cache=shared#frag",
        ] {
            assert!(in_memory(name), "{name:?}");
        }
        for name in [
            "/tmp/x.db",
            ":MEMORY:",
            " :memory:",
            "x?mode=memory",
            "file:/tmp/x.db",
            "file:x?mode=memory&mode=rwc",
            "file:x?mode=rwc&mode=memory",
            "file::memory:?mode=rwc",
            "file:x?mode=memory&vfs=unix",
            "file:x?mode=memory&v%66s=unix",
            "file::memory:?vfs=unix-dotfile",
            "file:x?mode=memory&modeof=/etc/passwd",
            "file:x#?mode=memory",
            "file:x?mode=memory%00",
        ] {
            assert!(!in_memory(name), "{name:?}");
        }
    }
}
