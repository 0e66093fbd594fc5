//! The service's fragment parser on a hostile chunk payload (the first two
//! bytes give the packet count): fragments are in order, inside the payload,
//! and iteration ends at the first error.

use zerotrace_core::abi::FragmentIter;

/// The `chunk_fragments` target.
pub fn chunk_fragments(data: &[u8]) {
    let Some((count, payload)) = data.split_first_chunk::<2>() else {
        return;
    };
    let mut end = 0;
    let mut errors = 0;
    for f in FragmentIter::new(payload, u16::from_le_bytes(*count) & 0x3FF) {
        assert_eq!(errors, 0, "nothing follows an error");
        match f {
            Ok(f) => {
                assert!(f.offset >= end && f.offset + f.data.len() <= payload.len());
                end = f.offset + f.data.len();
            }
            Err(_) => errors += 1,
        }
    }
}
