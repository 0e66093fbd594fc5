//! The prelude's public views whose importers zerotrace does not have
//! (SurfaceFlinger and WindowManager, memory snapshots, ...). Each exists
//! with upstream's name and columns, in upstream's order, and no rows, as
//! upstream's are on a trace without that data, so that a query or module
//! that names one runs instead of failing. A view that gains an importer moves out of
//! this list and becomes a projection of its table.

use rusqlite::Connection;

/// (view, its columns as (name, SQLite type)).
type EmptyView = (&'static str, &'static [(&'static str, &'static str)]);

/// The views, by name.
const VIEWS: &[EmptyView] = &[
    (
        "filedescriptor",
        &[
            ("id", "INTEGER"),
            ("ufd", "INTEGER"),
            ("fd", "INTEGER"),
            ("ts", "INTEGER"),
            ("upid", "INTEGER"),
            ("path", "TEXT"),
        ],
    ),
    (
        "process_memory_mappings",
        &[
            ("id", "INTEGER"),
            ("upid", "INTEGER"),
            ("ts", "INTEGER"),
            ("path", "TEXT"),
            ("aggregate_count", "INTEGER"),
            ("is_deleted", "INTEGER"),
            ("size_kb", "INTEGER"),
            ("rss_kb", "INTEGER"),
            ("anonymous_kb", "INTEGER"),
            ("swap_kb", "INTEGER"),
            ("shared_clean_kb", "INTEGER"),
            ("shared_dirty_kb", "INTEGER"),
            ("private_clean_kb", "INTEGER"),
            ("private_dirty_kb", "INTEGER"),
            ("locked_kb", "INTEGER"),
            ("pss_kb", "INTEGER"),
            ("pss_dirty_kb", "INTEGER"),
            ("swap_pss_kb", "INTEGER"),
        ],
    ),
    (
        "spurious_sched_wakeup",
        &[
            ("id", "INTEGER"),
            ("ts", "INTEGER"),
            ("thread_state_id", "INTEGER"),
            ("irq_context", "INTEGER"),
            ("utid", "INTEGER"),
            ("waker_utid", "INTEGER"),
        ],
    ),
    ("trace_metrics", &[("name", "TEXT")]),
];

/// The statement that creates `view` with `columns` and no rows.
fn statement(view: &str, columns: &[(&str, &str)]) -> String {
    let cols: Vec<String> = columns
        .iter()
        .map(|(name, ty)| format!("CAST(NULL AS {ty}) AS \"{name}\""))
        .collect();
    format!(
        "CREATE VIEW IF NOT EXISTS \"{view}\" AS SELECT {} WHERE 0;",
        cols.join(", ")
    )
}

/// Creates every view of the list that no table or view already has the
/// name of.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let mut sql = String::new();
    for (view, columns) in VIEWS {
        sql.push_str(&statement(view, columns));
    }
    conn.execute_batch(&sql)
}

#[cfg(test)]
mod tests {
    use super::VIEWS;
    use crate::storage::Storage;
    use crate::{TraceProcessor, Value};

    #[test]
    fn each_view_has_upstreams_columns_and_no_rows() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        for (view, columns) in VIEWS {
            let r = tp
                .query(&format!("SELECT * FROM {view}"))
                .expect("view exists");
            let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
            assert_eq!(r.columns, names, "{view}");
            assert!(r.rows.is_empty(), "{view}");
        }
        let r = tp
            .query("SELECT COUNT(*) FROM instruments_sample JOIN gpu_slice USING (id)")
            .expect("query");
        assert_eq!(r.rows, vec![vec![Value::Int(0)]]);
    }
}
