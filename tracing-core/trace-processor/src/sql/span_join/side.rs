//! One side of a span join as a walk that covers all of (partition, time):
//! its rows, read in (partition, ts) order, are its real spans; between
//! them it may put shadows, the stretches where it has no row: a gap in a
//! partition it has rows in (before its first span from time 0, between
//! spans, after its last span to the end of time), and a run of
//! partitions it has no row in at all (all of time). An inner join's sides
//! yield no shadows; the side whose time a left or outer join keeps
//! yields them, so that the sweep (`sweep.rs`) pairs the other side's
//! spans with them. The rows come from a [`Rows`] source (a prepared
//! statement in SQLite, a list in tests), so the walk is plain logic.

use super::error::SpanJoinError;

/// Where a side's spans come from: rows in (partition, ts) order.
pub(crate) trait Rows {
    /// Goes back to before the first row.
    fn restart(&mut self) -> Result<(), SpanJoinError>;
    /// Moves to the next row; false when there is none.
    fn step(&mut self) -> Result<bool, SpanJoinError>;
    /// The current row's ts.
    fn ts(&self) -> i64;
    /// The current row's duration (0 for a side without `dur`).
    fn dur(&self) -> i64;
    /// The current row's partition: None for NULL, an error when it is
    /// not an integer.
    fn partition(&self) -> Result<Option<i64>, SpanJoinError>;
}

/// Which shadows a side yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shadows {
    /// None: only its rows.
    None,
    /// The gaps in the partitions it has rows in.
    Gaps,
    /// The gaps, and the partitions it has no rows in.
    All,
}

/// What a side is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// A row.
    Real,
    /// A gap in one partition.
    Gap,
    /// Partitions with no row.
    Absent,
    /// Past everything.
    End,
}

/// A side's walk.
#[derive(Debug)]
pub(crate) struct Side<R> {
    rows: R,
    partitioned: bool,
    shadows: Shadows,
    at: At,
    /// Whether `rows` has no more rows (the current one is the last read).
    exhausted: bool,
    /// The partition of the row read last (partitioned sides).
    row_partition: i64,
    /// The current piece's start and end (end as ts + dur: a `dur` of -1
    /// makes it ts - 1).
    start: i64,
    end: i64,
    /// The partition of a row or gap.
    partition: i64,
    /// The partitions [from, to) of an absent run.
    absent_from: i64,
    absent_to: i64,
}

impl<R: Rows> Side<R> {
    /// A side reading `rows`, not started.
    pub(crate) fn new(rows: R, partitioned: bool, shadows: Shadows) -> Self {
        Side {
            rows,
            partitioned,
            shadows,
            at: At::End,
            exhausted: true,
            row_partition: i64::MIN,
            start: 0,
            end: i64::MAX,
            partition: i64::MIN,
            absent_from: 0,
            absent_to: 0,
        }
    }

    /// The rows, to read the current row's other columns.
    pub(crate) fn rows(&self) -> &R {
        &self.rows
    }

    /// Starts at the first piece it yields. With `absent_when_empty`, a
    /// side that yields nothing is one absent run over everything
    /// instead, so that the other side's spans are still kept.
    pub(crate) fn start(&mut self, absent_when_empty: bool) -> Result<(), SpanJoinError> {
        self.restart()?;
        if absent_when_empty && self.at == At::End {
            self.at = At::Absent;
            self.start = 0;
            self.end = i64::MAX;
            self.absent_from = i64::MIN;
            self.absent_to = i64::MAX;
        }
        Ok(())
    }

    /// Goes back to the first piece it yields.
    pub(crate) fn restart(&mut self) -> Result<(), SpanJoinError> {
        self.rows.restart()?;
        self.exhausted = false;
        self.next_row()?;
        // Everything before the first row's partition is absent; an
        // unpartitioned side's run is empty and goes straight to its gap.
        self.at = At::Absent;
        self.start = 0;
        self.end = i64::MAX;
        self.absent_from = i64::MIN;
        self.absent_to = if self.exhausted {
            i64::MAX
        } else if self.partitioned {
            self.row_partition
        } else {
            i64::MIN
        };
        self.settle()
    }

    /// Moves to the next piece it yields.
    pub(crate) fn advance(&mut self) -> Result<(), SpanJoinError> {
        self.step_piece()?;
        self.settle()
    }

    /// Reads the next row, skipping rows whose partition is NULL.
    fn next_row(&mut self) -> Result<(), SpanJoinError> {
        loop {
            if !self.rows.step()? {
                self.exhausted = true;
                return Ok(());
            }
            if !self.partitioned {
                return Ok(());
            }
            if let Some(p) = self.rows.partition()? {
                self.row_partition = p;
                return Ok(());
            }
        }
    }

    /// Whether the current piece is one this side yields.
    fn yields(&self) -> bool {
        match self.at {
            At::Real | At::End => true,
            At::Gap => self.shadows != Shadows::None && self.start != self.end,
            At::Absent => {
                self.shadows == Shadows::All
                    && self.start != self.end
                    && self.absent_from != self.absent_to
            }
        }
    }

    /// Skips the pieces this side does not yield.
    fn settle(&mut self) -> Result<(), SpanJoinError> {
        while !self.yields() {
            self.step_piece()?;
        }
        Ok(())
    }

    /// Moves to the next piece, yielded or not.
    fn step_piece(&mut self) -> Result<(), SpanJoinError> {
        match self.at {
            At::Real => {
                let from = self.adjusted_end();
                self.next_row()?;
                let last_of_partition =
                    self.exhausted || (self.partitioned && self.row_partition != self.partition);
                self.at = At::Gap;
                self.start = from;
                self.end = if last_of_partition {
                    i64::MAX
                } else {
                    self.rows.ts()
                };
            }
            At::Gap if self.end == i64::MAX => {
                self.at = At::Absent;
                self.start = 0;
                self.absent_from = self.partition.saturating_add(1);
                self.absent_to = if self.exhausted {
                    i64::MAX
                } else {
                    self.row_partition
                };
            }
            At::Gap => {
                self.at = At::Real;
                self.start = self.rows.ts();
                self.end = self.start.saturating_add(self.rows.dur());
            }
            At::Absent if self.absent_to == i64::MAX => self.at = At::End,
            At::Absent => {
                self.at = At::Gap;
                self.start = 0;
                self.end = self.rows.ts();
                self.partition = self.absent_to;
            }
            At::End => {
                return Err(SpanJoinError::Sqlite(
                    "a side was moved past its end".to_owned(),
                ));
            }
        }
        Ok(())
    }

    /// Whether it is partitioned.
    pub(crate) fn partitioned(&self) -> bool {
        self.partitioned
    }

    /// Whether it is past everything.
    pub(crate) fn is_end(&self) -> bool {
        self.at == At::End
    }

    /// Whether it is at a row (not a shadow).
    pub(crate) fn is_real(&self) -> bool {
        self.at == At::Real
    }

    /// The current piece's start.
    pub(crate) fn ts(&self) -> i64 {
        self.start
    }

    /// The current piece's end as ts + dur.
    pub(crate) fn raw_end(&self) -> i64 {
        self.end
    }

    /// The current piece's end, a span of duration -1 ending where it
    /// starts.
    pub(crate) fn adjusted_end(&self) -> i64 {
        if self.end.checked_sub(self.start) == Some(-1) {
            self.start
        } else {
            self.end
        }
    }

    /// The current row's or gap's partition.
    pub(crate) fn partition(&self) -> i64 {
        self.partition
    }

    /// The first partition the current piece covers.
    pub(crate) fn first_partition(&self) -> i64 {
        if self.at == At::Absent {
            self.absent_from
        } else {
            self.partition
        }
    }

    /// The last partition the current piece covers.
    pub(crate) fn last_partition(&self) -> i64 {
        if self.at == At::Absent {
            self.absent_to.saturating_sub(1)
        } else {
            self.partition
        }
    }
}
