//! The standard queries of issue 49, in Perfetto's SQL against our tables:
//! each timed (best of a few runs) and its `EXPLAIN QUERY PLAN` summarised
//! as what a table read uses: our virtual tables' pushdown (the `idxStr`
//! of `best_index`: `i` id, `=` `<` `l` `>` `g` on the sorted column,
//! `s` string equality and `*` GLOB through a column's value order, `a`
//! and `d` an order consumed through it),
//! a full scan, or a sort SQLite does itself. A query over a table the
//! crate does not have yet is reported as not available.

use std::time::{Duration, Instant};

use zerotrace_trace_processor::{TraceProcessor, Value};

/// One standard query.
pub struct Query {
    /// What it answers.
    pub label: &'static str,
    /// Its SQL.
    pub sql: &'static str,
}

/// The list: top slices by duration; CPU time per thread; slices per name
/// matched by GLOB; the maximum of each counter track; samples per
/// callsite for a flame graph.
pub const QUERIES: [Query; 5] = [
    Query {
        label: "top slices by duration",
        sql: "SELECT id, name, dur FROM slice ORDER BY dur DESC LIMIT 10",
    },
    Query {
        label: "CPU time per thread",
        sql: "SELECT utid, thread.name, SUM(sched_slice.dur) AS cpu_ns \
              FROM sched_slice JOIN thread USING (utid) \
              GROUP BY utid ORDER BY cpu_ns DESC LIMIT 10",
    },
    Query {
        label: "slices per name by GLOB",
        sql: "SELECT name, COUNT(*) AS n FROM slice WHERE name GLOB 'r*' GROUP BY name",
    },
    Query {
        label: "maximum of each counter track",
        sql: "SELECT track_id, MAX(value) AS max_value FROM counter GROUP BY track_id",
    },
    Query {
        label: "samples per callsite (flame graph)",
        sql: "SELECT callsite_id, COUNT(*) AS samples FROM perf_sample \
              GROUP BY callsite_id ORDER BY samples DESC LIMIT 10",
    },
];

/// What one query did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It ran: best time, rows returned, the plan summarised.
    Ran {
        /// The first run (it builds any index the query's plan uses).
        first: Duration,
        /// The best of the runs.
        best: Duration,
        /// Rows of its result.
        rows: usize,
        /// The plan, summarised ([`summarise_plan`]).
        plan: String,
    },
    /// It names a table (or column) the crate does not have.
    NotAvailable(String),
}

/// Runs `q` `runs` times (at least once) and explains it.
pub fn run(tp: &TraceProcessor, q: &Query, runs: u32) -> Outcome {
    let plan = match tp.query(&format!("EXPLAIN QUERY PLAN {}", q.sql)) {
        Ok(r) => {
            let details: Vec<String> = r
                .rows
                .iter()
                .filter_map(|row| match row.last() {
                    Some(Value::Text(t)) => Some(t.clone()),
                    _ => None,
                })
                .collect();
            summarise_plan(&details)
        }
        Err(e) => return Outcome::NotAvailable(e.to_string()),
    };
    let mut best = Duration::MAX;
    let mut first = None;
    let mut rows = 0;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        match tp.query(q.sql) {
            Ok(r) => rows = r.rows.len(),
            Err(e) => return Outcome::NotAvailable(e.to_string()),
        }
        let took = t.elapsed();
        first.get_or_insert(took);
        best = best.min(took);
    }
    let first = first.unwrap_or(best);
    Outcome::Ran {
        first,
        best,
        rows,
        plan,
    }
}

/// An `EXPLAIN QUERY PLAN`'s detail lines in short: each virtual table
/// read as `full scan of T` or `pushdown CODES on T`, SQLite's own sorts
/// and temporary indexes as they are, joined by "; ".
pub fn summarise_plan(details: &[String]) -> String {
    let mut out = Vec::new();
    for d in details {
        let d = d.trim();
        if let Some(rest) = d
            .strip_prefix("SCAN ")
            .or_else(|| d.strip_prefix("SEARCH "))
        {
            let table = rest.split_whitespace().next().unwrap_or("?");
            let table = table.strip_prefix("__intrinsic_").unwrap_or(table);
            if let Some((_, idx)) = rest.split_once("VIRTUAL TABLE INDEX ") {
                let codes = idx.split_once(':').map_or("", |(_, c)| c).trim();
                if codes.is_empty() {
                    out.push(format!("full scan of {table}"));
                } else {
                    out.push(format!("pushdown `{codes}` on {table}"));
                }
            } else {
                out.push(d.to_string());
            }
        } else {
            out.push(d.to_string());
        }
    }
    out.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_summarised_per_table_read() {
        let d = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            summarise_plan(&d(&[
                "SCAN __intrinsic_slice VIRTUAL TABLE INDEX 0:",
                "USE TEMP B-TREE FOR ORDER BY"
            ])),
            "full scan of slice; USE TEMP B-TREE FOR ORDER BY"
        );
        assert_eq!(
            summarise_plan(&d(&["SCAN __intrinsic_thread VIRTUAL TABLE INDEX 0:i"])),
            "pushdown `i` on thread"
        );
        assert_eq!(
            summarise_plan(&d(&["SCAN CONSTANT ROW"])),
            "SCAN CONSTANT ROW"
        );
    }

    #[test]
    fn the_queries_run_on_an_empty_trace_or_say_what_is_missing() {
        let tp = TraceProcessor::from_bytes(&[]).unwrap();
        for q in &QUERIES {
            match run(&tp, q, 1) {
                Outcome::Ran { plan, .. } => assert!(!plan.is_empty(), "{}", q.label),
                Outcome::NotAvailable(why) => assert!(why.contains("no such"), "{why}"),
            }
        }
        // The slice query runs on every build of the crate.
        assert!(matches!(
            run(&tp, &QUERIES[0], 1),
            Outcome::Ran { rows: 0, .. }
        ));
    }
}
