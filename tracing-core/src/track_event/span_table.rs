//! Where the `tracing` Layer keeps what it knows of each open span, by span
//! id, without an allocation per span: `tracing-subscriber`'s extensions
//! box every value they hold, and reaching them costs a registry lookup
//! per callback. The table is split into shards, each a mutex over an
//! index from span id to a slot; a closed span's slot is cleared in place
//! and kept, buffers and all, for the next span, so a warm table allocates
//! nothing and threads working on different spans rarely meet.

use std::sync::{Mutex, MutexGuard};

use rustc_hash::FxHashMap;

/// Shards of the table (a power of two).
const SHARDS: usize = 64;

/// A value a slot holds: emptied in place when its span closes, keeping
/// what it allocated.
pub(crate) trait Slot: Default {
    /// Empties it for the next span.
    fn clear(&mut self);
}

/// One shard: the ids it holds, their slots, and the free slots.
struct Shard<T> {
    index: FxHashMap<u64, u32>,
    slots: Vec<T>,
    free: Vec<u32>,
}

impl<T: Slot> Shard<T> {
    fn get(&mut self, id: u64) -> Option<&mut T> {
        let i = *self.index.get(&id)?;
        self.slots.get_mut(i as usize)
    }
}

/// A shard on a cache line of its own.
#[repr(align(128))]
struct Padded<T>(Mutex<Shard<T>>);

/// Values of type `T` by span id.
pub(crate) struct SpanTable<T> {
    shards: Box<[Padded<T>; SHARDS]>,
}

impl<T> std::fmt::Debug for SpanTable<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpanTable").finish_non_exhaustive()
    }
}

impl<T> Default for SpanTable<T> {
    fn default() -> SpanTable<T> {
        SpanTable {
            shards: Box::new(std::array::from_fn(|_| {
                Padded(Mutex::new(Shard {
                    index: FxHashMap::default(),
                    slots: Vec::new(),
                    free: Vec::new(),
                }))
            })),
        }
    }
}

impl<T: Slot> SpanTable<T> {
    /// The shard holding span `id`, locked. The callers below never hold
    /// two: two spans may share a shard.
    #[inline]
    fn lock(&self, id: u64) -> MutexGuard<'_, Shard<T>> {
        // The registry's ids are slab keys: the slot's address and thread
        // in the low bits, a generation above (bumped each time the slot
        // is reused). Hashing the low bits alone keeps a reused slot's
        // spans on one shard, warm in the cache; a multiply spreads
        // neighbouring slots over the shards.
        let key = id & ((1 << 48) - 1);
        let h = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize;
        self.shards[h & (SHARDS - 1)]
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` with span `id`'s value, if the table has one.
    #[inline]
    pub(crate) fn with<R>(&self, id: u64, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.lock(id).get(id).map(f)
    }

    /// Gives span `id` an empty slot (its old one emptied, if it had one)
    /// and runs `fill` on it.
    #[inline]
    pub(crate) fn insert_with<R>(&self, id: u64, fill: impl FnOnce(&mut T) -> R) -> R {
        let mut guard = self.lock(id);
        let shard = &mut *guard;
        let i = match shard.index.get(&id) {
            Some(&i) => {
                if let Some(v) = shard.slots.get_mut(i as usize) {
                    v.clear();
                }
                i
            }
            None => {
                let i = shard.free.pop().unwrap_or_else(|| {
                    shard.slots.push(T::default());
                    (shard.slots.len() - 1) as u32
                });
                shard.index.insert(id, i);
                i
            }
        };
        match shard.slots.get_mut(i as usize) {
            Some(v) => fill(v),
            // Every index points at a slot: `slots` only grows.
            None => fill(&mut T::default()),
        }
    }

    /// Runs `f` with span `id`'s value, then empties its slot and frees it.
    #[inline]
    pub(crate) fn remove_with<R>(&self, id: u64, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let mut guard = self.lock(id);
        let shard = &mut *guard;
        let i = shard.index.remove(&id)?;
        let v = shard.slots.get_mut(i as usize)?;
        let r = f(v);
        v.clear();
        shard.free.push(i);
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Debug)]
    struct V(Vec<u32>);

    impl Slot for V {
        fn clear(&mut self) {
            self.0.clear();
        }
    }

    #[test]
    fn values_by_id_in_reused_slots() {
        let t: SpanTable<V> = SpanTable::default();
        t.insert_with(1, |v| v.0.push(10));
        t.insert_with(1 << 40, |v| v.0.push(20));
        assert_eq!(t.with(1, |v| v.0.clone()), Some(vec![10]));
        // Inserting again starts from an empty value.
        t.insert_with(1, |v| v.0.push(11));
        assert_eq!(t.with(1, |v| v.0.clone()), Some(vec![11]));
        assert_eq!(t.remove_with(1, |v| v.0.clone()), Some(vec![11]));
        assert_eq!(t.remove_with(1, |v| v.0.clone()), None);
        assert_eq!(t.with(1, |v| v.0.len()), None);
        // The freed slot comes back empty, with its capacity.
        t.insert_with(1, |v| {
            assert!(v.0.is_empty());
            assert!(v.0.capacity() > 0);
        });
        assert_eq!(t.with(1 << 40, |v| v.0.clone()), Some(vec![20]));
        assert_eq!(t.with(7, |v| v.0.len()), None);
    }
}
