//! Copying out of memory that another process may be writing at the same time.
//!
//! A producer can rewrite its shared memory buffer whenever it likes, so the
//! service must never view that memory as `&[u8]` (the compiler may assume such
//! bytes do not change) and must never re-read a byte it already validated.
//! [`copy_from_shared`] reads every byte exactly once with relaxed atomic
//! loads, 8 bytes at a time where aligned, into memory the caller owns; all
//! parsing then works on the copy. Whatever the peer does, the result is
//! some mix of old and new bytes: never undefined behaviour.

use core::sync::atomic::{AtomicU8, AtomicU64, Ordering};

const WORD: usize = core::mem::size_of::<u64>();

/// Copies `dst.len()` bytes starting at `src` into `dst` with relaxed atomic
/// loads (one read of each byte).
///
/// # Safety
/// `src..src + dst.len()` must lie in a live mapping that stays mapped for
/// the duration of the call. No access by this process may race with the
/// copy, except 8-byte atomic stores to 8-byte aligned words; writes by
/// another process are what the atomic loads tolerate (they only make the
/// copy a mix of old and new bytes). In the ABI, a chunk is copied while the
/// reader owns it (being read) or only another process can write it.
pub unsafe fn copy_from_shared(src: *const u8, dst: &mut [u8]) {
    let len = dst.len();
    let head = src.align_offset(WORD).min(len);
    let mut i = 0;
    while i < head {
        // SAFETY: `src + i` is inside the range (caller contract); a byte is
        // always aligned for `AtomicU8`.
        dst[i] = unsafe { AtomicU8::from_ptr(src.add(i).cast_mut()) }.load(Ordering::Relaxed);
        i += 1;
    }
    while i + WORD <= len {
        // SAFETY: `src + i` is 8-byte aligned (after `head`) and the 8 bytes
        // from it are inside the range (loop condition, caller contract).
        let w = unsafe { AtomicU64::from_ptr(src.add(i).cast::<u64>().cast_mut()) }
            .load(Ordering::Relaxed);
        dst[i..i + WORD].copy_from_slice(&w.to_ne_bytes());
        i += WORD;
    }
    while i < len {
        // SAFETY: as for the head bytes.
        dst[i] = unsafe { AtomicU8::from_ptr(src.add(i).cast_mut()) }.load(Ordering::Relaxed);
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::copy_from_shared;

    #[test]
    fn copies_every_alignment_and_length() {
        let src: Vec<u8> = (0..=255u8).cycle().take(300).collect();
        for start in 0..9 {
            for len in [0, 1, 7, 8, 9, 15, 16, 17, 64, 100, 291 - start] {
                let mut dst = vec![0xEEu8; len];
                // SAFETY: `src[start..start + len]` is a live, unshared buffer.
                unsafe { copy_from_shared(src.as_ptr().add(start), &mut dst) };
                assert_eq!(dst, &src[start..start + len], "start {start} len {len}");
            }
        }
    }
}
