//! How each public table is read (by the Parquet export and by the union
//! of several traces): straight from the columnar storage
//! when it is a virtual table or a view that only picks and renames a
//! table's columns (row i of the view is row i of the table, so its plain
//! columns are the stored ones and only its computed columns go through
//! SQL), through SQL for any other view, and not at all for a view that is
//! only another name of an exported one (`slices` for `slice`, `raw` for
//! `ftrace_event`), which would double a dataset for nothing.

use std::sync::Arc;

use super::Engine;
use super::public_schema::PublicTable;
use crate::column_store::table::Table;
use crate::error::Error;

/// Where one exported column's values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnSource {
    /// The stored column at this index of the table.
    Stored(usize),
    /// Computed by the view's SQL.
    Computed,
}

/// How one table is read.
pub(crate) enum Source {
    /// The table's storage, row for row; computed columns through SQL.
    Columns {
        /// The table read.
        table: Arc<Table>,
        /// Per exported column.
        columns: Vec<ColumnSource>,
    },
    /// Every column through SQL.
    Sql,
    /// `SELECT * FROM` this other table or view: left out.
    Alias(String),
}

/// Words that make a view more than a projection of one table.
const NOT_A_PROJECTION: &[&str] = &[
    " WHERE ",
    " JOIN ",
    " GROUP ",
    " ORDER ",
    " LIMIT ",
    " UNION ",
    " OVER",
    "(SELECT",
    " WITH ",
    " HAVING ",
    " DISTINCT ",
    " EXCEPT ",
    " INTERSECT ",
];

/// How `name`'s rows are best read.
pub(crate) fn plan(engine: &Engine, name: &str) -> Result<Source, Error> {
    if let Some(table) = engine.table(name) {
        let columns = (0..table.columns.len()).map(ColumnSource::Stored).collect();
        return Ok(Source::Columns { table, columns });
    }
    let Some(sql) = engine.view_sql(name)? else {
        return Ok(Source::Sql);
    };
    let text = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    let upper = text.to_ascii_uppercase();
    let Some(at) = upper.find(" AS SELECT ") else {
        return Ok(Source::Sql);
    };
    let body = &text[at + " AS SELECT ".len()..];
    let body_upper = &upper[at + " AS SELECT ".len()..];
    let Some(from) = body_upper.rfind(" FROM ") else {
        return Ok(Source::Sql);
    };
    let source = body[from + " FROM ".len()..]
        .trim_end_matches(';')
        .trim()
        .trim_matches('"');
    if source.contains([' ', ',']) || NOT_A_PROJECTION.iter().any(|w| body_upper.contains(w)) {
        return Ok(Source::Sql);
    }
    if body[..from].trim() == "*" && engine.table(source).is_none() {
        return Ok(Source::Alias(source.to_owned()));
    }
    // A projection of a table, or of a view that projects one (SQLite's
    // column metadata names the table underneath).
    let table = match engine.table(source) {
        Some(t) => t,
        None => match plan(engine, source)? {
            Source::Columns { table, .. } => table,
            _ => return Ok(Source::Sql),
        },
    };
    let mut columns = Vec::new();
    for (_, origin) in engine.column_origins(name)? {
        let stored = origin
            .filter(|(t, _)| t == table.name)
            .and_then(|(_, c)| table.columns.iter().position(|tc| tc.name == c));
        columns.push(stored.map_or(ColumnSource::Computed, ColumnSource::Stored));
    }
    Ok(Source::Columns { table, columns })
}

/// The `SELECT` of `table`'s columns: all of them, or with `only` (one
/// source per column) those computed by SQL.
pub(crate) fn select(table: &PublicTable, only: Option<&[ColumnSource]>) -> String {
    let cols: Vec<String> = table
        .columns
        .iter()
        .enumerate()
        .filter(|(i, _)| only.is_none_or(|o| o.get(*i) == Some(&ColumnSource::Computed)))
        .map(|(_, (c, _))| format!("\"{}\"", c.replace('"', "\"\"")))
        .collect();
    format!(
        "SELECT {} FROM \"{}\"",
        cols.join(", "),
        table.name.replace('"', "\"\"")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TraceProcessor;

    fn kind(tp: &TraceProcessor, name: &str) -> String {
        match plan(&tp.engine, name).unwrap() {
            Source::Columns { columns, .. } => {
                let computed = columns
                    .iter()
                    .filter(|c| **c == ColumnSource::Computed)
                    .count();
                format!("columns, {computed} computed")
            }
            Source::Sql => "sql".into(),
            Source::Alias(of) => format!("alias of {of}"),
        }
    }

    #[test]
    fn views_are_read_from_storage_where_they_only_project() {
        let tp = TraceProcessor::from_bytes(&[]).unwrap();
        assert_eq!(kind(&tp, "__intrinsic_slice"), "columns, 0 computed");
        // Renamed columns (cat, slice_id) are stored ones.
        assert_eq!(kind(&tp, "slice"), "columns, 0 computed");
        assert_eq!(kind(&tp, "args"), "columns, 1 computed");
        assert_eq!(kind(&tp, "sched"), "columns, 1 computed");
        // A projection renaming a column (ucpu AS cpu).
        assert_eq!(kind(&tp, "sched_slice"), "columns, 0 computed");
        assert_eq!(kind(&tp, "slices"), "alias of slice");
        assert_eq!(kind(&tp, "raw"), "alias of ftrace_event");
        // A filter, a window or a join: SQL.
        assert_eq!(kind(&tp, "thread_track"), "sql");
        assert_eq!(kind(&tp, "machine"), "sql");
        assert_eq!(kind(&tp, "perf_sample"), "sql");
    }
}
