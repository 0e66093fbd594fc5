//! The trace's time bounds as Perfetto's prelude offers them without an
//! include: the `trace_bounds` view (`start_ts`, `end_ts`, read from the
//! one-row `_trace_bounds` table) and the functions `trace_start()`,
//! `trace_end()` and `trace_dur()`. The bounds are computed once, when the
//! engine is built, over the tables upstream reads them from: the earliest
//! `ts` and the latest `ts` (plus the `dur` of the tables that have one,
//! negative durations counted as 0); (0, 0) for a trace with none of those
//! rows, and an end one past the start when both are the same instant.

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;

use crate::column_store::table::Table;

/// The tables whose rows bound the trace: (table, its time column, its
/// duration column when its rows last).
const SOURCES: &[(&str, &str, Option<&str>)] = &[
    ("__intrinsic_ftrace_event", "ts", None),
    ("__intrinsic_sched_slice", "ts", Some("dur")),
    ("__intrinsic_counter", "ts", None),
    ("__intrinsic_slice", "ts", Some("dur")),
    ("__intrinsic_heap_profile_allocation", "ts", None),
    ("__intrinsic_profiler_smaps", "ts", None),
    ("__intrinsic_thread_state", "ts", Some("dur")),
    ("__intrinsic_android_logs", "ts", None),
    ("__intrinsic_heap_graph_object", "graph_sample_ts", None),
    ("__intrinsic_heap_graph", "ts", None),
    ("__intrinsic_state", "ts", Some("dur")),
    ("__intrinsic_profiler_sample", "ts", None),
];

/// The trace's first and last instant, as `trace_bounds` shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The earliest timestamp of any event.
    pub start_ts: i64,
    /// The latest timestamp, or end of a slice, of any event.
    pub end_ts: i64,
}

/// The bounds of the trace whose tables are `tables`.
pub fn compute(tables: &[Arc<Table>]) -> Bounds {
    let mut start = i64::MAX;
    let mut end = 0i64;
    for (name, ts_name, dur_name) in SOURCES {
        let Some(t) = tables.iter().find(|t| t.name == *name) else {
            continue;
        };
        let Some(ts_col) = t.columns.iter().find(|c| c.name == *ts_name) else {
            continue;
        };
        let dur_col = dur_name.and_then(|d| t.columns.iter().find(|c| c.name == d));
        for row in 0..t.len {
            let Some(ts) = ts_col.int_at(row) else {
                continue;
            };
            let dur = dur_col.and_then(|c| c.int_at(row)).unwrap_or(0).max(0);
            start = start.min(ts);
            end = end.max(ts.saturating_add(dur));
        }
    }
    if start == i64::MAX {
        return Bounds {
            start_ts: 0,
            end_ts: 0,
        };
    }
    if start == end {
        end = end.saturating_add(1);
    }
    Bounds {
        start_ts: start,
        end_ts: end,
    }
}

/// Creates `_trace_bounds`, `trace_bounds` and the three functions.
pub fn register(conn: &Connection, bounds: Bounds) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "CREATE TABLE _trace_bounds(start_ts INTEGER, end_ts INTEGER);
         INSERT INTO _trace_bounds VALUES ({}, {});
         CREATE VIEW trace_bounds AS SELECT start_ts, end_ts FROM _trace_bounds;",
        bounds.start_ts, bounds.end_ts
    ))?;
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("trace_start", 0, flags, move |_| Ok(bounds.start_ts))?;
    conn.create_scalar_function("trace_end", 0, flags, move |_| Ok(bounds.end_ts))?;
    conn.create_scalar_function("trace_dur", 0, flags, move |_| {
        Ok(bounds.end_ts.saturating_sub(bounds.start_ts))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::tables::core::{CounterRow, SliceRow};
    use crate::{TraceProcessor, Value};

    fn answer(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect("query").rows
    }

    #[test]
    fn an_empty_trace_is_bounded_by_zero() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        assert_eq!(
            answer(
                &tp,
                "SELECT start_ts, end_ts, trace_start(), trace_end(), trace_dur() FROM trace_bounds"
            ),
            vec![vec![Value::Int(0); 5]]
        );
    }

    #[test]
    fn slices_end_and_counters_instants_bound_the_trace() {
        let mut s = Storage::default();
        s.slices.push(SliceRow {
            ts: 100,
            dur: 50,
            ..Default::default()
        });
        // An unfinished slice counts from its start only.
        s.slices.push(SliceRow {
            ts: 120,
            dur: -1,
            ..Default::default()
        });
        s.counters.push(CounterRow {
            ts: 40,
            ..Default::default()
        });
        let tp = TraceProcessor::from_storage(s).expect("engine");
        assert_eq!(
            answer(
                &tp,
                "SELECT start_ts, end_ts, trace_start(), trace_end(), trace_dur() FROM trace_bounds"
            ),
            vec![vec![
                Value::Int(40),
                Value::Int(150),
                Value::Int(40),
                Value::Int(150),
                Value::Int(110)
            ]]
        );
    }

    #[test]
    fn one_instant_gets_an_end_one_past_it() {
        let mut s = Storage::default();
        s.counters.push(CounterRow {
            ts: 7,
            ..Default::default()
        });
        let tp = TraceProcessor::from_storage(s).expect("engine");
        assert_eq!(
            answer(&tp, "SELECT start_ts, end_ts FROM trace_bounds"),
            vec![vec![Value::Int(7), Value::Int(8)]]
        );
    }
}
