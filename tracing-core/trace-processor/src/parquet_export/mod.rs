//! Every table of a loaded trace written as Parquet, for engines that read
//! many traces at once (DuckDB, DataFusion, Spark, Trino): one file per
//! table and trace, laid out as a hive-partitioned dataset,
//! `DIR/TABLE/trace=ID/part-0.parquet`, so the readers see one table per
//! name with a `trace` column taken from the path. Each column's type comes
//! from the SQL schema (`schema.rs`), never from one trace's values, so all
//! traces of a dataset share one schema and a trace added later fits.
//!
//! A file is written under a temporary name and renamed when complete: a
//! reader globbing `*.parquet` never sees half a file, and exporting a
//! trace again replaces its partition's files only.

mod sink;
mod stored;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use crate::sql::public_schema::{ColumnType, PublicTable};
pub use crate::trace_ids::trace_ids;
pub use parquet::basic::Compression;

use crate::TraceProcessor;
use crate::column_store::table::Table;
use crate::sql::read_plan::{ColumnSource, Source, plan, select};
use sink::TableSink;

/// What an export writes.
#[derive(Debug, Clone, Copy)]
pub struct ExportOptions {
    /// The internal tables too (`__intrinsic_*`), not only the public tables
    /// and views.
    pub internal: bool,
    /// The pages' compression (Snappy by default, what every reader reads).
    pub compression: Compression,
    /// Threads writing tables at once (this one included; at least one).
    pub threads: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            internal: false,
            compression: Compression::SNAPPY,
            threads: 1,
        }
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Files (one per table).
    pub files: usize,
    /// Rows over all tables.
    pub rows: u64,
    /// Bytes of Parquet written.
    pub bytes: u64,
    /// Views left out as other names of exported ones, each as
    /// `NAME (OTHER)`: `slices (slice)`, `raw (ftrace_event)`.
    pub aliases_left_out: Vec<String>,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Reading a table failed.
    #[error(transparent)]
    Query(#[from] crate::Error),
    /// Writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// The Parquet writer refused.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// Arrow refused a batch.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A value does not fit its column's type.
    #[error("{table}.{column}: a {expected:?} column holds {found}")]
    ValueType {
        /// The table or view.
        table: String,
        /// The column.
        column: String,
        /// The column's type.
        expected: ColumnType,
        /// What was found.
        found: &'static str,
    },
    /// A table answered with other columns than its schema lists.
    #[error("{table}: its rows do not have the columns its schema lists")]
    ColumnCount {
        /// The table or view.
        table: String,
    },
    /// The trace's name cannot be a partition value.
    #[error("{0:?} cannot name a trace in a dataset (empty, or only dots)")]
    TraceId(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The directory of `table`'s partition for trace `id` under `dir`.
pub fn partition_dir(dir: &Path, table: &str, id: &str) -> PathBuf {
    dir.join(table).join(format!("trace={id}"))
}

impl TraceProcessor {
    /// Writes every public table (see [`TraceProcessor::public_tables`]) as
    /// `dir/TABLE/trace=ID/part-0.parquet`, replacing what that trace's
    /// partitions held; a view that is only another name of an exported
    /// one (`slices`, `raw`) is left out. Tables and views that project one
    /// table are read from its columns, not through SQL (`plan.rs`).
    pub fn export_parquet(
        &self,
        dir: &Path,
        id: &str,
        options: &ExportOptions,
    ) -> Result<ExportSummary, ExportError> {
        if id.is_empty() || id.trim_matches('.').is_empty() || id.contains(['/', '\\', '=']) {
            return Err(ExportError::TraceId(id.to_owned()));
        }
        let mut summary = ExportSummary::default();
        // Tables read from storage are written by worker threads while
        // this thread, SQLite's, reads what needs SQL; a one-slot queue
        // keeps at most one table waiting.
        let workers = options.threads.saturating_sub(1);
        let (tx, rx) = std::sync::mpsc::sync_channel::<StoredJob>(1);
        let rx = Mutex::new(rx);
        let done: Mutex<Vec<Result<(u64, u64), ExportError>>> = Mutex::new(Vec::new());
        let walked = std::thread::scope(|s| -> Result<(), ExportError> {
            for _ in 0..workers {
                s.spawn(|| drain(&rx, &done));
            }
            let walked = (|| {
                for table in self.public_tables(options.internal)? {
                    let source = plan(&self.engine, &table.name)?;
                    if let Source::Alias(of) = &source {
                        summary
                            .aliases_left_out
                            .push(format!("{} ({of})", table.name));
                        continue;
                    }
                    let part = partition_dir(dir, &table.name, id);
                    std::fs::create_dir_all(&part).map_err(io(&part))?;
                    let tmp = part.join("part-0.parquet.tmp");
                    let file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
                    let finished = part.join("part-0.parquet");
                    match source {
                        Source::Alias(_) => {}
                        Source::Columns {
                            table: stored,
                            columns,
                        } => {
                            let computed = self.computed_columns(&table, &columns, stored.len)?;
                            let job = StoredJob {
                                stored,
                                table,
                                columns,
                                computed,
                                file,
                                tmp,
                                finished,
                                compression: options.compression,
                            };
                            if workers == 0 {
                                push(&done, job.run());
                            } else if let Err(e) = tx.send(job) {
                                push(&done, e.0.run());
                            }
                        }
                        Source::Sql => {
                            let mut sink = TableSink::new(&table, file, options.compression)?;
                            self.engine
                                .query_streaming(&select(&table, None), &mut sink)?;
                            let rows = sink.finish()?;
                            push(&done, finish_file(&tmp, &finished).map(|b| (rows, b)));
                        }
                    }
                }
                Ok(())
            })();
            drop(tx);
            walked
        });
        walked?;
        for r in done.into_inner().unwrap_or_else(|e| e.into_inner()) {
            let (rows, bytes) = r?;
            summary.rows += rows;
            summary.bytes += bytes;
            summary.files += 1;
        }
        Ok(summary)
    }
}

/// One table to write from its stored columns, on any thread.
struct StoredJob {
    stored: Arc<Table>,
    table: PublicTable,
    columns: Vec<ColumnSource>,
    computed: Vec<arrow_array::ArrayRef>,
    file: std::fs::File,
    tmp: PathBuf,
    finished: PathBuf,
    compression: Compression,
}

impl StoredJob {
    /// Writes the file; its rows and bytes.
    fn run(self) -> Result<(u64, u64), ExportError> {
        let rows = stored::write(
            &self.stored,
            &self.table,
            &self.columns,
            &self.computed,
            self.file,
            self.compression,
        )?;
        Ok((rows, finish_file(&self.tmp, &self.finished)?))
    }
}

/// Writes the jobs `rx` hands over until it closes.
fn drain(
    rx: &Mutex<std::sync::mpsc::Receiver<StoredJob>>,
    done: &Mutex<Vec<Result<(u64, u64), ExportError>>>,
) {
    loop {
        let job = match rx.lock() {
            Ok(r) => r.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => push(done, job.run()),
            Err(_) => return,
        }
    }
}

fn push(done: &Mutex<Vec<Result<(u64, u64), ExportError>>>, r: Result<(u64, u64), ExportError>) {
    done.lock().unwrap_or_else(|e| e.into_inner()).push(r);
}

/// Gives the finished file its name; its size.
fn finish_file(tmp: &Path, finished: &Path) -> Result<u64, ExportError> {
    std::fs::rename(tmp, finished).map_err(io(finished))?;
    Ok(std::fs::metadata(finished).map_err(io(finished))?.len())
}

impl TraceProcessor {
    /// A view's computed columns (`columns` says which), read whole
    /// through SQL; `rows` long, as its table.
    fn computed_columns(
        &self,
        table: &PublicTable,
        columns: &[ColumnSource],
        rows: usize,
    ) -> Result<Vec<arrow_array::ArrayRef>, ExportError> {
        if !columns.contains(&ColumnSource::Computed) {
            return Ok(Vec::new());
        }
        let only = PublicTable {
            name: table.name.clone(),
            columns: table
                .columns
                .iter()
                .zip(columns)
                .filter(|(_, s)| **s == ColumnSource::Computed)
                .map(|(c, _)| c.clone())
                .collect(),
            not_null: Vec::new(),
        };
        let mut sink = TableSink::collect(&only);
        self.engine
            .query_streaming(&select(table, Some(columns)), &mut sink)?;
        let (arrays, n) = sink.into_columns()?;
        if n != rows {
            return Err(ExportError::ColumnCount {
                table: table.name.clone(),
            });
        }
        Ok(arrays)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_on_several_threads_writes_the_same_files() {
        let tp = TraceProcessor::from_bytes(&[]).unwrap();
        let base = std::env::temp_dir().join(format!("zt-pq-threads-{}", std::process::id()));
        let mut got = Vec::new();
        for threads in [1, 3] {
            let dir = base.join(threads.to_string());
            let options = ExportOptions {
                threads,
                ..ExportOptions::default()
            };
            let summary = tp.export_parquet(&dir, "t", &options).unwrap();
            let mut files: Vec<(String, u64)> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| {
                    let name = e.unwrap().file_name().into_string().unwrap();
                    let f = partition_dir(&dir, &name, "t").join("part-0.parquet");
                    (name, std::fs::metadata(f).unwrap().len())
                })
                .collect();
            files.sort();
            assert_eq!(files.len(), summary.files);
            assert!(files.iter().any(|(n, _)| n == "slice"));
            assert!(!files.iter().any(|(n, _)| n == "slices"));
            got.push((files, summary.rows));
        }
        assert_eq!(got[0], got[1]);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_bad_id_is_refused_before_anything_is_written() {
        let tp = TraceProcessor::from_bytes(&[]).unwrap();
        let dir = std::env::temp_dir().join(format!("zt-pq-bad-{}", std::process::id()));
        for id in ["", "..", "a/b", "k=v"] {
            assert!(matches!(
                tp.export_parquet(&dir, id, &ExportOptions::default()),
                Err(ExportError::TraceId(_))
            ));
        }
        assert!(!dir.exists());
    }
}
