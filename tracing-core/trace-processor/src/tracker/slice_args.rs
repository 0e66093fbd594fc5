//! The args of a slice still on its track's stack. Upstream keeps a
//! slice's arg set open while the slice is on the stack and stores it only
//! when the slice leaves it: the args its end event carries join the
//! begin's (a key given again takes the end's value in place, an array
//! given again goes on numbering its entries), and the set's id follows
//! the order slices leave their stacks rather than the order they began.
//! [`PendingArgs`] is that open set; the slice tracker holds one per stack
//! entry that has args and stores it as the entry is popped.

use crate::hash::HashMap;
use crate::storage::Storage;
use crate::storage::args::ArgSetBuilder;

/// Open sets kept for reuse (their memory), at most.
const POOL_MAX: usize = 64;

/// An arg set still being built for a slice on a stack.
#[derive(Debug, Default)]
pub struct PendingArgs {
    /// The args so far.
    pub args: ArgSetBuilder,
    /// The next index of each array under its key, so that entries added
    /// later (by the end event) go on from where the begin's stopped.
    pub arrays: HashMap<String, usize>,
}

impl PendingArgs {
    /// Empties it, keeping its memory.
    fn clear(&mut self) {
        self.args.clear();
        self.arrays.clear();
    }
}

/// Emptied [`PendingArgs`] waiting to be reused, so that a slice's open
/// set costs no allocation once the first few were made.
#[derive(Debug, Default)]
pub struct PendingPool {
    // Boxed: a set moves whole between this list and the stack entries,
    // which hold it behind a pointer to stay small.
    #[allow(clippy::vec_box)]
    free: Vec<Box<PendingArgs>>,
}

impl PendingPool {
    /// An empty open set.
    pub fn take(&mut self) -> Box<PendingArgs> {
        self.free.pop().unwrap_or_default()
    }

    /// Takes back a set no longer needed.
    pub fn give(&mut self, mut p: Box<PendingArgs>) {
        if self.free.len() < POOL_MAX {
            p.clear();
            self.free.push(p);
        }
    }

    /// Stores `p` as slice `id`'s arg set (nothing for an empty one) and
    /// takes it back.
    pub fn commit(&mut self, storage: &mut Storage, id: u32, p: Box<PendingArgs>) {
        if let Some(set) = storage.args.add_set(&p.args) {
            if let Some(s) = storage.slices.get_mut(id as usize) {
                s.arg_set_id = Some(set).into();
            }
        }
        self.give(p);
    }
}
