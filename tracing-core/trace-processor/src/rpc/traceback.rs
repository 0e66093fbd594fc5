//! A query's error as upstream's RPC reports it: a Python-style traceback
//! naming the line and column of the SQL it points at, that line, a caret
//! under the spot, then SQLite's message.

use crate::error::Error;

/// The text of `QueryResult.error` for `e`, raised by `sql`.
pub(crate) fn describe(sql: &str, e: &Error) -> String {
    match e {
        Error::Sql { message, offset } => traceback(sql, message, offset.unwrap_or(0)),
        other => other.to_string(),
    }
}

/// `message` with a traceback pointing at byte `offset` of `sql`.
fn traceback(sql: &str, message: &str, offset: usize) -> String {
    let mut offset = offset.min(sql.len());
    while !sql.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = sql[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = sql[offset..].find('\n').map_or(sql.len(), |i| offset + i);
    let line_no = sql[..line_start].matches('\n').count() + 1;
    let col = sql[line_start..offset].chars().count();
    let text = sql[line_start..line_end].trim_end_matches('\r');
    format!(
        "Traceback (most recent call last):\n  File \"stdin\" line {line_no} col {}\n    {text}\n    {}^\n{message}",
        col + 1,
        " ".repeat(col)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caret_points_at_the_offset_on_its_line() {
        let e = Error::Sql {
            message: "incomplete input".into(),
            offset: Some(28),
        };
        assert_eq!(
            describe("insert into incomplete_input", &e),
            "Traceback (most recent call last):\n  File \"stdin\" line 1 col 29\n    \
             insert into incomplete_input\n                                ^\nincomplete input"
        );
        let e = Error::Sql {
            message: "no such column: x".into(),
            offset: Some(17),
        };
        assert_eq!(
            describe("SELECT 1;\nSELECT x", &e),
            "Traceback (most recent call last):\n  File \"stdin\" line 2 col 8\n    \
             SELECT x\n           ^\nno such column: x"
        );
    }
}
