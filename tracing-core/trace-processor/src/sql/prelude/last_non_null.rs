//! `LAST_NON_NULL(x)`: the window function of Perfetto's prelude that
//! answers the last non-NULL value of `x` in the row's window frame (NULL
//! when the frame has none). It supports any frame: rows leaving the
//! frame's start are taken out again (SQLite's inverse step). As an
//! aggregate it is the last non-NULL value of the group.

use rusqlite::Connection;
use rusqlite::functions::{Aggregate, Context, FunctionFlags, WindowAggregate};
use rusqlite::types::Value;

/// The frame as far as the answer needs it: how many rows it holds, and
/// its last non-NULL value with that value's position in it.
#[derive(Debug, Default)]
pub struct Frame {
    rows: usize,
    last: Option<(usize, Value)>,
}

impl Frame {
    fn push(&mut self, v: Value) {
        self.rows += 1;
        if v != Value::Null {
            self.last = Some((self.rows - 1, v));
        }
    }

    fn pop_front(&mut self) {
        self.rows = self.rows.saturating_sub(1);
        self.last = match self.last.take() {
            Some((0, _)) | None => None,
            Some((at, v)) => Some((at - 1, v)),
        };
    }

    fn last(&self) -> Value {
        self.last.as_ref().map_or(Value::Null, |(_, v)| v.clone())
    }
}

/// The function's implementation for SQLite.
struct LastNonNull;

impl Aggregate<Frame, Value> for LastNonNull {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<Frame> {
        Ok(Frame::default())
    }

    fn step(&self, ctx: &mut Context<'_>, frame: &mut Frame) -> rusqlite::Result<()> {
        frame.push(ctx.get(0)?);
        Ok(())
    }

    fn finalize(&self, _: &mut Context<'_>, frame: Option<Frame>) -> rusqlite::Result<Value> {
        Ok(frame.map_or(Value::Null, |f| f.last()))
    }
}

impl WindowAggregate<Frame, Value> for LastNonNull {
    fn value(&self, frame: Option<&mut Frame>) -> rusqlite::Result<Value> {
        Ok(frame.map_or(Value::Null, |f| f.last()))
    }

    fn inverse(&self, _: &mut Context<'_>, frame: &mut Frame) -> rusqlite::Result<()> {
        frame.pop_front();
        Ok(())
    }
}

/// Registers `LAST_NON_NULL`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_window_function(
        "LAST_NON_NULL",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        LastNonNull,
    )
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::{TraceProcessor, Value};

    fn column(sql: &str) -> Vec<Value> {
        let tp = TraceProcessor::from_storage(Storage::default()).expect("engine");
        tp.query(sql)
            .expect(sql)
            .rows
            .into_iter()
            .filter_map(|r| r.into_iter().next())
            .collect()
    }

    const VALUES: &str =
        "WITH v(i, x) AS (VALUES (1, 10), (2, NULL), (3, NULL), (4, 'a'), (5, NULL))";

    #[test]
    fn fills_nulls_with_the_last_value_before_them() {
        assert_eq!(
            column(&format!(
                "{VALUES} SELECT LAST_NON_NULL(x) OVER (ORDER BY i) FROM v ORDER BY i"
            )),
            [
                Value::Int(10),
                Value::Int(10),
                Value::Int(10),
                Value::Text("a".into()),
                Value::Text("a".into())
            ]
        );
    }

    #[test]
    fn rows_leaving_a_sliding_frame_are_forgotten() {
        assert_eq!(
            column(&format!(
                "{VALUES} SELECT LAST_NON_NULL(x) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM v ORDER BY i"
            )),
            [
                Value::Int(10),
                Value::Int(10),
                Value::Null,
                Value::Text("a".into()),
                Value::Text("a".into())
            ]
        );
        assert_eq!(
            column(&format!("{VALUES} SELECT LAST_NON_NULL(x) FROM v")),
            [Value::Text("a".into())]
        );
    }
}
