//! What several modules of this binary share: the recorded `/proc` and
//! `/sys` tree of `tests/fixtures/procfs/` (`procfs_parsers`,
//! `procfs_packets`, `producer_probes`).

use std::path::PathBuf;

use zerotrace_probes::procfs::ProcRoot;

/// The fixture tree, as the probes read a live root.
pub fn fixtures() -> ProcRoot {
    ProcRoot::at(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/procfs/root"))
}
