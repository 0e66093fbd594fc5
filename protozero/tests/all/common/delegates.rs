//! Test delegates. [`RandomSlices`] hands out heap slices of random size (from
//! one byte up) and keeps them writable, like the heap delegate. [`EagerRelease`]
//! gives every slice back as soon as the writer leaves it, the way a committed
//! shared-memory chunk is gone: it copies the used bytes out, redirects open
//! length slots that lie in it to patch records, poisons the memory, and later
//! applies the patches and stitches the copies, checking that nothing was written
//! into released memory.

use protozero::{Delegate, OpenSlots, OwnedSlice, PatchId, Slice, WriteError};

/// A small deterministic generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded generator (any seed, zero included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    /// Next raw value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `1..=max` (max ≥ 1).
    pub fn size(&mut self, max: usize) -> usize {
        1 + (self.next_u64() % max as u64) as usize
    }
}

/// Byte written into fresh slices, so unwritten gaps would show up.
const FRESH: u8 = 0xEE;
/// Byte a released slice is overwritten with.
const POISON: u8 = 0xDB;

fn offset_in(slice: &OwnedSlice, p: *mut u8) -> usize {
    slice
        .offset_of(p)
        .expect("cursor outside the slice it leaves")
}

/// The first `len` bytes of `slice`, copied.
fn bytes_of(slice: &OwnedSlice, len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    slice.extend_into(len, &mut out);
    out
}

/// Random-size slices, all kept alive and writable (no patches needed).
#[derive(Debug)]
pub struct RandomSlices {
    rng: Rng,
    max: usize,
    slices: Vec<(OwnedSlice, usize)>,
}

impl RandomSlices {
    /// Slices of `min_len.max(1..=max)` bytes.
    pub fn new(seed: u64, max: usize) -> RandomSlices {
        RandomSlices {
            rng: Rng::new(seed),
            max: max.max(1),
            slices: Vec::new(),
        }
    }

    /// Number of slices handed out.
    pub fn slice_count(&self) -> usize {
        self.slices.len()
    }

    /// The used bytes of all slices in order; `cursor` ends the last one.
    pub fn stitch(&self, cursor: *mut u8) -> Vec<u8> {
        let mut out = Vec::new();
        let last = self.slices.len().saturating_sub(1);
        for (i, (s, used)) in self.slices.iter().enumerate() {
            let used = if i == last {
                offset_in(s, cursor)
            } else {
                *used
            };
            s.extend_into(used, &mut out);
        }
        out
    }
}

// SAFETY: every slice is its own `OwnedSlice`, handed out once from its raw
// pointer and kept (never freed) until the delegate is dropped.
unsafe impl Delegate for RandomSlices {
    fn next_slice(
        &mut self,
        used_end: *mut u8,
        _open: &mut OpenSlots,
        min_len: usize,
    ) -> Result<Slice, WriteError> {
        if let Some((s, used)) = self.slices.last_mut() {
            *used = offset_in(s, used_end);
        }
        let size = self.rng.size(self.max).max(min_len);
        let buf = OwnedSlice::new(size, FRESH);
        let slice = buf.slice();
        self.slices.push((buf, 0));
        Ok(slice)
    }
}

/// One redirected length slot: where its 4 bytes go, and the bytes once known.
#[derive(Debug, Clone, Copy)]
pub struct Patch {
    /// Index of the released slice holding the slot.
    pub slice: usize,
    /// Offset of the slot in that slice.
    pub offset: usize,
    /// The final length bytes, once `fill_patch` delivered them.
    pub bytes: Option<[u8; 4]>,
}

/// Gives each slice back as soon as the writer moves on.
#[derive(Debug)]
pub struct EagerRelease {
    rng: Rng,
    max: usize,
    current: Option<OwnedSlice>,
    /// Copies of the used part of every released slice.
    released: Vec<Vec<u8>>,
    /// The released memory itself, poisoned, kept to check it stays untouched.
    graveyard: Vec<OwnedSlice>,
    patches: Vec<Patch>,
}

impl EagerRelease {
    /// Slices of `min_len.max(1..=max)` bytes.
    pub fn new(seed: u64, max: usize) -> EagerRelease {
        EagerRelease {
            rng: Rng::new(seed),
            max: max.max(1),
            current: None,
            released: Vec::new(),
            graveyard: Vec::new(),
            patches: Vec::new(),
        }
    }

    /// Patch records so far.
    pub fn patches(&self) -> &[Patch] {
        &self.patches
    }

    /// Used length of every released slice, in order.
    pub fn released_lens(&self) -> Vec<usize> {
        self.released.iter().map(Vec::len).collect()
    }

    fn release(&mut self, used_end: *mut u8, open: &mut OpenSlots) {
        let Some(mut cur) = self.current.take() else {
            return;
        };
        let index = self.released.len();
        let used = offset_in(&cur, used_end);
        for slot in open.iter_mut() {
            let Some(p) = slot.memory_ptr() else { continue };
            let Some(offset) = cur.offset_of(p).filter(|&o| o < cur.len()) else {
                continue;
            };
            assert!(
                offset + 4 <= used,
                "slot outside the used part of its slice"
            );
            self.patches.push(Patch {
                slice: index,
                offset,
                bytes: None,
            });
            slot.redirect_to_patch(PatchId((self.patches.len() - 1) as u32));
        }
        self.released.push(bytes_of(&cur, used));
        cur.fill(POISON);
        self.graveyard.push(cur);
    }

    /// Panics if any released slice was written after its release.
    pub fn check_graveyard(&self) {
        for (i, g) in self.graveyard.iter().enumerate() {
            assert!(
                bytes_of(g, g.len()).iter().all(|&b| b == POISON),
                "slice {i} was written after it was released"
            );
        }
    }

    /// Checks that no released memory was written after its release, applies
    /// every patch to copies of the released slices plus the current one (used
    /// up to `cursor`), and returns the stitched output. Panics if a patch was
    /// never filled.
    pub fn finish(&self, cursor: *mut u8) -> Vec<u8> {
        self.check_graveyard();
        let mut parts = self.released.clone();
        if let Some(cur) = &self.current {
            parts.push(bytes_of(cur, offset_in(cur, cursor)));
        }
        for (id, p) in self.patches.iter().enumerate() {
            let bytes = p
                .bytes
                .unwrap_or_else(|| panic!("patch {id} was never filled"));
            let dst = &mut parts[p.slice][p.offset..p.offset + 4];
            assert_eq!(
                dst,
                &[0x80, 0x80, 0x80, 0x00],
                "patched slot did not hold the reserved zero"
            );
            dst.copy_from_slice(&bytes);
        }
        parts.concat()
    }
}

// SAFETY: a slice is kept alive until it is released on the next switch; at
// that point every open slot lying in it is redirected to a patch, so no slot
// left in memory ever points into released memory. Released memory stays
// allocated (poisoned) so stray writes are detected rather than undefined.
unsafe impl Delegate for EagerRelease {
    fn next_slice(
        &mut self,
        used_end: *mut u8,
        open: &mut OpenSlots,
        min_len: usize,
    ) -> Result<Slice, WriteError> {
        self.release(used_end, open);
        let size = self.rng.size(self.max).max(min_len);
        let buf = OwnedSlice::new(size, FRESH);
        let slice = buf.slice();
        self.current = Some(buf);
        Ok(slice)
    }

    fn fill_patch(&mut self, id: PatchId, bytes: [u8; 4]) {
        let p = &mut self.patches[id.0 as usize];
        assert!(p.bytes.is_none(), "patch {} filled twice", id.0);
        p.bytes = Some(bytes);
    }
}
