//! One shared memory buffer as the producer sees it: the ABI view of the
//! pages and chunks, and the region that keeps the memory mapped, in one
//! `Arc`. The arbiter works through it, and the client's commit path holds
//! the same `Arc` (to inline chunks under SMB emulation, and to free the
//! chunks of a commit that came too late for its connection) instead of a
//! pointer back to the arbiter.

use std::sync::Arc;

use crate::abi::SharedMemoryAbi;
use crate::producer::ProducerError;
use crate::shm::SharedMemoryRegion;

/// A claimed shared memory buffer cut into pages.
pub(crate) struct SmbView {
    /// The pages and chunks. Declared before `region`, so dropped first.
    pub(crate) abi: SharedMemoryAbi,
    /// Keeps the memory behind `abi` mapped.
    pub(crate) region: Arc<dyn SharedMemoryRegion>,
}

impl std::fmt::Debug for SmbView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.abi.fmt(f)
    }
}

impl SmbView {
    /// Claims `region` (one view, so one page size, per buffer) and views
    /// it as pages of `page_size`.
    pub(crate) fn claim(
        region: Arc<dyn SharedMemoryRegion>,
        page_size: usize,
    ) -> Result<Arc<SmbView>, ProducerError> {
        if !region.claim() {
            return Err(ProducerError::RegionInUse);
        }
        // SAFETY: `region` guarantees the memory stays mapped while it
        // lives, and this value holds it for as long as `abi` lives; every
        // chunk borrows the ABI of a view some owner (an arbiter, a writer
        // through its arbiter, a queued commit) keeps alive. The claim
        // above makes this the only view of the memory in this process, so
        // no other page size is imposed on it.
        let abi = unsafe { SharedMemoryAbi::new(region.as_ptr(), region.size(), page_size) }?;
        Ok(Arc::new(SmbView { abi, region }))
    }
}
