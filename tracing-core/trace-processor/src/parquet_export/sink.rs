//! One table's rows, as SQLite hands them over, into Arrow builders and
//! out to a Parquet file in record batches, so no table is ever held whole
//! in a second form: each batch of rows is encoded and its builders reused.

use std::fs::File;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use super::ExportError;
use crate::sql::public_schema::{ColumnType, PublicTable};
use crate::sql::streaming::{Cell, RowSink};

/// Rows per record batch handed to the Parquet writer.
pub(super) const BATCH_ROWS: usize = 64 * 1024;

/// One column's builder.
pub(super) enum Builder {
    Int(Int64Builder),
    Real(Float64Builder),
    Text(StringBuilder),
}

impl Builder {
    pub(super) fn new(ty: ColumnType) -> Builder {
        match ty {
            ColumnType::Int => Builder::Int(Int64Builder::with_capacity(BATCH_ROWS)),
            ColumnType::Real => Builder::Real(Float64Builder::with_capacity(BATCH_ROWS)),
            ColumnType::Text => Builder::Text(StringBuilder::with_capacity(BATCH_ROWS, 0)),
        }
    }

    pub(super) fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Real(b) => Arc::new(b.finish()),
            Builder::Text(b) => Arc::new(b.finish()),
        }
    }
}

/// The Arrow type a column of `ty` is written as.
pub(super) fn arrow_type(ty: ColumnType) -> arrow_schema::DataType {
    match ty {
        ColumnType::Int => arrow_schema::DataType::Int64,
        ColumnType::Real => arrow_schema::DataType::Float64,
        ColumnType::Text => arrow_schema::DataType::Utf8,
    }
}

/// The Arrow fields of `table`'s columns: a column declared `NOT NULL`
/// is a required field, any other nullable.
fn fields(table: &PublicTable) -> Vec<Field> {
    table
        .columns
        .iter()
        .enumerate()
        .map(|(i, (name, ty))| {
            let required = table.not_null.get(i).copied().unwrap_or(false);
            Field::new(name, arrow_type(*ty), !required)
        })
        .collect()
}

/// A Parquet writer of `table`'s schema into `file`.
pub(super) fn writer(
    table: &PublicTable,
    file: File,
    compression: Compression,
) -> Result<(SchemaRef, ArrowWriter<File>), ExportError> {
    let schema: SchemaRef = Arc::new(Schema::new(fields(table)));
    let props = WriterProperties::builder()
        .set_compression(compression)
        .build();
    let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))?;
    Ok((schema, writer))
}

/// Writes one table's rows to one Parquet file, or with no file collects
/// them as whole columns ([`TableSink::collect`]).
pub(super) struct TableSink<'a> {
    table: &'a PublicTable,
    schema: SchemaRef,
    writer: Option<ArrowWriter<File>>,
    /// Whole columns are kept, not written in batches.
    collect: bool,
    builders: Vec<Builder>,
    /// The column the next cell goes to.
    col: usize,
    /// Rows in the builders now.
    pending: usize,
    /// Rows written in all.
    pub(super) rows: u64,
    /// The first failure; later rows are ignored once it is set.
    pub(super) error: Option<ExportError>,
}

impl<'a> TableSink<'a> {
    /// A sink writing `table` to `file`.
    pub(super) fn new(
        table: &'a PublicTable,
        file: File,
        compression: Compression,
    ) -> Result<Self, ExportError> {
        let (schema, writer) = writer(table, file, compression)?;
        Ok(TableSink {
            table,
            schema,
            writer: Some(writer),
            collect: false,
            builders: table
                .columns
                .iter()
                .map(|(_, ty)| Builder::new(*ty))
                .collect(),
            col: 0,
            pending: 0,
            rows: 0,
            error: None,
        })
    }

    /// A sink that keeps `table`'s rows as whole columns.
    pub(super) fn collect(table: &'a PublicTable) -> Self {
        let fields = fields(table);
        TableSink {
            table,
            schema: Arc::new(Schema::new(fields)),
            writer: None,
            collect: true,
            builders: table
                .columns
                .iter()
                .map(|(_, ty)| Builder::new(*ty))
                .collect(),
            col: 0,
            pending: 0,
            rows: 0,
            error: None,
        }
    }

    /// The collected columns and their length.
    pub(super) fn into_columns(mut self) -> Result<(Vec<ArrayRef>, usize), ExportError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let n = self.pending;
        Ok((self.builders.iter_mut().map(Builder::finish).collect(), n))
    }

    /// Writes what the builders hold as one record batch.
    fn flush(&mut self) -> Result<(), ExportError> {
        if self.pending == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)?;
        if let Some(w) = self.writer.as_mut() {
            w.write(&batch)?;
        }
        self.rows += self.pending as u64;
        self.pending = 0;
        Ok(())
    }

    /// Writes the last rows and the file's footer.
    pub(super) fn finish(mut self) -> Result<u64, ExportError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.flush()?;
        if let Some(w) = self.writer.take() {
            w.close()?;
        }
        Ok(self.rows)
    }

    fn mismatch(&self, found: &'static str) -> ExportError {
        let (column, ty) = self
            .table
            .columns
            .get(self.col)
            .map_or(("?", ColumnType::Text), |(n, t)| (n.as_str(), *t));
        ExportError::ValueType {
            table: self.table.name.clone(),
            column: column.to_owned(),
            expected: ty,
            found,
        }
    }

    fn push(&mut self, cell: Cell<'_>) -> Result<(), ExportError> {
        let Some(b) = self.builders.get_mut(self.col) else {
            return Err(ExportError::ColumnCount {
                table: self.table.name.clone(),
            });
        };
        match (b, cell) {
            (Builder::Int(b), Cell::Null) => b.append_null(),
            (Builder::Real(b), Cell::Null) => b.append_null(),
            (Builder::Text(b), Cell::Null) => b.append_null(),
            (Builder::Int(b), Cell::Int(v)) => b.append_value(v),
            (Builder::Real(b), Cell::Real(v)) => b.append_value(v),
            // SQLite hands an integer-valued double of a DOUBLE column as
            // an integer only when a view computes it; exact either way.
            (Builder::Real(b), Cell::Int(v)) => b.append_value(v as f64),
            (Builder::Text(b), Cell::Text(t)) => match std::str::from_utf8(t) {
                Ok(s) => b.append_value(s),
                Err(_) => b.append_value(String::from_utf8_lossy(t)),
            },
            // A number in a text column is written as SQLite prints it
            // (`CAST(x AS TEXT)`), so no value is lost.
            (Builder::Text(b), Cell::Int(v)) => b.append_value(v.to_string()),
            (Builder::Text(b), Cell::Real(v)) => b.append_value(v.to_string()),
            (Builder::Int(_), Cell::Real(_)) => return Err(self.mismatch("a double")),
            (Builder::Int(_) | Builder::Real(_), Cell::Text(_)) => {
                return Err(self.mismatch("text"));
            }
            (_, Cell::Blob(_)) => return Err(self.mismatch("bytes")),
        }
        Ok(())
    }
}

impl RowSink for TableSink<'_> {
    fn statement(&mut self, _sql: &str, columns: &[&str], _last: bool) {
        let same = columns.len() == self.table.columns.len()
            && columns
                .iter()
                .zip(&self.table.columns)
                .all(|(a, (b, _))| *a == b);
        if !same && self.error.is_none() {
            self.error = Some(ExportError::ColumnCount {
                table: self.table.name.clone(),
            });
        }
    }

    fn row(&mut self) {
        if self.error.is_some() {
            return;
        }
        if !self.collect && self.pending >= BATCH_ROWS {
            if let Err(e) = self.flush() {
                self.error = Some(e);
                return;
            }
        }
        self.col = 0;
        self.pending += 1;
    }

    fn cell(&mut self, cell: Cell<'_>) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.push(cell) {
            self.error = Some(e);
        }
        self.col += 1;
    }

    fn statement_done(&mut self) {}
}
