//! Trace points that know where they are: every `trace_event!`-family macro
//! declares one [`Callsite`] `static`, and every `tracing` callsite has its
//! `&'static Metadata`. Either is a key under which a thread's writer keeps
//! what it worked out the first time the point fired on its sequence (the
//! interned ids of its category, name and source location, encoded), so an
//! event from a known point looks nothing up by string.

use std::sync::atomic::{AtomicU32, Ordering};

use super::interning::SourceLocation;

/// Dense indices handed out so far.
static NEXT_INDEX: AtomicU32 = AtomicU32::new(0);

/// Points past this many get no dense slot: their events take the general
/// path (interning through the per-sequence tables), still correct. It
/// bounds each thread's table (160 bytes a slot: `site_cache`'s entry)
/// whatever a program does.
pub const MAX_DENSE_SITES: u32 = 4096;

/// One trace point in the source, declared by the macros as a `static`:
/// its location, and a small index (given on first use) into each thread's
/// table of what the point interned on that thread's sequence.
#[derive(Debug)]
pub struct Callsite {
    location: SourceLocation,
    /// 0 until first use, then the index + 1.
    index: AtomicU32,
}

impl Callsite {
    /// A trace point at `location` (the macros pass the call's).
    pub const fn new(location: SourceLocation) -> Callsite {
        Callsite {
            location,
            index: AtomicU32::new(0),
        }
    }

    /// Where it is.
    #[inline]
    pub fn location(&self) -> SourceLocation {
        self.location
    }

    /// Its dense index, `None` past [`MAX_DENSE_SITES`].
    #[inline]
    pub fn index(&self) -> Option<u32> {
        match self.index.load(Ordering::Relaxed) {
            0 => self.assign(),
            i => (i <= MAX_DENSE_SITES).then(|| i - 1),
        }
    }

    /// First use: takes the next index (two threads racing may both take
    /// one; the first store wins and the other index is never used).
    #[cold]
    fn assign(&self) -> Option<u32> {
        let mine = NEXT_INDEX.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        let i = match self
            .index
            .compare_exchange(0, mine, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => mine,
            Err(theirs) => theirs,
        };
        (i <= MAX_DENSE_SITES).then(|| i - 1)
    }
}

/// Which table slot an event's point uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteKey {
    /// A macro's [`Callsite`] (its dense index).
    Dense(u32),
    /// A `tracing` callsite (its metadata's address).
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    Metadata(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_stable_and_distinct() {
        static A: Callsite = Callsite::new(SourceLocation::new("a.rs", "m", 1));
        static B: Callsite = Callsite::new(SourceLocation::new("b.rs", "m", 2));
        let (a, b) = (A.index(), B.index());
        assert!(a.is_some() && b.is_some());
        assert_ne!(a, b);
        assert_eq!(A.index(), a);
        assert_eq!(B.location().line, 2);
    }
}
