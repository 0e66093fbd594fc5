//! `CREATE [OR REPLACE] PERFETTO TABLE|VIEW name [(schema)] AS select`
//! and `CREATE|DROP PERFETTO INDEX`. The select's columns are checked as
//! upstream checks them: each named like a column, no two alike, and, when
//! a schema is declared, exactly the declared ones (any order). A table is
//! materialised once (a real SQLite table of untyped columns, so each
//! value keeps the type the select gave it); a view is SQLite's view; an
//! index is SQLite's index on the table.

use rusqlite::Connection;

use super::error::PerfettoSqlError;
use super::statement::Param;

/// Quotes a name for SQLite.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// An error: PerfettoSQL's, or SQLite's with the byte of the select it
/// points at.
#[derive(Debug)]
pub(crate) enum CreateError {
    /// A check failed.
    Check(PerfettoSqlError),
    /// SQLite refused the select (offset in the select's text when known).
    Select {
        /// SQLite's message.
        message: String,
        /// Where in the select.
        offset: Option<usize>,
    },
}

/// The select's column names, checked as a table's columns (named like
/// columns, none twice, and the declared ones when `schema` is given) when
/// `as_table`; for a scalar function's body, only that it returns columns.
pub(crate) fn columns(
    conn: &Connection,
    statement: &'static str,
    select: &str,
    as_table: bool,
    schema: Option<&[Param]>,
) -> Result<Vec<String>, CreateError> {
    let stmt = conn.prepare(select).map_err(|e| match e {
        rusqlite::Error::SqlInputError { msg, offset, .. } => CreateError::Select {
            message: msg,
            offset: usize::try_from(offset).ok(),
        },
        other => CreateError::Select {
            message: other.to_string(),
            offset: None,
        },
    })?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    if names.is_empty() {
        return Err(CreateError::Check(PerfettoSqlError::NotASelect {
            statement,
        }));
    }
    if as_table {
        check_columns(statement, &names, schema).map_err(CreateError::Check)?;
    }
    Ok(names)
}

/// Upstream's checks of a select's columns against a declared schema.
pub(crate) fn check_columns(
    statement: &'static str,
    names: &[String],
    schema: Option<&[Param]>,
) -> Result<(), PerfettoSqlError> {
    for (index, name) in names.iter().enumerate() {
        if !super::tokens::is_bare_word(name) {
            return Err(PerfettoSqlError::BadColumnName {
                statement,
                index,
                name: name.clone(),
            });
        }
    }
    let mut dups: Vec<&str> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if names.get(i + 1..).is_some_and(|rest| rest.contains(n)) && !dups.contains(&n.as_str()) {
            dups.push(n);
        }
    }
    if !dups.is_empty() {
        return Err(PerfettoSqlError::Duplicate {
            statement,
            names: dups.join(", "),
        });
    }
    let Some(schema) = schema else {
        return Ok(());
    };
    let undeclared: Vec<&str> = names
        .iter()
        .filter(|n| !schema.iter().any(|p| &p.name == *n))
        .map(String::as_str)
        .collect();
    let missing: Vec<&str> = schema
        .iter()
        .filter(|p| !names.contains(&p.name))
        .map(|p| p.name.as_str())
        .collect();
    let detail = match (missing.is_empty(), undeclared.is_empty()) {
        (true, true) => return Ok(()),
        (false, false) => format!(
            "the following columns are declared in the schema, but do not exist: {}; and the \
             following columns exist, but are not declared: {}",
            missing.join(", "),
            undeclared.join(", ")
        ),
        (true, false) => format!(
            "the following columns are missing from the schema: {}",
            undeclared.join(", ")
        ),
        (false, true) => format!(
            "the following columns are declared in the schema, but do not exist: {}",
            missing.join(", ")
        ),
    };
    Err(PerfettoSqlError::SchemaMismatch { statement, detail })
}

/// Column `name` as a table declares it: untyped, except `id`, declared
/// INTEGER. An untyped column compared with a typed one (a trace table's
/// `slice.id`, `track_id`) takes the typed side's conversion, and SQLite
/// then cannot search an index on it: a join on the table's id was a scan
/// of the table per row (minutes for `slices.self_dur` on a trace of
/// 250K slices). Ids are integers, which INTEGER affinity keeps as they
/// are (a text that is not a number stays text).
fn id_typed(name: &str) -> String {
    if name == "id" {
        format!("{} INTEGER", quote(name))
    } else {
        quote(name)
    }
}

/// Creates table (or view) `name` from `select`, whose columns are `names`.
pub(crate) fn create(
    conn: &Connection,
    table: bool,
    replace: bool,
    name: &str,
    select: &str,
    names: &[String],
) -> Result<(), PerfettoSqlError> {
    let statement = if table {
        "CREATE PERFETTO TABLE"
    } else {
        "CREATE PERFETTO VIEW"
    };
    let sqlite = |e: rusqlite::Error| PerfettoSqlError::Sqlite {
        statement,
        message: match e {
            rusqlite::Error::SqlInputError { msg, .. } => msg,
            other => other.to_string(),
        },
    };
    let q = quote(name);
    if !table {
        if replace {
            conn.execute_batch(&format!("DROP VIEW IF EXISTS {q}"))
                .map_err(sqlite)?;
        }
        return conn
            .execute_batch(&format!("CREATE VIEW {q} AS {select}"))
            .map_err(sqlite);
    }
    if replace {
        conn.execute_batch(&format!("DROP TABLE IF EXISTS {q}"))
            .map_err(sqlite)?;
    }
    let cols: Vec<String> = names.iter().map(|n| id_typed(n)).collect();
    conn.execute_batch(&format!("CREATE TABLE {q}({})", cols.join(", ")))
        .map_err(sqlite)?;
    if let Err(e) = conn.execute_batch(&format!("INSERT INTO {q} {select}")) {
        // Nothing half made stays.
        let _ = conn.execute_batch(&format!("DROP TABLE IF EXISTS {q}"));
        return Err(sqlite(e));
    }
    // A table's `id` is what other tables join it on (upstream's tables
    // find a row by id directly): an index on it, so that such a join is a
    // search per row and never a scan of the table per row, whatever the
    // planner estimates of the other side (a scan per row made one module
    // of the Linux set run for hours on a trace of 2.5M slices).
    if names.iter().any(|n| n == "id") {
        conn.execute_batch(&format!(
            "CREATE INDEX {} ON {q}(\"id\")",
            quote(&format!("{name}__zt_id"))
        ))
        .map_err(sqlite)?;
    }
    Ok(())
}

/// `CREATE [OR REPLACE] PERFETTO INDEX name ON table(columns)`.
pub(crate) fn create_index(
    conn: &Connection,
    replace: bool,
    name: &str,
    table: &str,
    columns: &[String],
) -> Result<(), PerfettoSqlError> {
    let sqlite = |e: rusqlite::Error| PerfettoSqlError::Sqlite {
        statement: "CREATE PERFETTO INDEX",
        message: e.to_string(),
    };
    if replace {
        conn.execute_batch(&format!("DROP INDEX IF EXISTS {}", quote(name)))
            .map_err(sqlite)?;
    }
    let cols: Vec<String> = columns.iter().map(|c| quote(c)).collect();
    conn.execute_batch(&format!(
        "CREATE INDEX {} ON {}({})",
        quote(name),
        quote(table),
        cols.join(", ")
    ))
    .map_err(sqlite)
}

/// `DROP PERFETTO INDEX name ON table`.
pub(crate) fn drop_index(conn: &Connection, name: &str) -> Result<(), PerfettoSqlError> {
    conn.execute_batch(&format!("DROP INDEX {}", quote(name)))
        .map_err(|e| PerfettoSqlError::Sqlite {
            statement: "DROP PERFETTO INDEX",
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};

    /// SQLite's plan for `sql`, one line per step.
    fn plan(tp: &TraceProcessor, sql: &str) -> Vec<String> {
        tp.query(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect(sql)
            .rows
            .into_iter()
            .filter_map(|r| match r.get(3) {
                Some(Value::Text(t)) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_join_from_a_trace_table_searches_a_perfetto_tables_id_index() {
        let tp = TraceProcessor::from_bytes(&[]).expect("engine");
        tp.query(
            "CREATE PERFETTO TABLE t AS SELECT id, dur AS x FROM slice;
             CREATE PERFETTO TABLE u AS SELECT 1.0 AS id, 'a' AS x UNION ALL SELECT 'b', 2",
        )
        .expect("tables");
        // The slice table first, then `t` by the slice's typed id: a
        // search of t's index per slice, never a scan of t per slice.
        let steps = plan(&tp, "SELECT * FROM slice AS s CROSS JOIN t ON t.id = s.id");
        assert!(
            steps
                .iter()
                .any(|s| s.starts_with("SEARCH t USING") && s.contains("t__zt_id")),
            "{steps:?}"
        );
        // An id keeps its value; an integral real becomes the integer.
        let got = tp
            .query("SELECT typeof(id), id FROM u ORDER BY 1")
            .expect("u")
            .rows;
        assert_eq!(
            got,
            [
                vec![Value::Text("integer".into()), Value::Int(1)],
                vec![Value::Text("text".into()), Value::Text("b".into())],
            ]
        );
    }
}
