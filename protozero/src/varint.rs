//! Varint, zigzag and little-endian fixed encodings, plus the 4-byte redundant
//! varint that ProtoZero reserves for nested lengths.

use crate::error::DecodeError;

/// Longest varint encoding of a u64.
pub const MAX_VARINT_LEN: usize = 10;

/// Number of bytes `value` takes as a varint (1..=10).
#[inline(always)]
pub const fn varint_len(value: u64) -> usize {
    // 1 + floor(bits_used / 7), with bits_used at least 1.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    (bits * 9 + 64) / 64
}

/// The varint of `value` as the low bytes of a little-endian word, when it
/// fits in one (`value < 2^56`: at most 8 bytes, [`varint_len`] of them,
/// the bytes above zero); `None` for larger values. A writer with 8 bytes
/// of room stores it with one move instead of a loop over its bytes.
#[inline(always)]
pub const fn varint_word(value: u64) -> Option<u64> {
    if value >= 1 << 56 {
        return None;
    }
    let n = varint_len(value);
    // Continuation bits on the first `n - 1` bytes (`n` is 1..=8).
    let cont = 0x0080_8080_8080_8080u64 >> (8 * (8 - n));
    Some(spread7(value) | cont)
}

/// Spreads the low 56 bits of `v` into eight 7-bit groups, one per byte of
/// the little-endian result (continuation bits clear), in three halving steps.
#[inline(always)]
pub(crate) const fn spread7(v: u64) -> u64 {
    // 28 | 28 bits into the two 32-bit halves.
    let x = (v & 0x0FFF_FFFF) | ((v & 0x00FF_FFFF_F000_0000) << 4);
    // 14 | 14 bits into each 16-bit quarter.
    let x = (x & 0x0000_3FFF_0000_3FFF) | ((x & 0x0FFF_C000_0FFF_C000) << 2);
    // 7 | 7 bits into each byte.
    (x & 0x007F_007F_007F_007F) | ((x & 0x3F80_3F80_3F80_3F80) << 1)
}

/// Writes `value` as a varint at the start of `buf` and returns the length.
///
/// `buf` must have room for [`varint_len`] bytes; the function never writes past it
/// (a too-short buffer is a caller bug and panics like slice indexing does).
#[inline(always)]
pub fn encode_varint(mut value: u64, buf: &mut [u8]) -> usize {
    let mut i = 0;
    while value >= 0x80 {
        buf[i] = (value as u8) | 0x80;
        value >>= 7;
        i += 1;
    }
    buf[i] = value as u8;
    i + 1
}

/// Zigzag-encodes a sint32 so small magnitudes stay short.
#[inline(always)]
pub const fn zigzag32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

/// Zigzag-encodes a sint64.
#[inline(always)]
pub const fn zigzag64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Reverses [`zigzag32`].
#[inline(always)]
pub const fn unzigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// Reverses [`zigzag64`].
#[inline(always)]
pub const fn unzigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Encodes `value` (< 2^28) as a varint that always takes 4 bytes: the first
/// three bytes keep their continuation bit set even when the value is small.
///
/// `0 → 80 80 80 00`, `7 → 87 80 80 00`, `300 → AC 82 80 00`.
#[inline(always)]
pub const fn redundant_varint4(value: u32) -> [u8; 4] {
    [
        (value as u8 & 0x7f) | 0x80,
        ((value >> 7) as u8 & 0x7f) | 0x80,
        ((value >> 14) as u8 & 0x7f) | 0x80,
        (value >> 21) as u8 & 0x7f,
    ]
}

/// [`redundant_varint4`] of `value < 2^28` as a little-endian word, so a
/// length slot is filled with one 4-byte store instead of four byte stores.
#[inline(always)]
pub(crate) fn redundant_varint4_le(value: usize) -> u32 {
    let v = value as u32;
    let word = (v & 0x7f) | ((v << 1) & 0x7f00) | ((v << 2) & 0x7f_0000) | ((v << 3) & 0x7f00_0000);
    (word | 0x0080_8080).to_le()
}

/// Decodes a varint at the start of `buf`, returning the value and its length.
///
/// Accepts non-minimal encodings (ProtoZero pads lengths); rejects truncated
/// input and encodings longer than 10 bytes. Bits beyond 64 are discarded, as
/// protobuf parsers do.
#[inline]
pub fn decode_varint(buf: &[u8]) -> Result<(u64, usize), DecodeError> {
    // Fast path: one byte.
    match buf.first() {
        None => return Err(DecodeError::TruncatedVarint),
        Some(&b) if b < 0x80 => return Ok((u64::from(b), 1)),
        Some(_) => {}
    }
    decode_varint_rest(buf)
}

/// [`decode_varint`] past its one-byte fast path.
#[inline(always)]
fn decode_varint_rest(buf: &[u8]) -> Result<(u64, usize), DecodeError> {
    // A loop of constant bounds, which the compiler unrolls: no counter or
    // shift to keep, one load, mask, shift and test per byte.
    let mut value = 0u64;
    for i in 0..MAX_VARINT_LEN {
        let Some(&b) = buf.get(i) else {
            return Err(DecodeError::TruncatedVarint);
        };
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Ok((value, i + 1));
        }
    }
    Err(DecodeError::VarintTooLong)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_varint_word_holds_the_varint_bytes() {
        let mut values = vec![0u64, 1, 127, 128, 300, (1 << 56) - 1];
        for k in 1..56 {
            values.extend([(1u64 << k) - 1, 1u64 << k]);
        }
        for v in values {
            let mut want = [0u8; 8];
            let n = encode_varint(v, &mut want);
            let word = varint_word(v).expect("below 2^56");
            assert_eq!(word.to_le_bytes(), want, "{v:#x} ({n} bytes)");
        }
        assert_eq!(varint_word(1 << 56), None);
        assert_eq!(varint_word(u64::MAX), None);
    }

    #[test]
    fn redundant_known_answers() {
        assert_eq!(redundant_varint4(0), [0x80, 0x80, 0x80, 0x00]);
        assert_eq!(redundant_varint4(7), [0x87, 0x80, 0x80, 0x00]);
        assert_eq!(redundant_varint4(300), [0xAC, 0x82, 0x80, 0x00]);
        let max = (1u32 << 28) - 1;
        assert_eq!(redundant_varint4(max), [0xFF, 0xFF, 0xFF, 0x7F]);
        for v in [0u32, 1, 127, 128, 300, 16383, 16384, max] {
            assert_eq!(decode_varint(&redundant_varint4(v)).unwrap(), (v as u64, 4));
        }
    }

    #[test]
    fn redundant_word_matches_bytes() {
        let max = (1usize << 28) - 1;
        let mut values = vec![0, 1, 127, 128, 300, 16383, 16384, max];
        values.extend((0..28).map(|b| 1usize << b));
        values.extend((1..28).map(|b| (1usize << b) - 1));
        for v in values {
            let bytes = redundant_varint4_le(v).to_ne_bytes();
            assert_eq!(bytes, redundant_varint4(v as u32), "value {v}");
        }
    }

    #[test]
    fn varint_len_matches_encoding() {
        let mut buf = [0u8; 10];
        for shift in 0..64 {
            for v in [1u64 << shift, (1u64 << shift) - 1, (1u64 << shift) + 1] {
                let n = encode_varint(v, &mut buf);
                assert_eq!(n, varint_len(v), "value {v}");
                assert_eq!(decode_varint(&buf[..n]).unwrap(), (v, n));
            }
        }
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(u64::MAX), 10);
    }

    #[test]
    fn hostile_varints() {
        assert_eq!(decode_varint(&[]), Err(DecodeError::TruncatedVarint));
        assert_eq!(
            decode_varint(&[0x80, 0x80]),
            Err(DecodeError::TruncatedVarint)
        );
        assert_eq!(decode_varint(&[0xff; 11]), Err(DecodeError::VarintTooLong));
        assert_eq!(decode_varint(&[0xff; 10]), Err(DecodeError::VarintTooLong));
    }

    #[test]
    fn zigzag_round_trip() {
        for v in [0i32, 1, -1, 2, -2, i32::MAX, i32::MIN] {
            assert_eq!(unzigzag32(zigzag32(v)), v);
        }
        for v in [0i64, 1, -1, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag64(zigzag64(v)), v);
        }
        assert_eq!(zigzag32(-1), 1);
        assert_eq!(zigzag64(1), 2);
    }
}
