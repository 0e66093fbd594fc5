//! The ring's bytes as the writer and the reader reach them, in one small
//! type so that the loom models can run the ring's own code over memory
//! loom tracks.
//!
//! In the normal build [`RingMem`] is the shared mapping's address and
//! nothing else: header words are loaded and stored as atomics in place
//! (`AtomicU32::from_ptr`), the writer's other bytes are written plainly,
//! the reader copies bytes out with atomic loads (or the `asm!` copy).
//! Every method is an inlined pointer operation, so the writer's hot path
//! compiles to what it did before this type existed.
//!
//! Under `--cfg zerotrace_loom` a [`RingMem`] is a slice of [`LoomRing`]'s
//! words, four bytes each: the word's value is a loom atomic (what any
//! load of it sees, header or not, as in the real memory), and beside it a
//! loom cell that holds nothing and records the plain accesses: every store
//! the writer makes (header or body) is a write of the cell, every body
//! byte the reader copies out a read of it. So a reader that copies bytes
//! not ordered after the writer's stores, or a writer that stores into
//! bytes the reader has not released, is a causality violation loom
//! reports, whatever values the loads happen to return.

#[cfg(not(zerotrace_loom))]
use std::marker::PhantomData;
#[cfg(not(zerotrace_loom))]
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering;

/// The ring's bytes: the shared mapping's address (normal build).
#[cfg(not(zerotrace_loom))]
#[derive(Clone, Copy)]
pub struct RingMem<'a> {
    base: *mut u8,
    _ring: PhantomData<&'a [u8]>,
}

#[cfg(not(zerotrace_loom))]
impl RingMem<'_> {
    /// The ring at `base`.
    ///
    /// # Safety
    /// `base` is 16-aligned and valid, for the lifetime chosen, for reads
    /// of the ring's bytes (and for writes of those a writer reserves);
    /// every offset passed to the methods below is inside the ring.
    #[inline(always)]
    pub(crate) unsafe fn from_ptr(base: *mut u8) -> Self {
        RingMem {
            base,
            _ring: PhantomData,
        }
    }

    /// The address of the byte at `off`.
    #[inline(always)]
    pub(crate) fn ptr(self, off: usize) -> *mut u8 {
        self.base.wrapping_add(off)
    }

    /// The bytes from `off` on (`off` 4-aligned).
    #[inline(always)]
    pub(crate) fn offset(self, off: usize) -> Self {
        RingMem {
            base: self.ptr(off),
            _ring: PhantomData,
        }
    }

    /// Loads the `u32` at `off` (4-aligned, inside the ring) atomically.
    ///
    /// # Safety
    /// `off + 4` is inside the ring.
    #[inline(always)]
    pub(crate) unsafe fn load_u32(self, off: usize, order: Ordering) -> u32 {
        // SAFETY: inside the ring (caller), aligned (`base` is 16-aligned,
        // `off` 4-aligned); an atomic load, whatever the other side does.
        unsafe { AtomicU32::from_ptr(self.ptr(off).cast::<u32>()) }.load(order)
    }

    /// Stores the `u32` at `off` (4-aligned) atomically.
    ///
    /// # Safety
    /// `off + 4` is inside the ring, in bytes the caller reserved.
    #[inline(always)]
    pub(crate) unsafe fn store_u32(self, off: usize, v: u32, order: Ordering) {
        // SAFETY: as for `load_u32`.
        unsafe { AtomicU32::from_ptr(self.ptr(off).cast::<u32>()) }.store(v, order)
    }

    /// Writes the `u64` at `off` (8-aligned) plainly.
    ///
    /// # Safety
    /// `off + 8` is inside the ring, in bytes the caller reserved and the
    /// reader does not read before their frame's commit.
    #[inline(always)]
    pub(crate) unsafe fn write_u64(self, off: usize, v: u64) {
        // SAFETY: caller contract; aligned as `base` is 16-aligned.
        unsafe { self.ptr(off).cast::<u64>().write(v) }
    }

    /// Copies `out.len()` bytes at `off` out: by the `asm!` copy the client
    /// uses for long runs (out of Rust's sight, so whatever the client does
    /// to them is no race: ARCHITECTURE.md's soundness rules), the rest
    /// with atomic loads.
    ///
    /// # Safety
    /// `off + out.len()` is inside the ring.
    #[inline]
    pub(crate) unsafe fn read(self, off: usize, out: &mut [u8]) {
        use super::super::capture::{ASM_COPY, copy_bytes_asm};
        let from = self.ptr(off);
        if ASM_COPY && out.len() >= 256 {
            // SAFETY: inside the ring (caller), so in our mapping; `out` is
            // ours to write.
            unsafe { copy_bytes_asm(from as u64, out.as_mut_ptr(), out.len()) };
            return;
        }
        // SAFETY: as above; the bytes are read with atomic loads only,
        // whatever the client does.
        unsafe { zerotrace_core::abi::copy_from_shared(from, out) }
    }

    /// Asks the cache for the `len` bytes at `off` (a hint only: no memory
    /// is accessed as Rust sees it, and no address faults).
    #[inline]
    pub(crate) fn prefetch(self, off: usize, len: usize) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        for line in (0..len).step_by(64) {
            // SAFETY: a prefetch reads nothing Rust can see and never faults.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    self.ptr(off).wrapping_add(line).cast::<i8>(),
                )
            };
        }
        #[cfg(not(all(target_arch = "x86_64", not(miri))))]
        let _ = (off, len);
    }

    /// Asks for the lines of the `len` bytes at `off`, to be written soon,
    /// on this core ([`prefetch_for_write`]).
    #[inline]
    pub(crate) fn prefetch_for_write(self, off: usize, len: usize) {
        prefetch_for_write(self.ptr(off), len);
    }
}

/// Asks for the lines of the `len` bytes at `at`, to be written soon, on
/// this core (the free filter's buckets, the ring's next frames; a hint
/// only: PREFETCHW, a no-op on processors without it, accesses nothing as
/// Rust sees it and never faults).
#[cfg(not(zerotrace_loom))]
#[inline]
pub(super) fn prefetch_for_write(at: *const u8, len: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    for line in (0..len).step_by(64) {
        // SAFETY: a prefetch reads and writes nothing Rust can see and never
        // faults.
        unsafe {
            std::arch::asm!(
                "prefetchw [{}]",
                in(reg) at.wrapping_add(line),
                options(nostack, preserves_flags, readonly),
            );
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (at, len);
}

/// One four-byte word of a [`LoomRing`]: its value, and loom's record of
/// the plain accesses to it.
#[cfg(zerotrace_loom)]
struct Word {
    /// The bytes, in native order: every load sees what the last stores
    /// here left, as the shared memory would.
    value: loom::sync::atomic::AtomicU32,
    /// Holds nothing: written by every store of the writer, read by every
    /// copy of the reader, so loom checks those are ordered.
    plain: loom::cell::UnsafeCell<()>,
}

/// The ring's bytes in a loom model: words loom tracks (see the module's
/// doc), zeroed. Made inside the model, as every loom object is.
#[cfg(zerotrace_loom)]
pub struct LoomRing {
    words: Box<[Word]>,
}

// SAFETY: the cells hold `()` and are only touched through `with` and
// `with_mut`, which loom checks for races across threads; the atomics are
// `Sync`.
#[cfg(zerotrace_loom)]
unsafe impl Sync for LoomRing {}
// SAFETY: as above.
#[cfg(zerotrace_loom)]
unsafe impl Send for LoomRing {}

#[cfg(zerotrace_loom)]
impl LoomRing {
    /// `bytes` zeroed bytes (a multiple of 16).
    pub fn new(bytes: usize) -> Self {
        assert!(bytes % 16 == 0, "{bytes}");
        LoomRing {
            words: (0..bytes / 4)
                .map(|_| Word {
                    value: loom::sync::atomic::AtomicU32::new(0),
                    plain: loom::cell::UnsafeCell::new(()),
                })
                .collect(),
        }
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.words.len() * 4
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Its bytes, for a writer or a reader.
    pub(crate) fn mem(&self) -> RingMem<'_> {
        RingMem { words: &self.words }
    }
}

/// The ring's bytes: a [`LoomRing`]'s words (loom build).
#[cfg(zerotrace_loom)]
#[derive(Clone, Copy)]
pub struct RingMem<'a> {
    words: &'a [Word],
}

#[cfg(zerotrace_loom)]
impl RingMem<'_> {
    /// The word at `off` (4-aligned; out of the ring: a panic, which loom
    /// reports).
    fn word(&self, off: usize) -> &Word {
        assert!(off % 4 == 0, "unaligned word at {off}");
        &self.words[off / 4]
    }

    /// The bytes from `off` on (`off` 4-aligned).
    pub(crate) fn offset(self, off: usize) -> Self {
        assert!(off % 4 == 0, "unaligned offset {off}");
        RingMem {
            words: &self.words[off / 4..],
        }
    }

    /// Loads the word at `off`, as an atomic load (not a plain access: the
    /// reader loads header words before it knows they are committed).
    ///
    /// # Safety
    /// None (bounds-checked); `unsafe` as the normal build's.
    pub(crate) unsafe fn load_u32(self, off: usize, order: Ordering) -> u32 {
        self.word(off).value.load(order)
    }

    /// Stores the word at `off`: a plain write of it, then the store.
    ///
    /// # Safety
    /// None (bounds-checked, race-checked); `unsafe` as the normal build's.
    pub(crate) unsafe fn store_u32(self, off: usize, v: u32, order: Ordering) {
        let w = self.word(off);
        w.plain.with_mut(|_| ());
        w.value.store(v, order);
    }

    /// Writes the `u64` at `off`: two words, each as [`RingMem::store_u32`]
    /// with Relaxed.
    ///
    /// # Safety
    /// None (bounds-checked, race-checked); `unsafe` as the normal build's.
    pub(crate) unsafe fn write_u64(self, off: usize, v: u64) {
        // SAFETY: no contract (see above).
        unsafe { self.write_bytes(off, &v.to_ne_bytes()) }
    }

    /// Writes `bytes` at `off` (4-aligned), the last word's spare bytes
    /// zeroed (the writer reserved whole frames, which are 16-aligned).
    ///
    /// # Safety
    /// None (bounds-checked, race-checked); `unsafe` as the normal build's.
    pub(crate) unsafe fn write_bytes(self, off: usize, bytes: &[u8]) {
        for (i, chunk) in bytes.chunks(4).enumerate() {
            let mut b = [0u8; 4];
            b[..chunk.len()].copy_from_slice(chunk);
            // SAFETY: no contract (see above).
            unsafe { self.store_u32(off + 4 * i, u32::from_ne_bytes(b), Ordering::Relaxed) };
        }
    }

    /// Copies `out.len()` bytes at `off` (4-aligned) out: each word a plain
    /// read, then a Relaxed load.
    ///
    /// # Safety
    /// None (bounds-checked, race-checked); `unsafe` as the normal build's.
    pub(crate) unsafe fn read(self, off: usize, out: &mut [u8]) {
        for (i, chunk) in out.chunks_mut(4).enumerate() {
            let w = self.word(off + 4 * i);
            w.plain.with(|_| ());
            let b = w.value.load(Ordering::Relaxed).to_ne_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
    }

    /// A cache hint in the normal build; nothing here.
    pub(crate) fn prefetch(self, _off: usize, _len: usize) {}
}
