//! Where a mapping's ELF bytes come from. A process's paths name files in
//! its own mount namespace, so a file is opened as `/proc/PID/root/PATH`
//! (containers work); when that fails, names another file than the one
//! mapped (a different inode), or the file was deleted since, the kernel's
//! handle on the mapped file itself, `/proc/PID/map_files/START-END`, is
//! tried.
//!
//! The vdso is the same image in every 64-bit process of one kernel, so it
//! is read from this process's own `[vdso]` (through `/proc/self/mem`, which
//! needs no permission over the target); only when the target's `[vdso]`
//! has another size is the target's memory read instead. Each read is
//! bounded by the mapping's size.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::ProcRoot;

use super::elf_module::{ElfError, ElfModule};
use super::maps::{Mapping, MappingKind, parse_maps};

/// The largest vdso read (the kernel's is a few pages).
const MAX_VDSO: u64 = 1 << 20;

/// The file of a file mapping: `/proc/PID/root/PATH` when it is the inode
/// mapped, else `/proc/PID/map_files/START-END`.
pub fn open_mapped_file(
    proc: &ProcRoot,
    pid: u32,
    m: &Mapping,
) -> Result<(File, PathBuf), ElfError> {
    let mut first_error = None;
    if let (false, Some(path)) = (m.deleted, m.path()) {
        let full = under_root(proc, pid, path);
        match open_regular(&full) {
            Ok(f) => {
                let ino = f.metadata().map(|md| md.ino()).ok();
                if m.inode == 0 || ino == Some(m.inode) {
                    return Ok((f, full));
                }
                first_error = Some(ElfError::Io(format!("{} is another inode", full.display())));
            }
            Err(e) => first_error = Some(e),
        }
    }
    let handle = proc.path(format!("proc/{pid}/map_files/{:x}-{:x}", m.start, m.end));
    match open_regular(&handle) {
        Ok(f) => Ok((f, handle)),
        Err(e) => Err(first_error.unwrap_or(e)),
    }
}

/// Opens `path` for reading without blocking (a FIFO put where a library
/// was would otherwise hang the sampler), and only if it is a regular file.
fn open_regular(path: &Path) -> Result<File, ElfError> {
    let err = |e: std::io::Error| ElfError::Io(format!("{}: {e}", path.display()));
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(err)?;
    if !f.metadata().map_err(err)?.is_file() {
        return Err(ElfError::Io(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(f)
}

fn under_root(proc: &ProcRoot, pid: u32, path: &Path) -> PathBuf {
    let rel = path.strip_prefix("/").unwrap_or(path);
    proc.path(format!("proc/{pid}/root")).join(rel)
}

/// Loads the ELF of a file mapping.
pub fn load_file_module(proc: &ProcRoot, pid: u32, m: &Mapping) -> Result<ElfModule, ElfError> {
    let (file, _) = open_mapped_file(proc, pid, m)?;
    let cache = object::ReadCache::new(file);
    ElfModule::parse(&cache)
}

/// Reads `len` bytes at `addr` of `/proc/PID/mem`.
fn read_mem(proc: &ProcRoot, pid: &str, addr: u64, len: u64) -> Result<Vec<u8>, ElfError> {
    if len > MAX_VDSO {
        return Err(ElfError::Io(format!("vdso of {len} bytes")));
    }
    let path = proc.path(format!("proc/{pid}/mem"));
    let f = File::open(&path).map_err(|e| ElfError::Io(format!("{}: {e}", path.display())))?;
    let mut buf = vec![0u8; len as usize];
    f.read_exact_at(&mut buf, addr)
        .map_err(|e| ElfError::Io(format!("{} at {addr:#x}: {e}", path.display())))?;
    Ok(buf)
}

/// This process's `[vdso]` mapping.
pub fn own_vdso_mapping(proc: &ProcRoot) -> Option<Mapping> {
    let text = proc.read("proc/self/maps", 64 << 20).ok()?;
    parse_maps(&text)
        .ok()?
        .into_iter()
        .find(|m| m.kind == MappingKind::Vdso)
}

/// The bytes of the vdso the target `m` maps: this process's own when the
/// sizes agree, else the target's.
pub fn read_vdso(proc: &ProcRoot, pid: u32, m: &Mapping) -> Result<Vec<u8>, ElfError> {
    let len = m.end - m.start;
    if let Some(own) = own_vdso_mapping(proc) {
        if own.end - own.start == len {
            if let Ok(bytes) = read_mem(proc, "self", own.start, len) {
                return Ok(bytes);
            }
        }
    }
    read_mem(proc, &pid.to_string(), m.start, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_vdso_is_an_elf() {
        let proc = ProcRoot::system();
        let Some(m) = own_vdso_mapping(&proc) else {
            return; // no vdso (vdso=0 on the kernel command line)
        };
        let bytes = read_vdso(&proc, std::process::id(), &m).unwrap();
        let module = ElfModule::parse(&bytes[..]).unwrap();
        assert!(module.has_unwind_info());
        assert!(module.symbol_count() > 0);
    }

    #[test]
    fn missing_and_non_elf_files_are_typed() {
        let proc = ProcRoot::system();
        let pid = std::process::id();
        let mut m =
            crate::maps::parse_line(b"10000-20000 r-xp 00000000 00:00 0 /nonexistent/lib.so", 1)
                .unwrap();
        assert!(matches!(
            load_file_module(&proc, pid, &m),
            Err(ElfError::Io(_))
        ));
        m.name = b"/proc/self/status".to_vec();
        assert_eq!(
            load_file_module(&proc, pid, &m).unwrap_err(),
            ElfError::NotElf
        );
        // Not a regular file: refused before any read (a FIFO would block).
        m.name = b"/dev/null".to_vec();
        assert!(matches!(
            load_file_module(&proc, pid, &m),
            Err(ElfError::Io(_))
        ));
    }
}
