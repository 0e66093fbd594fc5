//! The public tables (what the Parquet export writes and the union of
//! several traces shows) and each column's type, fixed by the SQL schema
//! alone (never by the values of one trace), so every trace has the same
//! schema: `BIGINT` an integer, `DOUBLE` a double, `TEXT` text, and a
//! view's computed column, which SQLite declares without a type, the type
//! [`COMPUTED`] gives it.

use super::Engine;
use crate::error::Error;

/// The type of each view column SQLite declares without one (an
/// expression, a function's result); a view that adds such a column must
/// add it here, or the export refuses it (a unit test walks every view).
const COMPUTED: &[(&str, &str, ColumnType)] = &[
    ("frame_slice", "layer_name", ColumnType::Text),
    ("frame_slice", "frame_number", ColumnType::Int),
    ("frame_slice", "queue_to_acquire_time", ColumnType::Int),
    ("frame_slice", "acquire_to_latch_time", ColumnType::Int),
    ("frame_slice", "latch_to_present_time", ColumnType::Int),
    ("gpu_slice", "context_id", ColumnType::Int),
    ("gpu_slice", "render_target", ColumnType::Int),
    ("gpu_slice", "render_target_name", ColumnType::Text),
    ("gpu_slice", "render_pass", ColumnType::Int),
    ("gpu_slice", "render_pass_name", ColumnType::Text),
    ("gpu_slice", "command_buffer", ColumnType::Int),
    ("gpu_slice", "command_buffer_name", ColumnType::Text),
    ("gpu_slice", "frame_id", ColumnType::Int),
    ("gpu_slice", "submission_id", ColumnType::Int),
    ("gpu_slice", "hw_queue_id", ColumnType::Int),
    ("gpu_slice", "upid", ColumnType::Int),
    ("gpu_slice", "render_subpasses", ColumnType::Text),
    ("gpu_slice", "render_stage_category", ColumnType::Int),
    (
        "expected_frame_timeline_slice",
        "display_frame_token",
        ColumnType::Int,
    ),
    (
        "expected_frame_timeline_slice",
        "surface_frame_token",
        ColumnType::Int,
    ),
    (
        "expected_frame_timeline_slice",
        "layer_name",
        ColumnType::Text,
    ),
    (
        "actual_frame_timeline_slice",
        "display_frame_token",
        ColumnType::Int,
    ),
    (
        "actual_frame_timeline_slice",
        "surface_frame_token",
        ColumnType::Int,
    ),
    (
        "actual_frame_timeline_slice",
        "layer_name",
        ColumnType::Text,
    ),
    (
        "actual_frame_timeline_slice",
        "present_type",
        ColumnType::Text,
    ),
    (
        "actual_frame_timeline_slice",
        "on_time_finish",
        ColumnType::Int,
    ),
    (
        "actual_frame_timeline_slice",
        "gpu_composition",
        ColumnType::Int,
    ),
    ("actual_frame_timeline_slice", "jank_type", ColumnType::Text),
    (
        "actual_frame_timeline_slice",
        "jank_severity_type",
        ColumnType::Text,
    ),
    (
        "actual_frame_timeline_slice",
        "prediction_type",
        ColumnType::Text,
    ),
    ("actual_frame_timeline_slice", "jank_tag", ColumnType::Text),
    (
        "actual_frame_timeline_slice",
        "jank_tag_experimental",
        ColumnType::Text,
    ),
    (
        "actual_frame_timeline_slice",
        "jank_score",
        ColumnType::Real,
    ),
    (
        "actual_frame_timeline_slice",
        "latched_unsignaled_count",
        ColumnType::Int,
    ),
    (
        "actual_frame_timeline_slice",
        "addressable_unsignaled_latch_count",
        ColumnType::Int,
    ),
    (
        "actual_frame_timeline_slice",
        "latched_fence_state",
        ColumnType::Text,
    ),
    ("args", "display_value", ColumnType::Text),
    ("counter_track", "description", ColumnType::Text),
    ("cpu_counter_track", "description", ColumnType::Text),
    (
        "cpu_profile_stack_sample",
        "process_priority",
        ColumnType::Int,
    ),
    ("gpu_counter_track", "description", ColumnType::Text),
    ("gpu_counter_track", "gpu_id", ColumnType::Int),
    ("gpu_counter_track", "ugpu", ColumnType::Int),
    ("gpu_track", "context_id", ColumnType::Int),
    ("gpu_track", "description", ColumnType::Text),
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

/// A public column's type.
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
    fn from_declared(declared: &str) -> Option<ColumnType> {
        match declared.to_ascii_uppercase().as_str() {
            "BIGINT" | "INT" | "INTEGER" | "UINT" | "BOOL" => Some(ColumnType::Int),
            "DOUBLE" | "REAL" | "FLOAT" => Some(ColumnType::Real),
            "TEXT" | "STRING" => Some(ColumnType::Text),
            _ => None,
        }
    }
}

/// One public table or view: its name and typed columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicTable {
    /// The table's or view's SQL name.
    pub name: String,
    /// Its columns in SQL order, with their types.
    pub columns: Vec<(String, ColumnType)>,
    /// Per column, whether it is declared `NOT NULL` (so the Parquet
    /// field is required); shorter than `columns` means nullable.
    pub not_null: Vec<bool>,
}

/// Every public table and view (whose names do not start with `__`), and
/// the internal ones too when `internal`.
pub fn public_tables(engine: &Engine, internal: bool) -> Result<Vec<PublicTable>, Error> {
    let mut out = Vec::new();
    for name in engine.table_names()? {
        if name.starts_with("sqlite_") || (!internal && name.starts_with("__")) {
            continue;
        }
        let Some(cols) = engine.columns(&name)? else {
            continue;
        };
        let mut columns = Vec::with_capacity(cols.len());
        let not_null = cols.iter().map(|c| c.not_null).collect();
        for c in cols {
            let ty = ColumnType::from_declared(&c.sql_type)
                .or_else(|| {
                    COMPUTED
                        .iter()
                        .find(|(t, col, _)| *t == name && *col == c.name)
                        .map(|(_, _, ty)| *ty)
                })
                .ok_or_else(|| {
                    Error::Schema(format!(
                        "{name}.{}: no type is known for this column (declared {:?})",
                        c.name, c.sql_type
                    ))
                })?;
            columns.push((c.name, ty));
        }
        out.push(PublicTable {
            name,
            columns,
            not_null,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TraceProcessor;

    #[test]
    fn every_table_and_view_column_has_a_type() {
        let tp = TraceProcessor::from_bytes(&[]).unwrap();
        let tables = public_tables(&tp.engine, true).unwrap();
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
        let tables = public_tables(&tp.engine, false).unwrap();
        assert!(tables.iter().all(|t| !t.name.starts_with("__")));
        assert!(tables.iter().any(|t| t.name == "thread"));
    }
}
