//! `zerotrace convert --format pprof`: a trace's CPU samples (Perfetto's
//! `linux.perf` data source) or heap dumps (`android.heapprofd`) as a
//! gzip-compressed pprof profile, the file `go tool pprof`, `pprof` and
//! the profilers' UIs read. Which: the CPU samples if the trace has any,
//! else the heap dumps; `--heap` picks the heap dumps in any case. The
//! encodings are the profile module's ([`zerotrace_trace_processor::profile_view::encode_pprof`],
//! [`zerotrace_trace_processor::profile_view::encode_heap_pprof`]); this file reads the trace and
//! writes the file.

use std::path::Path;

use zerotrace_trace_processor::profile_view::{Filter, Profile, encode_heap_pprof, encode_pprof};

use super::trace_reader::cpu_profile;
use super::{CliError, read_input, write_output};

/// Runs `convert --format pprof` (`heap`: `--heap` was given).
pub fn run(path: &Path, out: &Path, heap: bool) -> Result<(), CliError> {
    let name = path.display().to_string();
    let bytes = read_input(path)?;
    let profile = cpu_profile(&name, &bytes)?;
    let dumps = profile.heap_dumps().len();
    if heap || (profile.samples().is_empty() && dumps > 0) {
        return write_heap(&name, &profile, out);
    }
    if profile.samples().is_empty() {
        return Err(CliError::Usage(format!(
            "{name} holds no CPU samples (linux.perf's perf_sample packets) and no heap dumps \
             (android.heapprofd's profile_packet packets): no pprof profile to write"
        )));
    }
    let gz =
        encode_pprof(&profile, &Filter::default()).map_err(|e| CliError::io(out.display(), e))?;
    write_output(out, &gz, false)?;
    if dumps > 0 {
        eprintln!(
            "zerotrace: {}: the CPU samples written; the trace also holds {dumps} heap dumps, \
             which --heap writes instead",
            out.display()
        );
    }
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

/// Writes the heap dumps' pprof profile.
fn write_heap(name: &str, profile: &Profile, out: &Path) -> Result<(), CliError> {
    let last = profile.last_heap_dumps(None);
    if last.is_empty() {
        return Err(CliError::Usage(format!(
            "{name} holds no heap dumps of a profiled process (android.heapprofd's \
             profile_packet packets): no pprof profile to write"
        )));
    }
    let gz = encode_heap_pprof(profile, None).map_err(|e| CliError::io(out.display(), e))?;
    write_output(out, &gz, false)?;
    let left_out = last
        .iter()
        .flat_map(|d| &d.samples)
        .filter(|s| s.stack.is_empty())
        .count();
    if left_out > 0 {
        eprintln!(
            "zerotrace: {}: {left_out} heap samples of the last dumps left out, without a \
             callstack that resolves (`zerotrace stats` says why)",
            out.display()
        );
    }
    Ok(())
}
