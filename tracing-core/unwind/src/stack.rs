//! The sampled thread's stack as the kernel copied it
//! (`PERF_SAMPLE_STACK_USER`): the bytes from the sampled `sp` upwards, of
//! which only `dyn_size` are valid. Every read the unwinders make goes
//! through [`StackCopy::read_u64`], which answers only for 8 bytes wholly
//! inside the valid part; anything else is a typed miss the unwind reports
//! as `MEMORY_INVALID`, never a read of other memory.

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
    bytes: &'a [u8],
}

impl<'a> StackCopy<'a> {
    /// The copy of `bytes` (the `dyn_size` valid bytes only) taken at `sp`.
    /// A copy that would run past the end of the address space is cut
    /// there.
    pub fn new(sp: u64, bytes: &'a [u8]) -> Self {
        let room = usize::try_from(u64::MAX - sp).unwrap_or(usize::MAX);
        let len = bytes.len().min(room);
        StackCopy {
            sp,
            bytes: bytes.get(..len).unwrap_or_default(),
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
        let word = self.bytes.get(offset..end).ok_or(err)?;
        let mut buf = [0u8; 8];
        buf.copy_from_slice(word);
        Ok(u64::from_le_bytes(buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
