//! Where a flamegraph's rows and frames go, in the words both the tree
//! builder (`build.rs`) and the aggregate columns (`aggregate.rs`) use: a
//! row's root-to-row path state, the routing of rows and retained frames
//! to nodes, and the numbers of value columns that add up without
//! overflowing.

use super::error::FlamegraphError;
use super::source::NONE;

/// Set in a path's bits once a frame on it matched HIDE_STACK: no
/// SHOW_STACK mask can equal it any more.
pub(super) const HIDE_STACK_BIT: u64 = 1 << 63;

/// What the root-to-row path says of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PathState {
    /// SHOW_STACK matches of the retained frames on the path, or
    /// [`HIDE_STACK_BIT`] once one matched HIDE_STACK.
    pub bits: u64,
    /// The nearest retained row (the row itself unless HIDE_FRAME folded
    /// it), [`NONE`] when none is.
    pub retained: u32,
}

/// The path above a root: nothing matched, nothing retained.
pub(super) const EMPTY_PATH: PathState = PathState {
    bits: 0,
    retained: NONE,
};

impl PathState {
    /// Whether the row's values count: it has a retained frame and its
    /// path passes the stack filters.
    pub(crate) fn contributes(&self, required: u64) -> bool {
        self.retained != NONE && self.bits == required
    }

    /// Whether a frame on the path matched HIDE_STACK.
    pub(crate) fn hidden(&self) -> bool {
        self.bits & HIDE_STACK_BIT != 0
    }
}

/// `v[i]`, or `default` past its end.
pub(super) fn at<T: Copy>(v: &[T], i: u32, default: T) -> T {
    v.get(i as usize).copied().unwrap_or(default)
}

/// A number of a value column.
pub(crate) trait Num: Copy + PartialOrd + Default + std::fmt::Debug {
    /// `self += v`; false on overflow.
    fn add(&mut self, v: Self) -> bool;
    /// Whether it is zero.
    fn is_zero(self) -> bool;
}

impl Num for i64 {
    fn add(&mut self, v: Self) -> bool {
        match self.checked_add(v) {
            Some(s) => {
                *self = s;
                true
            }
            None => false,
        }
    }
    fn is_zero(self) -> bool {
        self == 0
    }
}

impl Num for f64 {
    fn add(&mut self, v: Self) -> bool {
        *self += v;
        true
    }
    fn is_zero(self) -> bool {
        self == 0.0
    }
}

/// `v[i] += x`, an error on overflow.
pub(crate) fn add_at<T: Num>(v: &mut [T], i: u32, x: T) -> Result<(), FlamegraphError> {
    match v.get_mut(i as usize) {
        Some(s) => {
            if s.add(x) {
                Ok(())
            } else {
                Err(FlamegraphError::Overflow)
            }
        }
        None => Ok(()),
    }
}

/// Where rows and frames go: what the aggregates need of a build.
#[derive(Debug)]
pub(crate) struct Routing<'b> {
    /// Each row's path.
    pub states: &'b [PathState],
    /// Each row's downward node, [`NONE`] outside the half.
    pub down_node: &'b [u32],
    /// (frame, upward node) for each frame on an upward path that counts.
    pub constituents: &'b [(u32, u32)],
    /// Downward nodes (upward node `n` is combined node `down_size + n`).
    pub down_size: u32,
    /// Every node, both halves.
    pub nodes: u32,
    /// The SHOW_STACK bits a contributing path has.
    pub required: u64,
    /// Whether the view has a downward half.
    pub has_downward: bool,
}

impl Routing<'_> {
    /// Whether `row` adds to its downward node.
    pub(crate) fn down_contributes(&self, row: u32) -> bool {
        at(self.down_node, row, NONE) != NONE
            && at(self.states, row, EMPTY_PATH).contributes(self.required)
    }
}
