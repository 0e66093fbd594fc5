//! Reading a stored column fast: a cell as the native aggregates see it
//! ([`V`]: a double's NaN is NULL, as SQLite reads it from a virtual
//! table), and [`scan`], which visits the selected rows of one column with
//! the column's kind and the selection's form decided once, outside the
//! loop, so each loop is a plain walk over one vector.

use crate::column_store::encodings::Coded;
use crate::column_store::strings::StrId;
use crate::column_store::table::{Cell, ColumnData, Nullable, NullableInts, Table};

/// A cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum V {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A double (never NaN).
    Real(f64),
    /// A pooled string (never [`StrId::NULL`]).
    Str(StrId),
}

/// One column of a table, by kind.
pub(crate) enum Reader<'a> {
    /// The row index.
    Index(usize),
    /// 64-bit integers.
    I64(&'a [i64]),
    /// 32-bit integers.
    I32(&'a [i32]),
    /// Nullable integers.
    OptInt(&'a NullableInts),
    /// Doubles.
    Real(&'a [f64]),
    /// Nullable doubles.
    OptReal(&'a Nullable<f64>),
    /// Strings.
    Str(&'a [StrId]),
    /// Narrow integers, runs or coded strings.
    Coded(&'a Coded),
    /// A column read through another table's ([`ColumnData::Lookup`]):
    /// each cell by the table's own accessors.
    Via(&'a Table, usize),
    /// No such column: NULLs.
    Missing,
}

impl Reader<'_> {
    /// Column `col` of `table`.
    pub(crate) fn of(table: &Table, col: usize) -> Reader<'_> {
        match table.columns.get(col).map(|c| &c.data) {
            Some(ColumnData::RowIndex(n)) => Reader::Index(*n),
            Some(ColumnData::Int(v)) => Reader::I64(v),
            Some(ColumnData::Int32(v)) => Reader::I32(v),
            Some(ColumnData::OptInt(v)) => Reader::OptInt(v),
            Some(ColumnData::Real(v)) => Reader::Real(v),
            Some(ColumnData::OptReal(v)) => Reader::OptReal(v),
            Some(ColumnData::Str(v)) => Reader::Str(v),
            Some(ColumnData::Coded(c)) => Reader::Coded(c),
            Some(ColumnData::Lookup(_)) => Reader::Via(table, col),
            None => Reader::Missing,
        }
    }

    /// Whether it holds doubles.
    pub(crate) fn is_real(&self) -> bool {
        match self {
            Reader::Real(_) | Reader::OptReal(_) => true,
            Reader::Via(t, c) => !t.is_int(*c) && !t.is_text(*c),
            _ => false,
        }
    }

    /// Whether it holds strings.
    pub(crate) fn is_text(&self) -> bool {
        match self {
            Reader::Str(_) => true,
            Reader::Coded(c) => c.is_text(),
            Reader::Via(t, c) => t.is_text(*c),
            _ => false,
        }
    }

    /// The cell of `row`.
    #[inline]
    pub(crate) fn get(&self, row: usize) -> V {
        match self {
            Reader::Index(n) => index(*n, row),
            Reader::I64(v) => int(v.get(row).copied()),
            Reader::I32(v) => int(v.get(row).map(|x| i64::from(*x))),
            Reader::OptInt(v) => int(v.get(row)),
            Reader::Real(v) => real(v.get(row).copied()),
            Reader::OptReal(v) => real(v.get(row)),
            Reader::Str(v) => string(v.get(row).copied()),
            Reader::Coded(c) => coded(c, row),
            Reader::Via(t, c) => via(t, *c, row),
            Reader::Missing => V::Null,
        }
    }
}

/// The cell of `row` of column `col` of `t`, read by the table's accessors.
#[inline]
fn via(t: &Table, col: usize, row: usize) -> V {
    if let Some(s) = t.str_id(row, col) {
        return string(Some(s));
    }
    match t.cell(row, col) {
        Cell::Int(x) => V::Int(x),
        Cell::Real(x) => real(Some(x)),
        Cell::Null | Cell::Str(_) => V::Null,
    }
}

/// The cell of `row` of a coded column.
#[inline]
fn coded(c: &Coded, row: usize) -> V {
    if c.is_text() {
        string(c.str_at(row))
    } else {
        int(c.int_at(row))
    }
}

#[inline]
fn index(n: usize, row: usize) -> V {
    if row < n { V::Int(row as i64) } else { V::Null }
}

#[inline]
fn int(x: Option<i64>) -> V {
    x.map_or(V::Null, V::Int)
}

#[inline]
fn real(x: Option<f64>) -> V {
    match x {
        Some(x) if !x.is_nan() => V::Real(x),
        _ => V::Null,
    }
}

#[inline]
fn string(s: Option<StrId>) -> V {
    match s {
        Some(s) if s != StrId::NULL => V::Str(s),
        _ => V::Null,
    }
}

/// The rows a pass visits: a range of rows, or a list.
pub(crate) enum Sel {
    /// Rows `a..b`.
    Range(usize, usize),
    /// These rows.
    List(Vec<u32>),
}

impl Sel {
    /// How many rows.
    pub(crate) fn len(&self) -> usize {
        match self {
            Sel::Range(a, b) => b.saturating_sub(*a),
            Sel::List(l) => l.len(),
        }
    }

    /// The first row, if any.
    pub(crate) fn first(&self) -> Option<usize> {
        match self {
            Sel::Range(a, b) => (a < b).then_some(*a),
            Sel::List(l) => l.first().map(|r| *r as usize),
        }
    }
}

/// Calls `f(position, row, cell)` for each selected row of `reader`'s
/// column, in the selection's order.
#[inline]
pub(crate) fn scan(reader: &Reader<'_>, sel: &Sel, f: impl FnMut(usize, usize, V)) {
    match sel {
        Sel::Range(a, b) => walk(reader, (*a..*b).enumerate(), f),
        Sel::List(l) => walk(reader, l.iter().map(|r| *r as usize).enumerate(), f),
    }
}

#[inline]
fn walk(
    reader: &Reader<'_>,
    rows: impl Iterator<Item = (usize, usize)>,
    mut f: impl FnMut(usize, usize, V),
) {
    match reader {
        Reader::Index(n) => rows.for_each(|(i, r)| f(i, r, index(*n, r))),
        Reader::I64(v) => rows.for_each(|(i, r)| f(i, r, int(v.get(r).copied()))),
        Reader::I32(v) => rows.for_each(|(i, r)| f(i, r, int(v.get(r).map(|x| i64::from(*x))))),
        Reader::OptInt(v) => rows.for_each(|(i, r)| f(i, r, int(v.get(r)))),
        Reader::Real(v) => rows.for_each(|(i, r)| f(i, r, real(v.get(r).copied()))),
        Reader::OptReal(v) => rows.for_each(|(i, r)| f(i, r, real(v.get(r)))),
        Reader::Str(v) => rows.for_each(|(i, r)| f(i, r, string(v.get(r).copied()))),
        Reader::Coded(c) if c.is_text() => rows.for_each(|(i, r)| f(i, r, string(c.str_at(r)))),
        Reader::Coded(c) => rows.for_each(|(i, r)| f(i, r, int(c.int_at(r)))),
        Reader::Via(t, c) => rows.for_each(|(i, r)| f(i, r, via(t, *c, r))),
        Reader::Missing => rows.for_each(|(i, r)| f(i, r, V::Null)),
    }
}
