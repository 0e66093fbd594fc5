//! Frozen columnar tables: what the virtual tables read. Each column is one
//! typed vector (integers, nullable integers, doubles, nullable doubles,
//! pooled strings); a table may declare a column it is sorted by so range
//! constraints on it become a binary search.

use std::sync::Arc;

use crate::storage::strings::{StrId, StringPool};

/// One column's values, each kind stored as compactly as its values
/// allow: an id column is the row index and stores nothing, integers that
/// fit 32 bits take 4 bytes, and nullable integers are a value per row and
/// a bit (nothing at all when every row is NULL), not a 16-byte `Option`.
#[derive(Debug)]
pub enum ColumnData {
    /// The row index (an `id` column).
    RowIndex(usize),
    /// Non-null integers.
    Int(Vec<i64>),
    /// Non-null integers that fit 32 bits.
    Int32(Vec<i32>),
    /// Nullable integers.
    OptInt(NullableInts),
    /// Non-null doubles.
    Real(Vec<f64>),
    /// Nullable doubles.
    OptReal(Vec<Option<f64>>),
    /// Pooled strings (NULL as [`StrId::NULL`]).
    Str(Vec<StrId>),
}

/// Nullable integers: the values (0 where NULL) and one bit per row set
/// where a value is present; both empty when every row is NULL.
#[derive(Debug, Default)]
pub struct NullableInts {
    values: Vec<i64>,
    present: Vec<u64>,
}

impl NullableInts {
    /// Packs `v`.
    pub fn new(v: Vec<Option<i64>>) -> Self {
        if v.iter().all(Option::is_none) {
            return NullableInts::default();
        }
        let mut present = vec![0u64; v.len().div_ceil(64)];
        let mut values = Vec::with_capacity(v.len());
        for (i, x) in v.into_iter().enumerate() {
            if x.is_some() {
                if let Some(w) = present.get_mut(i / 64) {
                    *w |= 1 << (i % 64);
                }
            }
            values.push(x.unwrap_or(0));
        }
        NullableInts { values, present }
    }

    /// The value of `row` (None for NULL or past the end).
    pub fn get(&self, row: usize) -> Option<i64> {
        let w = self.present.get(row / 64)?;
        if w & (1 << (row % 64)) == 0 {
            return None;
        }
        self.values.get(row).copied()
    }
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
        let is_index = v
            .iter()
            .enumerate()
            .all(|(i, x)| i64::try_from(i).is_ok_and(|i| i == *x));
        let data = if is_index {
            ColumnData::RowIndex(v.len())
        } else if v.iter().all(|x| i32::try_from(*x).is_ok()) {
            ColumnData::Int32(v.iter().map(|x| *x as i32).collect())
        } else {
            ColumnData::Int(v)
        };
        Column {
            name,
            sql_type: "BIGINT",
            data,
        }
    }

    /// A column of nullable integers.
    pub fn opt_int(name: &'static str, v: Vec<Option<i64>>) -> Self {
        Column {
            name,
            sql_type: "BIGINT",
            data: ColumnData::OptInt(NullableInts::new(v)),
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
            ColumnData::RowIndex(n) => (row < *n).then_some(row as i64),
            ColumnData::Int(v) => v.get(row).copied(),
            ColumnData::Int32(v) => v.get(row).map(|x| i64::from(*x)),
            ColumnData::OptInt(v) => v.get(row),
            _ => None,
        }
    }

    /// Whether the column holds non-null integers that never descend.
    pub fn ascends(&self) -> bool {
        match &self.data {
            ColumnData::RowIndex(_) => true,
            ColumnData::Int(v) => v.windows(2).all(|w| w[0] <= w[1]),
            ColumnData::Int32(v) => v.windows(2).all(|w| w[0] <= w[1]),
            _ => false,
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
            ColumnData::RowIndex(_) | ColumnData::Int(_) | ColumnData::Int32(_) => {
                c.int_at(row).map_or(Cell::Null, Cell::Int)
            }
            ColumnData::OptInt(v) => v.get(row).map_or(Cell::Null, Cell::Int),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_columns_read_back_what_they_were_given() {
        let id = Column::int("id", vec![0, 1, 2]);
        assert!(matches!(id.data, ColumnData::RowIndex(3)));
        assert_eq!(id.int_at(2), Some(2));
        assert_eq!(id.int_at(3), None);
        let small = Column::int("s", vec![5, -7, 1]);
        assert!(matches!(small.data, ColumnData::Int32(_)));
        assert_eq!(small.int_at(1), Some(-7));
        let big = Column::int("b", vec![1, i64::MAX]);
        assert!(matches!(big.data, ColumnData::Int(_)));
        assert_eq!(big.int_at(1), Some(i64::MAX));
        let v: Vec<Option<i64>> = (0..130).map(|i| (i % 3 == 0).then_some(i * 10)).collect();
        let opt = Column::opt_int("o", v.clone());
        for (i, x) in v.iter().enumerate() {
            assert_eq!(opt.int_at(i), *x);
        }
        assert_eq!(opt.int_at(130), None);
        let none = Column::opt_int("n", vec![None; 10]);
        assert!(matches!(&none.data, ColumnData::OptInt(n) if n.values.is_empty()));
        assert_eq!(none.int_at(4), None);
        assert!(id.ascends() && !small.ascends() && big.ascends());
    }
}
