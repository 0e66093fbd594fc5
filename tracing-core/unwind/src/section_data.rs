//! A section of an ELF file as the unwinder keeps it: its stated address
//! range and its bytes, shared. A leaf, read by the ELF module that makes
//! it and by the `.eh_frame_hdr` check that vets it.

use std::ops::Range;
use std::sync::Arc;

/// A section's address range (as the ELF states it) and bytes.
#[derive(Debug, Clone)]
pub struct SectionData {
    /// Stated virtual address range.
    pub svma: Range<u64>,
    /// The bytes, shared with every unwinder that uses them.
    pub data: Arc<[u8]>,
}
