//! The cycles of `linux.cpu.utilization.slice`: for each thread slice (as
//! `inputs.rs` reads them), its overlaps with its thread's frequency
//! pieces (`_cpu_freq_per_thread` of `linux.cpu.utilization.general`: the
//! thread's runs on a CPU, each at one known frequency in kHz; a piece of
//! unknown frequency or without a start, duration or thread does not
//! count), giving the time covered (`dur`, summed) and the cycles run
//! (each overlap's duration times its frequency over 1000, summed as
//! SQLite's `sum` does, `sql_sum.rs`): `millicycles` is that sum and
//! `megacycles` that sum over 1e9, each cast to an integer. A slice
//! overlapping no piece has no row; rows come by slice id. The module
//! keeps a slice's cycles only when `dur` covers the whole slice.

use rusqlite::types::Value;

use crate::sql::perfetto_sql::nested::NestedDb;

use super::error::SliceTimeError;
use super::inputs::{Lanes, Tables, thread_slices};
use super::sql_sum::{Num, SqlSum, cast_int};

/// A frequency as SQL holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Freq {
    /// An integer.
    Int(i64),
    /// A double.
    Real(f64),
}

/// One piece of a thread's run at one frequency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Piece {
    /// Its start.
    pub ts: i64,
    /// Its duration.
    pub dur: i64,
    /// The thread.
    pub utid: i64,
    /// The frequency.
    pub freq: Freq,
}

/// An integer column of a piece (a double is truncated, as a cast to INT
/// does).
fn int(v: &Value, what: &'static str) -> Result<Option<i64>, SliceTimeError> {
    match v {
        Value::Null => Ok(None),
        Value::Integer(x) => Ok(Some(*x)),
        Value::Real(x) => Ok(Some(*x as i64)),
        _ => Err(SliceTimeError::NotNumber { what }),
    }
}

/// The pieces of `_cpu_freq_per_thread` that count, read on `db`.
pub(crate) fn read_pieces(db: &NestedDb) -> Result<Vec<Piece>, SliceTimeError> {
    let rows = db
        .query(
            "SELECT ts, dur, utid, freq FROM _cpu_freq_per_thread",
            &[],
            usize::MAX,
        )
        .map_err(SliceTimeError::Query)?;
    let mut out = Vec::new();
    for r in &rows.rows {
        let [ts, dur, utid, freq] = r.as_slice() else {
            continue;
        };
        let freq = match freq {
            Value::Null => None,
            Value::Integer(x) => Some(Freq::Int(*x)),
            Value::Real(x) => Some(Freq::Real(*x)),
            _ => return Err(SliceTimeError::NotNumber { what: "freq" }),
        };
        let (ts, dur, utid) = (int(ts, "ts")?, int(dur, "dur")?, int(utid, "utid")?);
        if let (Some(ts), Some(dur), Some(utid), Some(freq)) = (ts, dur, utid, freq) {
            out.push(Piece {
                ts,
                dur,
                utid,
                freq,
            });
        }
    }
    Ok(out)
}

/// One slice's cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cycles {
    /// The slice.
    pub id: i64,
    /// The time its pieces cover.
    pub dur: i64,
    /// Its cycles, in thousandths.
    pub millicycles: i64,
    /// Its cycles, in millions.
    pub megacycles: i64,
}

/// `dur * freq / 1000` as SQL computes it: in integers when the frequency
/// is one (a product that overflows becomes a double, as in SQLite), else
/// in doubles.
fn cycles_term(dur: i64, freq: Freq) -> Num {
    match freq {
        Freq::Int(f) => match dur.checked_mul(f) {
            Some(p) => Num::Int(p / 1000),
            None => Num::Real(dur as f64 * f as f64 / 1000.0),
        },
        Freq::Real(f) => Num::Real(dur as f64 * f / 1000.0),
    }
}

/// The cycles of each thread slice that overlaps one of `pieces`, by id.
pub(crate) fn compute(t: &Tables, pieces: &[Piece]) -> Vec<Cycles> {
    let lanes = Lanes::from_spans(
        pieces
            .iter()
            .enumerate()
            .map(|(i, p)| (p.utid, p.ts, p.ts.saturating_add(p.dur), i)),
    );
    let mut out = Vec::new();
    for s in thread_slices(t) {
        let mut dur: Option<i64> = None;
        let mut sum = SqlSum::default();
        lanes.overlaps(s.utid, s.start, s.end, |i, overlap| {
            if let Some(p) = pieces.get(i) {
                dur = Some(dur.unwrap_or(0).saturating_add(overlap));
                sum.add(cycles_term(overlap, p.freq));
            }
        });
        let (Some(dur), Some(total)) = (dur, sum.finish()) else {
            continue;
        };
        let mega = match total {
            Num::Int(x) => x as f64 / 1e9,
            Num::Real(x) => x / 1e9,
        };
        out.push(Cycles {
            id: s.id as i64,
            dur,
            millicycles: cast_int(total),
            megacycles: cast_int(Num::Real(mega)),
        });
    }
    out
}
