//! A nullable 32-bit id in 4 bytes. `Option<u32>` takes 8 (its tag is
//! padded to the value's alignment), and the id columns of the largest
//! tables (a slice's `parent_id` and `arg_set_id`, millions of rows held
//! whole until the tables freeze) paid those 4 bytes per row per column.
//! [`OptU32`] keeps `u32::MAX` as its "none": no table reaches 2^32 − 1
//! rows (the row index is a `u32` everywhere), so no real id is lost.

use std::fmt;

/// A `u32` id or none, in 4 bytes: `u32::MAX` is none.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct OptU32(u32);

impl OptU32 {
    /// No id.
    pub const NONE: OptU32 = OptU32(u32::MAX);

    /// The id `v` (`u32::MAX`, past every table, reads back as none).
    pub const fn some(v: u32) -> OptU32 {
        OptU32(v)
    }

    /// The id, if there is one.
    pub const fn get(self) -> Option<u32> {
        if self.0 == u32::MAX {
            None
        } else {
            Some(self.0)
        }
    }

    /// Whether there is an id.
    pub const fn is_some(self) -> bool {
        self.0 != u32::MAX
    }

    /// Whether there is none.
    pub const fn is_none(self) -> bool {
        self.0 == u32::MAX
    }
}

impl Default for OptU32 {
    fn default() -> Self {
        OptU32::NONE
    }
}

impl fmt::Debug for OptU32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

impl From<Option<u32>> for OptU32 {
    fn from(v: Option<u32>) -> Self {
        v.map_or(OptU32::NONE, OptU32)
    }
}

impl From<u32> for OptU32 {
    fn from(v: u32) -> Self {
        OptU32(v)
    }
}

impl From<OptU32> for Option<u32> {
    fn from(v: OptU32) -> Self {
        v.get()
    }
}

impl PartialEq<Option<u32>> for OptU32 {
    fn eq(&self, other: &Option<u32>) -> bool {
        self.get() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_it_was_given_in_four_bytes() {
        assert_eq!(std::mem::size_of::<OptU32>(), 4);
        assert_eq!(OptU32::default(), None);
        assert_eq!(OptU32::from(Some(0)), Some(0));
        assert_eq!(OptU32::from(Some(u32::MAX - 1)).get(), Some(u32::MAX - 1));
        assert_eq!(OptU32::from(None), OptU32::NONE);
        assert!(OptU32::some(7).is_some() && OptU32::NONE.is_none());
        assert_eq!(Option::<u32>::from(OptU32::some(9)), Some(9));
        assert_eq!(format!("{:?}", OptU32::some(3)), "Some(3)");
        assert_eq!(format!("{:?}", OptU32::NONE), "None");
    }
}
