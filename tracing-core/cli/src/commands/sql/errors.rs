//! What `zerotrace sql` says when SQLite refuses a statement or a trace
//! does not load: SQLite's message with the line and column it points at,
//! that line of the SQL and a caret under the spot; the trace file's name
//! with the byte offset and packet where loading stopped; and, as a
//! warning, what a load that went on dropped.

use std::path::Path;

use zerotrace_trace_processor::{Error, TraceProcessor};

use crate::commands::CliError;

/// SQLite's `message` about `sql`, at byte `offset` of it when known:
/// `SQL error at line L, column C: message`, then the line and a caret
/// under column C (tabs kept, so the caret lines up however they are
/// shown). Columns count characters, from 1.
pub fn describe_sql_error(sql: &str, message: &str, offset: Option<usize>) -> String {
    let Some(mut offset) = offset.filter(|&o| o <= sql.len()) else {
        return format!("SQL error: {message}");
    };
    while !sql.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = sql[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = sql[offset..].find('\n').map_or(sql.len(), |i| offset + i);
    let line_no = sql[..line_start].matches('\n').count() + 1;
    let before = &sql[line_start..offset];
    let text = sql[line_start..line_end].trim_end_matches('\r');
    let pad: String = before
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!(
        "SQL error at line {line_no}, column {}: {message}\n  {text}\n  {pad}^",
        before.chars().count() + 1
    )
}

/// Tells on stderr what the load of `path` dropped (a truncated last
/// packet): the rest of the trace loaded and is queried, as upstream's
/// shell queries it, but the user must know the answers miss a part.
pub fn warn_dropped(path: &Path, tp: &TraceProcessor) {
    for w in tp.load_warnings() {
        eprintln!("zerotrace: warning: {}: {w}", path.display());
    }
}

/// A query's error as the user reads it (one or more lines, no newline at
/// the end).
pub fn describe_query_error(sql: &str, e: &Error) -> String {
    match e {
        Error::Sql { message, offset } => describe_sql_error(sql, message, *offset),
        other => other.to_string(),
    }
}

/// A trace that did not load: an I/O error on the file, or a bad trace
/// naming the file (the loader's error gives the byte and packet).
pub fn load_error(path: &Path, e: Error) -> CliError {
    let path = path.display().to_string();
    match e {
        Error::Io(e) => CliError::io(path, e),
        Error::Trace(t) => CliError::BadTrace {
            path,
            reason: t.to_string(),
        },
        other => CliError::BadTrace {
            path,
            reason: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caret_sits_under_the_offset() {
        let sql = "SELECT 1;\n\tSELECT nope FROM t";
        let o = sql.find("nope");
        assert_eq!(
            describe_sql_error(sql, "no such column: nope", o),
            "SQL error at line 2, column 9: no such column: nope\n  \tSELECT nope FROM t\n  \t       ^"
        );
        // Characters, not bytes, before the caret.
        let sql = "SELECT 'é', x";
        assert_eq!(
            describe_sql_error(sql, "m", sql.find('x')),
            "SQL error at line 1, column 13: m\n  SELECT 'é', x\n              ^"
        );
        // At the very end (an incomplete statement).
        assert!(
            describe_sql_error("SELECT", "incomplete input", Some(6))
                .ends_with("  SELECT\n        ^")
        );
        assert_eq!(describe_sql_error("x", "m", None), "SQL error: m");
        assert_eq!(describe_sql_error("x", "m", Some(9)), "SQL error: m");
    }
}
