//! The errors of the trace processor: a trace that cannot be read at all,
//! SQL that SQLite refuses (with the byte offset it points at), and the
//! file driver's I/O.

/// What stops loading a trace (most damage is counted in `stats` instead).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum TraceError {
    /// The bytes are not a protobuf `Trace`: a field of the wrong wire type
    /// or an unreadable tag at this offset of the input.
    #[error("not a protobuf trace: bad field at byte {offset} (after {packets} packets)")]
    NotATrace {
        /// Byte offset of the field in the (decompressed) input.
        offset: u64,
        /// Whole packets read before it.
        packets: u64,
    },
    /// One packet claims more bytes than the loader accepts.
    #[error("packet {packets} at byte {offset} is {len} bytes, over the {max}-byte limit")]
    PacketTooLarge {
        /// Byte offset of the packet's tag.
        offset: u64,
        /// Whole packets read before it (so it is packet `packets`, from 0).
        packets: u64,
        /// Length the packet claims.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// A gzip stream that does not inflate.
    #[error("gzip: {0}")]
    Gzip(String),
    /// Loading the trace needs more memory than the load's budget allows
    /// (`LoadOptions::budget`, `zerotrace sql --max-memory`).
    #[error(
        "loading the trace needs more than {limit} bytes ({} MiB) of memory (its bytes once \
         decompressed and a record per packet), this load's limit; a trace known to be \
         sound loads with a larger --max-memory (LoadOptions::budget)",
        .limit >> 20
    )]
    OverBudget {
        /// The limit, in bytes.
        limit: u64,
    },
    /// Compressed bytes inflate more times their size than the load's
    /// budget allows: a decompression bomb, or a trace to load with an
    /// explicit limit.
    #[error(
        "{compressed} compressed bytes of the trace inflate to {inflated} bytes of memory, \
         more than {max_ratio} times their size; a trace known to be sound loads with an \
         explicit --max-memory (LoadOptions::budget), which lifts this check"
    )]
    InflationRatio {
        /// Compressed bytes read so far.
        compressed: u64,
        /// Bytes of memory they grew into.
        inflated: u64,
        /// The ratio allowed.
        max_ratio: u64,
    },
    /// `push` after `finish`.
    #[error("the trace was already finished")]
    AlreadyFinished,
    /// A Chrome JSON trace whose JSON does not read at this offset.
    #[error("JSON trace: {message} at byte {offset}")]
    Json {
        /// Byte offset in the (decompressed) input.
        offset: u64,
        /// What was wrong.
        message: String,
    },
    /// A zip or tar archive of traces that does not read, or holds what
    /// is not read (a nested archive, a member of no known format).
    #[error("archive: {message}")]
    Archive {
        /// What was wrong.
        message: String,
    },
    /// A trace manifest (`perfetto_manifest`) that breaks one of its rules.
    #[error("perfetto_manifest: {message}")]
    Manifest {
        /// What was wrong.
        message: String,
    },
    /// A trace of another binary or text format (simpleperf's record
    /// file, ...) whose bytes do not read at this offset.
    #[error("{format} trace: {message} at byte {offset}")]
    Malformed {
        /// The format, as the loader names it.
        format: &'static str,
        /// Byte offset in the (decompressed) input.
        offset: u64,
        /// What was wrong.
        message: String,
    },
    /// Content of no format the trace processor reads: what it looked
    /// like.
    #[error("unknown trace format: the file starts with {seen}")]
    UnknownFormat {
        /// A description of the first bytes.
        seen: String,
    },
}

/// Any error of the trace processor.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The trace could not be loaded.
    #[error("trace: {0}")]
    Trace(#[from] TraceError),
    /// SQLite refused the query.
    #[error("{}", sql_message(.message, *.offset))]
    Sql {
        /// SQLite's message.
        message: String,
        /// Byte offset in the SQL text of the token SQLite points at, when known.
        offset: Option<usize>,
    },
    /// Reading the trace file.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// A table's shape is not what a reader of it needs (a view column
    /// with no known type, traces whose tables differ).
    #[error("schema: {0}")]
    Schema(String),
}

fn sql_message(message: &str, offset: Option<usize>) -> String {
    match offset {
        Some(o) => format!("SQL error at byte {o}: {message}"),
        None => format!("SQL error: {message}"),
    }
}

#[cfg(feature = "sql")]
impl Error {
    /// SQLite's error for a statement of `whole`: rusqlite reports the
    /// offset inside the text it prepared, the rest of `whole` from the
    /// failing statement on, so the offset is moved to count from the start
    /// of `whole`.
    pub(crate) fn sql_in(e: rusqlite::Error, whole: &str) -> Error {
        match e {
            rusqlite::Error::SqlInputError {
                msg, offset, sql, ..
            } => {
                let start = whole.len().saturating_sub(sql.len());
                Error::Sql {
                    message: msg,
                    offset: usize::try_from(offset)
                        .ok()
                        .map(|o| start.saturating_add(o))
                        .filter(|&o| o <= whole.len()),
                }
            }
            other => other.into(),
        }
    }
}

#[cfg(feature = "sql")]
impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        match e {
            rusqlite::Error::SqlInputError { msg, offset, .. } => Error::Sql {
                message: msg,
                offset: usize::try_from(offset).ok(),
            },
            other => Error::Sql {
                message: other.to_string(),
                offset: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TraceProcessor;

    #[test]
    fn sql_errors_point_into_the_whole_text() {
        let tp = TraceProcessor::from_bytes(&[]).unwrap();
        let sql = "SELECT 1;\nSELECT nope FROM thread";
        match tp.query(sql) {
            Err(Error::Sql {
                message,
                offset: Some(o),
            }) => {
                assert!(message.contains("nope"), "{message}");
                assert_eq!(&sql[o..o + 4], "nope");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_trace_names_the_byte_and_the_packets_before_it() {
        // Two empty packets, then a field of wire type 7.
        let e = TraceProcessor::from_bytes(&[0x0a, 0, 0x0a, 0, 0x0f]).unwrap_err();
        assert!(matches!(
            e,
            Error::Trace(TraceError::NotATrace {
                offset: 4,
                packets: 2
            })
        ));
        assert!(e.to_string().contains("byte 4 (after 2 packets)"), "{e}");
    }
}
