//! Kernel data pointers in ftrace events (a kmalloc's or kfree's `ptr`, a
//! `struct page *`, an `skbaddr`, a `work`) without the pointer: written
//! raw, they give away where the kernel's randomized heap and memory map
//! are (issue 47, "no raw kernel address in a trace"). Each is written
//! as a keyed hash instead: SipHash-1-3 (the standard library's
//! `RandomState`, whose 128-bit key is random) over the pointer, 64 bits.
//! One key per data source instance: within the session equal pointers
//! give equal values (an allocation and its free still pair up, a page
//! is followed through its events), across sessions nothing links, and
//! without the key a value says nothing of the pointer.

use std::hash::{BuildHasher, RandomState};

/// Hashes kernel data pointers with one random key (see the module doc).
#[derive(Debug, Clone)]
pub struct PointerHasher {
    key: RandomState,
}

impl Default for PointerHasher {
    fn default() -> Self {
        PointerHasher::new()
    }
}

impl PointerHasher {
    /// A hasher with a new random key.
    pub fn new() -> PointerHasher {
        PointerHasher {
            key: RandomState::new(),
        }
    }

    /// The value written for pointer `ptr`: 0 for NULL (which gives away
    /// nothing and which readers test for), else the keyed hash, never 0.
    pub fn hash(&self, ptr: u64) -> u64 {
        if ptr == 0 {
            return 0;
        }
        self.key.hash_one(ptr).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_pointers_hash_equal_and_keys_differ() {
        let a = PointerHasher::new();
        let b = PointerHasher::new();
        let p = 0xffff_8880_0123_4560;
        assert_eq!(a.hash(p), a.hash(p));
        assert_ne!(a.hash(p), p);
        assert_ne!(a.hash(p), a.hash(p + 64));
        assert_ne!(a.hash(p), b.hash(p), "one key per instance");
        assert_eq!(a.hash(0), 0);
    }
}
