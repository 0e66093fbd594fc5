//! The sampled thread's stack as the kernel copied it
//! (`PERF_SAMPLE_STACK_USER`): the bytes from the sampled `sp` upwards, of
//! which only `dyn_size` are valid. Every read the unwinders make goes
//! through [`StackCopy::read_u64`], which answers only for 8 bytes wholly
//! inside the valid part; anything else is a typed miss the unwind reports
//! as `MEMORY_INVALID`, never a read of other memory.
//!
//! A copy may also stay where a peer process put it (the heap profiler's
//! shared ring, [`StackCopy::shared`]): an unwind reads a handful of words,
//! so reading them in place with atomic loads costs less than copying the
//! whole stack out first, and the peer writing those bytes meanwhile is no
//! data race (it only makes the unwind read garbage, which every step
//! already survives).

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// A read outside the copied stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("address {addr:#x} is outside the stack copy")]
pub struct StackReadError {
    /// The address asked for.
    pub addr: u64,
}

/// The valid bytes of a user stack copy, starting at `sp`.
#[derive(Debug, Clone, Copy)]
pub struct StackCopy<'a> {
    sp: u64,
    bytes: Bytes<'a>,
}

/// Where a copy's bytes are.
#[derive(Debug, Clone, Copy)]
enum Bytes<'a> {
    /// Ours alone.
    Local(&'a [u8]),
    /// Memory another process may write at any time: read with atomic
    /// loads only.
    Shared {
        at: *const u8,
        len: usize,
        _bytes: PhantomData<&'a [u8]>,
    },
}

impl Bytes<'_> {
    fn len(&self) -> usize {
        match self {
            Bytes::Local(b) => b.len(),
            Bytes::Shared { len, .. } => *len,
        }
    }
}

/// How many bytes from `sp` a copy of `len` bytes may cover without
/// running past the end of the address space.
fn within_address_space(sp: u64, len: usize) -> usize {
    let room = usize::try_from(u64::MAX - sp).unwrap_or(usize::MAX);
    len.min(room)
}

impl<'a> StackCopy<'a> {
    /// The copy of `bytes` (the `dyn_size` valid bytes only) taken at `sp`.
    /// A copy that would run past the end of the address space is cut
    /// there.
    pub fn new(sp: u64, bytes: &'a [u8]) -> Self {
        let len = within_address_space(sp, bytes.len());
        StackCopy {
            sp,
            bytes: Bytes::Local(bytes.get(..len).unwrap_or_default()),
        }
    }

    /// The copy of the `len` bytes at `at`, taken at `sp`, read where they
    /// are: each word the unwind asks for is an atomic load, so whatever
    /// another process writes there meanwhile, this process sees no data
    /// race (only, at worst, a word that makes no sense).
    ///
    /// # Safety
    /// `at` is valid for reads and writes of `len` bytes for `'a` (as
    /// [`AtomicU64::from_ptr`] asks, though only loads are made), and this
    /// process accesses those bytes meanwhile with atomic operations only;
    /// other processes may write them in any way.
    pub unsafe fn shared(sp: u64, at: *const u8, len: usize) -> Self {
        StackCopy {
            sp,
            bytes: Bytes::Shared {
                at,
                len: within_address_space(sp, len),
                _bytes: PhantomData,
            },
        }
    }

    /// The lowest address copied (the sampled sp).
    pub fn start(&self) -> u64 {
        self.sp
    }

    /// One past the highest address copied.
    pub fn end(&self) -> u64 {
        self.sp + self.bytes.len() as u64
    }

    /// The little-endian `u64` at `addr`, if all 8 bytes were copied.
    #[inline]
    pub fn read_u64(&self, addr: u64) -> Result<u64, StackReadError> {
        let err = StackReadError { addr };
        let offset = addr.checked_sub(self.sp).ok_or(err)?;
        let offset = usize::try_from(offset).map_err(|_| err)?;
        let end = offset.checked_add(8).ok_or(err)?;
        if end > self.bytes.len() {
            return Err(err);
        }
        let mut buf = [0u8; 8];
        match self.bytes {
            Bytes::Local(b) => buf.copy_from_slice(b.get(offset..end).ok_or(err)?),
            Bytes::Shared { at, .. } => {
                let p = at.wrapping_add(offset);
                if p.addr() % 8 == 0 {
                    // SAFETY: `offset + 8 <= len` (checked above), so the
                    // aligned word is inside the bytes `shared`'s caller
                    // vouched for, accessed atomically only.
                    let v = unsafe { AtomicU64::from_ptr(p.cast::<u64>().cast_mut()) }
                        .load(Ordering::Relaxed);
                    return Ok(u64::from_le(v));
                }
                for (i, b) in buf.iter_mut().enumerate() {
                    // SAFETY: as above, byte by byte.
                    *b = unsafe { AtomicU8::from_ptr(p.wrapping_add(i).cast_mut()) }
                        .load(Ordering::Relaxed);
                }
            }
        }
        Ok(u64::from_le_bytes(buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_shared_copy_reads_as_a_local_one_aligned_or_not() {
        let mut words: Vec<u64> = (1..=5u64).map(|i| i * 0x0101_0101_0101_0101 + i).collect();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let at = words.as_mut_ptr().cast::<u8>();
        for start in 0..9 {
            let len = bytes.len() - start - 3;
            let local = StackCopy::new(0x1000, &bytes[start..start + len]);
            // SAFETY: `words` outlives `shared` and is not touched meanwhile.
            let shared = unsafe { StackCopy::shared(0x1000, at.wrapping_add(start), len) };
            assert_eq!(shared.end(), local.end());
            for addr in 0xff0..0x1000 + len as u64 + 8 {
                assert_eq!(
                    shared.read_u64(addr),
                    local.read_u64(addr),
                    "{start} {addr:#x}"
                );
            }
        }
    }

    #[test]
    fn reads_inside_only() {
        let bytes: Vec<u8> = (0u8..24).collect();
        let s = StackCopy::new(0x1000, &bytes);
        assert_eq!(
            s.read_u64(0x1000),
            Ok(u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]))
        );
        assert!(s.read_u64(0x1010).is_ok());
        assert_eq!(s.read_u64(0x1011), Err(StackReadError { addr: 0x1011 }));
        assert_eq!(s.read_u64(0xff8), Err(StackReadError { addr: 0xff8 }));
        assert!(s.read_u64(u64::MAX).is_err());
        assert_eq!(s.end(), 0x1018);
    }

    #[test]
    fn copy_at_the_top_of_the_address_space_is_cut() {
        let bytes = [0u8; 64];
        let s = StackCopy::new(u64::MAX - 16, &bytes);
        assert_eq!(s.end(), u64::MAX);
        assert!(s.read_u64(u64::MAX - 16).is_ok());
        assert!(s.read_u64(u64::MAX - 7).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(sp: u64, addr: u64, len in 0usize..64) {
            let bytes = vec![0xa5u8; len];
            let s = StackCopy::new(sp, &bytes);
            let _ = s.read_u64(addr);
        }
    }
}
