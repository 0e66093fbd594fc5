//! Which tables a Parquet export writes and each column's Arrow type, fixed
//! by the SQL schema alone (never by the values of one trace), so every
//! trace of a dataset has the same schema: `BIGINT` is `Int64`, `DOUBLE` is
//! `Float64`, `TEXT` is `Utf8`, and a view's computed column, which SQLite
//! declares without a type, takes its type from [`COMPUTED`].

use arrow_schema::DataType;

use super::ExportError;
use crate::TraceProcessor;

/// The type of each view column SQLite declares without one (an
/// expression, a function's result); a view that adds such a column must
/// add it here, or the export refuses it (a unit test walks every view).
const COMPUTED: &[(&str, &str, ColumnType)] = &[
    ("args", "display_value", ColumnType::Text),
    ("counter_track", "description", ColumnType::Text),
    (
        "cpu_profile_stack_sample",
        "process_priority",
        ColumnType::Int,
    ),
    ("machine", "label_index", ColumnType::Int),
    ("perf_counter_track", "cpu", ColumnType::Int),
    ("perf_counter_track", "description", ColumnType::Text),
    ("perf_counter_track", "is_timebase", ColumnType::Int),
    ("perf_counter_track", "perf_session_id", ColumnType::Int),
    ("perf_sample", "cpu_mode", ColumnType::Text),
    ("process_counter_track", "description", ColumnType::Text),
    ("sched", "ts_end", ColumnType::Int),
    ("stack_sample_counter_track", "cpu", ColumnType::Int),
    (
        "stack_sample_counter_track",
        "description",
        ColumnType::Text,
    ),
    ("stack_sample_counter_track", "is_timebase", ColumnType::Int),
    ("stack_sample_counter_track", "session_id", ColumnType::Int),
    ("thread_counter_track", "description", ColumnType::Text),
];

/// A column's type in the export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// 64-bit signed integers (`BIGINT`).
    Int,
    /// Doubles (`DOUBLE`).
    Real,
    /// UTF-8 text (`TEXT`, `STRING`).
    Text,
}

impl ColumnType {
    /// The Arrow type the column is written as.
    pub fn arrow(self) -> DataType {
        match self {
            ColumnType::Int => DataType::Int64,
            ColumnType::Real => DataType::Float64,
            ColumnType::Text => DataType::Utf8,
        }
    }

    fn from_declared(declared: &str) -> Option<ColumnType> {
        match declared.to_ascii_uppercase().as_str() {
            "BIGINT" | "INT" | "INTEGER" | "UINT" | "BOOL" => Some(ColumnType::Int),
            "DOUBLE" | "REAL" | "FLOAT" => Some(ColumnType::Real),
            "TEXT" | "STRING" => Some(ColumnType::Text),
            _ => None,
        }
    }
}

/// One exported table: its name and typed columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedTable {
    /// The table's or view's SQL name (the dataset's directory name).
    pub name: String,
    /// Its columns in SQL order, with their types.
    pub columns: Vec<(String, ColumnType)>,
}

/// The tables an export writes: every public table and view (whose names
/// do not start with `__`), and the internal ones too when `internal`.
pub fn exported_tables(
    tp: &TraceProcessor,
    internal: bool,
) -> Result<Vec<ExportedTable>, ExportError> {
    let mut out = Vec::new();
    for name in tp.table_names()? {
        if name.starts_with("sqlite_") || (!internal && name.starts_with("__")) {
            continue;
        }
        let Some(cols) = tp.columns(&name)? else {
            continue;
        };
        let mut columns = Vec::with_capacity(cols.len());
        for c in cols {
            let ty = ColumnType::from_declared(&c.sql_type)
                .or_else(|| {
                    COMPUTED
                        .iter()
                        .find(|(t, col, _)| *t == name && *col == c.name)
                        .map(|(_, _, ty)| *ty)
                })
                .ok_or_else(|| ExportError::UntypedColumn {
                    table: name.clone(),
                    column: c.name.clone(),
                    declared: c.sql_type.clone(),
                })?;
            columns.push((c.name, ty));
        }
        out.push(ExportedTable { name, columns });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_and_view_column_has_a_type() {
        let tp = TraceProcessor::from_bytes(&[]).unwrap();
        let tables = exported_tables(&tp, true).unwrap();
        assert!(tables.iter().any(|t| t.name == "slice"));
        assert!(tables.iter().any(|t| t.name == "__intrinsic_slice"));
        let args = tables.iter().find(|t| t.name == "args").unwrap();
        assert!(
            args.columns
                .contains(&("display_value".to_owned(), ColumnType::Text))
        );
        // Every COMPUTED entry names a column that exists and is untyped,
        // so the list never keeps a stale entry.
        for (table, column, _) in COMPUTED {
            let cols = tp.columns(table).unwrap().unwrap();
            let c = cols.iter().find(|c| c.name == *column).unwrap();
            assert_eq!(c.sql_type, "", "{table}.{column} is typed now");
        }
    }

    #[test]
    fn public_export_leaves_internal_tables_out() {
        let tp = TraceProcessor::from_bytes(&[]).unwrap();
        let tables = exported_tables(&tp, false).unwrap();
        assert!(tables.iter().all(|t| !t.name.starts_with("__")));
        assert!(tables.iter().any(|t| t.name == "thread"));
    }
}
