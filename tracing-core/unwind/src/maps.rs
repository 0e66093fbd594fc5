//! `/proc/PID/maps` as typed mappings: which file (or pseudo-region) each
//! address range of a process comes from, at which file offset, with which
//! permissions. The unwinder finds a pc's mapping here, and from it the
//! ELF file and `rel_pc`.
//!
//! A line is `start-end perms offset major:minor inode [name]`, fields
//! separated by spaces, the name padded to a column and free to contain
//! spaces; a file deleted since it was mapped ends in ` (deleted)`. The
//! name is kept as the kernel wrote it (Perfetto's mapping path is that
//! string), and [`Mapping::path`] is the file to open. Parsing never
//! panics: every field is checked and a bad line is a [`MapsError`].

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What is mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingKind {
    /// A file (its path in the process's mount namespace).
    File,
    /// No name: anonymous memory (JIT code lives here).
    Anonymous,
    /// `[vdso]`: the kernel's shared object.
    Vdso,
    /// `[stack]` or `[stack:TID]`.
    Stack,
    /// `[heap]`.
    Heap,
    /// Another bracketed name (`[vvar]`, `[vsyscall]`, `[anon:NAME]`, ...).
    Pseudo,
}

/// A mapping's `rwxp`/`rwxs` permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Perms {
    /// `r`.
    pub read: bool,
    /// `w`.
    pub write: bool,
    /// `x`.
    pub exec: bool,
    /// `s` (shared) rather than `p` (private).
    pub shared: bool,
}

/// One line of `/proc/PID/maps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Permissions.
    pub perms: Perms,
    /// File offset of `start` (`pgoff`; Perfetto's `exact_offset`).
    pub offset: u64,
    /// Device major number.
    pub dev_major: u32,
    /// Device minor number.
    pub dev_minor: u32,
    /// Inode of the file, 0 for none.
    pub inode: u64,
    /// What is mapped.
    pub kind: MappingKind,
    /// The name exactly as the kernel wrote it, ` (deleted)` included.
    pub name: Vec<u8>,
    /// Whether the name ended in ` (deleted)`.
    pub deleted: bool,
}

impl Mapping {
    /// Whether `addr` is inside.
    #[inline]
    pub fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.end
    }

    /// The name as text (lossy for non-UTF-8 names).
    pub fn name_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.name)
    }

    /// The file's path, ` (deleted)` removed; `None` for anything but a
    /// file.
    pub fn path(&self) -> Option<&Path> {
        if self.kind != MappingKind::File {
            return None;
        }
        let bytes = if self.deleted {
            self.name
                .get(..self.name.len().saturating_sub(DELETED.len()))?
        } else {
            &self.name[..]
        };
        Some(Path::new(OsStr::from_bytes(bytes)))
    }

    /// Whether this is anonymous executable memory (JIT code).
    pub fn is_anonymous_exec(&self) -> bool {
        self.perms.exec && matches!(self.kind, MappingKind::Anonymous)
            || (self.perms.exec
                && self.kind == MappingKind::Pseudo
                && self.name.starts_with(b"[anon:"))
    }
}

const DELETED: &[u8] = b" (deleted)";

/// Why a maps line did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapsError {
    /// A field is missing.
    #[error("line {line}: missing {field}")]
    Missing {
        /// 1-based line number.
        line: usize,
        /// Which field.
        field: &'static str,
    },
    /// A number is not hexadecimal or does not fit.
    #[error("line {line}: bad {field}")]
    BadNumber {
        /// 1-based line number.
        line: usize,
        /// Which field.
        field: &'static str,
    },
    /// The permissions are not four of `r-`, `w-`, `x-`, `ps`.
    #[error("line {line}: bad permissions")]
    BadPerms {
        /// 1-based line number.
        line: usize,
    },
    /// `end` is not above `start`.
    #[error("line {line}: empty or inverted range")]
    BadRange {
        /// 1-based line number.
        line: usize,
    },
    /// The file could not be read.
    #[error("reading maps: {0}")]
    Read(String),
}

/// Parses a whole maps file into mappings sorted by start address.
pub fn parse_maps(text: &[u8]) -> Result<Vec<Mapping>, MapsError> {
    let mut out = Vec::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        out.push(parse_line(line, i + 1)?);
    }
    out.sort_by_key(|m| m.start);
    Ok(out)
}

/// Splits off the next space-separated field (leading spaces skipped).
fn field<'a>(rest: &mut &'a [u8], line: usize, name: &'static str) -> Result<&'a [u8], MapsError> {
    let s = trim_start(rest);
    let end = s.iter().position(|&b| b == b' ').unwrap_or(s.len());
    let (f, r) = s.split_at(end);
    if f.is_empty() {
        return Err(MapsError::Missing { line, field: name });
    }
    *rest = r;
    Ok(f)
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    s.get(n..).unwrap_or_default()
}

fn hex(s: &[u8], line: usize, name: &'static str) -> Result<u64, MapsError> {
    let bad = MapsError::BadNumber { line, field: name };
    if s.is_empty() || s.len() > 16 {
        return Err(bad);
    }
    let text = std::str::from_utf8(s).map_err(|_| bad.clone())?;
    u64::from_str_radix(text, 16).map_err(|_| bad)
}

fn dec(s: &[u8], line: usize, name: &'static str) -> Result<u64, MapsError> {
    let bad = MapsError::BadNumber { line, field: name };
    if s.is_empty() || s.len() > 20 {
        return Err(bad);
    }
    let text = std::str::from_utf8(s).map_err(|_| bad.clone())?;
    text.parse().map_err(|_| bad)
}

/// Parses one line (`line` is its 1-based number, for errors).
pub fn parse_line(text: &[u8], line: usize) -> Result<Mapping, MapsError> {
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    let mut rest = text;
    let range = field(&mut rest, line, "address range")?;
    let dash = range
        .iter()
        .position(|&b| b == b'-')
        .ok_or(MapsError::Missing {
            line,
            field: "range end",
        })?;
    let (start, end) = (&range[..dash], &range[dash + 1..]);
    let start = hex(start, line, "start")?;
    let end = hex(end, line, "end")?;
    if end <= start {
        return Err(MapsError::BadRange { line });
    }

    let p = field(&mut rest, line, "permissions")?;
    let perms = match p {
        [r, w, x, s] => {
            let ok = matches!(r, b'r' | b'-')
                && matches!(w, b'w' | b'-')
                && matches!(x, b'x' | b'-')
                && matches!(s, b'p' | b's');
            if !ok {
                return Err(MapsError::BadPerms { line });
            }
            Perms {
                read: *r == b'r',
                write: *w == b'w',
                exec: *x == b'x',
                shared: *s == b's',
            }
        }
        _ => return Err(MapsError::BadPerms { line }),
    };

    let offset = hex(field(&mut rest, line, "offset")?, line, "offset")?;
    let dev = field(&mut rest, line, "device")?;
    let colon = dev
        .iter()
        .position(|&b| b == b':')
        .ok_or(MapsError::BadNumber {
            line,
            field: "device",
        })?;
    let dev_major = hex(&dev[..colon], line, "device major")?;
    let dev_minor = hex(&dev[colon + 1..], line, "device minor")?;
    let dev_major = u32::try_from(dev_major).map_err(|_| MapsError::BadNumber {
        line,
        field: "device major",
    })?;
    let dev_minor = u32::try_from(dev_minor).map_err(|_| MapsError::BadNumber {
        line,
        field: "device minor",
    })?;
    let inode = dec(field(&mut rest, line, "inode")?, line, "inode")?;

    // The rest, padding skipped, is the name; it may hold spaces.
    let name = trim_start(rest);
    let name = name.to_vec();
    let kind = if name.is_empty() {
        MappingKind::Anonymous
    } else if name == b"[vdso]" {
        MappingKind::Vdso
    } else if name == b"[heap]" {
        MappingKind::Heap
    } else if name == b"[stack]" || name.starts_with(b"[stack:") {
        MappingKind::Stack
    } else if name.starts_with(b"[") && name.ends_with(b"]") {
        MappingKind::Pseudo
    } else {
        MappingKind::File
    };
    Ok(Mapping {
        start,
        end,
        perms,
        offset,
        dev_major,
        dev_minor,
        inode,
        deleted: kind == MappingKind::File && name.ends_with(DELETED),
        kind,
        name,
    })
}

/// The mapping holding `addr` in `maps` (sorted by start), if any.
pub fn find(maps: &[Mapping], addr: u64) -> Option<&Mapping> {
    let i = maps.partition_point(|m| m.start <= addr);
    let m = maps.get(i.checked_sub(1)?)?;
    m.contains(addr).then_some(m)
}

/// The index of the mapping holding `addr`, as [`find`].
pub fn find_index(maps: &[Mapping], addr: u64) -> Option<usize> {
    let i = maps.partition_point(|m| m.start <= addr).checked_sub(1)?;
    maps.get(i)?.contains(addr).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SAMPLE: &str = "\
55d0c9a00000-55d0c9a2c000 r--p 00000000 fd:01 1234567                    /usr/bin/prog
55d0c9a2c000-55d0c9b00000 r-xp 0002c000 fd:01 1234567                    /usr/bin/prog
7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 
7f1c2b000000-7f1c2b001000 r-xp 00001000 08:10 42                         /opt/my app/lib x.so (deleted)
7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0                          [stack]
7ffd1c1f0000-7ffd1c1f2000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

    #[test]
    fn parses_every_kind() {
        let maps = parse_maps(SAMPLE.as_bytes()).unwrap();
        assert_eq!(maps.len(), 7);
        let exe = &maps[1];
        assert_eq!(
            (exe.start, exe.end, exe.offset),
            (0x55d0c9a2c000, 0x55d0c9b00000, 0x2c000)
        );
        assert!(exe.perms.exec && exe.perms.read && !exe.perms.write && !exe.perms.shared);
        assert_eq!(
            (exe.dev_major, exe.dev_minor, exe.inode),
            (0xfd, 1, 1234567)
        );
        assert_eq!(exe.path(), Some(Path::new("/usr/bin/prog")));
        assert_eq!(maps[2].kind, MappingKind::Anonymous);
        assert!(maps[2].name.is_empty());
        let del = &maps[3];
        assert!(del.deleted);
        assert_eq!(del.name, b"/opt/my app/lib x.so (deleted)");
        assert_eq!(del.path(), Some(Path::new("/opt/my app/lib x.so")));
        assert_eq!(maps[4].kind, MappingKind::Stack);
        assert_eq!(maps[5].kind, MappingKind::Vdso);
        assert_eq!(maps[5].path(), None);
        assert_eq!(maps[6].kind, MappingKind::Pseudo);
        assert_eq!(
            find(&maps, 0x55d0c9a2c000 + 5).map(|m| m.offset),
            Some(0x2c000)
        );
        assert_eq!(find(&maps, 0x55d0c9b00000), None);
        assert_eq!(find(&maps, 0), None);
        assert_eq!(find_index(&maps, 0x7ffd1c1f0001), Some(5));
    }

    #[test]
    fn bad_lines_are_typed() {
        let e = |s: &str| parse_maps(s.as_bytes()).unwrap_err();
        assert_eq!(
            e("zz-10 r-xp 0 00:00 0"),
            MapsError::BadNumber {
                line: 1,
                field: "start"
            }
        );
        assert_eq!(e("20-10 r-xp 0 00:00 0"), MapsError::BadRange { line: 1 });
        assert_eq!(e("10-20 rxp 0 00:00 0"), MapsError::BadPerms { line: 1 });
        assert_eq!(e("10-20 r-xq 0 00:00 0"), MapsError::BadPerms { line: 1 });
        assert_eq!(
            e("10-20 r-xp 0 00:00"),
            MapsError::Missing {
                line: 1,
                field: "inode"
            }
        );
        assert_eq!(
            e("10-20 r-xp 0 0000 1"),
            MapsError::BadNumber {
                line: 1,
                field: "device"
            }
        );
        assert_eq!(
            e("\n10-20 r-xp 0 00:00 1\n1020"),
            MapsError::Missing {
                line: 3,
                field: "range end"
            }
        );
        assert_eq!(
            e("10-20 r-xp 0 00:00 99999999999999999999999"),
            MapsError::BadNumber {
                line: 1,
                field: "inode"
            }
        );
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse_maps(&bytes);
        }

        #[test]
        fn mangled_lines_never_panic(
            start: u64, len in 1u64..1 << 40, off: u64, ino: u64,
            name in "[ -~]{0,40}", cut in 0usize..120,
        ) {
            let end = start.saturating_add(len);
            let line = format!("{start:x}-{end:x} r-xp {off:08x} fd:01 {ino} {name}");
            let cut = cut.min(line.len());
            let _ = parse_line(&line.as_bytes()[..cut], 1);
            if end > start {
                let m = parse_line(line.as_bytes(), 1).unwrap();
                prop_assert_eq!((m.start, m.end, m.offset, m.inode), (start, end, off, ino));
            }
        }
    }
}
