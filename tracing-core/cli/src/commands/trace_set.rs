//! Many traces for one command (`zerotrace export`, `zerotrace sql`): the
//! files named, a directory standing for the trace files in it (the one
//! rule that tells a trace from a README), and whether loading them
//! fits in this machine's memory, said before any is loaded rather than
//! found out by being killed.

use std::path::{Path, PathBuf};

use super::CliError;

/// A trace's peak memory while it loads, per byte of (uncompressed) trace:
/// what `cargo xtask tp-bench` measures (3.27x on its 231 MB trace), with
/// room for traces whose packets are smaller.
const LOAD_PEAK_PER_BYTE: u64 = 4;

/// The trace files `args` name: a file as it is, a directory as the
/// regular files under it that are traces ([`looks_like_a_trace`];
/// recursively, hidden ones left out), sorted. The files a directory holds
/// that are not traces are named on stderr (`zerotrace sql` and `export`
/// alike).
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for a in args {
        let meta = std::fs::metadata(a).map_err(|e| CliError::io(a.display(), e))?;
        if meta.is_dir() {
            let before = out.len();
            let mut files = Vec::new();
            walk(a, &mut files)?;
            files.sort();
            let mut skipped = Vec::new();
            for f in files {
                if looks_like_a_trace(&f)? {
                    out.push(f);
                } else {
                    skipped.push(f);
                }
            }
            if !skipped.is_empty() {
                let names: Vec<String> = skipped
                    .iter()
                    .map(|f| f.strip_prefix(a).unwrap_or(f).display().to_string())
                    .collect();
                eprintln!(
                    "zerotrace: {}: skipped {} files that are not traces: {}",
                    a.display(),
                    skipped.len(),
                    names.join(", ")
                );
            }
            if out.len() == before {
                return Err(CliError::Usage(format!(
                    "{}: the directory holds no traces",
                    a.display()
                )));
            }
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// The endings of a trace file's name (those `zerotrace export` drops
/// from a trace's partition name).
const TRACE_SUFFIXES: [&str; 6] = [
    ".gz",
    ".pftrace",
    ".perfetto-trace",
    ".perfetto",
    ".trace",
    ".pb",
];

/// Whether the file at `path`, found in a directory, is to be read as a
/// trace: its name ends as a trace's does (then a broken one is reported,
/// not passed over), or its bytes are a trace's, as upstream guesses a
/// protobuf trace from its first byte: empty (a trace of nothing),
/// gzip-compressed, or opening with a `Trace.packet` field (tag 0x0a).
/// Anything else (a README, a script) is not a trace.
pub fn looks_like_a_trace(path: &Path) -> Result<bool, CliError> {
    use std::io::Read;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if TRACE_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        return Ok(true);
    }
    let mut head = Vec::with_capacity(2);
    std::fs::File::open(path)
        .and_then(|f| f.take(2).read_to_end(&mut head))
        .map_err(|e| CliError::io(path.display(), e))?;
    Ok(matches!(head.as_slice(), [] | [0x1f, 0x8b] | [0x0a, ..]))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CliError> {
    let entries = std::fs::read_dir(dir).map_err(|e| CliError::io(dir.display(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| CliError::io(dir.display(), e))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let ty = entry
            .file_type()
            .map_err(|e| CliError::io(path.display(), e))?;
        if ty.is_dir() {
            walk(&path, out)?;
        } else if ty.is_file() || (ty.is_symlink() && path.is_file()) {
            out.push(path);
        }
    }
    Ok(())
}

/// The bytes of trace `path` holds once read: its size, or for a gzip file
/// the bytes all its members inflate to (counted by inflating them, never
/// less than the compressed size). A gzip trailer's size is no answer: it
/// is one member's alone (a file of many members looked as small as its
/// last), and modulo 4 GiB. The count stops past the loader's default
/// memory budget, which refuses more anyway.
pub fn trace_bytes(path: &Path) -> Result<u64, CliError> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| CliError::io(path.display(), e))?;
    let len = f
        .metadata()
        .map_err(|e| CliError::io(path.display(), e))?
        .len();
    let mut magic = [0u8; 2];
    if len < 18 || f.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        return Ok(len);
    }
    let f = std::fs::File::open(path).map_err(|e| CliError::io(path.display(), e))?;
    let cap = zerotrace_trace_processor::LoadBudget::DEFAULT_MAX_MEMORY + 1;
    let mut gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(f)).take(cap);
    // A stream that stops inflating counts what came out before; its load
    // says what is wrong.
    let inflated = std::io::copy(&mut gz, &mut std::io::sink()).unwrap_or(0);
    Ok(inflated.max(len))
}

/// The memory this machine can give without swapping (`MemAvailable`),
/// when the kernel says.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// How many traces may load at once (at most `wanted`) so that the
/// largest ones loading together fit in `available` bytes; an error naming
/// the trace when even one alone would not fit.
pub fn parallel_loads(
    sizes: &[(PathBuf, u64)],
    wanted: usize,
    available: Option<u64>,
) -> Result<usize, CliError> {
    let wanted = wanted.clamp(1, sizes.len().max(1));
    let Some(available) = available else {
        return Ok(wanted);
    };
    let mut peaks: Vec<(u64, &Path)> = sizes
        .iter()
        .map(|(p, s)| (s.saturating_mul(LOAD_PEAK_PER_BYTE), p.as_path()))
        .collect();
    peaks.sort_by_key(|p| std::cmp::Reverse(p.0));
    if let Some((peak, path)) = peaks.first() {
        if *peak > available {
            return Err(CliError::Usage(format!(
                "{}: loading it needs about {} of memory and {} is available; \
                 nothing was loaded",
                path.display(),
                human(*peak),
                human(available)
            )));
        }
    }
    let mut n = 0;
    let mut sum = 0u64;
    for (peak, _) in peaks.iter().take(wanted) {
        sum = sum.saturating_add(*peak);
        if sum > available {
            break;
        }
        n += 1;
    }
    Ok(n.max(1))
}

/// `bytes` as MiB or GiB.
pub fn human(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_stands_for_its_files_sorted_hidden_left_out() {
        let dir = std::env::temp_dir().join(format!("zt-traceset-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in ["b.pftrace", "a.pftrace", ".hidden", "sub/c.pftrace"] {
            std::fs::write(dir.join(f), b"").unwrap();
        }
        let got = expand(std::slice::from_ref(&dir)).unwrap();
        let names: Vec<String> = got
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["a.pftrace", "b.pftrace", "sub/c.pftrace"]);
        // A file that is not a trace is left out.
        std::fs::write(dir.join("README.txt"), b"# traces\n").unwrap();
        std::fs::write(dir.join("t1"), [0x1f, 0x8b, 8]).unwrap();
        std::fs::write(dir.join("t2"), [0x0a, 0]).unwrap();
        // Named as a trace: kept, so that a broken one is reported.
        std::fs::write(dir.join("broken.pb"), b"# not a trace").unwrap();
        let got = expand(std::slice::from_ref(&dir)).unwrap();
        assert_eq!(got.len(), 6);
        assert!(!got.contains(&dir.join("README.txt")));
        for f in ["README.txt", "t1", "t2", "broken.pb"] {
            std::fs::remove_file(dir.join(f)).unwrap();
        }
        std::fs::remove_dir_all(dir.join("sub")).unwrap();
        for f in ["b.pftrace", "a.pftrace", ".hidden"] {
            std::fs::remove_file(dir.join(f)).unwrap();
        }
        assert!(matches!(
            expand(std::slice::from_ref(&dir)),
            Err(CliError::Usage(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn loads_in_parallel_only_as_many_as_fit() {
        let sizes: Vec<(PathBuf, u64)> = (0..4)
            .map(|i| (PathBuf::from(format!("t{i}")), 100 << 20))
            .collect();
        // 400 MiB of peak each.
        assert_eq!(parallel_loads(&sizes, 2, Some(10 << 30)).unwrap(), 2);
        assert_eq!(parallel_loads(&sizes, 4, Some(900 << 20)).unwrap(), 2);
        assert_eq!(parallel_loads(&sizes, 4, None).unwrap(), 4);
        let e = parallel_loads(&sizes, 2, Some(300 << 20)).unwrap_err();
        assert!(e.to_string().contains("nothing was loaded"), "{e}");
    }

    #[test]
    fn a_gzip_trace_counts_its_uncompressed_size() {
        use std::io::Write;
        let path = std::env::temp_dir().join(format!("zt-gz-{}.gz", std::process::id()));
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&vec![0u8; 100_000]).unwrap();
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        assert_eq!(trace_bytes(&path).unwrap(), 100_000);
        std::fs::remove_file(&path).unwrap();
    }

    /// Every member counts (the trailer of the last alone said 1,000 for
    /// a file that inflates to 201,000 bytes).
    #[test]
    fn a_gzip_trace_of_many_members_counts_them_all() {
        use std::io::Write;
        let path = std::env::temp_dir().join(format!("zt-gz-members-{}.gz", std::process::id()));
        let member = |n: usize| {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(&vec![0u8; n]).unwrap();
            enc.finish().unwrap()
        };
        let mut file = member(100_000);
        file.extend(member(100_000));
        file.extend(member(1_000));
        std::fs::write(&path, file).unwrap();
        assert_eq!(trace_bytes(&path).unwrap(), 201_000);
        std::fs::remove_file(&path).unwrap();
    }
}
