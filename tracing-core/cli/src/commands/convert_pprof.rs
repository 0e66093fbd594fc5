//! `zerotrace convert --format pprof`: a trace's CPU samples (Perfetto's
//! `linux.perf` data source) as a gzip-compressed pprof profile, the file
//! `go tool pprof`, `pprof` and the profilers' UIs read. The encoding is
//! the profile module's ([`crate::profile::encode_pprof`]); this file
//! reads the trace and writes the file.

use std::path::Path;

use crate::profile::{Filter, encode_pprof};

use super::trace_reader::cpu_profile;
use super::{CliError, read_input, write_output};

/// Runs `convert --format pprof`.
pub fn run(path: &Path, out: &Path) -> Result<(), CliError> {
    let name = path.display().to_string();
    let bytes = read_input(path)?;
    let profile = cpu_profile(&name, &bytes)?;
    if profile.samples().is_empty() {
        return Err(CliError::Usage(format!(
            "{name} holds no CPU samples (linux.perf's perf_sample packets): no pprof profile to write"
        )));
    }
    let gz =
        encode_pprof(&profile, &Filter::default()).map_err(|e| CliError::io(out.display(), e))?;
    write_output(out, &gz, false)?;
    let c = profile.counts();
    let left_out = profile
        .samples()
        .iter()
        .filter(|s| s.stack.is_empty())
        .count();
    if left_out > 0 {
        eprintln!(
            "zerotrace: {}: {} of {} samples left out, without a callstack that resolves \
             ({} unresolved; `zerotrace stats` says why)",
            out.display(),
            left_out,
            c.samples,
            c.unresolved
        );
    }
    Ok(())
}
