//! The aggregates that gather a table's rows into a value an interval
//! operator reads (`set.rs`): `__intrinsic_interval_tree_intervals_agg(id,
//! ts, dur [, 'col', value]...)` collects intervals by partition (the
//! pairs after the third argument name the partition columns and give
//! the row's values), `__intrinsic_timestamp_set_agg(ts)` collects
//! timestamps. Rows may come in any order: each set is sorted when it is
//! finished. No row gives NULL, which the operators read as empty.

use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Result};

use super::error::IntervalError;
use super::set::{Interval, Key, PartitionedIntervals, encode_timestamps};

/// Registers both aggregates on `conn`.
pub(crate) fn register(conn: &Connection) -> Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_aggregate_function(
        "__intrinsic_interval_tree_intervals_agg",
        -1,
        flags,
        IntervalsAgg,
    )?;
    conn.create_aggregate_function("__intrinsic_timestamp_set_agg", 1, flags, TimestampsAgg)?;
    Ok(())
}

/// `__intrinsic_interval_tree_intervals_agg`.
struct IntervalsAgg;

/// An integer argument; NULL is 0, as upstream reads it.
fn int(ctx: &Context<'_>, i: usize, what: &'static str) -> Result<i64> {
    match ctx.get_raw(i) {
        ValueRef::Integer(v) => Ok(v),
        ValueRef::Null => Ok(0),
        ValueRef::Real(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Ok(v as i64),
        _ => Err(IntervalError::NotInteger { what }.into()),
    }
}

impl Aggregate<Option<PartitionedIntervals>, Option<Vec<u8>>> for IntervalsAgg {
    fn init(&self, _ctx: &mut Context<'_>) -> Result<Option<PartitionedIntervals>> {
        Ok(None)
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut Option<PartitionedIntervals>) -> Result<()> {
        let n = ctx.len();
        if n < 3 || (n - 3) % 2 != 0 {
            return Err(IntervalError::MissingArgument {
                operator: "__intrinsic_interval_tree_intervals_agg",
                name: "id, ts, dur and ('column', value) pairs",
            }
            .into());
        }
        let id = int(ctx, 0, "id")?;
        let ts = int(ctx, 1, "ts")?;
        let dur = int(ctx, 2, "dur")?;
        if ts < 0 {
            return Err(IntervalError::NegativeTs.into());
        }
        if dur < 0 {
            return Err(IntervalError::NegativeDur.into());
        }
        let set = match acc {
            Some(set) => set,
            None => {
                let mut columns = Vec::new();
                for i in (3..n).step_by(2) {
                    columns.push(match ctx.get_raw(i) {
                        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                        _ => {
                            return Err(IntervalError::BadPartition {
                                what: "column name must be text",
                            }
                            .into());
                        }
                    });
                }
                acc.insert(PartitionedIntervals::new(columns))
            }
        };
        let mut key = Vec::with_capacity((n - 3) / 2);
        for i in (4..n).step_by(2) {
            key.push(match ctx.get_raw(i) {
                ValueRef::Null => Key::Null,
                ValueRef::Integer(v) => Key::Int(v),
                ValueRef::Real(v) => Key::Real(v.to_bits()),
                ValueRef::Text(t) => Key::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(_) => {
                    return Err(IntervalError::BadPartition {
                        what: "value cannot be a blob",
                    }
                    .into());
                }
            });
        }
        set.push(
            key,
            Interval {
                id,
                start: ts,
                end: ts.saturating_add(dur),
            },
        );
        Ok(())
    }

    fn finalize(
        &self,
        _ctx: &mut Context<'_>,
        acc: Option<Option<PartitionedIntervals>>,
    ) -> Result<Option<Vec<u8>>> {
        Ok(acc.flatten().map(|mut set| {
            set.sort();
            set.encode()
        }))
    }
}

/// `__intrinsic_timestamp_set_agg`.
struct TimestampsAgg;

impl Aggregate<Vec<i64>, Option<Vec<u8>>> for TimestampsAgg {
    fn init(&self, _ctx: &mut Context<'_>) -> Result<Vec<i64>> {
        Ok(Vec::new())
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut Vec<i64>) -> Result<()> {
        acc.push(int(ctx, 0, "ts")?);
        Ok(())
    }

    fn finalize(&self, _ctx: &mut Context<'_>, acc: Option<Vec<i64>>) -> Result<Option<Vec<u8>>> {
        Ok(acc.map(|mut ts| {
            ts.sort_unstable();
            encode_timestamps(&ts)
        }))
    }
}
