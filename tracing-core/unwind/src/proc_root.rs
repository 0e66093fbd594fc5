//! Where `/proc` and `/sys` are: a root directory (the real `/`, or a
//! fixture tree in tests) and bounded reads under it, so no file, however
//! large or endless, makes the probes allocate without limit.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The default cap for one file: every file the probes read is far
/// smaller on real machines (`/proc/stat` on a 256-CPU machine is ~100 KiB).
pub const DEFAULT_CAP: usize = 1 << 20;

/// A root under which `proc/...` and `sys/...` are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcRoot {
    root: PathBuf,
}

impl Default for ProcRoot {
    fn default() -> Self {
        Self::system()
    }
}

impl ProcRoot {
    /// The running system (`/proc`, `/sys`).
    pub fn system() -> Self {
        ProcRoot {
            root: PathBuf::from("/"),
        }
    }

    /// A tree laid out like `/` (with `proc/` and `sys/` under `root`).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        ProcRoot { root: root.into() }
    }

    /// The absolute path of `rel` (like `proc/meminfo`) under the root.
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join(rel)
    }

    /// Reads `rel`, failing with [`ProcError::TooLarge`] past `cap` bytes.
    pub fn read(&self, rel: impl AsRef<Path>, cap: usize) -> Result<Vec<u8>, ProcError> {
        let (bytes, truncated) = self.read_truncated(rel.as_ref(), cap)?;
        if truncated {
            return Err(ProcError::TooLarge {
                path: self.path(rel),
                cap,
            });
        }
        Ok(bytes)
    }

    /// Reads at most `cap` bytes of `rel`; the flag says whether there was
    /// more (for files where a prefix is still useful, like `cmdline`).
    pub fn read_truncated(
        &self,
        rel: impl AsRef<Path>,
        cap: usize,
    ) -> Result<(Vec<u8>, bool), ProcError> {
        let path = self.path(rel);
        let io = |source| ProcError::Io {
            path: path.clone(),
            source,
        };
        let file = std::fs::File::open(&path).map_err(io)?;
        let mut buf = Vec::new();
        let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
        file.take(limit).read_to_end(&mut buf).map_err(io)?;
        let truncated = buf.len() > cap;
        buf.truncate(cap);
        Ok((buf, truncated))
    }

    /// Reads `rel` (capped at [`DEFAULT_CAP`]) as text, invalid UTF-8
    /// replaced (`/proc` text is ASCII but for names, which are reported
    /// as the kernel stores them).
    pub fn read_text(&self, rel: impl AsRef<Path>) -> Result<String, ProcError> {
        let bytes = self.read(rel, DEFAULT_CAP)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The names of the entries of directory `rel`, sorted; entries that
    /// vanish while listing are skipped.
    pub fn list(&self, rel: impl AsRef<Path>) -> Result<Vec<String>, ProcError> {
        let path = self.path(rel);
        let dir = std::fs::read_dir(&path).map_err(|source| ProcError::Io {
            path: path.clone(),
            source,
        })?;
        let mut names: Vec<String> = dir
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        Ok(names)
    }
}

/// Why a `/proc` or `/sys` file could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    /// The file could not be opened or read (a process that exited
    /// meanwhile shows up as [`std::io::ErrorKind::NotFound`] or `ESRCH`;
    /// see [`ProcError::is_gone`]).
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than the cap its reader allows.
    #[error("{path} is larger than its {cap}-byte cap")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The cap, in bytes.
        cap: usize,
    },
    /// The contents do not have the expected shape.
    #[error("{file}: {detail}")]
    Malformed {
        /// Which kind of file (`/proc/PID/stat`, `/proc/meminfo`, ...).
        file: &'static str,
        /// What was wrong.
        detail: String,
    },
}

impl ProcError {
    /// Whether the error means the file's process or thread no longer
    /// exists (it exited between listing and reading), which a scan skips.
    pub fn is_gone(&self) -> bool {
        const ESRCH: i32 = 3;
        match self {
            ProcError::Io { source, .. } => {
                source.kind() == std::io::ErrorKind::NotFound
                    || source.raw_os_error() == Some(ESRCH)
            }
            _ => false,
        }
    }

    /// A file whose contents do not have the expected shape.
    pub fn malformed(file: &'static str, detail: impl Into<String>) -> Self {
        ProcError::Malformed {
            file,
            detail: detail.into(),
        }
    }
}
