//! The SQL engine: SQLite with every table registered as a virtual table
//! over the columnar storage, the public views, and the scalar functions;
//! a query runs every statement of its text (PerfettoSQL's carried out by
//! `perfetto_sql/`) and answers with the last statement's rows, as
//! `trace_processor_shell` prints them.

mod aggregate;
mod annotated_callstack;
pub mod build;
pub mod build_profiling;
mod byte_functions;
pub mod catalog;
mod clock_functions;
mod counter_intervals;
mod demangle;
mod distinct_count;
mod file_access;
mod flamegraph;
mod functions;
mod graphs;
mod heap_graph;
mod hidden_arguments;
mod immediate_dominators;
mod intervals;
mod math_functions;
mod metrics;
mod perfetto_sql;
mod prelude;
pub mod public_schema;
pub(crate) mod read_plan;
mod sched_summary;
#[cfg(test)]
mod schema_agreement_tests;
mod slice_tree;
mod slices;
mod span_join;
pub(crate) mod streaming;
mod string_functions;
mod strip_hex;
mod symbolize;
mod thread_slice_time;
mod to_ftrace;
mod trace_bounds;
pub(crate) mod union;
mod views;
mod views_graphics;
mod views_sched;
mod vtab;
mod vtab_cost;
mod winscope_args;
mod winscope_hierarchy;

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::ValueRef;
use rusqlite::vtab::eponymous_only_module;

use crate::column_store::table::Table;
use crate::error::Error;
use file_access::FileAccess;
use vtab::ColumnarTab;

/// One value of a query's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A double.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// The rows a query answered with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryResult {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<Value>>,
}

/// A column's name, and the table and column it reads when it is a plain
/// column reference.
pub(crate) type ColumnOrigin = (String, Option<(String, String)>);

/// SQLite's refusal to prepare a statement of `whole`, its offset counted
/// from the start of `whole`.
pub(crate) fn prepare_error(e: rusqlite::Error, whole: &str) -> Error {
    Error::sql_in(e, whole)
}

/// An SQLite connection over one trace's tables.
pub struct Engine {
    conn: Connection,
    /// The virtual tables' names (the views are in `sqlite_master`).
    tables: Vec<&'static str>,
    /// The virtual tables' storage, for readers that take columns as
    /// they are (the Parquet export).
    storage: Vec<Arc<Table>>,
    /// Whether SQL may read and write files (off unless asked).
    file_access: FileAccess,
    /// PerfettoSQL's statements, macros and modules (`perfetto_sql/`).
    perfetto: perfetto_sql::PerfettoSql,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// Registers the tables, the functions and the views.
    pub fn new(tables: Vec<Table>) -> Result<Self, Error> {
        let conn = Connection::open_in_memory()?;
        // Sorts (GROUP BY, ORDER BY, window partitions, DISTINCT) too big
        // for SQLite's cache spill into temporary storage: kept in memory,
        // as the database itself is, instead of files SQLite writes and
        // reads back (a module's include over every slice sorted its rows
        // through the file system).
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        let mut args = None;
        let mut slices = None;
        let names = tables.iter().map(|t| t.name).collect();
        let (mut callsites, mut frames, mut mappings) = (None, None, None);
        let mut all = Vec::new();
        for t in tables {
            let t = Arc::new(t);
            all.push(t.clone());
            match t.name {
                "__intrinsic_args" => args = Some(t.clone()),
                "__intrinsic_slice" => slices = Some(t.clone()),
                "__intrinsic_stack_profile_callsite" => callsites = Some(t.clone()),
                "__intrinsic_stack_profile_frame" => frames = Some(t.clone()),
                "__intrinsic_stack_profile_mapping" => mappings = Some(t.clone()),
                _ => {}
            }
            conn.create_module(
                t.name,
                eponymous_only_module::<ColumnarTab>(),
                Some(t.clone()),
            )?;
        }
        aggregate::register(&conn)?;
        prelude::register(&conn, &all)?;
        winscope_args::register(&conn, &all)?;
        winscope_hierarchy::register(&conn, &all)?;
        if let Some(args) = args {
            functions::register(&conn, args)?;
        }
        if let (Some(callsites), Some(frames), Some(mappings)) = (callsites, frames, mappings) {
            annotated_callstack::register(
                &conn,
                annotated_callstack::StackTables {
                    callsites,
                    frames,
                    mappings,
                },
            )?;
        }
        demangle::register(&conn)?;
        flamegraph::register(&conn)?;
        to_ftrace::register(&conn, &all)?;
        string_functions::register(&conn)?;
        strip_hex::register(&conn)?;
        if let Some(slices) = slices {
            self::slices::register(&conn, slices.clone())?;
            slice_tree::register(&conn, slices)?;
        }
        math_functions::register(&conn)?;
        intervals::register(&conn)?;
        counter_intervals::register(&conn)?;
        graphs::register(&conn)?;
        let mut perfetto = perfetto_sql::PerfettoSql::default();
        thread_slice_time::register(&conn, &all, perfetto.natives_mut())?;
        sched_summary::register(&conn, &all, perfetto.natives_mut())?;
        self::slices::register_native(&conn, &all, perfetto.natives_mut())?;
        span_join::register(&conn)?;
        byte_functions::register(&conn)?;
        clock_functions::register(
            &conn,
            all.iter()
                .find(|t| t.name == "clock_snapshot")
                .map(|t| t.as_ref()),
        )?;
        trace_bounds::register(&conn, trace_bounds::compute(&all))?;
        conn.execute_batch(&crate::tables::views::statements())?;
        conn.execute_batch(views::VIEWS)?;
        conn.execute_batch(views_sched::VIEWS)?;
        conn.execute_batch(views_graphics::VIEWS)?;
        conn.execute_batch(build_profiling::PROFILING_VIEWS)?;
        prelude::register_empty_views(&conn)?;
        let file_access = FileAccess::install(&conn)?;
        symbolize::register(&conn, file_access.clone())?;
        Ok(Engine {
            conn,
            tables: names,
            storage: all,
            file_access,
            perfetto,
        })
    }

    /// The tables of a union of traces ([`union::union`]), and views that
    /// are other names of them; none of the per-trace views or functions.
    pub(crate) fn new_union(
        tables: Vec<Table>,
        aliases: &[(String, String)],
    ) -> Result<Self, Error> {
        let conn = Connection::open_in_memory()?;
        let names = tables.iter().map(|t| t.name).collect();
        let mut all = Vec::new();
        for t in tables {
            let t = Arc::new(t);
            all.push(t.clone());
            conn.create_module(t.name, eponymous_only_module::<ColumnarTab>(), Some(t))?;
        }
        demangle::register(&conn)?;
        aggregate::register(&conn)?;
        for (name, of) in aliases {
            conn.execute_batch(&format!(
                "CREATE VIEW \"{}\" AS SELECT * FROM \"{}\"",
                name.replace('"', "\"\""),
                of.replace('"', "\"\"")
            ))?;
        }
        let file_access = FileAccess::install(&conn)?;
        Ok(Engine {
            conn,
            tables: names,
            storage: all,
            file_access,
            perfetto: perfetto_sql::PerfettoSql::default(),
        })
    }

    /// The storage of virtual table `name`.
    pub(crate) fn table(&self, name: &str) -> Option<Arc<Table>> {
        self.storage.iter().find(|t| t.name == name).cloned()
    }

    /// The text view `name` was created with.
    pub(crate) fn view_sql(&self, name: &str) -> Result<Option<String>, Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?1")?;
        let mut rows = stmt.query([name])?;
        Ok(match rows.next()? {
            Some(row) => row.get(0)?,
            None => None,
        })
    }

    /// For each column of `SELECT * FROM name`: its name, and the table
    /// and column it is read from when it is a plain column reference
    /// (SQLite's column metadata), None when computed.
    pub(crate) fn column_origins(&self, name: &str) -> Result<Vec<ColumnOrigin>, Error> {
        let stmt = self
            .conn
            .prepare(&format!("SELECT * FROM \"{}\"", name.replace('"', "\"\"")))?;
        Ok(stmt
            .columns_with_metadata()
            .iter()
            .map(|c| {
                let origin = match (c.table_name(), c.origin_name()) {
                    (Some(t), Some(o)) => Some((t.to_owned(), o.to_owned())),
                    _ => None,
                };
                (c.name().to_owned(), origin)
            })
            .collect())
    }

    /// Forgets the macros, functions and included modules of PerfettoSQL
    /// (`perfetto_sql/`), as a new engine would start.
    pub(crate) fn reset_perfetto_sql(&self) {
        self.perfetto.reset(&self.conn);
    }

    /// Lets SQL read and write files (`--allow-sql-file-access`), or not
    /// (the default): `file_access.rs`.
    pub(crate) fn set_sql_file_access(&self, allowed: bool) {
        self.file_access.set_allowed(allowed);
    }

    /// Whether SQL may read and write files.
    pub(crate) fn sql_file_access(&self) -> bool {
        self.file_access.allowed()
    }

    /// Runs every statement of `sql`; the last statement's rows.
    pub fn query(&self, sql: &str) -> Result<QueryResult, Error> {
        self.file_access.forget();
        self.query_all(sql).map_err(|e| self.file_access.explain(e))
    }

    fn query_all(&self, sql: &str) -> Result<QueryResult, Error> {
        let mut last = QueryResult::default();
        self.perfetto.run(&self.conn, sql, &mut |piece| {
            last = if piece.done {
                QueryResult::default()
            } else {
                self.run_statements(piece.text, &mut |_, _| {})?
            };
            Ok(())
        })?;
        Ok(last)
    }

    /// Runs every statement of `sql` in order; the result set of each
    /// statement that has output, in order, as `trace_processor_shell`
    /// prints them for `-q`: statements without columns (`CREATE …`,
    /// PerfettoSQL's) have none, nor has a statement whose one column is
    /// named `suppress_query_output`, nor a call of a function that returns
    /// nothing (`RUN_METRIC`, `CREATE_FUNCTION`, ...).
    pub fn query_outputs(&self, sql: &str) -> Result<Vec<QueryResult>, Error> {
        self.file_access.forget();
        let mut outputs = Vec::new();
        self.perfetto
            .run(&self.conn, sql, &mut |piece| {
                if !piece.done {
                    self.run_statements(piece.text, &mut |r, void| {
                        let suppressed = r.columns.len() == 1
                            && (void || r.columns[0] == "suppress_query_output");
                        if !r.columns.is_empty() && !suppressed {
                            outputs.push(r.clone());
                        }
                    })?;
                }
                Ok(())
            })
            .map_err(|e| self.file_access.explain(e))?;
        Ok(outputs)
    }

    /// Runs the SQLite statements of `sql`; the last one's rows. `each` is
    /// given every statement's result, with whether its first row's value
    /// came from a function that returns nothing
    /// ([`perfetto_sql::void_calls::mark_void`]).
    fn run_statements(
        &self,
        sql: &str,
        each: &mut dyn FnMut(&QueryResult, bool),
    ) -> Result<QueryResult, Error> {
        // A query of one table's aggregates runs over their result,
        // computed over the columns (`aggregate/`).
        let rewritten = aggregate::rewrite(self, sql);
        let text = rewritten.as_ref().map_or(sql, |r| r.sql.as_str());
        let mut batch = rusqlite::Batch::new(&self.conn, text);
        let mut last = QueryResult::default();
        while let Some(mut stmt) = batch.next().map_err(|e| prepare_error(e, sql))? {
            let columns: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
            let n = columns.len();
            let mut rows = Vec::new();
            let mut void = false;
            perfetto_sql::void_calls::take_void();
            let mut q = stmt.raw_query();
            while let Some(row) = q.next()? {
                if rows.is_empty() {
                    void = perfetto_sql::void_calls::take_void();
                }
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    out.push(match row.get_ref(i)? {
                        ValueRef::Null => Value::Null,
                        ValueRef::Integer(v) => Value::Int(v),
                        ValueRef::Real(v) => Value::Real(v),
                        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                    });
                }
                rows.push(out);
            }
            last = QueryResult { columns, rows };
            each(&last, void);
        }
        Ok(last)
    }
}
