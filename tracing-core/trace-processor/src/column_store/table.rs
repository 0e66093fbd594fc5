//! Frozen columnar tables: what the virtual tables read. Each column is one
//! typed vector (integers, nullable integers, doubles, nullable doubles,
//! pooled strings); a table may declare a column it is sorted by so range
//! constraints on it become a binary search.

use std::sync::Arc;

use crate::column_store::encodings::{Coded, choose_ints, choose_strs, choose_strs_iter};
use crate::column_store::strings::{StrId, StringPool};

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
    OptReal(Nullable<f64>),
    /// Pooled strings (NULL as [`StrId::NULL`]).
    Str(Vec<StrId>),
    /// Integers of a small span or in runs, strings of few distinct
    /// values: narrower than a value per row (`column_store/encodings.rs`).
    Coded(Coded),
    /// Another table's column read through a row number per row.
    Lookup(Lookup),
}

/// A column that stores no values of its own: row `r` holds what column
/// `col` of `source` holds at row `rows[r]` (NULL where that is
/// [`Lookup::NO_ROW`]). A table built from another's rows (a slice's name,
/// thread and process beside each of its rows) keeps one list of row
/// numbers for all the columns it takes from that table, where a copy
/// per column took 4 to 8 bytes a row each. Strings are ids of the source's
/// pool, which must be the reading table's too.
#[derive(Debug)]
pub struct Lookup {
    /// Per row, the source's row.
    pub rows: Arc<[u32]>,
    /// The table read.
    pub source: Arc<Table>,
    /// The column of `source` read.
    pub col: usize,
    /// Whether some row reads NULL (its kind alone does not say: a
    /// nullable column may hold no NULL among the rows read).
    pub has_null: bool,
}

impl Lookup {
    /// The row of no source row: reads NULL.
    pub const NO_ROW: u32 = u32::MAX;

    /// Column `col` of `source` read through `rows`.
    pub fn new(rows: Arc<[u32]>, source: Arc<Table>, col: usize) -> Self {
        let has_null = match source.columns.get(col) {
            // Many rows read through few source rows (a thread's context
            // beside each of its slices): each source row tested once.
            Some(c) if c.nullable() && source.len < rows.len() / 4 => {
                let null: Vec<bool> = (0..source.len).map(|r| c.is_null(r)).collect();
                rows.iter()
                    .any(|&r| null.get(r as usize).copied().unwrap_or(true))
            }
            Some(c) if c.nullable() => rows.iter().any(|&r| c.is_null(r as usize)),
            Some(_) => rows.iter().any(|&r| r as usize >= source.len),
            None => !rows.is_empty(),
        };
        Lookup {
            rows,
            source,
            col,
            has_null,
        }
    }

    /// The source's row for row `row` (None past the end or for
    /// [`Lookup::NO_ROW`]).
    #[inline]
    fn at(&self, row: usize) -> Option<usize> {
        let r = *self.rows.get(row)?;
        (r != Self::NO_ROW).then_some(r as usize)
    }

    /// The source column.
    fn column(&self) -> Option<&Column> {
        self.source.columns.get(self.col)
    }
}

impl ColumnData {
    /// Non-null integers stored as compactly as their values allow (the
    /// row index, an encoding of [`Coded`], 32 bits or 64); `v` is walked
    /// up to four times and collected once.
    pub fn ints(v: impl ExactSizeIterator<Item = i64> + Clone) -> ColumnData {
        let len = v.len();
        let is_index = v
            .clone()
            .enumerate()
            .all(|(i, x)| i64::try_from(i).is_ok_and(|i| i == x));
        if is_index {
            return ColumnData::RowIndex(len);
        }
        if let Some(c) = choose_ints(v.clone()) {
            return ColumnData::Coded(c);
        }
        if v.clone().all(|x| i32::try_from(x).is_ok()) {
            ColumnData::Int32(v.map(|x| x as i32).collect())
        } else {
            ColumnData::Int(v.collect())
        }
    }

    /// Pooled strings, coded when they have few distinct values.
    pub fn strs(v: Vec<StrId>) -> ColumnData {
        match choose_strs(&v) {
            Some(c) => ColumnData::Coded(c),
            None => ColumnData::Str(v),
        }
    }

    /// [`ColumnData::strs`] of the strings `v` gives (walked up to three
    /// times), collected only when they are stored plainly.
    pub fn strs_iter(v: impl ExactSizeIterator<Item = StrId> + Clone) -> ColumnData {
        match choose_strs_iter(v.clone()) {
            Some(c) => ColumnData::Coded(c),
            None => ColumnData::Str(v.collect()),
        }
    }
}

/// Nullable values: one bit per row, set where a value is present, and
/// the present values alone in row order (a NULL takes no value's room:
/// most args have no `real_value`, many no `int_value`); per 64 rows, how
/// many values come before them, so that a row's value is found in
/// constant time. All empty when every row is NULL.
#[derive(Debug)]
pub struct Nullable<T> {
    values: Vec<T>,
    present: Vec<u64>,
    /// Per word of `present`, the values of the rows before it.
    before: Vec<u32>,
}

impl<T> Default for Nullable<T> {
    fn default() -> Self {
        Nullable {
            values: Vec::new(),
            present: Vec::new(),
            before: Vec::new(),
        }
    }
}

impl<T: Copy> Nullable<T> {
    /// Packs `v`, each value converted by `f`.
    fn pack<U: Copy>(v: Vec<Option<U>>, f: impl Fn(U) -> T) -> Self {
        Self::pack_iter(v.iter().copied(), f)
    }

    /// Packs the values `v` gives (walked twice: to count those present,
    /// then to store them), each converted by `f`, without collecting
    /// them as `Option`s first.
    pub fn pack_iter<U>(
        v: impl ExactSizeIterator<Item = Option<U>> + Clone,
        f: impl Fn(U) -> T,
    ) -> Self {
        let count = v.clone().filter(Option::is_some).count();
        Self::pack_counted(v, count, f)
    }

    /// [`Nullable::pack_iter`] of values of which `count` are present
    /// (counted by the caller's own walk).
    fn pack_counted<U>(
        v: impl ExactSizeIterator<Item = Option<U>>,
        count: usize,
        f: impl Fn(U) -> T,
    ) -> Self {
        if count == 0 {
            return Nullable::default();
        }
        let words = v.len().div_ceil(64);
        let mut present = vec![0u64; words];
        let mut before = Vec::with_capacity(words);
        let mut values = Vec::with_capacity(count);
        for (i, x) in v.enumerate() {
            if i % 64 == 0 {
                before.push(u32::try_from(values.len()).unwrap_or(u32::MAX));
            }
            if let Some(x) = x {
                if let Some(w) = present.get_mut(i / 64) {
                    *w |= 1 << (i % 64);
                }
                values.push(f(x));
            }
        }
        Nullable {
            values,
            present,
            before,
        }
    }

    /// The value of `row` (None for NULL or past the end).
    pub fn get(&self, row: usize) -> Option<T> {
        let w = *self.present.get(row / 64)?;
        let bit = 1u64 << (row % 64);
        if w & bit == 0 {
            return None;
        }
        let before = *self.before.get(row / 64)? as usize;
        self.values
            .get(before + (w & (bit - 1)).count_ones() as usize)
            .copied()
    }
}

/// Nullable integers, in 4 bytes each when every value fits 32 bits.
#[derive(Debug)]
pub enum NullableInts {
    /// Values that fit 32 bits.
    Narrow(Nullable<i32>),
    /// Any values.
    Wide(Nullable<i64>),
}

impl NullableInts {
    /// Packs `v`.
    pub fn new(v: Vec<Option<i64>>) -> Self {
        Self::pack_iter(v.iter().copied())
    }

    /// Packs the values `v` gives (walked up to three times), without
    /// collecting them first.
    pub fn pack_iter(v: impl ExactSizeIterator<Item = Option<i64>> + Clone) -> Self {
        // One walk counts the values and tells whether they fit 32 bits.
        let (count, fit) = v.clone().flatten().fold((0usize, true), |(n, fit), x| {
            (n + 1, fit && i32::try_from(x).is_ok())
        });
        if fit {
            NullableInts::Narrow(Nullable::pack_counted(v, count, |x| x as i32))
        } else {
            NullableInts::Wide(Nullable::pack_counted(v, count, |x| x))
        }
    }

    /// The value of `row` (None for NULL or past the end).
    pub fn get(&self, row: usize) -> Option<i64> {
        match self {
            NullableInts::Narrow(n) => n.get(row).map(i64::from),
            NullableInts::Wide(n) => n.get(row),
        }
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
    /// Per column, its rows in value order, built on first use
    /// ([`Table::order`]).
    pub orders: std::sync::Mutex<Vec<Option<Arc<[u32]>>>>,
}

impl Column {
    /// A column of non-null integers.
    pub fn int(name: &'static str, v: Vec<i64>) -> Self {
        Column {
            name,
            sql_type: "BIGINT",
            data: ColumnData::ints(v.iter().copied()),
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
            data: ColumnData::OptReal(Nullable::pack(v, |x| x)),
        }
    }

    /// A column of strings.
    pub fn str(name: &'static str, v: Vec<StrId>) -> Self {
        Column {
            name,
            sql_type: "TEXT",
            data: ColumnData::strs(v),
        }
    }

    /// A column of `source`'s column `col` read through `rows` (see
    /// [`Lookup`]), declared as that column is.
    pub fn lookup(name: &'static str, rows: Arc<[u32]>, source: Arc<Table>, col: usize) -> Self {
        let sql_type = source.columns.get(col).map_or("", |c| c.sql_type);
        Column {
            name,
            sql_type,
            data: ColumnData::Lookup(Lookup::new(rows, source, col)),
        }
    }

    /// An integer view of a cell, for comparisons (None for NULL or text).
    pub fn int_at(&self, row: usize) -> Option<i64> {
        match &self.data {
            ColumnData::RowIndex(n) => (row < *n).then_some(row as i64),
            ColumnData::Int(v) => v.get(row).copied(),
            ColumnData::Int32(v) => v.get(row).map(|x| i64::from(*x)),
            ColumnData::OptInt(v) => v.get(row),
            ColumnData::Coded(c) => c.int_at(row),
            ColumnData::Lookup(l) => l.column()?.int_at(l.at(row)?),
            _ => None,
        }
    }

    /// The pooled id of a string cell (None for another kind of column;
    /// [`StrId::NULL`] for NULL in a string column).
    pub fn str_at(&self, row: usize) -> Option<StrId> {
        match &self.data {
            ColumnData::Str(v) => v.get(row).copied(),
            ColumnData::Coded(c) => c.str_at(row),
            ColumnData::Lookup(l) => {
                let c = l.column()?;
                match l.at(row) {
                    Some(r) => c.str_at(r),
                    None => c.is_text().then_some(StrId::NULL),
                }
            }
            _ => None,
        }
    }

    /// Whether the cell of `row` is NULL (or past the end).
    pub fn is_null(&self, row: usize) -> bool {
        match &self.data {
            ColumnData::Real(v) => row >= v.len(),
            ColumnData::OptReal(v) => v.get(row).is_none(),
            ColumnData::Str(v) => v.get(row).is_none_or(|s| s.is_null()),
            ColumnData::Coded(c) if c.is_text() => c.str_at(row).is_none_or(|s| s.is_null()),
            ColumnData::Lookup(l) => l
                .at(row)
                .is_none_or(|r| l.column().is_none_or(|c| c.is_null(r))),
            _ => self.int_at(row).is_none(),
        }
    }

    /// Whether the column holds pooled strings.
    pub fn is_text(&self) -> bool {
        match &self.data {
            ColumnData::Str(_) => true,
            ColumnData::Coded(c) => c.is_text(),
            ColumnData::Lookup(l) => l.column().is_some_and(Column::is_text),
            _ => false,
        }
    }

    /// Whether the column holds integers.
    pub fn is_int(&self) -> bool {
        match &self.data {
            ColumnData::RowIndex(_)
            | ColumnData::Int(_)
            | ColumnData::Int32(_)
            | ColumnData::OptInt(_) => true,
            ColumnData::Coded(c) => !c.is_text(),
            ColumnData::Lookup(l) => l.column().is_some_and(Column::is_int),
            _ => false,
        }
    }

    /// Whether the column may hold NULL: its kind says (integers and
    /// doubles stored without a presence bit never do; strings may), and
    /// a lookup whether any row it reads is NULL.
    pub fn nullable(&self) -> bool {
        match &self.data {
            ColumnData::OptInt(_) | ColumnData::OptReal(_) | ColumnData::Str(_) => true,
            ColumnData::Coded(c) => c.is_text(),
            ColumnData::Lookup(l) => l.column().is_some_and(Column::is_text) || l.has_null,
            _ => false,
        }
    }

    /// Whether the column holds non-null integers that never descend.
    pub fn ascends(&self) -> bool {
        match &self.data {
            ColumnData::RowIndex(_) => true,
            ColumnData::Int(v) => v.windows(2).all(|w| w[0] <= w[1]),
            ColumnData::Int32(v) => v.windows(2).all(|w| w[0] <= w[1]),
            ColumnData::Coded(c) => c.ascends(),
            ColumnData::Lookup(l) if !l.has_null && self.is_int() => {
                let mut last = i64::MIN;
                (0..l.rows.len()).all(|r| {
                    let x = self.int_at(r).unwrap_or(i64::MIN);
                    let up = x >= last;
                    last = x;
                    up
                })
            }
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
            ColumnData::OptReal(v) => v.get(row).map_or(Cell::Null, Cell::Real),
            ColumnData::Str(v) => v
                .get(row)
                .and_then(|s| self.strings.get(*s))
                .map_or(Cell::Null, Cell::Str),
            ColumnData::Coded(x) if x.is_text() => x
                .str_at(row)
                .and_then(|s| self.strings.get(s))
                .map_or(Cell::Null, Cell::Str),
            ColumnData::Coded(x) => x.int_at(row).map_or(Cell::Null, Cell::Int),
            ColumnData::Lookup(l) => l.at(row).map_or(Cell::Null, |r| l.source.cell(r, l.col)),
        }
    }

    /// The pooled id of a string cell (None for another kind of column).
    pub fn str_id(&self, row: usize, col: usize) -> Option<StrId> {
        self.columns.get(col)?.str_at(row)
    }

    /// Whether `col` holds integers.
    pub fn is_int(&self, col: usize) -> bool {
        self.columns.get(col).is_some_and(Column::is_int)
    }

    /// Whether `col` holds pooled strings.
    pub fn is_text(&self, col: usize) -> bool {
        self.columns.get(col).is_some_and(Column::is_text)
    }

    /// The rows of `col` in value order (an index, built once on first use,
    /// as `CREATE INDEX` would, and kept): ascending as SQL orders them
    /// (NULL first; strings by their bytes, SQLite's BINARY collation), so
    /// the rows holding one value are one run. Ties keep row order.
    pub fn order(&self, col: usize) -> Arc<[u32]> {
        let mut orders = self
            .orders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if orders.len() < self.columns.len() {
            orders.resize(self.columns.len(), None);
        }
        if let Some(Some(o)) = orders.get(col) {
            return o.clone();
        }
        let n = u32::try_from(self.len).unwrap_or(u32::MAX);
        let mut rows: Vec<u32> = (0..n).collect();
        let Some(c) = self.columns.get(col) else {
            return keep_order(&mut orders, col, rows);
        };
        match &c.data {
            ColumnData::RowIndex(_) => {}
            _ if c.is_text() => {
                // Rank each distinct string by its bytes (SQLite's BINARY
                // collation), NULL first, then sort rows by rank: the text
                // of each distinct string is compared, not of each row.
                let sid = |r: u32| c.str_at(r as usize).unwrap_or(StrId::NULL);
                let mut ids: Vec<StrId> = rows.iter().map(|&r| sid(r)).collect();
                ids.sort_unstable_by_key(|s| s.0);
                ids.dedup();
                ids.sort_by(|a, b| {
                    let key = |s: &StrId| (*s != StrId::NULL, self.strings.get(*s).unwrap_or(""));
                    key(a).cmp(&key(b))
                });
                let rank: crate::hash::HashMap<StrId, u32> = ids
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (*s, u32::try_from(i).unwrap_or(u32::MAX)))
                    .collect();
                let mut keyed: Vec<(Option<u32>, u32)> = rows
                    .iter()
                    .map(|&r| (rank.get(&sid(r)).copied(), r))
                    .collect();
                keyed.sort_by_key(|&(k, _)| k);
                for (slot, (_, r)) in rows.iter_mut().zip(keyed) {
                    *slot = r;
                }
            }
            ColumnData::Real(v) => {
                rows.sort_by(|&a, &b| {
                    let x = v.get(a as usize).copied().unwrap_or(f64::NAN);
                    let y = v.get(b as usize).copied().unwrap_or(f64::NAN);
                    x.total_cmp(&y)
                });
            }
            ColumnData::OptReal(v) => {
                let key = |r: u32| v.get(r as usize);
                rows.sort_by(|&a, &b| match (key(a), key(b)) {
                    (Some(x), Some(y)) => x.total_cmp(&y),
                    (x, y) => x.is_some().cmp(&y.is_some()),
                });
            }
            _ if c.is_int() => sort_ints(&mut rows, c),
            _ => {
                // A lookup of doubles: NULL first, then by value.
                let key = |r: u32| match self.cell(r as usize, col) {
                    Cell::Real(x) => Some(x),
                    _ => None,
                };
                rows.sort_by(|&a, &b| match (key(a), key(b)) {
                    (Some(x), Some(y)) => x.total_cmp(&y),
                    (x, y) => x.is_some().cmp(&y.is_some()),
                });
            }
        }
        keep_order(&mut orders, col, rows)
    }

    /// The `CREATE TABLE` text SQLite is told the table's shape with (a
    /// column that cannot hold NULL declared `NOT NULL`, which
    /// `pragma_table_info` reports).
    pub fn schema(&self) -> String {
        let cols: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                let not_null = if c.nullable() { "" } else { " NOT NULL" };
                format!("\"{}\" {}{not_null}", c.name, c.sql_type)
            })
            .collect();
        format!("CREATE TABLE x({})", cols.join(", "))
    }
}

/// Sorts `rows` (in row order) by their integers in `c`, NULL first, ties
/// in row order: each row's key read once into a (key, row) pair and the
/// pairs sorted by key, stably (a comparison of two rows read both keys
/// through the column's kind; a stable sort takes the runs a column in
/// time order often holds as they are).
fn sort_ints(rows: &mut [u32], c: &Column) {
    let mut keyed: Vec<(Option<i64>, u32)> =
        rows.iter().map(|&r| (c.int_at(r as usize), r)).collect();
    keyed.sort_by_key(|&(k, _)| k);
    for (slot, (_, r)) in rows.iter_mut().zip(keyed) {
        *slot = r;
    }
}

/// Keeps `rows` as the value order of column `col` in `orders`.
fn keep_order(orders: &mut [Option<Arc<[u32]>>], col: usize, rows: Vec<u32>) -> Arc<[u32]> {
    let o: Arc<[u32]> = rows.into();
    if let Some(slot) = orders.get_mut(col) {
        *slot = Some(o.clone());
    }
    o
}

#[cfg(test)]
mod tests;
