//! Byte copies the writer does itself instead of calling libc.
//!
//! Compaction moves a short, just-written payload a few bytes down in place
//! (when a nested message's 4-byte length shrinks to 1 byte). A `memmove` call
//! costs more than moving the few bytes of a typical small message, and wide
//! loads of bytes that were stored one at a time a few cycles earlier stall:
//! the CPU cannot forward them from its store buffer and waits for the stores
//! to retire. Short payloads are therefore moved a byte at a time (byte loads
//! forward from byte stores); longer ones, whose stall is amortized, in
//! 16-byte chunks.
//!
//! Large appends (a big `bytes` field) land wherever the cursor happens to be,
//! so source and destination are rarely aligned alike. Some `memcpy`
//! implementations switch to `rep movsb` for large sizes, which is markedly
//! slower on such relative misalignment; copying in 64-byte chunks to an
//! aligned destination runs at full speed whatever the source alignment.
//!
//! Short appends (the names and string arguments of trace events) are copied
//! inline with two overlapping moves: cheaper than a `memcpy` call.

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

/// Copies `src` to `dst` (non-overlapping), choosing the method by size.
///
/// # Safety
/// `dst` must be valid for writes of `src.len()` bytes and not overlap `src`.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(dst: *mut u8, src: &[u8]) {
    // SAFETY: forwarded caller contract.
    unsafe {
        if src.len() <= SMALL_COPY {
            copy_small(dst, src);
        } else if src.len() >= LARGE_COPY {
            copy_large(dst, src.as_ptr(), src.len());
        } else {
            ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len());
        }
    }
}

/// Copies of at most this many bytes are done inline by [`copy_small`].
const SMALL_COPY: usize = 32;

/// Copies up to 32 bytes without calling `memcpy` (whose call and size
/// dispatch cost more than the copy for the short strings trace events carry):
/// two possibly overlapping loads, from the front and from the back, then two
/// stores.
///
/// # Safety
/// As [`copy_bytes`], with `src.len() <= 32`.
#[inline(always)]
unsafe fn copy_small(dst: *mut u8, src: &[u8]) {
    /// Copies `len` bytes (`N <= len <= 2N`) as two overlapping `N`-byte moves.
    ///
    /// # Safety
    /// `src..src+len` readable, `dst..dst+len` writable, `N <= len <= 2N`.
    #[inline(always)]
    unsafe fn two_moves<const N: usize>(dst: *mut u8, src: *const u8, len: usize) {
        // SAFETY: both moves lie within the first and the last `N` of the
        // `len >= N` bytes, which the caller guarantees valid.
        unsafe {
            let head = ptr::read_unaligned(src.cast::<[u8; N]>());
            let tail = ptr::read_unaligned(src.add(len - N).cast::<[u8; N]>());
            ptr::write_unaligned(dst.cast::<[u8; N]>(), head);
            ptr::write_unaligned(dst.add(len - N).cast::<[u8; N]>(), tail);
        }
    }
    let len = src.len();
    let s = src.as_ptr();
    // SAFETY: each branch's bounds match `two_moves`' contract; the 1..=3
    // case touches indexes 0, len/2 and len-1, all below `len`.
    unsafe {
        if len >= 16 {
            two_moves::<16>(dst, s, len);
        } else if len >= 8 {
            two_moves::<8>(dst, s, len);
        } else if len >= 4 {
            two_moves::<4>(dst, s, len);
        } else if len > 0 {
            *dst = *s;
            *dst.add(len / 2) = *s.add(len / 2);
            *dst.add(len - 1) = *s.add(len - 1);
        }
    }
}

/// Copies of at least this many bytes use [`copy_large`].
const LARGE_COPY: usize = 4096;

/// Destinations less than this many bytes past their source, modulo 4 KiB,
/// are copied backwards (see [`copy_large`]).
const ALIAS_WINDOW: usize = 256;

/// Copies `len` bytes in 64-byte chunks with 64-byte-aligned stores, plus an
/// unaligned head and tail.
///
/// The direction avoids "4K aliasing": the CPU matches loads against
/// in-flight stores by their low 12 address bits only, so when `dst` sits a
/// little after `src` modulo 4 KiB, a forward copy's loads, which run ahead
/// of its stores, keep colliding with them and stall. Copying backwards
/// turns that distance into almost 4 KiB.
///
/// # Safety
/// `src..src+len` must be valid for reads, `dst..dst+len` for writes, and the
/// ranges must not overlap.
#[inline(never)]
unsafe fn copy_large(dst: *mut u8, src: *const u8, len: usize) {
    let ahead = (dst as usize).wrapping_sub(src as usize) & 4095;
    // SAFETY: forwarded caller contract.
    unsafe {
        if ahead != 0 && ahead < ALIAS_WINDOW {
            copy_large_backward(dst, src, len);
        } else {
            copy_large_forward(dst, src, len);
        }
    }
}

/// [`copy_large`] front to back.
///
/// # Safety
/// As [`copy_large`].
#[inline(always)]
unsafe fn copy_large_forward(dst: *mut u8, src: *const u8, len: usize) {
    // SAFETY: every access stays inside `src..src+len` or `dst..dst+len`
    // (`head <= len`, chunks end at or before `len`), valid per the caller.
    unsafe {
        let head = ((dst as usize).wrapping_neg() & 63).min(len);
        ptr::copy_nonoverlapping(src, dst, head);
        let mut i = head;
        while i + 64 <= len {
            let chunk = ptr::read_unaligned(src.add(i).cast::<[u8; 64]>());
            ptr::write_unaligned(dst.add(i).cast::<[u8; 64]>(), chunk);
            i += 64;
        }
        ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
    }
}

/// [`copy_large`] back to front: the unaligned tail first, then aligned
/// chunks downwards, then the head.
///
/// # Safety
/// As [`copy_large`].
#[inline(always)]
unsafe fn copy_large_backward(dst: *mut u8, src: *const u8, len: usize) {
    // SAFETY: every access stays inside `src..src+len` or `dst..dst+len`:
    // `tail <= len`, and each chunk starts at `i - 64 >= 0` and ends at
    // `i <= len - tail`, valid per the caller.
    unsafe {
        let tail = ((dst as usize).wrapping_add(len) & 63).min(len);
        let mut i = len - tail;
        ptr::copy_nonoverlapping(src.add(i), dst.add(i), tail);
        while i >= 64 {
            i -= 64;
            let chunk = ptr::read_unaligned(src.add(i).cast::<[u8; 64]>());
            ptr::write_unaligned(dst.add(i).cast::<[u8; 64]>(), chunk);
        }
        ptr::copy_nonoverlapping(src, dst, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length a compaction can move, by every small distance, against
    /// `ptr::copy` (memmove semantics) on a buffer with guard bytes around it.
    #[test]
    fn matches_memmove() {
        // Miri interprets every byte access: a sample of the lengths there.
        let step = if cfg!(miri) { 13 } else { 1 };
        for len in (0..=200usize).step_by(step) {
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

    /// Large and small copies at every destination alignment, with guard
    /// bytes on both sides that must stay untouched. (The offsets between
    /// the two allocations vary, so both copy directions get exercised; the
    /// next test forces each.)
    #[test]
    fn copies_exactly() {
        let src: Vec<u8> = (0..10_000usize).map(|i| (i * 31 % 251) as u8).collect();
        let small = 0..=40;
        let offsets: Vec<usize> = if cfg!(miri) {
            vec![0, 1, 7, 8, 33, 63]
        } else {
            (0..64).collect()
        };
        for len in small.chain([63, 64, 65, 4095, 4096, 4097, 4160, 9999]) {
            for &off in &offsets {
                let mut buf = vec![0xEEu8; len + 128];
                // SAFETY: `off + len < buf.len()`, and `src` is a separate allocation.
                unsafe { copy_bytes(buf.as_mut_ptr().add(off), &src[..len]) };
                assert_eq!(&buf[off..off + len], &src[..len], "len {len} off {off}");
                assert!(buf[..off].iter().all(|&b| b == 0xEE), "head guard");
                assert!(buf[off + len..].iter().all(|&b| b == 0xEE), "tail guard");
            }
        }
    }

    /// Both directions of the large copy, at sources and destinations of
    /// every 64-byte phase, against `copy_from_slice`.
    #[test]
    fn large_copy_both_directions() {
        let src: Vec<u8> = (0..20_000usize).map(|i| (i * 29 % 253) as u8).collect();
        let lens: &[usize] = if cfg!(miri) {
            &[4097]
        } else {
            &[4096, 4097, 4160, 5000, 9999]
        };
        for &len in lens {
            for src_off in [0, 1, 31, 63] {
                for dst_off in [0, 5, 33, 64] {
                    for backward in [false, true] {
                        let mut buf = vec![0xEEu8; len + 256];
                        let s = &src[src_off..src_off + len];
                        // SAFETY: `dst_off + len < buf.len()`; separate allocations.
                        unsafe {
                            let dst = buf.as_mut_ptr().add(dst_off);
                            if backward {
                                copy_large_backward(dst, s.as_ptr(), len);
                            } else {
                                copy_large_forward(dst, s.as_ptr(), len);
                            }
                        }
                        let what = format!("len {len} src {src_off} dst {dst_off} back {backward}");
                        assert_eq!(&buf[dst_off..dst_off + len], s, "{what}");
                        assert!(buf[..dst_off].iter().all(|&b| b == 0xEE), "{what}");
                        assert!(buf[dst_off + len..].iter().all(|&b| b == 0xEE), "{what}");
                    }
                }
            }
        }
    }
}
