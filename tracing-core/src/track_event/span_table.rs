//! Where the `tracing` Layer keeps what it knows of each open span, by span
//! id, without an allocation per span: `tracing-subscriber`'s extensions
//! box every value they hold, and reaching them costs a registry lookup
//! per callback. The table is split into shards, each a mutex over an
//! index from span id to a slot; a closed span's slot is cleared in place
//! and kept, buffers and all, for the next span, so a warm table allocates
//! nothing and threads working on different spans rarely meet.

use parking_lot::{Mutex, MutexGuard};

use rustc_hash::FxHashMap;

/// Shards of the table (a power of two).
const SHARDS: usize = 64;
/// Direct-mapped entries per shard (a power of two).
const DIRECT: usize = 64;

/// A value a slot holds: emptied in place when its span closes, keeping
/// what it allocated.
pub(crate) trait Slot: Default {
    /// Empties it for the next span.
    fn clear(&mut self);
}

/// Where a span id's entry is: its shard and its direct-mapped entry there.
#[derive(Clone, Copy)]
struct Place {
    shard: usize,
    direct: usize,
}

/// One shard: a direct-mapped index from span id to slot (each id has one
/// entry it may sit in; span id 0 does not exist, so 0 marks an empty
/// entry), a map for the ids whose entry was taken, their slots, and the
/// free slots. A registry reuses the slab keys of closed spans, so the ids
/// alive at once mostly find their entry free and the map stays empty:
/// a lookup is a compare, not a hash probe.
struct Shard<T> {
    direct: [(u64, u32); DIRECT],
    overflow: FxHashMap<u64, u32>,
    slots: Vec<T>,
    free: Vec<u32>,
}

impl<T: Slot> Shard<T> {
    /// The slot index of span `id`, if it has one.
    #[inline]
    fn find(&self, id: u64, direct: usize) -> Option<u32> {
        match self.direct.get(direct) {
            Some(&(d, i)) if d == id => Some(i),
            _ if self.overflow.is_empty() => None,
            _ => self.overflow.get(&id).copied(),
        }
    }

    #[inline]
    fn get(&mut self, id: u64, direct: usize) -> Option<&mut T> {
        let i = self.find(id, direct)?;
        self.slots.get_mut(i as usize)
    }

    /// Takes span `id`'s slot index out of the index.
    #[inline]
    fn take(&mut self, id: u64, direct: usize) -> Option<u32> {
        match self.direct.get_mut(direct) {
            Some(e) if e.0 == id => {
                let i = e.1;
                *e = (0, 0);
                Some(i)
            }
            _ if self.overflow.is_empty() => None,
            _ => self.overflow.remove(&id),
        }
    }

    /// Puts span `id` (not in the index) at slot `i`.
    #[inline]
    fn put(&mut self, id: u64, direct: usize, i: u32) {
        match self.direct.get_mut(direct) {
            Some(e) if e.0 == 0 => *e = (id, i),
            _ => {
                self.overflow.insert(id, i);
            }
        }
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
                    direct: [(0, 0); DIRECT],
                    overflow: FxHashMap::default(),
                    slots: Vec::new(),
                    free: Vec::new(),
                }))
            })),
        }
    }
}

impl<T: Slot> SpanTable<T> {
    /// Span `id`'s shard and direct entry.
    #[inline]
    fn place(id: u64) -> Place {
        // The registry's ids are slab keys: the slot's address and thread
        // in the low bits, a generation above (bumped each time the slot
        // is reused). Hashing the low bits alone keeps a reused slot's
        // spans on one shard and one entry, warm in the cache; a multiply
        // spreads neighbouring slots over the shards and entries.
        let key = id & ((1 << 48) - 1);
        let h = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Place {
            shard: (h >> 58) as usize & (SHARDS - 1),
            direct: (h >> 52) as usize & (DIRECT - 1),
        }
    }

    /// Shard `place.shard`, locked. The callers below never hold two: two
    /// spans may share a shard.
    #[inline]
    fn lock(&self, place: Place) -> MutexGuard<'_, Shard<T>> {
        // `place` masks the shard to the array's length.
        self.shards[place.shard & (SHARDS - 1)].0.lock()
    }

    /// Runs `f` with span `id`'s value, if the table has one.
    #[inline]
    pub(crate) fn with<R>(&self, id: u64, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let place = Self::place(id);
        self.lock(place).get(id, place.direct).map(f)
    }

    /// Gives span `id` an empty slot (its old one emptied, if it had one)
    /// and runs `fill` on it.
    #[inline]
    pub(crate) fn insert_with<R>(&self, id: u64, fill: impl FnOnce(&mut T) -> R) -> R {
        let place = Self::place(id);
        let mut guard = self.lock(place);
        let shard = &mut *guard;
        let i = match shard.find(id, place.direct) {
            Some(i) => {
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
                shard.put(id, place.direct, i);
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
        let place = Self::place(id);
        let mut guard = self.lock(place);
        let shard = &mut *guard;
        let i = shard.take(id, place.direct)?;
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

    /// Ids that share a direct entry (the same low 48 bits, another
    /// generation) and ids on other entries all keep their own values,
    /// through inserts and removals in any order.
    #[test]
    fn colliding_ids_overflow_and_come_back() {
        let t: SpanTable<V> = SpanTable::default();
        let ids: Vec<u64> = (0..4u64)
            .flat_map(|g| (1..200u64).map(move |k| k | g << 50))
            .collect();
        for &id in &ids {
            t.insert_with(id, |v| v.0.push(id as u32 ^ (id >> 50) as u32));
        }
        for &id in &ids {
            assert_eq!(
                t.with(id, |v| v.0.clone()),
                Some(vec![id as u32 ^ (id >> 50) as u32])
            );
        }
        // Remove the direct holders first (generation 0), then the rest.
        for &id in ids.iter().filter(|&&id| id >> 50 == 0) {
            assert!(t.remove_with(id, |_| ()).is_some());
            assert_eq!(t.with(id, |_| ()), None);
        }
        for &id in ids.iter().filter(|&&id| id >> 50 != 0) {
            assert_eq!(t.with(id, |v| v.0.len()), Some(1), "{id:#x}");
        }
        // A removed id's entry is free again; an overflowed id still found.
        t.insert_with(5, |v| v.0.push(1));
        assert_eq!(t.with(5 | 1 << 50, |v| v.0.len()), Some(1));
        for &id in ids.iter().filter(|&&id| id >> 50 != 0) {
            assert!(t.remove_with(id, |_| ()).is_some());
        }
        assert_eq!(t.with(5, |v| v.0.clone()), Some(vec![1]));
        assert_eq!(t.with(6, |_| ()), None);
    }
}
