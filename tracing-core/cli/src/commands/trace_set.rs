//! Many traces for one command (`zerotrace export`): the files named, a
//! directory standing for the trace files in it, and whether loading them
//! fits in this machine's memory, said before any is loaded rather than
//! found out by being killed.

use std::path::{Path, PathBuf};

use super::CliError;

/// A trace's peak memory while it loads, per byte of (uncompressed) trace:
/// what `cargo xtask tp-bench` measures (3.27x on its 231 MB trace), with
/// room for traces whose packets are smaller.
const LOAD_PEAK_PER_BYTE: u64 = 4;

/// The trace files `args` name: a file as it is, a directory as the
/// regular files under it (recursively, hidden ones left out), sorted.
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for a in args {
        let meta = std::fs::metadata(a).map_err(|e| CliError::io(a.display(), e))?;
        if meta.is_dir() {
            let before = out.len();
            walk(a, &mut out)?;
            out[before..].sort();
            if out.len() == before {
                return Err(CliError::Usage(format!(
                    "{}: the directory holds no files",
                    a.display()
                )));
            }
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
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
/// the size its trailer gives (modulo 4 GiB, as gzip keeps it; never less
/// than the compressed size).
pub fn trace_bytes(path: &Path) -> Result<u64, CliError> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).map_err(|e| CliError::io(path.display(), e))?;
    let len = f
        .metadata()
        .map_err(|e| CliError::io(path.display(), e))?
        .len();
    let mut magic = [0u8; 2];
    if len < 18 || f.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        return Ok(len);
    }
    let mut isize = [0u8; 4];
    f.seek(SeekFrom::End(-4))
        .and_then(|_| f.read_exact(&mut isize))
        .map_err(|e| CliError::io(path.display(), e))?;
    Ok(u64::from(u32::from_le_bytes(isize)).max(len))
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
}
