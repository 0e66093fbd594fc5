//! Moving a short, just-written payload a few bytes down in place: what
//! compacting a nested message's 4-byte length to 1 byte needs.
//!
//! A plain `memmove` is a library call that costs more than moving the few
//! bytes of a typical small message, and wide loads of bytes that were stored
//! one at a time a few cycles earlier stall: the CPU cannot forward them from
//! its store buffer and waits for the stores to retire. Short payloads are
//! therefore moved a byte at a time (byte loads forward from byte stores);
//! longer ones, whose stall is amortized, in 16-byte chunks.

use core::ptr;

/// Payloads up to this many bytes are moved with a byte loop.
const BYTEWISE_MOVE_MAX: usize = 16;

/// Chunk size of the wide copy (payloads longer than [`BYTEWISE_MOVE_MAX`]).
const CHUNK: usize = 16;

/// Moves `len` bytes from `src` down to `dst` (`dst < src`; the ranges may overlap).
///
/// # Safety
/// `src..src+len` must be valid for reads, `dst..dst+len` for writes, and
/// `dst` must not be above `src`.
#[inline(always)]
pub(crate) unsafe fn move_down_small(dst: *mut u8, src: *const u8, len: usize) {
    // No store clobbers a byte before it is loaded: each chunk (or byte) is
    // loaded before it is stored, a store ends `src - dst ≥ 1` bytes before the
    // next chunk starts, and the last chunk, which may overlap the previous
    // one, is loaded before the loop.
    // SAFETY: every access stays inside `src..src+len` or `dst..dst+len`,
    // which the caller guarantees valid.
    unsafe {
        if len <= BYTEWISE_MOVE_MAX {
            // Volatile loads keep the compiler from turning this loop back into
            // a `memmove` call or merging the loads into wide ones.
            for i in 0..len {
                *dst.add(i) = ptr::read_volatile(src.add(i));
            }
        } else {
            let tail = ptr::read_unaligned(src.add(len - CHUNK).cast::<[u8; CHUNK]>());
            let mut i = 0;
            while i + CHUNK < len {
                let chunk = ptr::read_unaligned(src.add(i).cast::<[u8; CHUNK]>());
                ptr::write_unaligned(dst.add(i).cast::<[u8; CHUNK]>(), chunk);
                i += CHUNK;
            }
            ptr::write_unaligned(dst.add(len - CHUNK).cast::<[u8; CHUNK]>(), tail);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length a compaction can move, by every small distance, against
    /// `ptr::copy` (memmove semantics) on a buffer with guard bytes around it.
    #[test]
    fn matches_memmove() {
        for len in 0..=200usize {
            for shift in 1..=4usize {
                let total = len + shift + 16;
                let init: Vec<u8> = (0..total).map(|i| (i * 37 + len) as u8).collect();
                let mut got = init.clone();
                let mut want = init.clone();
                let (dst, src) = (8, 8 + shift);
                // SAFETY: `dst..dst+len` and `src..src+len` lie inside `got`.
                unsafe {
                    let base = got.as_mut_ptr();
                    move_down_small(base.add(dst), base.add(src), len);
                }
                want.copy_within(src..src + len, dst);
                assert_eq!(got, want, "len {len} shift {shift}");
            }
        }
    }
}
