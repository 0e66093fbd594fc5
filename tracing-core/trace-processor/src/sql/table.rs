//! Frozen columnar tables: what the virtual tables read. Each column is one
//! typed vector (integers, nullable integers, doubles, nullable doubles,
//! pooled strings); a table may declare a column it is sorted by so range
//! constraints on it become a binary search.

use std::sync::Arc;

use crate::storage::strings::{StrId, StringPool};

/// One column's values.
#[derive(Debug)]
pub enum ColumnData {
    /// Non-null integers.
    Int(Vec<i64>),
    /// Nullable integers.
    OptInt(Vec<Option<i64>>),
    /// Non-null doubles.
    Real(Vec<f64>),
    /// Nullable doubles.
    OptReal(Vec<Option<f64>>),
    /// Pooled strings (NULL as [`StrId::NULL`]).
    Str(Vec<StrId>),
}

/// One cell, borrowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A double.
    Real(f64),
    /// A string.
    Str(&'a str),
}

/// A named column.
#[derive(Debug)]
pub struct Column {
    /// SQL name.
    pub name: &'static str,
    /// SQL declared type.
    pub sql_type: &'static str,
    /// Values.
    pub data: ColumnData,
}

/// A table of equally long columns.
#[derive(Debug)]
pub struct Table {
    /// SQL name.
    pub name: &'static str,
    /// Columns; column 0 is `id` (equal to the row index) when `has_id`.
    pub columns: Vec<Column>,
    /// Row count.
    pub len: usize,
    /// Whether column 0 is an id equal to the row index.
    pub has_id: bool,
    /// A column whose values ascend with the row index.
    pub sorted_by: Option<usize>,
    /// The strings the columns refer to.
    pub strings: Arc<StringPool>,
}

impl Column {
    /// A column of non-null integers.
    pub fn int(name: &'static str, v: Vec<i64>) -> Self {
        Column {
            name,
            sql_type: "BIGINT",
            data: ColumnData::Int(v),
        }
    }

    /// A column of nullable integers.
    pub fn opt_int(name: &'static str, v: Vec<Option<i64>>) -> Self {
        Column {
            name,
            sql_type: "BIGINT",
            data: ColumnData::OptInt(v),
        }
    }

    /// A column of doubles.
    pub fn real(name: &'static str, v: Vec<f64>) -> Self {
        Column {
            name,
            sql_type: "DOUBLE",
            data: ColumnData::Real(v),
        }
    }

    /// A column of nullable doubles.
    pub fn opt_real(name: &'static str, v: Vec<Option<f64>>) -> Self {
        Column {
            name,
            sql_type: "DOUBLE",
            data: ColumnData::OptReal(v),
        }
    }

    /// A column of strings.
    pub fn str(name: &'static str, v: Vec<StrId>) -> Self {
        Column {
            name,
            sql_type: "TEXT",
            data: ColumnData::Str(v),
        }
    }

    /// An integer view of a cell, for comparisons (None for NULL or text).
    pub fn int_at(&self, row: usize) -> Option<i64> {
        match &self.data {
            ColumnData::Int(v) => v.get(row).copied(),
            ColumnData::OptInt(v) => v.get(row).copied().flatten(),
            _ => None,
        }
    }
}

impl Table {
    /// The cell at (row, column).
    pub fn cell(&self, row: usize, col: usize) -> Cell<'_> {
        let Some(c) = self.columns.get(col) else {
            return Cell::Null;
        };
        match &c.data {
            ColumnData::Int(v) => v.get(row).map_or(Cell::Null, |x| Cell::Int(*x)),
            ColumnData::OptInt(v) => v.get(row).copied().flatten().map_or(Cell::Null, Cell::Int),
            ColumnData::Real(v) => v.get(row).map_or(Cell::Null, |x| Cell::Real(*x)),
            ColumnData::OptReal(v) => v.get(row).copied().flatten().map_or(Cell::Null, Cell::Real),
            ColumnData::Str(v) => v
                .get(row)
                .and_then(|s| self.strings.get(*s))
                .map_or(Cell::Null, Cell::Str),
        }
    }

    /// The `CREATE TABLE` text SQLite is told the table's shape with.
    pub fn schema(&self) -> String {
        let cols: Vec<String> = self
            .columns
            .iter()
            .map(|c| format!("\"{}\" {}", c.name, c.sql_type))
            .collect();
        format!("CREATE TABLE x({})", cols.join(", "))
    }
}
