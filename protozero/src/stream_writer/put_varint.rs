//! Raw varint stores for the stream writer's fast paths.

use crate::varint::{spread7, varint_len};

/// Encodes `value` as a varint at `p` and returns the pointer past it.
///
/// Values below 2^28 (ids, sizes, small numbers: four bytes or fewer) go
/// through a byte loop whose well-predicted branches let the cursor run
/// ahead; longer ones (timestamps, uuids, negative numbers) are assembled in
/// a register and stored as one 8-byte word plus at most two bytes, which
/// takes a third of the instructions. The word may write up to 3 bytes past
/// the varint; every fast path has that room.
///
/// # Safety
/// `p` must be valid for writes of 9 bytes, and of `varint_len(value)`
/// bytes (10 at most).
#[inline(always)]
pub(super) unsafe fn put_varint(mut p: *mut u8, mut value: u64) -> *mut u8 {
    // SAFETY: the caller guarantees room for the whole varint
    // and for the long form's 8-byte word.
    unsafe {
        if value < 0x80 {
            *p = value as u8;
            return p.add(1);
        }
        if value >= 1 << 28 {
            return put_long_varint(p, value);
        }
        loop {
            *p = (value as u8) | 0x80;
            p = p.add(1);
            value >>= 7;
            if value < 0x80 {
                *p = value as u8;
                return p.add(1);
            }
        }
    }
}

/// [`put_varint`] of a value of at least 2^28 (5 to 10 bytes).
///
/// # Safety
/// As [`put_varint`].
#[cold]
#[inline(always)]
unsafe fn put_long_varint(p: *mut u8, value: u64) -> *mut u8 {
    // SAFETY: the 8-byte word and the bytes after it stay
    // within `max(9, varint_len(value))` bytes of `p`.
    unsafe {
        let word = spread7(value);
        if value < 1 << 56 {
            let n = varint_len(value);
            // Continuation bits on the first `n - 1` bytes (`n` is 5..=8).
            let cont = 0x0080_8080_8080_8080u64 >> (8 * (8 - n));
            p.cast::<[u8; 8]>()
                .write_unaligned((word | cont).to_le_bytes());
            return p.add(n);
        }
        p.cast::<[u8; 8]>()
            .write_unaligned((word | 0x8080_8080_8080_8080).to_le_bytes());
        let top = value >> 56;
        if top < 0x80 {
            *p.add(8) = top as u8;
            p.add(9)
        } else {
            *p.add(8) = (top as u8) | 0x80;
            *p.add(9) = 1;
            p.add(10)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::put_varint;
    use crate::varint::{MAX_VARINT_LEN, encode_varint};

    /// Every length class, its edges, and a spread of values in between,
    /// against the plain encoder; bytes past the varint may be scratch, but
    /// never beyond the 9 (or 10) bytes the caller guarantees.
    #[test]
    fn put_varint_matches_encode_varint() {
        let mut values = vec![0u64, 1, 127, 128, u64::MAX, u64::MAX - 1, 1 << 63];
        for k in 1..64 {
            values.extend([(1u64 << k) - 1, 1u64 << k, (1u64 << k) + 1]);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..if cfg!(miri) { 300 } else { 10_000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        for v in values {
            let mut want = [0u8; MAX_VARINT_LEN];
            let n = encode_varint(v, &mut want);
            let mut buf = [0xEEu8; 32];
            // SAFETY: `buf` has 32 writable bytes from offset 3.
            let end = unsafe { put_varint(buf.as_mut_ptr().add(3), v) };
            let written = end as usize - buf.as_ptr() as usize - 3;
            assert_eq!(written, n, "length of {v:#x}");
            assert_eq!(&buf[3..3 + n], &want[..n], "bytes of {v:#x}");
            assert!(buf[..3].iter().all(|&b| b == 0xEE), "before {v:#x}");
            let reach = 3 + n.max(9);
            assert!(buf[reach..].iter().all(|&b| b == 0xEE), "past {v:#x}");
        }
    }
}
