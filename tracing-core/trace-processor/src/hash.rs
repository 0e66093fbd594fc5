//! The hash maps of the loader and the tables. The standard library's
//! SipHash costs a large share of a load (every interned id, track, arg set
//! and thread is looked up per event); foldhash is several times faster on
//! the small keys used here and is still seeded at random per process, so
//! a trace cannot choose keys that collide on every machine.

/// A hash map with foldhash's per-process random seed.
pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A hash set with foldhash's per-process random seed.
pub type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
