//! A trace processor: loads a Perfetto trace (protobuf, plain or gzip, with
//! `compressed_packets`) into Perfetto's tables and answers SQL over them
//! with SQLite, the tables kept in columns behind virtual tables.
//!
//! ```
//! use zerotrace_trace_processor::TraceProcessor;
//!
//! // An empty trace still has the swapper thread and process.
//! let tp = TraceProcessor::from_bytes(&[]).unwrap();
//! let r = tp.query("SELECT utid, tid FROM thread").unwrap();
//! assert_eq!(r.rows.len(), 1);
//! ```
//!
//! The loading core is sans-IO: [`Loader::push`] takes bytes in chunks
//! split anywhere and [`Loader::finish`] hands back the tables;
//! [`TraceProcessor::open`] is the driver that reads a file.
//!
//! [`profile_view`] is what the profile viewers (flame graphs, pprof, the
//! profiles' sections of `zerotrace stats` and `dump`) read: a trace's CPU
//! samples and heap dumps built from the loaded storage, without SQL.

mod arena;
mod clock;
mod column_store;
mod descriptors;
#[cfg(feature = "sql")]
mod driver;
pub mod error;
mod free_memory;
mod hash;
mod load;
mod load_options;
mod load_warning;
#[cfg(feature = "sql")]
mod output;
mod packet_fields;
mod packet_view;
pub mod packets;
#[cfg(feature = "parquet")]
pub mod parquet_export;
mod parser;
pub mod profile_view;
#[cfg(feature = "sql")]
pub mod rpc;
mod sequence_state;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "sql")]
mod sql_package;
mod stat_scopes;
mod stat_vocabulary;
mod storage;
pub mod tables;
pub mod trace_ids;
mod tracker;

#[cfg(feature = "sql")]
use std::path::Path;

#[cfg(feature = "sql")]
pub use driver::LoadProgress;
pub use error::{Error, TraceError};
pub use load::Loader;
pub use load::budget::LoadBudget;
pub use load_options::LoadOptions;
pub use load_warning::LoadWarning;
#[cfg(feature = "sql")]
pub use output::{c_double, shell_csv, shell_csv_all};
#[cfg(feature = "sql")]
pub use sql::catalog::ColumnInfo;
#[cfg(feature = "sql")]
pub use sql::public_schema::{ColumnType, PublicTable};
#[cfg(feature = "sql")]
pub use sql::{QueryResult, Value};
#[cfg(feature = "sql")]
pub use sql_package::{SqlPackage, SqlPackageError};
pub use storage::Storage;
pub use storage::work::LoadWork;

/// Perfetto's full trace and config schema (upstream's, with the fields it
/// added since merged in) as an encoded `FileDescriptorSet`, made by the
/// schema pipeline: what `trace_config_pbtxt` is printed with, and what a
/// command line can read text configs and print packets with.
pub fn perfetto_descriptor_set() -> &'static [u8] {
    parser::proto_text::descriptor_set()
}

/// A loaded trace that answers SQL.
#[cfg(feature = "sql")]
#[derive(Debug)]
pub struct TraceProcessor {
    engine: sql::Engine,
    /// What the load dropped.
    warnings: Vec<LoadWarning>,
}

#[cfg(feature = "sql")]
impl TraceProcessor {
    /// Builds the tables of a finished load. Its SQL reads and writes no
    /// file ([`TraceProcessor::set_sql_file_access`]).
    pub fn from_storage(mut storage: Storage) -> Result<Self, Error> {
        let warnings = std::mem::take(&mut storage.warnings);
        // No arg set is added from here: the index that found sets again
        // goes before the largest tables' columns are built beside their
        // rows.
        storage.args.forget_sets();
        let tables = sql::build::build(storage);
        let engine = sql::Engine::new(tables)?;
        // The load freed more than it keeps: give it back.
        free_memory::release();
        Ok(TraceProcessor { engine, warnings })
    }

    /// What the load dropped (a truncated last packet), each with the
    /// byte where it starts: the rest of the trace loaded, as upstream
    /// loads it. Empty for a union of traces (each trace's own are read
    /// before the union).
    pub fn load_warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }

    /// Several loaded traces as one set of tables: every public table and
    /// view with a `trace` column first (each trace's name, in the order
    /// given) and the traces' rows one after another; ids stay each
    /// trace's own, so joins match `trace` too. Each trace is dropped once
    /// read. `EXTRACT_ARG` and the callstack functions are not offered.
    pub fn union(traces: Vec<(String, TraceProcessor)>) -> Result<Self, Error> {
        let engines = traces.into_iter().map(|(id, tp)| (id, tp.engine)).collect();
        let (tables, aliases) = sql::union::union(engines)?;
        let engine = sql::Engine::new_union(tables, &aliases)?;
        free_memory::release();
        Ok(TraceProcessor {
            engine,
            warnings: Vec::new(),
        })
    }

    /// Loads a whole trace held in memory (plain protobuf).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut loader = Loader::new();
        loader.push(bytes)?;
        Self::from_storage(loader.finish()?)
    }

    /// Loads a trace file, plain or gzip-compressed.
    pub fn open(path: &Path) -> Result<Self, Error> {
        Self::from_storage(driver::load_file(path)?)
    }

    /// Loads a trace file, plain or gzip-compressed, telling `progress` how
    /// many of its bytes were read after each chunk (for a progress line).
    pub fn open_with_progress(
        path: &Path,
        mut progress: impl FnMut(LoadProgress),
    ) -> Result<Self, Error> {
        Self::from_storage(driver::load_file_with_progress(path, &mut progress)?)
    }

    /// Loads a trace file as [`TraceProcessor::open_with_progress`] does,
    /// keeping what `options` keep.
    pub fn open_with_options(
        path: &Path,
        options: LoadOptions,
        mut progress: impl FnMut(LoadProgress),
    ) -> Result<Self, Error> {
        let storage = driver::load_file_with_options(path, &options, &mut progress)?;
        Self::from_storage_with_options(storage, options)
    }

    /// Builds the tables of a finished load, keeping what `options` keep
    /// and with SQL file access as they say.
    pub fn from_storage_with_options(
        mut storage: Storage,
        options: LoadOptions,
    ) -> Result<Self, Error> {
        options.apply(&mut storage);
        let tp = Self::from_storage(storage)?;
        tp.set_sql_file_access(options.sql_file_access);
        Ok(tp)
    }

    /// Lets this trace's SQL read and write files, or not (the default):
    /// `ATTACH` of a file, `VACUUM INTO` a file and the pragmas that name
    /// SQLite's directories are refused with an error saying so while it is
    /// off, as `trace_processor_shell` refuses them without
    /// `--allow-sql-file-access`. In-memory databases attach either way;
    /// extensions never load.
    pub fn set_sql_file_access(&self, allowed: bool) {
        self.engine.set_sql_file_access(allowed);
    }

    /// Whether this trace's SQL may read and write files.
    pub fn sql_file_access(&self) -> bool {
        self.engine.sql_file_access()
    }

    /// Registers a user's package of PerfettoSQL modules
    /// (`--add-sql-package`), so that `INCLUDE PERFETTO MODULE pkg.a.b`
    /// runs its file `a/b.sql`; refused when the package's name equals,
    /// or is above or below, a built-in or already registered package's.
    pub fn add_sql_package(&self, package: SqlPackage) -> Result<(), SqlPackageError> {
        self.engine.add_sql_package(package)
    }

    /// Loads a trace from a reader, plain or gzip-compressed.
    pub fn from_reader(r: impl std::io::Read) -> Result<Self, Error> {
        Self::from_storage(driver::load_reader(r)?)
    }

    /// Runs SQL (several statements allowed); the last statement's rows.
    pub fn query(&self, sql: &str) -> Result<QueryResult, Error> {
        self.engine.query(sql)
    }

    /// Runs SQL (several statements allowed); the result set of every
    /// statement that has output, in order: what `trace_processor_shell
    /// -q` prints ([`shell_csv_all`]).
    pub fn query_outputs(&self, sql: &str) -> Result<Vec<QueryResult>, Error> {
        self.engine.query_outputs(sql)
    }

    /// Every public table and view with its columns' types (the internal
    /// `__intrinsic_*` tables too when `internal`): what the Parquet export
    /// writes and the union of several traces shows.
    pub fn public_tables(
        &self,
        internal: bool,
    ) -> Result<Vec<sql::public_schema::PublicTable>, Error> {
        sql::public_schema::public_tables(&self.engine, internal)
    }

    /// The names of every table and view, sorted.
    pub fn table_names(&self) -> Result<Vec<String>, Error> {
        self.engine.table_names()
    }

    /// The columns of table or view `name` with their declared types;
    /// `None` when there is no such table or view.
    pub fn columns(&self, name: &str) -> Result<Option<Vec<ColumnInfo>>, Error> {
        self.engine.columns(name)
    }
}
