//! Where an address's count lives in a free filter: the preloaded client's
//! (`shared_ring/free_filter.rs`) and the in-process hook's
//! (`record_queue.rs`) map addresses to buckets the same way.

/// The bucket of `addr` among `buckets` (a power of two). Within a region
/// of `buckets` times 16 bytes, 16-byte neighbours have neighbouring
/// buckets (a heap's live blocks mostly lie close together, so the lines
/// of the filter a program's frees read are few and stay in cache); each
/// region has its buckets scrambled by a hash of its number, so regions at
/// the same offset (arenas, aligned mappings) do not collide.
#[inline]
pub(crate) fn bucket_index(addr: u64, buckets: usize) -> usize {
    let region = addr >> (4 + buckets.trailing_zeros());
    let scramble = region.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    let h = (addr >> 4) ^ scramble;
    h as usize & (buckets - 1)
}
