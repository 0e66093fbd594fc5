//! The service-side view under hostile input: random bytes in the SMB (page
//! header words, chunk headers, payloads) and random commit requests must only
//! ever produce typed errors — no panic, no access outside the mapping.

use std::sync::Arc;

use proptest::prelude::*;
use zerotrace_core::abi::{FragmentIter, SharedMemoryAbi};
use zerotrace_core::protocol::CommitDataRequest;
use zerotrace_core::shm::{HeapShm, SharedMemoryRegion};

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 256 }, ..ProptestConfig::default() })]

    #[test]
    fn random_smb_contents_never_panic(
        page_kib in prop::sample::select(vec![4usize, 8, 16, 32, 64]),
        pages in 1usize..4,
        words in prop::collection::vec(any::<u32>(), 4),
        noise in prop::collection::vec((any::<u16>(), any::<u8>()), 0..512),
        requests in prop::collection::vec((0u32..6, 0u32..20), 0..40),
    ) {
        let page_size = page_kib * 1024;
        let size = page_size * pages;
        let region = Arc::new(HeapShm::new(size).unwrap());
        let base = region.as_ptr();
        for (i, (off, b)) in noise.iter().enumerate() {
            let page = i % pages;
            let at = page * page_size + usize::from(*off) % page_size;
            // SAFETY: `at` < size; single-threaded test, no view exists yet.
            unsafe { *base.add(at) = *b };
        }
        for (page, w) in words.iter().enumerate().take(pages) {
            let at = page * page_size;
            // SAFETY: page start inside the region, 4-aligned.
            unsafe { core::ptr::copy_nonoverlapping(w.to_le_bytes().as_ptr(), base.add(at), 4) };
        }
        // SAFETY: `region` outlives the view.
        let abi = unsafe { SharedMemoryAbi::new(base, size, page_size) }.unwrap();
        let lo = base as usize;
        let hi = lo + size;
        let mut payload = Vec::new();
        for (page, chunk) in requests {
            let (page, chunk) = (page as usize, chunk as usize);
            let _ = abi.chunk_state(page, chunk);
            let _ = abi.free_chunks(page);
            if let Ok(c) = abi.try_acquire_chunk_for_reading(page, chunk) {
                prop_assert!(c.begin() as usize >= lo && c.end() as usize <= hi);
                prop_assert!(c.end() as usize <= lo + (page + 1) * page_size);
                let h = c.header();
                c.copy_payload(&mut payload);
                for f in FragmentIter::new(&payload, h.packets.count).flatten() {
                    prop_assert!(f.offset + f.data.len() <= payload.len());
                }
                let _ = abi.release_chunk_as_free(c);
            }
        }
    }

    #[test]
    fn random_commit_requests_decode_or_fail_cleanly(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Ok(req) = CommitDataRequest::decode(&bytes) {
            // Whatever decodes re-encodes to something that decodes the same.
            prop_assert_eq!(CommitDataRequest::decode(&req.encode()), Ok(req));
        }
    }
}
