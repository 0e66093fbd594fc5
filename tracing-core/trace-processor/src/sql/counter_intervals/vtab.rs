//! `__intrinsic_counter_leading_intervals(samples, trace_end)` as a
//! table-valued function: its arguments are hidden columns, its rows the
//! intervals `leading.rs` makes of the samples the aggregate gathered
//! (`samples.rs`), columns id, ts, dur, track_id, value, next_value,
//! delta_value, in the order of track_id, ts, then id (an `ORDER BY` of
//! those is consumed). A call with the same arguments as the last (SQLite may
//! run it again for each row of an outer loop) reuses its rows.

use std::ffi::c_int;
use std::sync::{Arc, Mutex};

use rusqlite::types::{Null, ValueRef};
use rusqlite::vtab::{
    Context, Filters, IndexInfo, VTab, VTabConfig, VTabConnection, VTabCursor,
    eponymous_only_module,
};
use rusqlite::{Connection, Result};

use crate::sql::hidden_arguments::bind_hidden_arguments;

use super::error::CounterError;
use super::leading::{Interval, leading};
use super::samples::decode;

/// The operator's name.
pub(crate) const LEADING: &str = "__intrinsic_counter_leading_intervals";

/// The visible columns; the hidden ones (`samples`, `trace_end`) follow.
const COLUMNS: [&str; 7] = [
    "id",
    "ts",
    "dur",
    "track_id",
    "value",
    "next_value",
    "delta_value",
];
const HIDDEN: usize = 2;

/// Registers the operator on `conn`.
pub(crate) fn register(conn: &Connection) -> Result<()> {
    conn.create_module(LEADING, eponymous_only_module::<LeadingTab>(), None)
}

/// The operator's virtual table.
#[repr(C)]
pub(crate) struct LeadingTab {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab,
    /// The last call's arguments and rows.
    last: Arc<Mutex<Option<LastCall>>>,
}

/// A call's arguments (the samples' blob, the trace's end) and its rows.
type LastCall = (Vec<u8>, Option<i64>, Arc<[Interval]>);

// SAFETY: `LeadingTab` is `#[repr(C)]` with `sqlite3_vtab` first, as
// rusqlite's `VTab` contract requires.
unsafe impl<'vtab> VTab<'vtab> for LeadingTab {
    type Aux = ();
    type Cursor = LeadingCursor;

    fn connect(
        db: &mut VTabConnection,
        _aux: Option<&()>,
        _args: &[&[u8]],
    ) -> Result<(String, Self)> {
        db.config(VTabConfig::Innocuous)?;
        Ok((
            format!(
                "CREATE TABLE x({}, samples HIDDEN, trace_end HIDDEN)",
                COLUMNS.join(", ")
            ),
            LeadingTab {
                base: rusqlite::ffi::sqlite3_vtab::default(),
                last: Arc::default(),
            },
        ))
    }

    fn best_index(&self, info: &mut IndexInfo) -> Result<()> {
        // Each argument given is an `=` on its hidden column; `idx_num`'s
        // bits say which came, in column order.
        let mask = bind_hidden_arguments(info, COLUMNS.len(), HIDDEN);
        info.set_idx_num(mask);
        // The rows come by track_id, ts, then id: an ascending order by a
        // prefix of those is consumed.
        let natural: [c_int; 3] = [3, 1, 0];
        let mut any = false;
        let mut consumed = true;
        for (n, o) in info.order_bys().enumerate() {
            consumed &= !o.is_order_by_desc() && natural.get(n) == Some(&o.column());
            any = true;
        }
        info.set_order_by_consumed(consumed && any);
        // Without its samples the call cannot run.
        info.set_estimated_cost(if mask & 1 == 1 { 1000.0 } else { 1e15 });
        Ok(())
    }

    fn open(&'vtab mut self) -> Result<LeadingCursor> {
        Ok(LeadingCursor {
            base: rusqlite::ffi::sqlite3_vtab_cursor::default(),
            last: self.last.clone(),
            rows: Arc::from(Vec::new()),
            pos: 0,
        })
    }
}

/// A call's cursor.
#[repr(C)]
pub(crate) struct LeadingCursor {
    /// SQLite's part; must be first.
    base: rusqlite::ffi::sqlite3_vtab_cursor,
    last: Arc<Mutex<Option<LastCall>>>,
    rows: Arc<[Interval]>,
    pos: usize,
}

// SAFETY: `LeadingCursor` is `#[repr(C)]` with `sqlite3_vtab_cursor`
// first, as rusqlite's `VTabCursor` contract requires.
unsafe impl VTabCursor for LeadingCursor {
    fn filter(&mut self, idx_num: c_int, _idx_str: Option<&str>, args: &Filters<'_>) -> Result<()> {
        self.pos = 0;
        self.rows = Arc::from(Vec::new());
        let mut given = args.iter();
        let mut arg = |h: c_int| {
            if idx_num & (1 << h) != 0 {
                given.next()
            } else {
                None
            }
        };
        let samples = match arg(0) {
            None | Some(ValueRef::Null) => &[][..],
            Some(ValueRef::Blob(b)) => b,
            Some(_) => return Err(CounterError::NotSamples.into()),
        };
        let end = match arg(1) {
            None | Some(ValueRef::Null) => None,
            Some(ValueRef::Integer(v)) => Some(v),
            Some(_) => return Err(CounterError::BadEnd.into()),
        };
        if samples.is_empty() {
            return Ok(());
        }
        let cached = match self.last.lock() {
            Ok(last) => last
                .as_ref()
                .filter(|(b, e, _)| b.as_slice() == samples && *e == end)
                .map(|(_, _, rows)| rows.clone()),
            Err(_) => None,
        };
        self.rows = match cached {
            Some(rows) => rows,
            None => {
                let rows: Arc<[Interval]> = leading(decode(samples)?, end).into();
                if let Ok(mut last) = self.last.lock() {
                    *last = Some((samples.to_vec(), end, rows.clone()));
                }
                rows
            }
        };
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.pos >= self.rows.len()
    }

    fn column(&self, ctx: &mut Context, i: c_int) -> Result<()> {
        let Some(r) = self.rows.get(self.pos) else {
            return ctx.set_result(&Null);
        };
        match i {
            0 => ctx.set_result(&r.sample.id),
            1 => ctx.set_result(&r.sample.ts),
            2 => ctx.set_result(&r.dur),
            3 => ctx.set_result(&r.sample.track),
            4 => ctx.set_result(&r.sample.value),
            5 => ctx.set_result(&r.next_value),
            6 => ctx.set_result(&r.delta_value),
            _ => ctx.set_result(&Null),
        }
    }

    fn rowid(&self) -> Result<i64> {
        Ok(i64::try_from(self.pos).unwrap_or(i64::MAX))
    }
}
