//! A table read straight from the columnar storage into Parquet: each
//! record batch's arrays built from the stored vectors of a range of rows
//! (no SQL, no per-cell dispatch through SQLite), with a view's computed
//! columns, collected through SQL beforehand, sliced in beside them.

use std::fs::File;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use parquet::basic::Compression;

use super::ExportError;
use super::sink::{BATCH_ROWS, writer};
use crate::column_store::table::{Cell, Table};
use crate::sql::public_schema::{ColumnType, PublicTable};
use crate::sql::read_plan::ColumnSource;

/// Writes `table`'s rows as `exported` lists them (`sources` per column;
/// the computed ones taken in order from `computed`, each as long as the
/// table); the rows written.
pub(super) fn write(
    table: &Table,
    exported: &PublicTable,
    sources: &[ColumnSource],
    computed: &[ArrayRef],
    file: File,
    compression: Compression,
) -> Result<u64, ExportError> {
    let (schema, mut w) = writer(exported, file, compression)?;
    let mut start = 0;
    while start < table.len {
        let n = BATCH_ROWS.min(table.len - start);
        let mut next_computed = computed.iter();
        let mut arrays = Vec::with_capacity(sources.len());
        for ((name, ty), source) in exported.columns.iter().zip(sources) {
            arrays.push(match source {
                ColumnSource::Stored(col) => stored(table, *col, *ty, start, n, exported, name)?,
                ColumnSource::Computed => next_computed
                    .next()
                    .ok_or_else(|| ExportError::ColumnCount {
                        table: exported.name.clone(),
                    })?
                    .slice(start, n),
            });
        }
        w.write(&RecordBatch::try_new(schema.clone(), arrays)?)?;
        start += n;
    }
    w.close()?;
    Ok(table.len as u64)
}

/// Rows `start..start + n` of stored column `col` as an array of `ty`.
fn stored(
    table: &Table,
    col: usize,
    ty: ColumnType,
    start: usize,
    n: usize,
    exported: &PublicTable,
    name: &str,
) -> Result<ArrayRef, ExportError> {
    let mismatch = |found| ExportError::ValueType {
        table: exported.name.clone(),
        column: name.to_owned(),
        expected: ty,
        found,
    };
    let rows = start..start + n;
    Ok(match ty {
        ColumnType::Int => {
            let mut b = Int64Builder::with_capacity(n);
            for r in rows {
                match table.cell(r, col) {
                    Cell::Int(v) => b.append_value(v),
                    Cell::Null => b.append_null(),
                    Cell::Real(_) => return Err(mismatch("a double")),
                    Cell::Str(_) => return Err(mismatch("text")),
                }
            }
            std::sync::Arc::new(b.finish())
        }
        ColumnType::Real => {
            let mut b = Float64Builder::with_capacity(n);
            for r in rows {
                match table.cell(r, col) {
                    // SQLite has no NaN: a NaN a table holds is NULL in
                    // every SQL answer, and so in the dataset.
                    Cell::Real(v) if v.is_nan() => b.append_null(),
                    Cell::Real(v) => b.append_value(v),
                    Cell::Int(v) => b.append_value(v as f64),
                    Cell::Null => b.append_null(),
                    Cell::Str(_) => return Err(mismatch("text")),
                }
            }
            std::sync::Arc::new(b.finish())
        }
        ColumnType::Text => {
            let mut b = StringBuilder::with_capacity(n, n * 16);
            for r in rows {
                match table.cell(r, col) {
                    Cell::Str(s) => b.append_value(s),
                    Cell::Null => b.append_null(),
                    Cell::Int(v) => b.append_value(v.to_string()),
                    Cell::Real(v) => b.append_value(v.to_string()),
                }
            }
            std::sync::Arc::new(b.finish())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column_store::table::Column;
    use arrow_array::Array;

    #[test]
    fn a_stored_nan_is_null_as_sql_answers_it() {
        let table = Table {
            name: "t",
            columns: vec![Column::opt_real("v", vec![Some(1.5), Some(f64::NAN), None])],
            len: 3,
            has_id: false,
            sorted_by: None,
            strings: Default::default(),
            orders: Default::default(),
        };
        let exported = PublicTable {
            name: "t".into(),
            columns: vec![("v".into(), ColumnType::Real)],
            not_null: vec![false],
        };
        let a = stored(&table, 0, ColumnType::Real, 0, 3, &exported, "v").unwrap();
        let a = a
            .as_any()
            .downcast_ref::<arrow_array::Float64Array>()
            .unwrap();
        assert_eq!(a.value(0), 1.5);
        assert!(a.is_null(1), "NaN must be written as null");
        assert!(a.is_null(2));
    }
}
