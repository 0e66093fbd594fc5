//! The members of a zip or tar archive holding traces: listed from the
//! archive's bytes (held once), each read as a stream (a zip member
//! inflated as it is read, a tar member a slice of the archive), through
//! the `zip` and `tar` crates. Hostile archives: a member count past
//! [`MAX_MEMBERS`], a tar member reaching past the archive's end, names
//! that do not read and corrupt streams are typed errors; what a member
//! inflates to is bounded by the load's budget as it is pushed.

use std::io::{Cursor, Read};

use crate::error::TraceError;

/// Most members one archive may list.
pub const MAX_MEMBERS: usize = 100_000;

/// The container format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A zip archive.
    Zip,
    /// A tar archive.
    Tar,
}

impl Kind {
    /// Its name in `trace_file.trace_type`, as upstream names it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Zip => "zip",
            Kind::Tar => "tar",
        }
    }
}

/// One regular file of an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its path in the archive.
    pub name: String,
    /// Its position among the archive's entries.
    pub index: usize,
    /// Its size as stored (compressed for a deflated zip member).
    pub stored_size: u64,
    /// Where it is.
    location: Location,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Location {
    /// The zip entry's index.
    Zip(usize),
    /// The tar member's bytes in the archive.
    Tar { offset: usize, len: usize },
}

/// An open archive over its bytes.
pub struct Archive<'a> {
    bytes: &'a [u8],
    zip: Option<zip::ZipArchive<Cursor<&'a [u8]>>>,
}

impl std::fmt::Debug for Archive<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("bytes", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

fn broken(message: impl Into<String>) -> TraceError {
    TraceError::Archive {
        message: message.into(),
    }
}

impl<'a> Archive<'a> {
    /// Opens `bytes` as an archive of `kind`.
    pub fn open(kind: Kind, bytes: &'a [u8]) -> Result<Self, TraceError> {
        let zip = match kind {
            Kind::Zip => Some(
                zip::ZipArchive::new(Cursor::new(bytes))
                    .map_err(|e| broken(format!("zip: {e}")))?,
            ),
            Kind::Tar => None,
        };
        Ok(Archive { bytes, zip })
    }

    /// The archive's regular files, in archive order.
    pub fn members(&mut self) -> Result<Vec<Member>, TraceError> {
        match &mut self.zip {
            Some(z) => zip_members(z),
            None => tar_members(self.bytes),
        }
    }

    /// A reader of `member`'s bytes (inflated for a deflated zip member).
    pub fn read(&mut self, member: &Member) -> Result<Box<dyn Read + '_>, TraceError> {
        match (member.location, &mut self.zip) {
            (Location::Zip(i), Some(z)) => {
                let f = z
                    .by_index(i)
                    .map_err(|e| broken(format!("zip member {:?}: {e}", member.name)))?;
                Ok(Box::new(f))
            }
            (Location::Tar { offset, len }, _) => {
                let end = offset.saturating_add(len);
                let slice = self.bytes.get(offset..end).ok_or_else(|| {
                    broken(format!(
                        "tar member {:?} ends past the archive",
                        member.name
                    ))
                })?;
                Ok(Box::new(slice))
            }
            (Location::Zip(_), None) => Err(broken("a zip member of a tar archive")),
        }
    }
}

fn zip_members(z: &mut zip::ZipArchive<Cursor<&[u8]>>) -> Result<Vec<Member>, TraceError> {
    if z.len() > MAX_MEMBERS {
        return Err(broken(format!(
            "zip: {} members, more than {MAX_MEMBERS}",
            z.len()
        )));
    }
    let mut out = Vec::new();
    for i in 0..z.len() {
        let f = z
            .by_index_raw(i)
            .map_err(|e| broken(format!("zip entry {i}: {e}")))?;
        if f.is_dir() {
            continue;
        }
        out.push(Member {
            name: f.name().to_string(),
            index: i,
            stored_size: f.compressed_size(),
            location: Location::Zip(i),
        });
    }
    Ok(out)
}

fn tar_members(bytes: &[u8]) -> Result<Vec<Member>, TraceError> {
    let mut archive = tar::Archive::new(bytes);
    let entries = archive.entries().map_err(|e| broken(format!("tar: {e}")))?;
    let mut out = Vec::new();
    for (index, entry) in entries.enumerate() {
        if index >= MAX_MEMBERS {
            return Err(broken(format!("tar: more than {MAX_MEMBERS} members")));
        }
        let entry = entry.map_err(|e| broken(format!("tar entry {index}: {e}")))?;
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            continue;
        }
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let (Ok(offset), Ok(len)) = (
            usize::try_from(entry.raw_file_position()),
            usize::try_from(entry.size()),
        ) else {
            return Err(broken(format!("tar member {name:?}: size out of range")));
        };
        if offset.checked_add(len).is_none_or(|end| end > bytes.len()) {
            return Err(broken(format!("tar member {name:?} ends past the archive")));
        }
        out.push(Member {
            name,
            index,
            stored_size: len as u64,
            location: Location::Tar { offset, len },
        });
    }
    Ok(out)
}

/// Whether a member's path has a hidden component (a name starting with a
/// dot other than `.` and `..`): such members (`.DS_Store`, macOS's
/// `__MACOSX/._*` forks) are never traces and are skipped, as upstream
/// skips them.
pub fn is_hidden(path: &str) -> bool {
    path.split('/')
        .any(|c| c.starts_with('.') && c != "." && c != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_paths_have_a_dot_component() {
        assert!(is_hidden(".DS_Store"));
        assert!(is_hidden("__MACOSX/._trace.pb"));
        assert!(!is_hidden("./a/trace.pb"));
        assert!(!is_hidden("../trace.pb"));
        assert!(!is_hidden("dir/trace.json"));
    }
}
