//! `__intrinsic_trace_diagnostics`, the table of Perfetto's prelude where
//! upstream records problems it finds in a trace's recording config (one
//! row per problem: `key`, `title`, `description`, `remediation`,
//! `confidence` in [0, 1], `trace_id`). We do not run those config checks
//! yet, so the table exists with upstream's columns and no rows, as
//! upstream's is on a trace whose config it finds nothing wrong with.

use rusqlite::Connection;

/// Creates the (empty) table.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE __intrinsic_trace_diagnostics(
           id INTEGER PRIMARY KEY,
           key TEXT NOT NULL,
           title TEXT NOT NULL,
           description TEXT NOT NULL,
           remediation TEXT NOT NULL,
           confidence DOUBLE NOT NULL,
           trace_id INTEGER
         );",
    )
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::{TraceProcessor, Value};

    #[test]
    fn the_table_has_upstreams_columns_and_no_rows() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        let r = tp
            .query("SELECT * FROM __intrinsic_trace_diagnostics")
            .expect("query");
        assert_eq!(
            r.columns,
            [
                "id",
                "key",
                "title",
                "description",
                "remediation",
                "confidence",
                "trace_id"
            ]
        );
        assert!(r.rows.is_empty());
        let count = tp
            .query("SELECT COUNT(*) FROM __intrinsic_trace_diagnostics")
            .expect("query");
        assert_eq!(count.rows, vec![vec![Value::Int(0)]]);
    }
}
