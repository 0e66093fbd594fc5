//! The service's rule for shared memory sizes (Perfetto's `EnsureValidShmSizes`):
//! pages of 4 KiB × {1, 2, 4, 8}, a buffer of at most 32 MiB that is a whole
//! number of pages; anything else falls back to 256 KiB of 4 KiB pages.

/// Default buffer size.
pub const DEFAULT_SHM_SIZE: usize = 256 * 1024;
/// Default page size.
pub const DEFAULT_PAGE_SIZE: usize = 4096;
/// Largest buffer the service grants.
pub const MAX_SHM_SIZE: usize = 32 * 1024 * 1024;
/// Largest page the service grants.
pub const MAX_SERVICE_PAGE_SIZE: usize = 32 * 1024;

/// A buffer size and page size pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShmSizes {
    /// Buffer size in bytes.
    pub size: usize,
    /// Page size in bytes.
    pub page_size: usize,
}

/// Validates a requested pair as the service does; invalid pairs become
/// 256 KiB / 4 KiB.
pub const fn ensure_valid_shm_sizes(size: usize, page_size: usize) -> ShmSizes {
    let page_ok = page_size % DEFAULT_PAGE_SIZE == 0
        && matches!(page_size / DEFAULT_PAGE_SIZE, 1 | 2 | 4 | 8);
    let size_ok = page_ok && size <= MAX_SHM_SIZE && size >= page_size && size % page_size == 0;
    if size_ok {
        ShmSizes { size, page_size }
    } else {
        ShmSizes {
            size: DEFAULT_SHM_SIZE,
            page_size: DEFAULT_PAGE_SIZE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_falls_back() {
        let ok = |s, p| {
            assert_eq!(
                ensure_valid_shm_sizes(s, p),
                ShmSizes {
                    size: s,
                    page_size: p
                }
            )
        };
        ok(4096, 4096);
        ok(256 * 1024, 4096);
        ok(1024 * 1024, 32 * 1024);
        ok(32 * 1024 * 1024, 8192);
        ok(24 * 1024, 8192);
        let fallback = ShmSizes {
            size: DEFAULT_SHM_SIZE,
            page_size: DEFAULT_PAGE_SIZE,
        };
        for (s, p) in [
            (0, 0),
            (256 * 1024, 0),
            (256 * 1024, 12 * 1024),
            (256 * 1024, 64 * 1024),
            (256 * 1024, 5000),
            (32 * 1024 * 1024 + 4096, 4096),
            (4096, 8192),
            (10 * 1024, 4096 * 4),
            (6000, 4096),
        ] {
            assert_eq!(ensure_valid_shm_sizes(s, p), fallback, "{s} {p}");
        }
    }
}
