//! Several loaded traces as one set of tables, for `zerotrace sql` over a
//! directory of traces: each public table and view of every trace, its
//! rows one trace after another behind a `trace` column, held as columns
//! under the same name, so `SELECT trace, COUNT(*) FROM slice GROUP BY
//! trace` asks every trace at once. Ids stay each trace's own, as in the
//! Parquet dataset (`parquet_export/`): a join between tables matches
//! `trace` too (`JOIN thread USING (trace, utid)`). Views that are only
//! other names (`slices`, `raw`) are views again. Functions that read one
//! trace's storage by id (`EXTRACT_ARG`, the callstack functions) are not
//! there: an arg set id names a set in one trace only.
//!
//! Each trace is read whole and dropped before the next, so the memory
//! held is about one copy of every trace's tables.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use super::Engine;
use super::public_schema::{ColumnType, PublicTable, public_tables};
use super::read_plan::{ColumnSource, Source, plan, select};
use super::streaming::{Cell as SqlCell, RowSink};
use crate::column_store::strings::{StrId, StringPool};
use crate::column_store::table::{Cell, Column, Table};
use crate::error::Error;

/// One column's values over every trace so far.
enum Acc {
    Int(Vec<Option<i64>>),
    Real(Vec<Option<f64>>),
    Text(Vec<StrId>),
}

impl Acc {
    fn new(ty: ColumnType) -> Acc {
        match ty {
            ColumnType::Int => Acc::Int(Vec::new()),
            ColumnType::Real => Acc::Real(Vec::new()),
            ColumnType::Text => Acc::Text(Vec::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Acc::Int(v) => v.len(),
            Acc::Real(v) => v.len(),
            Acc::Text(v) => v.len(),
        }
    }

    /// Appends a stored cell; false when it does not fit the type.
    fn push(&mut self, cell: Cell<'_>, pool: &mut StringPool) -> bool {
        match (self, cell) {
            (Acc::Int(v), Cell::Int(x)) => v.push(Some(x)),
            (Acc::Int(v), Cell::Null) => v.push(None),
            (Acc::Real(v), Cell::Real(x)) => v.push(Some(x)),
            (Acc::Real(v), Cell::Int(x)) => v.push(Some(x as f64)),
            (Acc::Real(v), Cell::Null) => v.push(None),
            (Acc::Text(v), Cell::Str(s)) => v.push(pool.intern(s)),
            (Acc::Text(v), Cell::Int(x)) => v.push(pool.intern(&x.to_string())),
            (Acc::Text(v), Cell::Real(x)) => v.push(pool.intern(&x.to_string())),
            (Acc::Text(v), Cell::Null) => v.push(StrId::NULL),
            _ => return false,
        }
        true
    }

    /// Appends what SQLite handed over; false when it does not fit.
    fn push_sql(&mut self, cell: SqlCell<'_>, pool: &mut StringPool) -> bool {
        match cell {
            SqlCell::Null => self.push(Cell::Null, pool),
            SqlCell::Int(x) => self.push(Cell::Int(x), pool),
            SqlCell::Real(x) => self.push(Cell::Real(x), pool),
            SqlCell::Text(t) => self.push(Cell::Str(&String::from_utf8_lossy(t)), pool),
            SqlCell::Blob(_) => false,
        }
    }

    fn append(&mut self, other: Acc) {
        match (self, other) {
            (Acc::Int(a), Acc::Int(b)) => a.extend(b),
            (Acc::Real(a), Acc::Real(b)) => a.extend(b),
            (Acc::Text(a), Acc::Text(b)) => a.extend(b),
            _ => {}
        }
    }

    fn into_column(self, name: &'static str) -> Column {
        match self {
            Acc::Int(v) => Column::opt_int(name, v),
            Acc::Real(v) => Column::opt_real(name, v),
            Acc::Text(v) => Column::str(name, v),
        }
    }
}

/// Rows handed over by SQLite, into accumulators.
struct Collect<'a> {
    table: &'a str,
    accs: &'a mut [Acc],
    pool: &'a mut StringPool,
    col: usize,
    error: Option<Error>,
}

impl RowSink for Collect<'_> {
    fn statement(&mut self, _sql: &str, columns: &[&str], _last: bool) {
        if columns.len() != self.accs.len() && self.error.is_none() {
            self.error = Some(Error::Schema(format!(
                "{}: {} columns, {} expected",
                self.table,
                columns.len(),
                self.accs.len()
            )));
        }
    }

    fn row(&mut self) {
        self.col = 0;
    }

    fn cell(&mut self, cell: SqlCell<'_>) {
        if self.error.is_some() {
            return;
        }
        let ok = self
            .accs
            .get_mut(self.col)
            .is_some_and(|a| a.push_sql(cell, self.pool));
        if !ok {
            self.error = Some(mismatch(self.table, self.col));
        }
        self.col += 1;
    }

    fn statement_done(&mut self) {}
}

fn mismatch(table: &str, col: usize) -> Error {
    Error::Schema(format!(
        "{table}: column {col} holds a value of another type than its schema's"
    ))
}

/// A name that lives as long as the program: the tables' names are a
/// fixed catalog, each kept once however many unions are made.
fn static_name(s: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let names = NAMES.get_or_init(Default::default);
    let mut names = names.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(n);
    n
}

/// Appends `engine`'s rows of `table` to `accs`; how many.
fn read_table(
    engine: &Engine,
    table: &PublicTable,
    accs: &mut [Acc],
    pool: &mut StringPool,
) -> Result<usize, Error> {
    let before = accs.first().map_or(0, Acc::len);
    match plan(engine, &table.name)? {
        Source::Alias(_) => return Ok(0),
        Source::Sql => {
            let mut sink = Collect {
                table: &table.name,
                accs,
                pool,
                col: 0,
                error: None,
            };
            engine.query_streaming(&select(table, None), &mut sink)?;
            if let Some(e) = sink.error {
                return Err(e);
            }
        }
        Source::Columns {
            table: stored,
            columns,
        } => {
            let mut computed: Vec<Acc> = table
                .columns
                .iter()
                .zip(&columns)
                .filter(|(_, s)| **s == ColumnSource::Computed)
                .map(|((_, ty), _)| Acc::new(*ty))
                .collect();
            if !computed.is_empty() {
                let mut sink = Collect {
                    table: &table.name,
                    accs: &mut computed,
                    pool,
                    col: 0,
                    error: None,
                };
                engine.query_streaming(&select(table, Some(&columns)), &mut sink)?;
                if let Some(e) = sink.error {
                    return Err(e);
                }
                if computed.iter().any(|a| a.len() != stored.len) {
                    return Err(Error::Schema(format!(
                        "{}: its computed columns are not as long as its table",
                        table.name
                    )));
                }
            }
            let mut computed = computed.into_iter();
            for (k, (acc, source)) in accs.iter_mut().zip(&columns).enumerate() {
                match source {
                    ColumnSource::Stored(c) => {
                        for r in 0..stored.len {
                            if !acc.push(stored.cell(r, *c), pool) {
                                return Err(mismatch(&table.name, k));
                            }
                        }
                    }
                    ColumnSource::Computed => {
                        if let Some(c) = computed.next() {
                            acc.append(c);
                        }
                    }
                }
            }
        }
    }
    let after = accs.first().map_or(0, Acc::len);
    if accs.iter().any(|a| a.len() != after) {
        return Err(Error::Schema(format!(
            "{}: its columns came out of unequal lengths",
            table.name
        )));
    }
    Ok(after - before)
}

/// A view that is another name of a table: (name, other).
pub(crate) type Alias = (String, String);

/// The union of `traces` (each a loaded trace's engine, named by its
/// `trace` value, in this order): its tables, and the views that are other
/// names of them.
pub(crate) fn union(traces: Vec<(String, Engine)>) -> Result<(Vec<Table>, Vec<Alias>), Error> {
    let Some((_, first)) = traces.first() else {
        return Ok((Vec::new(), Vec::new()));
    };
    let schema = public_tables(first, false)?;
    let mut aliases = Vec::new();
    for t in &schema {
        if let Source::Alias(of) = plan(first, &t.name)? {
            aliases.push((t.name.clone(), of));
        }
    }
    let tables: Vec<&PublicTable> = schema
        .iter()
        .filter(|t| !aliases.iter().any(|(a, _)| *a == t.name))
        .collect();
    let mut pool = StringPool::default();
    let mut accs: Vec<Vec<Acc>> = tables
        .iter()
        .map(|t| t.columns.iter().map(|(_, ty)| Acc::new(*ty)).collect())
        .collect();
    let mut trace_cols: Vec<Vec<StrId>> = vec![Vec::new(); tables.len()];
    for (id, engine) in traces {
        if public_tables(&engine, false)? != schema {
            return Err(Error::Schema(format!(
                "trace {id}: its tables differ from the first trace's"
            )));
        }
        let id_str = pool.intern(&id);
        for ((table, acc), trace_col) in tables.iter().zip(&mut accs).zip(&mut trace_cols) {
            let n = read_table(&engine, table, acc, &mut pool)?;
            trace_col.extend(std::iter::repeat_n(id_str, n));
        }
        // This trace's storage goes before the next is read.
        drop(engine);
    }
    let pool = Arc::new(pool);
    let mut out = Vec::with_capacity(tables.len());
    for ((table, acc), trace_col) in tables.iter().zip(accs).zip(trace_cols) {
        let len = trace_col.len();
        let mut columns = vec![Column::str("trace", trace_col)];
        for ((name, _), a) in table.columns.iter().zip(acc) {
            columns.push(a.into_column(static_name(name)));
        }
        out.push(Table {
            name: static_name(&table.name),
            columns,
            len,
            has_id: false,
            sorted_by: None,
            strings: pool.clone(),
            orders: Default::default(),
        });
    }
    Ok((out, aliases))
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::{TracePacket, track_event};

    fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            f(&mut p);
        }
        let p = w.finish().unwrap();
        let mut out = vec![0x0a];
        let mut n = p.len();
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(&p);
        out
    }

    /// A trace with `n` slices named `name` on one track.
    fn trace(name: &str, n: u64) -> TraceProcessor {
        let mut t = packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            p.begin_track_descriptor().set_uuid(1);
        });
        for i in 0..n {
            for (ts, ty) in [
                (100 * i + 10, track_event::Type::SliceBegin),
                (100 * i + 60, track_event::Type::SliceEnd),
            ] {
                t.extend(packet(|p| {
                    p.set_trusted_packet_sequence_id(1);
                    p.set_timestamp(ts);
                    let mut e = p.begin_track_event();
                    e.set_track_uuid(1);
                    e.set_type(ty);
                    if ty == track_event::Type::SliceBegin {
                        e.set_name(name);
                    }
                }));
            }
        }
        TraceProcessor::from_bytes(&t).unwrap()
    }

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).unwrap().rows
    }

    #[test]
    fn traces_show_as_one_set_of_tables_with_a_trace_column() {
        let (a, b) = (trace("a", 2), trace("b", 3));
        let want_a = rows(
            &a,
            "SELECT id, ts, dur, name, track_id FROM slice ORDER BY id",
        );
        let want_b = rows(
            &b,
            "SELECT id, ts, dur, name, track_id FROM slice ORDER BY id",
        );
        let u = TraceProcessor::union(vec![
            ("one".into(), a),
            ("two".into(), trace("empty", 0)),
            ("three".into(), b),
        ])
        .unwrap();
        // Each trace's rows as it answers them alone, behind its name.
        for (id, want) in [("one", want_a), ("three", want_b)] {
            let got = rows(
                &u,
                &format!(
                    "SELECT id, ts, dur, name, track_id FROM slice WHERE trace = '{id}' ORDER BY id"
                ),
            );
            assert_eq!(got, want, "{id}");
        }
        assert_eq!(
            rows(
                &u,
                "SELECT trace, COUNT(*) FROM slice GROUP BY trace ORDER BY trace"
            ),
            vec![
                vec![Value::Text("one".into()), Value::Int(2)],
                vec![Value::Text("three".into()), Value::Int(3)],
            ]
        );
        // Every trace has its swapper thread; a join matches trace too.
        assert_eq!(
            rows(&u, "SELECT COUNT(*) FROM thread"),
            vec![vec![Value::Int(3)]]
        );
        assert_eq!(
            rows(
                &u,
                "SELECT COUNT(*) FROM slice JOIN track ON track.trace = slice.trace \
                 AND track.id = slice.track_id"
            ),
            vec![vec![Value::Int(5)]]
        );
        // An alias is a view again; a computed column came along.
        assert_eq!(
            rows(&u, "SELECT COUNT(*) FROM slices"),
            vec![vec![Value::Int(5)]]
        );
        let cols = u.columns("args").unwrap().unwrap();
        assert_eq!(cols[0].name, "trace");
        assert!(cols.iter().any(|c| c.name == "display_value"));
        // No per-trace function: an arg set id names a set in one trace.
        assert!(u.query("SELECT EXTRACT_ARG(1, 'x')").is_err());
    }
}
