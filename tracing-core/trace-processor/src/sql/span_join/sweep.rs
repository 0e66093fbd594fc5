//! The span join's sweep: two sides' walks (`side.rs`) advanced together,
//! always moving the one whose current piece ends first (by partition,
//! then end, a shadow before a row), and stopping wherever the two
//! current pieces overlap in partition and time with at least one of them
//! a real row. Each stop is one joined span: it starts at the later start
//! and lasts to the earlier end. Nothing is collected: each row of the
//! result is found from the sides' current rows alone. With one side
//! partitioned and the other not, the unpartitioned side is walked again
//! from its start for each partition of the other.

use super::args::{JoinKind, Partitioning};
use super::error::SpanJoinError;
use super::side::{Rows, Side};

/// Which side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Left,
    Right,
}

/// Two sides swept together.
#[derive(Debug)]
pub(crate) struct Sweep<R> {
    left: Side<R>,
    right: Side<R>,
    partitioning: Partitioning,
    /// The side moved on the next step.
    next: Which,
    /// With one side partitioned: the partition being joined.
    mixed_partition: i64,
}

impl<R: Rows> Sweep<R> {
    /// Starts the sweep of a `kind` join of `left` and `right`, at its
    /// first joined span.
    pub(crate) fn start(
        kind: JoinKind,
        partitioning: Partitioning,
        mut left: Side<R>,
        mut right: Side<R>,
    ) -> Result<Self, SpanJoinError> {
        let mixed = partitioning == Partitioning::Mixed;
        let (left_partitioned, right_partitioned) = (left.partitioned(), right.partitioned());
        // A side whose time the join keeps from the other stands for
        // "nothing here" when it is empty, unless it is the partitioned
        // side of a mixed join (its partitions are the result's).
        left.start(kind == JoinKind::Outer && !(mixed && left_partitioned))?;
        right.start(kind != JoinKind::Inner && !(mixed && right_partitioned))?;
        let mut sweep = Sweep {
            left,
            right,
            partitioning,
            next: Which::Left,
            mixed_partition: i64::MIN,
        };
        sweep.seek()?;
        Ok(sweep)
    }

    /// Moves to the next joined span.
    pub(crate) fn advance(&mut self) -> Result<(), SpanJoinError> {
        self.side_mut(self.next).advance()?;
        self.seek()
    }

    /// Whether there is no joined span left.
    pub(crate) fn is_end(&self) -> bool {
        self.left.is_end() || self.right.is_end()
    }

    /// The left side's walk (its current row when real).
    pub(crate) fn left(&self) -> &Side<R> {
        &self.left
    }

    /// The right side's walk.
    pub(crate) fn right(&self) -> &Side<R> {
        &self.right
    }

    /// The joined span's start.
    pub(crate) fn ts(&self) -> i64 {
        self.left.ts().max(self.right.ts())
    }

    /// The joined span's duration.
    pub(crate) fn dur(&self) -> i64 {
        let end = self.left.raw_end().min(self.right.raw_end());
        end.wrapping_sub(self.ts())
    }

    /// The joined span's partition.
    pub(crate) fn partition(&self) -> i64 {
        match self.partitioning {
            Partitioning::Mixed => self.mixed_partition,
            _ if self.left.is_real() => self.left.partition(),
            _ => self.right.partition(),
        }
    }

    fn side_mut(&mut self, which: Which) -> &mut Side<R> {
        match which {
            Which::Left => &mut self.left,
            Which::Right => &mut self.right,
        }
    }

    /// Moves the sides until their current pieces overlap, or to the end.
    fn seek(&mut self) -> Result<(), SpanJoinError> {
        loop {
            if self.partitioning == Partitioning::Mixed {
                let (partitioned, other) = if self.left_is_partitioned() {
                    (&self.left, &mut self.right)
                } else {
                    (&self.right, &mut self.left)
                };
                if partitioned.is_end() {
                    return Ok(());
                }
                let p = partitioned.partition();
                if p != self.mixed_partition {
                    other.restart()?;
                    self.mixed_partition = p;
                }
            } else if self.is_end() {
                return Ok(());
            }
            self.next = self.first_to_end();
            if self.overlaps() {
                return Ok(());
            }
            self.side_mut(self.next).advance()?;
        }
    }

    /// In a mixed join, whether the left side is the partitioned one.
    fn left_is_partitioned(&self) -> bool {
        self.left.partitioned()
    }

    /// The side whose current piece ends first.
    fn first_to_end(&self) -> Which {
        let (lp, rp) = match self.partitioning {
            Partitioning::Mixed if self.left.is_end() => return Which::Right,
            Partitioning::Mixed if self.right.is_end() => return Which::Left,
            Partitioning::Mixed => (self.mixed_partition, self.mixed_partition),
            Partitioning::Same => (self.left.last_partition(), self.right.last_partition()),
            Partitioning::None => (0, 0),
        };
        let l = (lp, self.left.adjusted_end(), self.left.is_real());
        let r = (rp, self.right.adjusted_end(), self.right.is_real());
        if l < r { Which::Left } else { Which::Right }
    }

    /// Whether the current pieces make a joined span: at least one is a
    /// row, their partitions meet, and their times overlap as half-open
    /// intervals (two rows starting together always do, whatever their
    /// durations).
    fn overlaps(&self) -> bool {
        let (l, r) = (&self.left, &self.right);
        if l.is_end() || r.is_end() || (!l.is_real() && !r.is_real()) {
            return false;
        }
        if self.partitioning == Partitioning::Same {
            let within = |a: &Side<R>, b: &Side<R>| {
                a.first_partition() >= b.first_partition()
                    && a.first_partition() <= b.last_partition()
            };
            if !within(l, r) && !within(r, l) {
                return false;
            }
        }
        (l.ts() == r.ts() && l.is_real() && r.is_real())
            || (l.ts() >= r.ts() && l.ts() < r.adjusted_end())
            || (r.ts() >= l.ts() && r.ts() < l.adjusted_end())
    }
}
