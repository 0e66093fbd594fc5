//! Memory for the shared memory buffer: a sealed memfd (or an unlinked tmpfile)
//! mapped with `mmap` for producer ↔ service sharing (unix only; memfd and
//! seals on Linux only), a page-aligned heap allocation for tests and for
//! producers that emulate the buffer over TCP, and the size policy the
//! service applies to requested sizes.

mod error;
mod heap;
#[cfg(unix)]
mod mapped;
mod region;
mod size_policy;

pub use error::ShmError;
pub use heap::HeapShm;
#[cfg(unix)]
pub use mapped::{MappedShm, ShmBacking};
pub use region::SharedMemoryRegion;
pub use size_policy::{
    DEFAULT_PAGE_SIZE, DEFAULT_SHM_SIZE, MAX_SERVICE_PAGE_SIZE, MAX_SHM_SIZE, ShmSizes,
    ensure_valid_shm_sizes,
};
