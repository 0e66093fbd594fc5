//! [`MappedShm`]: a file-backed shared mapping that can be passed to another
//! process as an fd (unix only).
//!
//! Preferred backing is a memfd sealed with SHRINK|GROW|SEAL, so the peer that
//! receives it knows the size can never change under it (a shrink would turn
//! its accesses into SIGBUS). Where memfd is unavailable (it fails, or the
//! system is not Linux) an unlinked file in the temp directory is used
//! instead. A received fd is mapped with [`MappedShm::from_fd`], which checks
//! its size and (optionally) its seals; as only Linux has seals, a buffer
//! that must be sealed is refused elsewhere.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

#[cfg(target_os = "linux")]
use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};

use crate::abi::MIN_PAGE_SIZE;
use crate::shm::error::ShmError;
use crate::shm::region::SharedMemoryRegion;

/// What backs a [`MappedShm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShmBacking {
    /// A sealed memfd created here.
    Memfd,
    /// An unlinked temporary file created here (memfd unavailable).
    TmpFile,
    /// An fd received from a peer.
    Received,
}

/// The seals a shared memory fd must carry.
#[cfg(target_os = "linux")]
fn required_seals() -> SealFlags {
    SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL
}

/// A shared, read-write mapping of a file descriptor.
#[derive(Debug)]
pub struct MappedShm {
    fd: OwnedFd,
    ptr: NonNull<u8>,
    size: usize,
    backing: ShmBacking,
    /// Whether an arbiter has claimed the memory.
    claimed: AtomicBool,
}

// SAFETY: the mapping is plain shared memory; concurrent access goes through
// the ABI's atomics and chunk ownership, not through this value.
unsafe impl Send for MappedShm {}
// SAFETY: see `Send`; `&MappedShm` only exposes the pointer, size and fd.
unsafe impl Sync for MappedShm {}

fn check_size(size: usize) -> Result<(), ShmError> {
    if size == 0 || size % MIN_PAGE_SIZE != 0 {
        Err(ShmError::InvalidSize { size })
    } else {
        Ok(())
    }
}

fn map(fd: &OwnedFd, size: usize) -> Result<NonNull<u8>, ShmError> {
    // SAFETY: a fresh shared mapping chosen by the kernel (null hint) of a
    // file that is at least `size` bytes long; nothing else aliases it yet.
    let p = unsafe {
        rustix::mm::mmap(
            core::ptr::null_mut(),
            size,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED,
            fd,
            0,
        )
    }
    .map_err(|e| ShmError::io("mmap", e))?;
    NonNull::new(p.cast::<u8>())
        .ok_or_else(|| ShmError::io("mmap", std::io::Error::other("null mapping")))
}

impl MappedShm {
    /// Creates a region of `size` bytes: a sealed memfd, or a tmpfile if
    /// memfd fails (or, outside Linux, does not exist).
    pub fn create(size: usize) -> Result<MappedShm, ShmError> {
        #[cfg(target_os = "linux")]
        match Self::create_memfd(size) {
            Ok(m) => return Ok(m),
            Err(ShmError::InvalidSize { size }) => return Err(ShmError::InvalidSize { size }),
            Err(_) => {}
        }
        Self::create_tmpfile(size)
    }

    /// Creates a memfd of `size` bytes sealed with SHRINK|GROW|SEAL and maps
    /// it (Linux only).
    #[cfg(target_os = "linux")]
    pub fn create_memfd(size: usize) -> Result<MappedShm, ShmError> {
        check_size(size)?;
        let fd = rustix::fs::memfd_create(
            "zerotrace_shmem",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )
        .map_err(|e| ShmError::io("memfd_create", e))?;
        rustix::fs::ftruncate(&fd, size as u64).map_err(|e| ShmError::io("ftruncate", e))?;
        rustix::fs::fcntl_add_seals(&fd, required_seals())
            .map_err(|e| ShmError::io("fcntl(F_ADD_SEALS)", e))?;
        let ptr = map(&fd, size)?;
        Ok(MappedShm {
            fd,
            ptr,
            size,
            backing: ShmBacking::Memfd,
            claimed: AtomicBool::new(false),
        })
    }

    /// Creates an unlinked temporary file of `size` bytes and maps it.
    pub fn create_tmpfile(size: usize) -> Result<MappedShm, ShmError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        check_size(size)?;
        let dir = std::env::temp_dir();
        let mut last_err = None;
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("zerotrace-shm-{}-{n}", std::process::id()));
            match std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    let _ = std::fs::remove_file(&path);
                    let fd = OwnedFd::from(file);
                    rustix::fs::ftruncate(&fd, size as u64)
                        .map_err(|e| ShmError::io("ftruncate", e))?;
                    let ptr = map(&fd, size)?;
                    return Ok(MappedShm {
                        fd,
                        ptr,
                        size,
                        backing: ShmBacking::TmpFile,
                        claimed: AtomicBool::new(false),
                    });
                }
                Err(e) => last_err = Some(e),
            }
        }
        Err(ShmError::io(
            "create temporary file",
            last_err.unwrap_or_else(|| std::io::Error::other("no attempt made")),
        ))
    }

    /// Maps `size` bytes of a received fd. With `require_seals`, the fd must be
    /// a memfd carrying SHRINK|GROW|SEAL (what a service demands of a
    /// producer-provided buffer); outside Linux, where there are no seals,
    /// that fails with [`ShmError::MissingSeals`].
    ///
    /// # Safety
    /// No other mapping of the same memory in this process may be claimed by
    /// an arbiter ([`SharedMemoryRegion::claim`]) or viewed as a
    /// `SharedMemoryAbi` with another page size while this one is: each
    /// mapping carries its own claim, so mapping one fd twice would let two
    /// arbiters hand the same bytes to two writers.
    pub unsafe fn from_fd(
        fd: OwnedFd,
        size: usize,
        require_seals: bool,
    ) -> Result<MappedShm, ShmError> {
        check_size(size)?;
        if require_seals && !has_size_seals(&fd) {
            return Err(ShmError::MissingSeals);
        }
        let st = rustix::fs::fstat(&fd).map_err(|e| ShmError::io("fstat", e))?;
        let actual = u64::try_from(st.st_size).unwrap_or(0);
        if actual < size as u64 {
            return Err(ShmError::TooSmall {
                actual,
                expected: size,
            });
        }
        let ptr = map(&fd, size)?;
        Ok(MappedShm {
            fd,
            ptr,
            size,
            backing: ShmBacking::Received,
            claimed: AtomicBool::new(false),
        })
    }

    /// The fd, to pass to a peer.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// What backs the mapping.
    pub fn backing(&self) -> ShmBacking {
        self.backing
    }

    /// Whether the fd carries the SHRINK|GROW|SEAL seals (never outside Linux).
    pub fn is_sealed(&self) -> bool {
        #[cfg(target_os = "linux")]
        let sealed =
            rustix::fs::fcntl_get_seals(&self.fd).is_ok_and(|s| s.contains(required_seals()));
        #[cfg(not(target_os = "linux"))]
        let sealed = false;
        sealed
    }
}

/// Whether `fd` is sealed against shrinking and growing (Linux only: other
/// systems have no seals, so nothing is).
fn has_size_seals(fd: &OwnedFd) -> bool {
    #[cfg(target_os = "linux")]
    let sealed = rustix::fs::fcntl_get_seals(fd)
        .is_ok_and(|seals| seals.contains(SealFlags::SHRINK | SealFlags::GROW));
    #[cfg(not(target_os = "linux"))]
    let sealed = {
        let _ = fd;
        false
    };
    sealed
}

// SAFETY: `ptr..ptr+size` is a live shared mapping (page aligned by mmap)
// unmapped only in `drop`.
unsafe impl SharedMemoryRegion for MappedShm {
    fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    fn size(&self) -> usize {
        self.size
    }

    fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::AcqRel)
    }
}

impl Drop for MappedShm {
    fn drop(&mut self) {
        // SAFETY: the mapping was created by `map` with this size and is
        // unmapped exactly once; no `Chunk` may outlive the region (contract of
        // `SharedMemoryAbi::new`).
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.size) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "memfd and mmap are not available under Miri")]
    fn memfd_is_sealed_and_shared() {
        let a = MappedShm::create(16384).unwrap();
        assert_eq!(a.as_ptr() as usize % 4096, 0);
        if a.backing() == ShmBacking::Memfd {
            assert!(a.is_sealed());
            // The size can no longer change.
            assert!(rustix::fs::ftruncate(a.fd(), 4096).is_err());
            assert!(rustix::fs::ftruncate(a.fd(), 65536).is_err());
        }
        let dup = a.fd().try_clone_to_owned().unwrap();
        // SAFETY: `a` is never claimed; `b` is the only view used below.
        let b =
            unsafe { MappedShm::from_fd(dup, 16384, a.backing() == ShmBacking::Memfd) }.unwrap();
        // SAFETY: both mappings are live and 16 KiB long; single-threaded test.
        unsafe {
            *a.as_ptr().add(5000) = 0xAB;
            assert_eq!(*b.as_ptr().add(5000), 0xAB);
        }
        let dup = a.fd().try_clone_to_owned().unwrap();
        assert!(matches!(
            // SAFETY: the call fails (size mismatch); nothing is mapped.
            unsafe { MappedShm::from_fd(dup, 32768, false) },
            Err(ShmError::TooSmall { .. })
        ));
    }

    #[test]
    #[cfg_attr(miri, ignore = "memfd and mmap are not available under Miri")]
    fn tmpfile_fallback_works_and_is_unsealed() {
        let t = MappedShm::create_tmpfile(8192).unwrap();
        assert_eq!(t.backing(), ShmBacking::TmpFile);
        assert!(!t.is_sealed());
        let dup = t.fd().try_clone_to_owned().unwrap();
        assert!(matches!(
            // SAFETY: the call fails (no seals); nothing is mapped.
            unsafe { MappedShm::from_fd(dup, 8192, true) },
            Err(ShmError::MissingSeals)
        ));
        assert!(MappedShm::create(0).is_err());
    }
}
