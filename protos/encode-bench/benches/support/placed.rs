//! Buffers at a chosen offset within a 4 KiB page.
//!
//! Large copies slow down when the destination sits a little after the
//! source modulo 4 KiB (the CPU's store-to-load check compares the low 12
//! address bits only). Where the allocator puts the bench's buffers changes
//! from process to process, so the `bytes_64k` variants place theirs
//! explicitly: every copy, ours and the memcpy floor alike, then runs with
//! its destination half a page from its source.

/// A zeroed buffer of `len` bytes starting `phase` bytes past a 4 KiB boundary.
pub struct Placed {
    mem: Vec<u8>,
    start: usize,
    len: usize,
}

impl Placed {
    /// Allocates `len` bytes whose first byte has address ≡ `phase` (mod 4096).
    pub fn zeroed(len: usize, phase: usize) -> Placed {
        let mem = vec![0u8; len + 4096];
        let start = phase.wrapping_sub(mem.as_ptr() as usize) & 4095;
        Placed { mem, start, len }
    }

    /// A copy of `bytes` placed at `phase`.
    pub fn copy_of(bytes: &[u8], phase: usize) -> Placed {
        let mut p = Placed::zeroed(bytes.len(), phase);
        p.bytes_mut().copy_from_slice(bytes);
        p
    }

    /// The placed bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.mem[self.start..self.start + self.len]
    }

    /// The placed bytes, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.start..self.start + self.len]
    }
}
