//! `perfetto_table_info('name')`: how upstream's trace processor would
//! store each column of a table made by `CREATE PERFETTO TABLE`. Upstream
//! builds such a table into a columnar frame whose layout it infers from
//! the rows, and this operator reports that layout, one row per column in
//! order and then the implicit `_auto_id` row: `col_type` (`id` for an
//! integer column holding exactly its row numbers 0, 1, 2, ..., else the
//! narrowest of `uint32`, `int32`, `int64` holding its values, `double`,
//! `string`), `nullable` and `sorted` as the indexes of upstream's states
//! (nullability: 0 no NULL, 1 NULLs; sort state: 0 row numbers, 1 each
//! value its first row's number, 2 ascending, 3 unsorted).
//!
//! Our PerfettoSQL tables are plain SQLite tables whose rows keep the
//! select's order, so the layout is inferred here the same way from the
//! stored rows.

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Value;

use super::super::perfetto_sql::nested::NestedDb;
use super::table_function::{self, TableFn};

/// Upstream's nullability states, by index.
const NON_NULL: i64 = 0;
/// See [`NON_NULL`]: the state of a column with NULLs.
const SPARSE_NULL: i64 = 1;
/// Upstream's sort states, by index.
const ID_SORTED: i64 = 0;
/// See [`ID_SORTED`].
const SET_ID_SORTED: i64 = 1;
/// See [`ID_SORTED`].
const SORTED: i64 = 2;
/// See [`ID_SORTED`].
const UNSORTED: i64 = 3;

/// The operator, over the connection it is registered on.
struct TableInfo {
    db: NestedDb,
}

/// How one column's values would be stored.
#[derive(Debug, PartialEq, Eq)]
struct Layout {
    col_type: &'static str,
    nullable: i64,
    sorted: i64,
}

/// The layout upstream infers for a column holding `values` in row order.
fn layout(values: &[&Value]) -> Layout {
    let nulls = values.iter().any(|v| matches!(v, Value::Null));
    let nullable = if nulls { SPARSE_NULL } else { NON_NULL };
    let present: Vec<&Value> = values
        .iter()
        .copied()
        .filter(|v| !matches!(v, Value::Null))
        .collect();
    let Some(first) = present.first() else {
        // No value at all: upstream's empty integer column.
        return Layout {
            col_type: "uint32",
            nullable,
            sorted: UNSORTED,
        };
    };
    match first {
        Value::Integer(_) if present.iter().all(|v| matches!(v, Value::Integer(_))) => {
            let ints: Vec<i64> = present
                .iter()
                .filter_map(|v| match v {
                    Value::Integer(i) => Some(*i),
                    _ => None,
                })
                .collect();
            integer_layout(&ints, nulls)
        }
        Value::Integer(_) | Value::Real(_) => {
            let reals: Vec<f64> = present
                .iter()
                .map(|v| match v {
                    Value::Integer(i) => *i as f64,
                    Value::Real(r) => *r,
                    _ => f64::NAN,
                })
                .collect();
            let ascending = reals.windows(2).all(|w| w[0] <= w[1]);
            Layout {
                col_type: "double",
                nullable,
                sorted: if ascending && !nulls {
                    SORTED
                } else {
                    UNSORTED
                },
            }
        }
        _ => {
            let texts: Vec<String> = present
                .iter()
                .map(|v| match v {
                    Value::Text(t) => t.clone(),
                    Value::Integer(i) => i.to_string(),
                    Value::Real(r) => r.to_string(),
                    _ => String::new(),
                })
                .collect();
            let ascending = texts.windows(2).all(|w| w[0] <= w[1]);
            Layout {
                col_type: "string",
                nullable,
                sorted: if ascending && !nulls {
                    SORTED
                } else {
                    UNSORTED
                },
            }
        }
    }
}

/// The layout of an integer column's non-NULL values `ints` (`nulls`: it
/// has NULLs too).
fn integer_layout(ints: &[i64], nulls: bool) -> Layout {
    let id_sorted = ints
        .iter()
        .enumerate()
        .all(|(i, v)| i64::try_from(i).is_ok_and(|i| i == *v));
    let set_id_sorted = ints.first().is_none_or(|v| *v == 0)
        && ints
            .windows(2)
            .enumerate()
            .all(|(j, w)| w[1] == w[0] || i64::try_from(j + 1).is_ok_and(|row| row == w[1]));
    let ascending = ints.windows(2).all(|w| w[0] <= w[1]);
    let (min, max) = (
        ints.iter().copied().min().unwrap_or(0),
        ints.iter().copied().max().unwrap_or(0),
    );
    let col_type = if id_sorted && !nulls {
        "id"
    } else if min >= 0 && max <= i64::from(u32::MAX) {
        "uint32"
    } else if min >= i64::from(i32::MIN) && max <= i64::from(i32::MAX) {
        "int32"
    } else {
        "int64"
    };
    let sorted = if nulls {
        UNSORTED
    } else if id_sorted {
        ID_SORTED
    } else if set_id_sorted {
        SET_ID_SORTED
    } else if ascending {
        SORTED
    } else {
        UNSORTED
    };
    Layout {
        col_type,
        nullable: if nulls { SPARSE_NULL } else { NON_NULL },
        sorted,
    }
}

/// Quotes a name for SQLite.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl TableFn for TableInfo {
    fn columns(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("id", "BIGINT"),
            ("name", "TEXT"),
            ("col_type", "TEXT"),
            ("nullable", "BIGINT"),
            ("sorted", "BIGINT"),
        ]
    }

    fn arguments(&self) -> Vec<&'static str> {
        vec!["table_name"]
    }

    fn run(&self, args: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let Some(Value::Text(name)) = args.first() else {
            return Err("perfetto_table_info: the table's name must be a string".into());
        };
        // A PerfettoSQL table is a real SQLite table or a virtual table of
        // the columnar PERFETTO TABLE module (the trace's own tables are
        // eponymous virtual tables, not in the schema).
        let found = self.db.query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1 \
             AND (sql NOT LIKE 'CREATE VIRTUAL%' \
                  OR instr(sql, '__intrinsic_perfetto_table ') > 0)",
            &[(None, Value::Text(name.clone()))],
            1,
        )?;
        if found.rows.is_empty() {
            return Err(format!("Perfetto table '{name}' not found."));
        }
        let all = self
            .db
            .query(&format!("SELECT * FROM {}", quote(name)), &[], usize::MAX)?;
        let mut out = Vec::with_capacity(all.columns.len() + 1);
        for (c, column) in all.columns.iter().enumerate() {
            let values: Vec<&Value> = all.rows.iter().filter_map(|r| r.get(c)).collect();
            let l = layout(&values);
            out.push((column.clone(), l));
        }
        out.push((
            "_auto_id".to_owned(),
            Layout {
                col_type: "id",
                nullable: NON_NULL,
                sorted: ID_SORTED,
            },
        ));
        Ok(out
            .into_iter()
            .enumerate()
            .map(|(id, (name, l))| {
                vec![
                    Value::Integer(i64::try_from(id).unwrap_or(i64::MAX)),
                    Value::Text(name),
                    Value::Text(l.col_type.to_owned()),
                    Value::Integer(l.nullable),
                    Value::Integer(l.sorted),
                ]
            })
            .collect())
    }
}

/// Registers `perfetto_table_info` on `conn`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    // SAFETY: the handle is used only by the operator registered on this
    // very connection, which SQLite drops before closing it.
    let db = unsafe { NestedDb::of(conn) };
    table_function::register(conn, "perfetto_table_info", Arc::new(TableInfo { db }))
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::{TraceProcessor, Value};

    fn info(tp: &TraceProcessor, table: &str) -> Vec<Vec<Value>> {
        tp.query(&format!(
            "SELECT id, name, col_type, nullable, sorted FROM perfetto_table_info('{table}')"
        ))
        .expect("query")
        .rows
    }

    fn row(id: i64, name: &str, ty: &str, nullable: i64, sorted: i64) -> Vec<Value> {
        vec![
            Value::Int(id),
            Value::Text(name.into()),
            Value::Text(ty.into()),
            Value::Int(nullable),
            Value::Int(sorted),
        ]
    }

    #[test]
    fn columns_are_described_as_upstream_would_store_them() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        tp.query(
            "CREATE PERFETTO TABLE t AS \
             SELECT * FROM (VALUES (0, 5, -1, 1.5, 'a', NULL, 0), (1, 3, 2, 2.5, 'b', 7, 0), \
                                   (2, 3, 3000000000, 0.5, 'c', NULL, 2)) \
             ORDER BY 1",
        )
        .expect("create");
        let names = tp
            .query("SELECT name FROM perfetto_table_info('t')")
            .expect("names")
            .rows;
        assert_eq!(names.len(), 8);
        assert_eq!(
            info(&tp, "t"),
            [
                row(0, "column1", "id", 0, 0),
                row(1, "column2", "uint32", 0, 3),
                row(2, "column3", "int64", 0, 2),
                row(3, "column4", "double", 0, 3),
                row(4, "column5", "string", 0, 2),
                row(5, "column6", "uint32", 1, 3),
                row(6, "column7", "uint32", 0, 1),
                row(7, "_auto_id", "id", 0, 0),
            ]
        );
    }

    #[test]
    fn only_perfetto_tables_are_described() {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        let e = tp
            .query("SELECT * FROM perfetto_table_info('nope')")
            .expect_err("no such table");
        assert!(
            e.to_string().contains("Perfetto table 'nope' not found"),
            "{e}"
        );
        assert!(
            tp.query("SELECT * FROM perfetto_table_info('slice')")
                .is_err()
        );
    }
}
