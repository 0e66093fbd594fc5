//! `VALUE_AT_MAX_TS(ts, value)`: the prelude's aggregate answering the
//! value of the row with the greatest `ts` (the last such row on a tie).
//! `ts` must be an integer and `value` an integer or a double (checked on
//! the first row, as upstream does; later values are taken as the first
//! one's type). NULL over no rows.

use rusqlite::Connection;
use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};

/// Why a row could not be aggregated.
#[derive(Debug, thiserror::Error)]
pub enum MaxTsError {
    /// A timestamp that is not an integer.
    #[error("VALUE_AT_MAX_TS: ts passed was not an integer")]
    Ts,
    /// A value that is neither an integer nor a double.
    #[error("VALUE_AT_MAX_TS: value passed was not an integer or float")]
    Value,
}

/// The greatest `ts` so far and its value.
#[derive(Debug)]
pub struct State {
    /// None until the first row; then whether values are integers.
    integers: Option<bool>,
    max_ts: i64,
    value: Value,
}

struct ValueAtMaxTs;

fn fail(e: MaxTsError) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(Box::new(e))
}

impl Aggregate<State, Value> for ValueAtMaxTs {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<State> {
        Ok(State {
            integers: None,
            max_ts: i64::MIN,
            value: Value::Null,
        })
    }

    fn step(&self, ctx: &mut Context<'_>, st: &mut State) -> rusqlite::Result<()> {
        let integers = match st.integers {
            Some(i) => i,
            None => {
                if !matches!(ctx.get_raw(0), ValueRef::Integer(_)) {
                    return Err(fail(MaxTsError::Ts));
                }
                let i = match ctx.get_raw(1) {
                    ValueRef::Integer(_) => true,
                    ValueRef::Real(_) => false,
                    _ => return Err(fail(MaxTsError::Value)),
                };
                st.integers = Some(i);
                i
            }
        };
        let ts = match ctx.get_raw(0) {
            ValueRef::Integer(v) => v,
            ValueRef::Real(v) => v as i64,
            _ => 0,
        };
        if st.max_ts <= ts {
            st.max_ts = ts;
            let v = ctx.get_raw(1);
            st.value = if integers {
                Value::Integer(
                    v.as_i64()
                        .unwrap_or_else(|_| v.as_f64().map_or(0, |f| f as i64)),
                )
            } else {
                Value::Real(
                    v.as_f64()
                        .unwrap_or_else(|_| v.as_i64().map_or(0.0, |i| i as f64)),
                )
            };
        }
        Ok(())
    }

    fn finalize(&self, _: &mut Context<'_>, st: Option<State>) -> rusqlite::Result<Value> {
        Ok(st.map_or(Value::Null, |s| s.value))
    }
}

/// Registers `VALUE_AT_MAX_TS`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_aggregate_function(
        "VALUE_AT_MAX_TS",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        ValueAtMaxTs,
    )
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::{TraceProcessor, Value};

    fn one(sql: &str) -> Result<Value, crate::Error> {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        let r = tp.query(sql)?;
        Ok(r.rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null))
    }

    #[test]
    fn answers_the_value_of_the_latest_row() {
        assert_eq!(
            one("WITH t(ts, v) AS (VALUES (5, 1), (9, 2), (9, 3), (1, 4)) SELECT VALUE_AT_MAX_TS(ts, v) FROM t")
                .expect("query"),
            Value::Int(3)
        );
        assert_eq!(
            one(
                "WITH t(ts, v) AS (VALUES (5, 1.5), (2, 2.5)) SELECT VALUE_AT_MAX_TS(ts, v) FROM t"
            )
            .expect("query"),
            Value::Real(1.5)
        );
        assert_eq!(
            one("WITH t(ts, v) AS (SELECT 1, 1 WHERE 0) SELECT VALUE_AT_MAX_TS(ts, v) FROM t")
                .expect("query"),
            Value::Null
        );
        assert!(
            one("WITH t(ts, v) AS (VALUES ('a', 1)) SELECT VALUE_AT_MAX_TS(ts, v) FROM t").is_err()
        );
        assert!(
            one("WITH t(ts, v) AS (VALUES (1, 'x')) SELECT VALUE_AT_MAX_TS(ts, v) FROM t").is_err()
        );
    }
}
