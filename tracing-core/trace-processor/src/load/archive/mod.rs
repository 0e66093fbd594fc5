//! Zip and tar archives of several traces loaded onto one timeline, as
//! upstream loads them: the archive's bytes are held as they arrive
//! (a zip's directory is at its end); when the trace ends every member
//! (hidden files skipped) is told by its content (a gzip member by what
//! it inflates to), the members are read in upstream's order (the
//! manifest first, then protobuf traces, which may carry the clock
//! snapshots the others need, then containers, then the rest; by name,
//! then by position) and each is loaded as a trace of its own format
//! into the same tables (`feed.rs`), its clocks and machines as the
//! manifest (`manifest.rs`) and upstream's merging rules say
//! (`clocks.rs`). Each file gets a `__intrinsic_trace_file` row.

pub mod clocks;
pub mod container;
mod feed;
pub mod manifest;

use crate::hash::HashMap;

pub use container::Kind;

/// An archive arriving: its bytes, held until the trace ends.
#[derive(Debug)]
pub struct ArchiveLoad {
    /// The container (None: a manifest on its own).
    kind: Option<Kind>,
    bytes: Vec<u8>,
}

impl ArchiveLoad {
    /// An archive of `kind` (None: a manifest alone) whose first bytes are
    /// `head`.
    pub fn new(kind: Option<Kind>, head: Vec<u8>) -> Self {
        ArchiveLoad { kind, bytes: head }
    }

    /// Takes the next bytes.
    pub fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
    }

    /// Bytes held.
    pub fn held_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }
}

/// What the loader knows of the archive member being read: which machine
/// its packets go to and how its clockless timeline is placed.
#[derive(Debug, Default)]
pub struct ArchiveState {
    /// Members were loaded from an archive (the merging rules apply).
    pub(crate) active: bool,
    /// Trace members started so far.
    pub(crate) members_started: u32,
    /// Named machines (the manifest's), by name: machine index.
    pub(crate) named: HashMap<String, u32>,
    /// The member's machine, when the manifest puts the whole file on one.
    pub(crate) fixed_machine: Option<u32>,
    /// The member's embedded machine ids renamed by the manifest.
    pub(crate) remap: Option<HashMap<i64, u32>>,
    /// Clock keys the merging rules already tried to place.
    pub(crate) placed: crate::hash::HashSet<u64>,
    /// A protobuf member's machine claimed the trace clock.
    pub(crate) clock_claimed: bool,
    /// The clock of packets without a clock id, when it is not the trace
    /// clock (a manifest's `trace_time` chose another).
    pub(crate) default_clock: Option<u64>,
    /// A packet of an archive member came from the host (raw id 0): no
    /// embedded machine is adopted onto its row any more.
    pub(crate) host_used: bool,
    /// The format the trace's first bytes were told to be.
    pub(crate) first_format: Option<crate::load::format::Format>,
    /// Clockless members' pins resolved so far, by path.
    pub(crate) pins: HashMap<String, Option<clocks::Pin>>,
}

impl ArchiveState {
    /// The machine index of an embedded raw machine id in the member being
    /// read, when the manifest decides it.
    pub(crate) fn machine_for(&self, raw: i64) -> Option<u32> {
        if let Some(m) = self.fixed_machine {
            return Some(m);
        }
        let remap = self.remap.as_ref()?;
        Some(remap.get(&raw).copied().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use crate::error::TraceError;
    use crate::load::Loader;
    use crate::load::budget::LoadBudget;

    #[test]
    fn a_member_inflating_past_the_budget_is_refused_while_it_streams() {
        // 8 MiB of empty packets deflate to a few KiB: the member streams
        // into the loader, which stops at its 4 MiB budget.
        let trace: Vec<u8> = [0x0a, 0x00].repeat(4 << 20);
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        w.start_file("bomb.pb", options).unwrap();
        w.write_all(&trace).unwrap();
        let archive = w.finish().unwrap().into_inner();
        assert!(archive.len() < 64 << 10, "{}", archive.len());
        let mut l = Loader::with_budget(LoadBudget::with_max_memory(4 << 20));
        l.push(&archive).unwrap();
        let e = l.finish().unwrap_err();
        assert!(matches!(e, TraceError::OverBudget { .. }), "{e}");
    }
}
