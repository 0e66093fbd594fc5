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

mod driver;
pub mod error;
mod load;
mod output;
pub mod packets;
mod parser;
mod sql;
mod storage;
mod tracker;

use std::path::Path;

pub use error::{Error, TraceError};
pub use load::Loader;
pub use output::{c_double, shell_csv};
pub use sql::{QueryResult, Value};
pub use storage::Storage;

/// A loaded trace that answers SQL.
#[derive(Debug)]
pub struct TraceProcessor {
    engine: sql::Engine,
}

impl TraceProcessor {
    /// Builds the tables of a finished load.
    pub fn from_storage(storage: Storage) -> Result<Self, Error> {
        let tables = sql::build::build(storage);
        Ok(TraceProcessor {
            engine: sql::Engine::new(tables)?,
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

    /// Loads a trace from a reader, plain or gzip-compressed.
    pub fn from_reader(r: impl std::io::Read) -> Result<Self, Error> {
        Self::from_storage(driver::load_reader(r)?)
    }

    /// Runs SQL (several statements allowed); the last statement's rows.
    pub fn query(&self, sql: &str) -> Result<QueryResult, Error> {
        self.engine.query(sql)
    }
}
