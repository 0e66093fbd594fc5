//! A PERFETTO TABLE stored as the trace's own tables are: one typed column
//! each (integers in 4 or 8 bytes, doubles, strings pooled per table, a
//! bit per row for NULL), read by SQLite through the columnar virtual
//! table (`sql/vtab.rs`). Stored as a row-store SQLite table instead, each
//! row was a record holding its strings again (a thread's and process's
//! names once per slice), plus an index on `id`: the Linux and UI modules'
//! tables took several times the trace's size, and building the records
//! and the index was much of an include's time.
//!
//! A select's values are read once, column by column into builders; a
//! column whose values are not of one kind (integers and doubles mixed,
//! text and numbers, a blob, text that is not UTF-8) makes the table a
//! plain SQLite table as before ([`collect`] returns `None`), so each value
//! keeps exactly the type the select gave it either way. The virtual table
//! answers `id = ?` directly when the ids are the row numbers, searches a
//! sorted `id` (else `ts`) column, and finds equal integers or strings in
//! any other column through the column's value order, which stands in for
//! the index the row store had on `id` and for `CREATE PERFETTO INDEX`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use crate::column_store::strings::{StrId, StringPool};
use crate::column_store::table::{Column, ColumnData, Table};

/// The prefix of the module a PERFETTO TABLE's virtual table is made by;
/// the table's name (lower case) follows it.
pub(crate) const MODULE_PREFIX: &str = "__intrinsic_perfetto_table ";

/// One column's values while the select runs.
enum Builder {
    /// Only NULLs so far (how many).
    Nulls(usize),
    /// Integers (and NULLs).
    Ints(Vec<Option<i64>>),
    /// Doubles (and NULLs).
    Reals(Vec<Option<f64>>),
    /// Strings (and NULLs), pooled.
    Strs(Vec<StrId>),
}

impl Builder {
    /// Adds `v`; false when it is not of the column's kind (or cannot be
    /// stored as a column holds it).
    fn push(&mut self, v: ValueRef<'_>, pool: &mut StringPool) -> bool {
        match (self, v) {
            (Builder::Nulls(n), ValueRef::Null) => *n += 1,
            (b @ Builder::Nulls(_), ValueRef::Integer(x)) => {
                let n = b.len();
                let mut v = vec![None; n];
                v.push(Some(x));
                *b = Builder::Ints(v);
            }
            (b @ Builder::Nulls(_), ValueRef::Real(x)) => {
                let n = b.len();
                let mut v = vec![None; n];
                v.push(Some(x));
                *b = Builder::Reals(v);
            }
            (b @ Builder::Nulls(_), ValueRef::Text(t)) => {
                let Ok(s) = std::str::from_utf8(t) else {
                    return false;
                };
                let n = b.len();
                let mut v = vec![StrId::NULL; n];
                v.push(pool.intern(s));
                *b = Builder::Strs(v);
            }
            (Builder::Ints(v), ValueRef::Null) => v.push(None),
            (Builder::Ints(v), ValueRef::Integer(x)) => v.push(Some(x)),
            (Builder::Reals(v), ValueRef::Null) => v.push(None),
            (Builder::Reals(v), ValueRef::Real(x)) => v.push(Some(x)),
            (Builder::Strs(v), ValueRef::Null) => v.push(StrId::NULL),
            (Builder::Strs(v), ValueRef::Text(t)) => {
                let Ok(s) = std::str::from_utf8(t) else {
                    return false;
                };
                v.push(pool.intern(s));
            }
            _ => return false,
        }
        true
    }

    fn len(&self) -> usize {
        match self {
            Builder::Nulls(n) => *n,
            Builder::Ints(v) => v.len(),
            Builder::Reals(v) => v.len(),
            Builder::Strs(v) => v.len(),
        }
    }

    /// The column, named `name`, declared with `sql_type`.
    fn finish(self, name: &'static str, sql_type: &'static str) -> Column {
        let mut c = match self {
            Builder::Nulls(n) => Column::opt_int(name, vec![None; n]),
            Builder::Ints(v) if v.iter().all(Option::is_some) => {
                Column::int(name, v.into_iter().flatten().collect())
            }
            Builder::Ints(v) => Column::opt_int(name, v),
            Builder::Reals(v) if v.iter().all(Option::is_some) => {
                Column::real(name, v.into_iter().flatten().collect())
            }
            Builder::Reals(v) => Column::opt_real(name, v),
            Builder::Strs(v) => Column::str(name, v),
        };
        c.sql_type = sql_type;
        c
    }
}

/// `name` as a `&'static str`: a table's and its columns' names live as
/// long as the columnar storage's do. Each distinct name is allocated
/// once per process, so creating tables again and again allocates
/// nothing more.
fn static_name(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    let set = names.get_or_insert_with(HashSet::new);
    if let Some(s) = set.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_owned().into_boxed_str());
    set.insert(s);
    s
}

/// Runs `select` and stores its rows as table `name` of columns `names`,
/// or `None` when a column's values are of more than one kind (see the
/// module's docs). Column `id` is declared INTEGER (a join from a typed
/// column compares it as a number) and the others untyped, as the row
/// store declared them.
pub(crate) fn collect(
    conn: &Connection,
    name: &str,
    select: &str,
    names: &[String],
) -> rusqlite::Result<Option<Table>> {
    let mut stmt = conn.prepare(select)?;
    let n = stmt.column_count();
    let mut pool = StringPool::default();
    let mut builders: Vec<Builder> = (0..n).map(|_| Builder::Nulls(0)).collect();
    let id = names.iter().position(|n| n == "id");
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next()? {
        for (i, b) in builders.iter_mut().enumerate() {
            let mut v = row.get_ref(i)?;
            if Some(i) == id {
                match v {
                    // INTEGER affinity: an integral double is stored as the
                    // integer; text is left to the row store's conversion.
                    ValueRef::Real(x) if x.fract() == 0.0 && x.abs() < 9.2e18 => {
                        v = ValueRef::Integer(x as i64);
                    }
                    ValueRef::Text(_) | ValueRef::Blob(_) => return Ok(None),
                    _ => {}
                }
            }
            if !b.push(v, &mut pool) {
                return Ok(None);
            }
        }
    }
    let len = builders.first().map_or(0, Builder::len);
    let columns: Vec<Column> = builders
        .into_iter()
        .enumerate()
        .map(|(i, b)| b.finish(static_name(names.get(i).map_or("", String::as_str)), ""))
        .collect();
    Ok(Some(table_of(name, columns, len, Arc::new(pool))))
}

/// Table `name` of `columns` (`len` rows each), their strings in `strings`:
/// column `id` declared INTEGER and the others untyped, as a select's are
/// stored; searched by row number when `id` is the row number, else on
/// `id` (or `ts`) when it ascends.
pub(crate) fn table_of(
    name: &str,
    mut columns: Vec<Column>,
    len: usize,
    strings: Arc<StringPool>,
) -> Table {
    for c in &mut columns {
        c.name = static_name(c.name);
        c.sql_type = if c.name == "id" { "INTEGER" } else { "" };
    }
    let has_id = columns
        .first()
        .is_some_and(|c| c.name == "id" && matches!(c.data, ColumnData::RowIndex(_)));
    // The column a range or equality is searched on: `id` when it
    // ascends, else `ts`.
    let sorted_by = ["id", "ts"].iter().find_map(|want| {
        columns
            .iter()
            .position(|c| c.name == *want)
            .filter(|&i| columns.get(i).is_some_and(Column::ascends))
    });
    Table {
        name: static_name(name),
        columns,
        len,
        has_id,
        sorted_by,
        strings,
        orders: Default::default(),
    }
}

/// Makes `table` the virtual table `name` (which must not exist), by a
/// module of its own named after it (replacing the module of an earlier
/// table of that name, whose storage goes with it).
pub(crate) fn register(conn: &Connection, name: &str, table: Table) -> rusqlite::Result<()> {
    let module = format!("{MODULE_PREFIX}{}", name.to_lowercase());
    conn.create_module(
        module.as_str(),
        rusqlite::vtab::read_only_module::<crate::sql::vtab::ColumnarTab>(),
        Some(Arc::new(table)),
    )?;
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE \"{}\" USING \"{}\"",
        name.replace('"', "\"\""),
        module.replace('"', "\"\"")
    ))
}

/// Registers table `name` built on its first read (`lazy_table.rs`), as
/// [`register`] registers a built one.
pub(crate) fn register_lazy(
    conn: &Connection,
    name: &str,
    table: super::lazy_table::LazyTable,
) -> rusqlite::Result<()> {
    let module = format!("{MODULE_PREFIX}{}", name.to_lowercase());
    conn.create_module(
        module.as_str(),
        rusqlite::vtab::read_only_module::<super::lazy_table::LazyColumnarTab>(),
        Some(Arc::new(table)),
    )?;
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE \"{}\" USING \"{}\"",
        name.replace('"', "\"\""),
        module.replace('"', "\"\"")
    ))
}

/// Whether `table` is a PERFETTO TABLE stored as columns.
pub(crate) fn is_columnar(conn: &Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE",
        [table],
        |r| r.get::<_, Option<String>>(0),
    )
    .ok()
    .flatten()
    .is_some_and(|sql| sql.starts_with("CREATE VIRTUAL TABLE") && sql.contains(MODULE_PREFIX))
}

/// The `CREATE PERFETTO INDEX`es made on tables stored as columns: a
/// virtual table takes no SQLite index (its value orders serve equality
/// on any one column), so only their names are kept, to refuse a second
/// index of one name and to drop one, as SQLite does for its own.
#[derive(Debug, Default)]
pub(crate) struct Indexes(std::cell::RefCell<Vec<(String, String)>>);

impl Indexes {
    /// Whether index `name` is one of these (names compare as SQLite's,
    /// without case).
    fn position(&self, name: &str) -> Option<usize> {
        self.0
            .borrow()
            .iter()
            .position(|(i, _)| i.eq_ignore_ascii_case(name))
    }

    /// Notes index `name` on `table`; false when one of that name exists.
    pub(crate) fn add(&self, name: &str, table: &str) -> bool {
        if self.position(name).is_some() {
            return false;
        }
        self.0
            .borrow_mut()
            .push((name.to_owned(), table.to_owned()));
        true
    }

    /// Forgets index `name`; false when it is not one of these.
    pub(crate) fn remove(&self, name: &str) -> bool {
        match self.position(name) {
            Some(i) => {
                self.0.borrow_mut().remove(i);
                true
            }
            None => false,
        }
    }

    /// Forgets the indexes of `table` (dropped or made again).
    pub(crate) fn forget_table(&self, table: &str) {
        self.0
            .borrow_mut()
            .retain(|(_, t)| !t.eq_ignore_ascii_case(table));
    }

    /// Forgets every index.
    pub(crate) fn clear(&self) {
        self.0.borrow_mut().clear();
    }
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect(sql).rows
    }

    fn text(s: &str) -> Value {
        Value::Text(s.into())
    }

    /// How SQLite declares table `name` in its schema.
    fn declared(tp: &TraceProcessor, name: &str) -> String {
        match rows(
            tp,
            &format!("SELECT sql FROM sqlite_master WHERE name = '{name}'"),
        )
        .first()
        .and_then(|r| r.first())
        {
            Some(Value::Text(s)) => s.clone(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn a_table_of_one_kind_per_column_is_stored_as_columns_and_reads_back_alike() {
        let tp = TraceProcessor::from_bytes(&[]).expect("engine");
        tp.query(
            "CREATE PERFETTO TABLE t AS
             SELECT 0 AS id, 5 AS n, 1.5 AS r, 'a' AS s, NULL AS z
             UNION ALL SELECT 1, NULL, NULL, NULL, NULL
             UNION ALL SELECT 2, -7, 2.0, 'a', NULL",
        )
        .expect("t");
        assert!(declared(&tp, "t").starts_with("CREATE VIRTUAL TABLE"));
        assert_eq!(
            rows(
                &tp,
                "SELECT id, typeof(n), n, typeof(r), r, s, typeof(z) FROM t ORDER BY id"
            ),
            [
                vec![
                    Value::Int(0),
                    text("integer"),
                    Value::Int(5),
                    text("real"),
                    Value::Real(1.5),
                    text("a"),
                    text("null"),
                ],
                vec![
                    Value::Int(1),
                    text("null"),
                    Value::Null,
                    text("null"),
                    Value::Null,
                    Value::Null,
                    text("null"),
                ],
                vec![
                    Value::Int(2),
                    text("integer"),
                    Value::Int(-7),
                    text("real"),
                    Value::Real(2.0),
                    text("a"),
                    text("null"),
                ],
            ]
        );
        // Untyped as the row store was: no conversion of a compared text.
        assert_eq!(
            rows(&tp, "SELECT count(*) FROM t WHERE n = '5'"),
            [vec![Value::Int(0)]]
        );
        // Found by id, by an integer and by a string.
        assert_eq!(
            rows(&tp, "SELECT n FROM t WHERE id = 2"),
            [vec![Value::Int(-7)]]
        );
        assert_eq!(
            rows(&tp, "SELECT id FROM t WHERE n = 5"),
            [vec![Value::Int(0)]]
        );
        assert_eq!(
            rows(&tp, "SELECT id FROM t WHERE s = 'a' ORDER BY id"),
            [vec![Value::Int(0)], vec![Value::Int(2)]]
        );
        // Replaced, and dropped as a table.
        tp.query("CREATE OR REPLACE PERFETTO TABLE t AS SELECT 9 AS id")
            .expect("replace");
        assert_eq!(rows(&tp, "SELECT id FROM t"), [vec![Value::Int(9)]]);
        assert!(
            tp.query("CREATE PERFETTO TABLE t AS SELECT 1 AS id")
                .is_err()
        );
        tp.query("DROP TABLE t").expect("drop");
        assert!(tp.query("SELECT * FROM t").is_err());
    }

    #[test]
    fn a_descending_order_keeps_equal_values_in_row_order() {
        let tp = TraceProcessor::from_bytes(&[]).expect("engine");
        tp.query(
            "CREATE PERFETTO TABLE f AS
             SELECT 0 AS id, NULL AS s, 1 AS n UNION ALL SELECT 1, 'b', 2
             UNION ALL SELECT 2, NULL, 1 UNION ALL SELECT 3, '', 2 UNION ALL SELECT 4, 'b', 1",
        )
        .expect("f");
        let ids = |sql: &str| -> Vec<Value> {
            rows(&tp, sql)
                .into_iter()
                .filter_map(|r| r.into_iter().next())
                .collect()
        };
        let ints = |v: &[i64]| -> Vec<Value> { v.iter().map(|x| Value::Int(*x)).collect() };
        // The order is the column's value order read backwards by runs.
        assert_eq!(
            ids("SELECT id FROM f ORDER BY s DESC"),
            ints(&[1, 4, 3, 0, 2])
        );
        assert_eq!(
            ids("SELECT id FROM f ORDER BY n DESC"),
            ints(&[1, 3, 0, 2, 4])
        );
        assert_eq!(ids("SELECT id FROM f ORDER BY n"), ints(&[0, 2, 4, 1, 3]));
        assert_eq!(
            ids("SELECT id FROM f ORDER BY n DESC LIMIT 3"),
            ints(&[1, 3, 0])
        );
    }

    #[test]
    fn a_column_of_mixed_kinds_keeps_the_row_store_and_each_values_type() {
        let tp = TraceProcessor::from_bytes(&[]).expect("engine");
        tp.query(
            "CREATE PERFETTO TABLE m AS SELECT 1 AS id, 1 AS v UNION ALL SELECT 2, 2.5
             UNION ALL SELECT 3, 'x'",
        )
        .expect("m");
        assert!(declared(&tp, "m").starts_with("CREATE TABLE"));
        assert_eq!(
            rows(&tp, "SELECT typeof(v) FROM m ORDER BY id"),
            [
                vec![text("integer")],
                vec![text("real")],
                vec![text("text")]
            ]
        );
        // An id given as integral doubles is stored as integers, as the
        // row store's INTEGER column converts them.
        tp.query("CREATE PERFETTO TABLE d AS SELECT 1.0 AS id UNION ALL SELECT 2")
            .expect("d");
        assert!(declared(&tp, "d").starts_with("CREATE VIRTUAL TABLE"));
        assert_eq!(
            rows(&tp, "SELECT typeof(id), id FROM d ORDER BY id"),
            [
                vec![text("integer"), Value::Int(1)],
                vec![text("integer"), Value::Int(2)]
            ]
        );
    }

    #[test]
    fn an_index_on_a_table_stored_as_columns_is_named_once_and_dropped() {
        let tp = TraceProcessor::from_bytes(&[]).expect("engine");
        tp.query("CREATE PERFETTO TABLE t AS SELECT 1 AS id, 2 AS a")
            .expect("t");
        tp.query("CREATE PERFETTO INDEX i ON t(a)").expect("index");
        let again = tp.query("CREATE PERFETTO INDEX i ON t(a)");
        assert!(
            again
                .as_ref()
                .is_err_and(|e| e.to_string().contains("already exists")),
            "{again:?}"
        );
        tp.query("CREATE OR REPLACE PERFETTO INDEX i ON t(id, a)")
            .expect("replace");
        assert!(tp.query("CREATE PERFETTO INDEX j ON t(nope)").is_err());
        tp.query("DROP PERFETTO INDEX i ON t").expect("drop");
        assert!(tp.query("DROP PERFETTO INDEX i ON t").is_err());
        tp.query("CREATE PERFETTO INDEX i ON t(a)")
            .expect("index again");
        // A table made again loses its indexes.
        tp.query("CREATE OR REPLACE PERFETTO TABLE t AS SELECT 1 AS id, 2 AS a")
            .expect("t again");
        tp.query("CREATE PERFETTO INDEX i ON t(a)")
            .expect("index on the new table");
        assert_eq!(
            tp.query("SELECT a FROM t WHERE a = 2").expect("a").rows,
            [vec![Value::Int(2)]]
        );
    }
}
