//! The parts of a tracing session that keep their own books: the trusted
//! sequence ids it hands out, its clock snapshots, its flush counts, the
//! state of its output file and where a read of it stands. Each is a small
//! struct the session owns, so that a session reads as its parts rather
//! than as one flat list of fields.

use std::collections::HashMap;

use crate::service::env::ClockReading;

/// Trusted sequence ids, per (producer, writer); 1 is the service's own.
pub(super) struct Sequences {
    pub ids: HashMap<(u16, u16), u32>,
    pub next: u32,
}

impl Default for Sequences {
    fn default() -> Sequences {
        Sequences {
            ids: HashMap::new(),
            // 1 is the service's own sequence.
            next: 2,
        }
    }
}

impl Sequences {
    /// The trusted sequence id of (producer, writer), assigned on first use.
    pub fn id(&mut self, producer: u16, writer: u16) -> u32 {
        let next = &mut self.next;
        *self.ids.entry((producer, writer)).or_insert_with(|| {
            let id = *next;
            *next = next.saturating_add(1);
            id
        })
    }
}

/// The session's clock snapshots.
#[derive(Default)]
pub(super) struct Clocks {
    /// The snapshot taken when the session was set up.
    pub initial: Option<Vec<ClockReading>>,
    /// Snapshots not yet written to the trace.
    pub snapshots: Vec<Vec<ClockReading>>,
    /// When the last one was taken (BOOTTIME ns).
    pub last_snapshot_at: Option<u64>,
}

/// How the session's flushes went.
#[derive(Default)]
pub(super) struct FlushCounts {
    pub requested: u64,
    pub succeeded: u64,
    pub failed: u64,
    /// Of the final flush: 0 unspecified, 1 succeeded, 2 failed.
    pub final_outcome: i32,
}

/// The session's output file (`write_into_file`).
#[derive(Default)]
pub(super) struct FileState {
    pub bytes_written: u64,
    pub closed: bool,
    /// The output file is being created (`output_path`): the session
    /// waits for the driver's [`output_file_created`](super::TracingService::output_file_created).
    pub pending: bool,
    /// `CloseFile` was sent and the driver has not said the file is
    /// closed: the EnableTracing reply waits, so that it can carry an
    /// error of the last write.
    pub close_pending: bool,
}

/// Where a read in progress is.
#[derive(Default)]
pub(super) struct ReadCursor {
    /// The buffer index being read.
    pub buffer: usize,
    /// Whether that buffer's `begin_read` was called.
    pub begun: bool,
}
