//! The counter samples a query hands to the native counter operator
//! (`leading.rs`): `__intrinsic_counter_samples_agg(id, ts, track_id,
//! value)` gathers the rows of any table, view, CTE or subquery into one
//! blob, so that they reach the operator as a value of the same query.
//! Each argument is taken as it comes (the macro casts them first): an
//! integer, a double or NULL. Decoding checks the blob's length and tag:
//! a blob that is not ours is an error, never a panic.

use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Result};

use super::error::CounterError;

/// The aggregate's name.
pub(crate) const AGG: &str = "__intrinsic_counter_samples_agg";

const MAGIC: &[u8] = b"ztcs1";
/// Bytes per sample: a byte of NULL flags, then id, ts, track and value.
const SAMPLE_BYTES: usize = 1 + 4 * 8;

/// One counter sample; None is NULL.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// The row's id.
    pub id: Option<i64>,
    /// Its timestamp.
    pub ts: Option<i64>,
    /// Its track (the partition).
    pub track: Option<i64>,
    /// Its value.
    pub value: Option<f64>,
}

/// Registers the aggregate on `conn`.
pub(crate) fn register(conn: &Connection) -> Result<()> {
    conn.create_aggregate_function(
        AGG,
        4,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        SamplesAgg,
    )
}

/// `__intrinsic_counter_samples_agg`.
struct SamplesAgg;

/// An integer argument (a double is truncated, as a cast to INT does).
fn int(v: ValueRef<'_>, what: &'static str) -> Result<Option<i64>, CounterError> {
    match v {
        ValueRef::Null => Ok(None),
        ValueRef::Integer(x) => Ok(Some(x)),
        ValueRef::Real(x) => Ok(Some(x as i64)),
        _ => Err(CounterError::NotNumber { what }),
    }
}

impl Aggregate<Vec<u8>, Option<Vec<u8>>> for SamplesAgg {
    fn init(&self, _ctx: &mut Context<'_>) -> Result<Vec<u8>> {
        Ok(MAGIC.to_vec())
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut Vec<u8>) -> Result<()> {
        let value = match ctx.get_raw(3) {
            ValueRef::Null => None,
            ValueRef::Integer(x) => Some(x as f64),
            ValueRef::Real(x) => Some(x),
            _ => return Err(CounterError::NotNumber { what: "value" }.into()),
        };
        let s = Sample {
            id: int(ctx.get_raw(0), "id")?,
            ts: int(ctx.get_raw(1), "ts")?,
            track: int(ctx.get_raw(2), "track_id")?,
            value,
        };
        push(acc, &s);
        Ok(())
    }

    fn finalize(&self, _ctx: &mut Context<'_>, acc: Option<Vec<u8>>) -> Result<Option<Vec<u8>>> {
        Ok(acc)
    }
}

/// Appends `s` to an encoding.
fn push(out: &mut Vec<u8>, s: &Sample) {
    let flags = u8::from(s.id.is_some())
        | u8::from(s.ts.is_some()) << 1
        | u8::from(s.track.is_some()) << 2
        | u8::from(s.value.is_some()) << 3;
    out.push(flags);
    out.extend_from_slice(&s.id.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&s.ts.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&s.track.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&s.value.unwrap_or(0.0).to_le_bytes());
}

/// `samples` encoded as the aggregate encodes them.
#[cfg(test)]
pub(crate) fn encode(samples: &[Sample]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    for s in samples {
        push(&mut out, s);
    }
    out
}

/// The samples of a blob the aggregate made.
pub(crate) fn decode(blob: &[u8]) -> Result<Vec<Sample>, CounterError> {
    let body = blob
        .strip_prefix(MAGIC)
        .filter(|b| b.len() % SAMPLE_BYTES == 0)
        .ok_or(CounterError::NotSamples)?;
    let word = |b: &[u8], i: usize| -> [u8; 8] {
        let mut w = [0u8; 8];
        if let Some(src) = b.get(1 + i * 8..9 + i * 8) {
            w.copy_from_slice(src);
        }
        w
    };
    Ok(body
        .chunks_exact(SAMPLE_BYTES)
        .map(|b| {
            let flags = b.first().copied().unwrap_or(0);
            let present = |bit: u8| flags & (1 << bit) != 0;
            Sample {
                id: present(0).then(|| i64::from_le_bytes(word(b, 0))),
                ts: present(1).then(|| i64::from_le_bytes(word(b, 1))),
                track: present(2).then(|| i64::from_le_bytes(word(b, 2))),
                value: present(3).then(|| f64::from_le_bytes(word(b, 3))),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_decode_as_encoded_and_foreign_blobs_are_refused() {
        let s = [
            Sample {
                id: Some(1),
                ts: Some(-5),
                track: None,
                value: Some(2.5),
            },
            Sample {
                id: None,
                ts: Some(i64::MAX),
                track: Some(3),
                value: None,
            },
        ];
        assert_eq!(decode(&encode(&s)), Ok(s.to_vec()));
        assert_eq!(decode(MAGIC), Ok(Vec::new()));
        assert_eq!(decode(b"ztcs1x"), Err(CounterError::NotSamples));
        assert_eq!(decode(b"other"), Err(CounterError::NotSamples));
    }
}
