//! Where Perfetto's upstream `.proto` files are: the sources of the pinned
//! `perfetto_protos` crate, which this package lists for a `cfg(any())`
//! target so that cargo downloads it without building it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::{PipelineError, UPSTREAM_CRATE, UPSTREAM_DIR_VAR, UPSTREAM_VERSION};

/// The root of the upstream files (it holds `protos/perfetto/...`): the
/// directory named by `ZEROTRACE_PERFETTO_PROTOS_DIR`, else where cargo
/// unpacked the pinned crate (asked of `cargo metadata` once per process).
pub fn upstream_root() -> Result<PathBuf, PipelineError> {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    if let Some(root) = ROOT.get() {
        return Ok(root.clone());
    }
    let root = zerotrace_crate_source::crate_source_dir(
        UPSTREAM_DIR_VAR,
        Path::new(env!("CARGO_MANIFEST_DIR")),
        UPSTREAM_CRATE,
        UPSTREAM_VERSION,
    )?;
    Ok(ROOT.get_or_init(|| root).clone())
}
