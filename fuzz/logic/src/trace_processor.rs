//! The trace processor's sans-IO loader (`zerotrace_trace_processor::Loader`)
//! on any bytes as a trace, and the SQL tables built from what it loaded.
//!
//! Invariants: loading never panics; the outcome does not depend on how
//! the bytes are split into `push` calls (the whole input at once, and in
//! chunks of 1 to 8 bytes chosen by the first byte, give the same error or
//! the same contents of every table and view); an error's byte offset
//! lies inside the input; every table and view of a load that succeeded
//! answers `SELECT *` (every cell read through the virtual tables) without
//! an error. A gzip input also goes through the file driver's reader.

use zerotrace_trace_processor::{Error, Loader, TraceError, TraceProcessor};

/// Every row of every table and view, printed (`{:?}`, so that NaN equals
/// NaN), or the query that failed.
fn dump(tp: &TraceProcessor) -> Vec<String> {
    let names = tp.table_names().expect("the table names");
    names
        .iter()
        .map(|name| {
            let sql = format!("SELECT * FROM \"{name}\"");
            match tp.query(&sql) {
                Ok(r) => format!("{name}: {:?} {:?}", r.columns, r.rows),
                Err(e) => panic!("{sql}: {e}"),
            }
        })
        .collect()
}

/// Loads `chunks` one `push` at a time: the tables' contents, or the error.
fn load<'a>(chunks: impl Iterator<Item = &'a [u8]>) -> Result<Vec<String>, TraceError> {
    let mut loader = Loader::new();
    for c in chunks {
        loader.push(c)?;
    }
    let storage = loader.finish()?;
    let tp = TraceProcessor::from_storage(storage).expect("the SQL tables build");
    Ok(dump(&tp))
}

/// The `trace_processor` target: the input is the trace.
pub fn trace_processor(data: &[u8]) {
    let whole = load(std::iter::once(data));
    let step = 1 + usize::from(data.first().copied().unwrap_or(0) % 8);
    let split = load(data.chunks(step));
    assert_eq!(whole, split, "pushed at once and in chunks of {step}");
    match &whole {
        Err(TraceError::NotATrace { offset, .. })
        | Err(TraceError::PacketTooLarge { offset, .. })
        | Err(TraceError::Json { offset, .. }) => {
            assert!(
                *offset < data.len() as u64,
                "error at byte {offset} of {}",
                data.len()
            );
        }
        // A simpleperf record file cut short fails at its end at the latest.
        Err(TraceError::Malformed { offset, .. }) => {
            assert!(
                *offset <= data.len() as u64,
                "error at byte {offset} of {}",
                data.len()
            );
        }
        // A `compressed_packets` bomb is refused by the load's budget.
        Err(TraceError::InflationRatio { .. }) | Err(TraceError::OverBudget { .. }) => {}
        // Content of no format the loader reads (told by its first bytes).
        Err(TraceError::UnknownFormat { .. }) => {}
        // A zip or tar archive that does not read (a broken directory, a
        // member past its end, a nested archive), or its broken manifest.
        Err(TraceError::Archive { .. }) | Err(TraceError::Manifest { .. }) => {}
        Err(e) => panic!("a plain trace failed with {e}"),
        Ok(_) => {}
    }
    if data.starts_with(&[0x1f, 0x8b]) {
        match TraceProcessor::from_reader(data) {
            Ok(tp) => {
                dump(&tp);
            }
            Err(Error::Trace(_)) => {}
            Err(e) => panic!("a gzip trace failed with {e}"),
        }
    }
}
