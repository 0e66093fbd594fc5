//! `INTERNAL_LAYOUT(ts, dur) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED
//! PRECEDING AND CURRENT ROW)`: the window function of Perfetto's prelude
//! that packs slices into rows for drawing. Each slice, in time order,
//! gets the lowest depth no earlier slice still occupies at its start; a
//! slice frees its depth at its end (`dur = -1`: never), an instant
//! (`dur = 0`) occupies none. Errors, as upstream's: a frame that slides
//! (an inverse step, or two steps without a value between them), time
//! going backwards, a negative `ts`, a `dur` below -1, non-integer
//! arguments.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rusqlite::Connection;
use rusqlite::functions::{Aggregate, Context, FunctionFlags, WindowAggregate};
use rusqlite::types::ValueRef;

/// Why a slice could not be laid out.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// An argument that is not an integer.
    #[error("INTERNAL_LAYOUT: {0} must be an integer")]
    NotAnInteger(&'static str),
    /// A negative timestamp.
    #[error("INTERNAL_LAYOUT: ts cannot be negative.")]
    NegativeTs,
    /// A duration below -1.
    #[error("INTERNAL_LAYOUT: dur cannot be < -1.")]
    BadDur,
    /// Slices out of time order.
    #[error(
        "INTERNAL_LAYOUT: slices are not in time order; the window clause must say ORDER BY ts"
    )]
    Unsorted,
    /// A frame other than `UNBOUNDED PRECEDING AND CURRENT ROW`.
    #[error(
        "INTERNAL_LAYOUT: the window clause must be ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    )]
    BadFrame,
}

fn user_error(e: LayoutError) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(Box::new(e))
}

/// The depths in use and when they are freed.
#[derive(Debug, Default)]
pub struct Packer {
    busy: Vec<bool>,
    /// (end, depth) of the slices that occupy a depth, earliest end first.
    ends: BinaryHeap<Reverse<(i64, usize)>>,
    last_ts: i64,
    last_depth: usize,
    /// Whether the last call was a step (steps and values must alternate).
    stepped: bool,
}

impl Packer {
    /// Lays out the slice (`ts`, `dur`): its depth becomes the last depth.
    fn add(&mut self, ts: i64, dur: i64) -> Result<(), LayoutError> {
        if self.stepped {
            return Err(LayoutError::BadFrame);
        }
        self.stepped = true;
        if ts < self.last_ts {
            return Err(LayoutError::Unsorted);
        }
        self.last_ts = ts;
        while let Some(Reverse((end, depth))) = self.ends.peek().copied() {
            if end > ts {
                break;
            }
            self.ends.pop();
            if let Some(b) = self.busy.get_mut(depth) {
                *b = false;
            }
        }
        let occupies = dur != 0;
        let depth = match self.busy.iter().position(|b| !b) {
            Some(d) => d,
            None => {
                self.busy.push(false);
                self.busy.len() - 1
            }
        };
        if let Some(b) = self.busy.get_mut(depth) {
            *b = occupies;
        }
        if occupies {
            let end = if dur == -1 {
                i64::MAX
            } else {
                ts.saturating_add(dur)
            };
            self.ends.push(Reverse((end, depth)));
        }
        self.last_depth = depth;
        Ok(())
    }

    fn depth(&mut self) -> i64 {
        self.stepped = false;
        i64::try_from(self.last_depth).unwrap_or(i64::MAX)
    }
}

struct InternalLayout;

fn int_arg(ctx: &Context<'_>, i: usize, name: &'static str) -> rusqlite::Result<i64> {
    match ctx.get_raw(i) {
        ValueRef::Integer(v) => Ok(v),
        _ => Err(user_error(LayoutError::NotAnInteger(name))),
    }
}

impl Aggregate<Packer, Option<i64>> for InternalLayout {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Packer> {
        Ok(Packer::default())
    }

    fn step(&self, ctx: &mut Context<'_>, p: &mut Packer) -> rusqlite::Result<()> {
        let ts = int_arg(ctx, 0, "ts")?;
        if ts < 0 {
            return Err(user_error(LayoutError::NegativeTs));
        }
        let dur = int_arg(ctx, 1, "dur")?;
        if dur < -1 {
            return Err(user_error(LayoutError::BadDur));
        }
        p.add(ts, dur).map_err(user_error)
    }

    fn finalize(&self, _: &mut Context<'_>, p: Option<Packer>) -> rusqlite::Result<Option<i64>> {
        Ok(p.map(|mut p| p.depth()))
    }
}

impl WindowAggregate<Packer, Option<i64>> for InternalLayout {
    fn value(&self, p: Option<&mut Packer>) -> rusqlite::Result<Option<i64>> {
        Ok(p.map(|p| p.depth()))
    }

    fn inverse(&self, _: &mut Context<'_>, _: &mut Packer) -> rusqlite::Result<()> {
        Err(user_error(LayoutError::BadFrame))
    }
}

/// Registers `INTERNAL_LAYOUT`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_window_function(
        "INTERNAL_LAYOUT",
        2,
        FunctionFlags::SQLITE_UTF8,
        InternalLayout,
    )
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::{TraceProcessor, Value};

    fn depths(values: &str, partition: &str) -> Result<Vec<Value>, crate::Error> {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        let sql = format!(
            "WITH s(id, p, ts, dur) AS (VALUES {values}) \
             SELECT INTERNAL_LAYOUT(ts, dur) OVER ({partition} ORDER BY ts \
             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS depth FROM s ORDER BY id"
        );
        Ok(tp
            .query(&sql)?
            .rows
            .into_iter()
            .filter_map(|r| r.into_iter().next())
            .collect())
    }

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().map(|&d| Value::Int(d)).collect()
    }

    #[test]
    fn overlapping_slices_take_the_lowest_free_depth() {
        // 0: [0, 10); 1: [2, 5) stacks; 2: [5, 8) reuses depth 1 at 1's end;
        // 3: an instant at 6 takes depth 2 without keeping it; 4: [7, ∞).
        assert_eq!(
            depths(
                "(0, 0, 0, 10), (1, 0, 2, 3), (2, 0, 5, 3), (3, 0, 6, 0), (4, 0, 7, -1), (5, 0, 20, 1)",
                ""
            )
            .expect("layout"),
            ints(&[0, 1, 1, 2, 2, 0])
        );
    }

    #[test]
    fn partitions_are_laid_out_apart() {
        assert_eq!(
            depths(
                "(0, 0, 0, 10), (1, 1, 1, 10), (2, 0, 2, 10)",
                "PARTITION BY p"
            )
            .expect("layout"),
            ints(&[0, 0, 1])
        );
    }

    #[test]
    fn bad_arguments_and_frames_are_errors() {
        assert!(depths("(0, 0, -1, 10)", "").is_err());
        assert!(depths("(0, 0, 1, -2)", "").is_err());
        assert!(depths("(0, 0, 'x', 1)", "").is_err());
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        assert!(
            tp.query(
                "WITH s(ts, dur) AS (VALUES (0, 1), (1, 1), (2, 1)) SELECT INTERNAL_LAYOUT(ts, dur) \
                 OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM s"
            )
            .is_err()
        );
    }
}
