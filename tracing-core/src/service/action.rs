//! What the core asks its driver to do.

use super::ids::{ConsumerId, ProducerId, RequestId, SessionId};

/// The other end of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Peer {
    /// A producer connection.
    Producer(ProducerId),
    /// A consumer connection.
    Consumer(ConsumerId),
}

/// A reply to one call (one of several for a streamed call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The encoded response message.
    Ok {
        /// The response message's bytes.
        data: Vec<u8>,
        /// More replies follow for the same request (a stream).
        has_more: bool,
        /// Attach the producer's shared memory buffer (its fd) to this reply.
        attach_smb: bool,
    },
    /// The call failed (the IPC layer sends a rejected reply).
    Err(String),
}

impl Reply {
    /// A final reply carrying `data`.
    pub fn done(data: Vec<u8>) -> Reply {
        Reply::Ok {
            data,
            has_more: false,
            attach_smb: false,
        }
    }

    /// One reply of a stream that goes on.
    pub fn more(data: Vec<u8>) -> Reply {
        Reply::Ok {
            data,
            has_more: true,
            attach_smb: false,
        }
    }
}

/// An action for the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send `reply` to `request` of `to`.
    Reply {
        /// The connection.
        to: Peer,
        /// The call being answered.
        request: RequestId,
        /// What to send.
        reply: Reply,
    },
    /// Keep the file descriptor that `consumer` passed with the
    /// EnableTracing call just handled: it is the output file of the new
    /// `write_into_file` session `session` (which names no `output_path`).
    /// Emitted while that call is handled, before any write into the file;
    /// without it the driver closes a passed descriptor.
    AdoptPassedOutput {
        /// The consumer that passed the descriptor.
        consumer: ConsumerId,
        /// The session whose file it is.
        session: SessionId,
    },
    /// Create the output file of `session` at `path` (its config's
    /// `output_path`), refusing to replace an existing file, as Perfetto's
    /// service does (`O_CREAT | O_EXCL`). The driver answers with
    /// [`TracingService::output_file_created`](super::TracingService::output_file_created);
    /// the session begins only then.
    CreateFile {
        /// The session whose file it is.
        session: SessionId,
        /// Where to create it.
        path: String,
    },
    /// Append `data` (whole `TracePacket` records) to the output file of
    /// `session` (a `write_into_file` session). On a write error the driver
    /// closes the file (keeping what was written) and reports it with
    /// [`TracingService::output_file_closed`](super::TracingService::output_file_closed).
    WriteFile {
        /// The session whose file it is.
        session: SessionId,
        /// Bytes to append.
        data: Vec<u8>,
        /// Flush the file to storage after this write (`fflush_post_write`).
        sync: bool,
    },
    /// The session's output file is complete: flush and close it, then
    /// report with [`TracingService::output_file_closed`](super::TracingService::output_file_closed)
    /// (the EnableTracing reply waits for it, to carry a last write error).
    CloseFile {
        /// The session whose file it is.
        session: SessionId,
    },
    /// Close this connection.
    Disconnect {
        /// The connection.
        to: Peer,
        /// Why (for the log).
        reason: String,
    },
}
