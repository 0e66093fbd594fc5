//! The prelude's clock functions: `to_realtime(ts)` and `to_monotonic(ts)`
//! (a trace timestamp on the REALTIME or MONOTONIC clock, through the
//! trace's clock snapshots), `abs_time_str(ts)` (the REALTIME instant as
//! ISO 8601 UTC text with nanoseconds) and `to_timecode(ns)`
//! (`HH:MM:SS mmm uuu nnn`). As upstream converts: between two snapshots
//! the earlier one's offset, capped at the later one's value; before the
//! first snapshot its value; after the last its offset. A timestamp when
//! the trace has no snapshot of the clock gives NULL, as does NULL; a
//! value that is not an integer is an error.

use std::collections::BTreeMap;
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};

use crate::column_store::table::Table;

/// The builtin clock ids of REALTIME and MONOTONIC.
const REALTIME: i64 = 1;
const MONOTONIC: i64 = 3;

/// One clock's snapshots: trace time → the clock's value (the first
/// snapshot kept when two share a trace time).
type Timeline = BTreeMap<i64, i64>;

/// The timelines of `clock_id` in the `clock_snapshot` table.
fn timeline(snapshots: Option<&Table>, clock_id: i64) -> Timeline {
    let mut out = Timeline::new();
    let Some(t) = snapshots else {
        return out;
    };
    let col = |name: &str| t.columns.iter().find(|c| c.name == name);
    let (Some(ts), Some(id), Some(value)) = (col("ts"), col("clock_id"), col("clock_value")) else {
        return out;
    };
    for row in 0..t.len {
        if let (Some(ts), Some(id), Some(v)) = (ts.int_at(row), id.int_at(row), value.int_at(row)) {
            if id == clock_id {
                out.entry(ts).or_insert(v);
            }
        }
    }
    out
}

/// `ts` on the clock of `timeline`, None when it has no snapshot.
fn convert(timeline: &Timeline, ts: i64) -> Option<i64> {
    let next = timeline.range(ts..).next();
    let prev = timeline.range(..ts).next_back();
    match (prev, next) {
        (None, None) => None,
        (Some((&at, &v)), None) => Some(v.saturating_add(ts.saturating_sub(at))),
        (None, Some((_, &v))) => Some(v),
        (Some(_), Some((&at, &v))) if at == ts => Some(v),
        (Some((&at, &pv)), Some((_, &nv))) => {
            Some(pv.saturating_add(ts.saturating_sub(at)).min(nv))
        }
    }
}

/// The civil date (year, month, day) of a count of days since 1970-01-01
/// (the proleptic Gregorian calendar, any sign).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `ns` since the epoch as `YYYY-MM-DDTHH:MM:SS.nnnnnnnnn` (UTC); the
/// seconds and nanoseconds are split by truncation, as upstream splits
/// them.
fn iso8601(ns: i64) -> String {
    let secs = ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    let (days, in_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:09}",
        in_day / 3600,
        in_day / 60 % 60,
        in_day % 60
    )
}

/// `HH:MM:SS mmm uuu nnn` of a duration in ns.
fn timecode(ns: i64) -> String {
    let (us, ns) = (ns / 1000, ns % 1000);
    let (ms, us) = (us / 1000, us % 1000);
    let (ss, ms) = (ms / 1000, ms % 1000);
    let (mm, ss) = (ss / 60, ss % 60);
    let (hh, mm) = (mm / 60, mm % 60);
    format!("{hh:02}:{mm:02}:{ss:02} {ms:03} {us:03} {ns:03}")
}

/// The timestamp argument: Ok(None) for NULL, an error naming `function`
/// for anything but an integer.
fn timestamp(ctx: &Context<'_>, function: &str) -> rusqlite::Result<Option<i64>> {
    match ctx.get_raw(0) {
        ValueRef::Null => Ok(None),
        ValueRef::Integer(v) => Ok(Some(v)),
        _ => Err(rusqlite::Error::UserFunctionError(
            format!("{function}: first argument should be timestamp").into(),
        )),
    }
}

/// Registers the functions over the trace's `clock_snapshot` table.
pub fn register(conn: &Connection, snapshots: Option<&Table>) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    let real = Arc::new(timeline(snapshots, REALTIME));
    let mono = Arc::new(timeline(snapshots, MONOTONIC));
    let r = real.clone();
    conn.create_scalar_function("to_realtime", 1, flags, move |ctx| {
        Ok(timestamp(ctx, "TO_REALTIME")?.and_then(|ts| convert(&r, ts)))
    })?;
    conn.create_scalar_function("to_monotonic", 1, flags, move |ctx| {
        Ok(timestamp(ctx, "TO_MONOTONIC")?.and_then(|ts| convert(&mono, ts)))
    })?;
    conn.create_scalar_function("abs_time_str", 1, flags, move |ctx| {
        Ok(timestamp(ctx, "ABS_TIME_STR")?
            .and_then(|ts| convert(&real, ts))
            .map_or(Value::Null, |v| Value::Text(iso8601(v))))
    })?;
    conn.create_scalar_function("to_timecode", 1, flags, |ctx| {
        Ok(timestamp(ctx, "TO_TIMECODE")?.map_or(Value::Null, |v| Value::Text(timecode(v))))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::tables::core::ClockSnapshotRow;
    use crate::{TraceProcessor, Value};

    fn one(tp: &TraceProcessor, sql: &str) -> Value {
        tp.query(sql).expect(sql).rows.remove(0).remove(0)
    }

    /// Snapshots at trace times 100 and 200: REALTIME 1_000_000_000_000
    /// then 1_000_000_000_050 (it stepped back 50 ns), MONOTONIC 10 then
    /// 110.
    fn trace() -> TraceProcessor {
        let mut s = Storage::default();
        for (ts, id, value) in [
            (100, 1, 1_000_000_000_000),
            (100, 3, 10),
            (200, 1, 1_000_000_000_050),
            (200, 3, 110),
        ] {
            s.clock_snapshots.push(ClockSnapshotRow {
                ts,
                clock_id: id,
                clock_value: value,
                ..Default::default()
            });
        }
        TraceProcessor::from_storage(s).expect("engine")
    }

    #[test]
    fn timestamps_convert_through_the_snapshots_as_upstream() {
        let tp = trace();
        let i = Value::Int;
        // Before the first snapshot: its value.
        assert_eq!(one(&tp, "SELECT to_realtime(0)"), i(1_000_000_000_000));
        assert_eq!(one(&tp, "SELECT to_realtime(100)"), i(1_000_000_000_000));
        // Between: the earlier offset, capped at the later value.
        assert_eq!(one(&tp, "SELECT to_realtime(130)"), i(1_000_000_000_030));
        assert_eq!(one(&tp, "SELECT to_realtime(190)"), i(1_000_000_000_050));
        // After the last: its offset.
        assert_eq!(one(&tp, "SELECT to_realtime(300)"), i(1_000_000_000_150));
        assert_eq!(one(&tp, "SELECT to_monotonic(150)"), i(60));
        assert_eq!(one(&tp, "SELECT to_realtime(NULL)"), Value::Null);
        let e = tp.query("SELECT to_realtime('x')").expect_err("text");
        assert!(
            e.to_string()
                .contains("TO_REALTIME: first argument should be timestamp"),
            "{e}"
        );
    }

    #[test]
    fn abs_time_str_is_iso8601_utc() {
        let tp = trace();
        assert_eq!(
            one(&tp, "SELECT abs_time_str(130)"),
            Value::Text("1970-01-01T00:16:40.000000030".into())
        );
        let empty = TraceProcessor::from_storage(Storage::default()).expect("engine");
        assert_eq!(one(&empty, "SELECT abs_time_str(130)"), Value::Null);
        assert_eq!(one(&empty, "SELECT to_realtime(130)"), Value::Null);
    }

    #[test]
    fn timecodes_split_hours_to_nanoseconds() {
        let tp = trace();
        assert_eq!(
            one(&tp, "SELECT to_timecode(3723004005006)"),
            Value::Text("01:02:03 004 005 006".into())
        );
        assert_eq!(one(&tp, "SELECT to_timecode(NULL)"), Value::Null);
    }

    #[test]
    fn civil_dates_cross_leap_years_and_the_epoch() {
        assert_eq!(super::iso8601(0), "1970-01-01T00:00:00.000000000");
        assert_eq!(
            super::iso8601(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000000000"
        );
        assert_eq!(
            super::iso8601(-86_400_000_000_000),
            "1969-12-31T00:00:00.000000000"
        );
    }
}
