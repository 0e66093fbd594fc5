//! `CREATE [OR REPLACE] PERFETTO TABLE|VIEW name [(schema)] AS select`
//! and `CREATE|DROP PERFETTO INDEX`. The select's columns are checked as
//! upstream checks them: each named like a column, no two alike, and, when
//! a schema is declared, exactly the declared ones (any order). A table is
//! materialised once, as columns (`columnar.rs`) or, when a column mixes
//! kinds of values, as a real SQLite table of untyped columns, so each
//! value keeps the type the select gave it either way; a view is SQLite's
//! view; an index is SQLite's index on a row-store table, and only a name
//! on a table stored as columns.

use rusqlite::Connection;

use super::columnar::{self, Indexes};
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
    // Prepared only for its columns: a table built on first read is not
    // built for this (`lazy_table.rs`).
    let stmt = super::lazy_table::planning_only(|| conn.prepare(select)).map_err(|e| match e {
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

/// Creates table (or view) `name` from `select`, whose columns are `names`
/// (a table made again loses the indexes noted in `indexes`); a table
/// whose columns a native source builds (`native`, see `native.rs`) takes
/// them as they are, on its first read (`lazy_table.rs`), instead of
/// running `select`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn create(
    conn: &Connection,
    indexes: &Indexes,
    table: bool,
    replace: bool,
    name: &str,
    select: &str,
    names: &[String],
    native: Option<super::native::NativeTable>,
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
    // Stored as columns when every column's values are of one kind
    // (`columnar.rs`); the row store above only said whether the name is
    // free, as it did before.
    conn.execute_batch(&format!("DROP TABLE {q}"))
        .map_err(sqlite)?;
    indexes.forget_table(name);
    if let Some(super::native::NativeTable::Later(t)) = native {
        return columnar::register_lazy(conn, name, t).map_err(sqlite);
    }
    if let Some(t) = columnar::collect(conn, name, select, names).map_err(sqlite)? {
        return columnar::register(conn, name, t).map_err(sqlite);
    }
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

/// `CREATE [OR REPLACE] PERFETTO INDEX name ON table(columns)`: SQLite's
/// index on a row-store table; on a table stored as columns, its name in
/// `indexes` once its columns are checked.
pub(crate) fn create_index(
    conn: &Connection,
    indexes: &Indexes,
    replace: bool,
    name: &str,
    table: &str,
    columns: &[String],
) -> Result<(), PerfettoSqlError> {
    let sqlite = |e: rusqlite::Error| PerfettoSqlError::Sqlite {
        statement: "CREATE PERFETTO INDEX",
        message: e.to_string(),
    };
    let cols: Vec<String> = columns.iter().map(|c| quote(c)).collect();
    if columnar::is_columnar(conn, table) {
        if replace {
            indexes.remove(name);
        }
        let taken: bool = conn
            .query_row(
                "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'index' AND name = ?1 \
                 COLLATE NOCASE",
                [name],
                |r| r.get(0),
            )
            .map_err(sqlite)?;
        // Its columns must exist, as SQLite's index checks.
        for c in columns {
            let known: bool = conn
                .query_row(
                    "SELECT count(*) > 0 FROM pragma_table_info(?1) WHERE name = ?2 \
                     COLLATE NOCASE",
                    [table, c.as_str()],
                    |r| r.get(0),
                )
                .map_err(sqlite)?;
            if !known {
                return Err(PerfettoSqlError::Sqlite {
                    statement: "CREATE PERFETTO INDEX",
                    message: format!("table {table} has no column named {c}"),
                });
            }
        }
        if taken || !indexes.add(name, table) {
            return Err(PerfettoSqlError::Sqlite {
                statement: "CREATE PERFETTO INDEX",
                message: format!("index {name} already exists"),
            });
        }
        return Ok(());
    }
    if replace {
        indexes.remove(name);
        conn.execute_batch(&format!("DROP INDEX IF EXISTS {}", quote(name)))
            .map_err(sqlite)?;
    }
    conn.execute_batch(&format!(
        "CREATE INDEX {} ON {}({})",
        quote(name),
        quote(table),
        cols.join(", ")
    ))
    .map_err(sqlite)
}

/// `DROP PERFETTO INDEX name ON table`.
pub(crate) fn drop_index(
    conn: &Connection,
    indexes: &Indexes,
    name: &str,
) -> Result<(), PerfettoSqlError> {
    if indexes.remove(name) {
        return Ok(());
    }
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
        // search of t (stored as columns: the id handed to its virtual
        // table, `e` or `i`) per slice, never a scan of t per slice.
        let steps = plan(&tp, "SELECT * FROM slice AS s CROSS JOIN t ON t.id = s.id");
        assert!(
            steps
                .iter()
                .any(|s| s.starts_with("SCAN t VIRTUAL TABLE INDEX")
                    && (s.ends_with(":e") || s.ends_with(":i") || s.ends_with(":="))),
            "{steps:?}"
        );
        // The row store (a column of mixed kinds) searches its id index.
        tp.query(
            "CREATE PERFETTO TABLE w AS SELECT id, 'a' AS x FROM slice \
             UNION ALL SELECT 0, 1 UNION ALL SELECT 1, 'b'",
        )
        .expect("w");
        let steps = plan(&tp, "SELECT * FROM slice AS s CROSS JOIN w ON w.id = s.id");
        assert!(
            steps
                .iter()
                .any(|s| s.starts_with("SEARCH w USING") && s.contains("w__zt_id")),
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
