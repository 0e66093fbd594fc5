//! Queries whose rows are handed over cell by cell as SQLite steps, not
//! collected: the RPC's query results (`rpc/batches.rs`) are encoded
//! straight from SQLite's values.
//!
//! Every statement of the text runs, as [`Engine::query`] runs them; the
//! sink is told when a statement starts (and whether it is the last, so
//! that it need not keep an earlier one's rows at all). A query may come
//! with a stop condition, asked by SQLite's progress handler while a
//! statement steps (`query_streaming_until`): the RPC's cancel and time
//! limit.

use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::ValueRef;

use super::Engine;
use crate::error::Error;

/// One cell of a row, borrowed from SQLite for the duration of the call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cell<'a> {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A double.
    Real(f64),
    /// Text, as SQLite holds it (UTF-8 unless a function made it otherwise).
    Text(&'a [u8]),
    /// Bytes.
    Blob(&'a [u8]),
}

/// Where [`Engine::query_streaming`] hands a query's rows.
pub(crate) trait RowSink {
    /// A statement (its text, trimmed) is about to run, with these
    /// columns; whatever earlier statements sent is no longer the answer.
    /// `last` when nothing but blanks, semicolons and comments follows it
    /// in the query (when unsure, false).
    fn statement(&mut self, sql: &str, columns: &[&str], last: bool);
    /// A row of the current statement begins.
    fn row(&mut self);
    /// The next cell of the current row.
    fn cell(&mut self, cell: Cell<'_>);
    /// The current statement has run to its end.
    fn statement_done(&mut self);
}

/// How many SQLite virtual machine steps pass between two looks at a
/// query's stop condition ([`Engine::query_streaming_until`]).
const STEPS_BETWEEN_LOOKS: i32 = 10_000;

/// Whether `rest` of a query holds no statement: only blanks, semicolons
/// and comments (`-- ...` to the end of a line, `/* ... */`, an unclosed
/// one to the end, as SQLite's tokenizer reads them).
fn no_statement_in(rest: &str) -> bool {
    let mut rest = rest;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';');
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return rest.is_empty();
        }
    }
}

impl Engine {
    /// [`Engine::query_streaming`], interrupted as SQLite interrupts a
    /// statement (`SQLITE_INTERRUPT`) once `stop` returns true; `stop` is
    /// asked every few thousand steps while a statement runs, so a query
    /// that sends nothing for a long time is stopped too.
    pub(crate) fn query_streaming_until(
        &self,
        sql: &str,
        sink: &mut dyn RowSink,
        stop: impl FnMut() -> bool + Send + 'static,
    ) -> Result<(), Error> {
        self.conn.progress_handler(STEPS_BETWEEN_LOOKS, Some(stop));
        let result = self.query_streaming(sql, sink);
        self.conn.progress_handler(0, None::<fn() -> bool>);
        result
    }

    /// Runs every statement of `sql`, handing each one's rows to `sink`;
    /// rows handed over before a failure stay handed over.
    pub(crate) fn query_streaming(&self, sql: &str, sink: &mut dyn RowSink) -> Result<(), Error> {
        self.file_access.forget();
        self.stream_all(sql, sink)
            .map_err(|e| self.file_access.explain(e))
    }

    fn stream_all(&self, sql: &str, sink: &mut dyn RowSink) -> Result<(), Error> {
        // PerfettoSQL splits the text into statements (`perfetto_sql/`);
        // each SQLite one is streamed, a PerfettoSQL one has no rows.
        self.perfetto.run(&self.conn, sql, &mut |piece| {
            if piece.done {
                sink.statement(piece.text.trim(), &[], piece.last);
                sink.statement_done();
                Ok(())
            } else {
                self.stream_statements(piece.text, piece.last, sink)
            }
        })
    }

    /// Streams the SQLite statements of `sql`; `last_piece` when nothing
    /// follows `sql` in the query.
    fn stream_statements(
        &self,
        sql: &str,
        last_piece: bool,
        sink: &mut dyn RowSink,
    ) -> Result<(), Error> {
        // One statement of one table's aggregates runs over their result,
        // computed over the columns (`aggregate/`), and is shown as written.
        let rewritten = super::aggregate::rewrite(self, sql);
        let mut batch = rusqlite::Batch::new(
            &self.conn,
            rewritten.as_ref().map_or(sql, |r| r.sql.as_str()),
        );
        // Where the previous statement's text ended in `sql`.
        let mut pos = 0;
        while let Some(mut stmt) = batch.next().map_err(|e| super::prepare_error(e, sql))? {
            let text = match &rewritten {
                // The query's own statement's text (prepared, not run).
                Some(_) => rusqlite::Batch::new(&self.conn, sql)
                    .next()
                    .ok()
                    .flatten()
                    .and_then(|s| s.expanded_sql())
                    .unwrap_or_default(),
                None => stmt.expanded_sql().unwrap_or_default(),
            };
            // A statement's text is its span of the query (no parameters
            // are bound, so nothing was expanded); what follows it says
            // whether another statement can come.
            let last = last_piece
                && match sql.get(pos..).and_then(|rest| rest.find(text.as_str())) {
                    Some(at) if !text.is_empty() => {
                        pos += at + text.len();
                        sql.get(pos..).is_some_and(no_statement_in)
                    }
                    _ => false,
                };
            let n = stmt.column_count();
            {
                let names = stmt.column_names();
                sink.statement(text.trim(), &names, last);
            }
            let mut q = stmt.raw_query();
            while let Some(row) = q.next()? {
                sink.row();
                for i in 0..n {
                    sink.cell(match row.get_ref(i)? {
                        ValueRef::Null => Cell::Null,
                        ValueRef::Integer(v) => Cell::Int(v),
                        ValueRef::Real(v) => Cell::Real(v),
                        ValueRef::Text(t) => Cell::Text(t),
                        ValueRef::Blob(b) => Cell::Blob(b),
                    });
                }
            }
            sink.statement_done();
        }
        Ok(())
    }
}
