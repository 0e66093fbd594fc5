//! The errors of the trace processor: a trace that cannot be read at all,
//! SQL that SQLite refuses (with the byte offset it points at), and the
//! file driver's I/O.

/// What stops loading a trace (most damage is counted in `stats` instead).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum TraceError {
    /// The bytes are not a protobuf `Trace`: a field of the wrong wire type
    /// or an unreadable tag at this offset of the input.
    #[error("not a protobuf trace: bad field at byte {offset}")]
    NotATrace {
        /// Byte offset of the field in the (decompressed) input.
        offset: u64,
    },
    /// One packet claims more bytes than the loader accepts.
    #[error("packet at byte {offset} is {len} bytes, over the {max}-byte limit")]
    PacketTooLarge {
        /// Byte offset of the packet's tag.
        offset: u64,
        /// Length the packet claims.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// A gzip stream that does not inflate.
    #[error("gzip: {0}")]
    Gzip(String),
    /// `push` after `finish`.
    #[error("the trace was already finished")]
    AlreadyFinished,
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
}

fn sql_message(message: &str, offset: Option<usize>) -> String {
    match offset {
        Some(o) => format!("SQL error at byte {o}: {message}"),
        None => format!("SQL error: {message}"),
    }
}

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
