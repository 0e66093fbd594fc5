//! The prelude's stack builders, whose results are serialized
//! `perfetto.protos.Stack` messages (repeated `Entry entries = 1`, an entry
//! being one of `name = 1`, `callsite_id = 2`, `annotated_callsite_id = 3`,
//! `frame_id = 4`) that the profile exporters read:
//! `STACK_FROM_STACK_PROFILE_FRAME(frame_id)`,
//! `STACK_FROM_STACK_PROFILE_CALLSITE(callsite_id[, annotate])`, and
//! `CAT_STACKS(...)`, which joins stacks (blobs) and names (text) with the
//! last argument first, skipping NULLs. NULL ids give NULL; ids that are
//! no row, and arguments of the wrong type, are errors.

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};

use crate::column_store::table::Table;

/// Why a stack could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StackError {
    /// An argument of the wrong type.
    #[error("{0}: {1} must be integer")]
    NotAnInteger(&'static str, &'static str),
    /// An id that is no row.
    #[error("{0}: {1} does not exist: {2}")]
    NoSuchRow(&'static str, &'static str, i64),
    /// A `CAT_STACKS` argument that is a number.
    #[error("CAT_STACKS: entry {0} must be BLOB, STRING, or NULL")]
    BadEntry(usize),
}

fn fail(e: StackError) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(Box::new(e))
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `entries { <field> = <payload> }` to a Stack message.
fn entry(out: &mut Vec<u8>, field: u32, payload: EntryValue<'_>) {
    let mut e = Vec::new();
    match payload {
        EntryValue::Id(v) => {
            varint(&mut e, u64::from(field << 3));
            varint(&mut e, u64::from(v));
        }
        EntryValue::Name(s) => {
            varint(&mut e, u64::from((field << 3) | 2));
            varint(&mut e, s.len() as u64);
            e.extend_from_slice(s);
        }
    }
    out.push((1 << 3) | 2);
    varint(out, e.len() as u64);
    out.extend_from_slice(&e);
}

enum EntryValue<'a> {
    Id(u32),
    Name(&'a [u8]),
}

/// The id argument `i` of `func` as a row of `t`; None for NULL.
fn row_id(
    ctx: &Context<'_>,
    i: usize,
    t: &Table,
    func: &'static str,
    what: &'static str,
) -> rusqlite::Result<Option<u32>> {
    let id = match ctx.get_raw(i) {
        ValueRef::Null => return Ok(None),
        ValueRef::Integer(v) => v,
        _ => return Err(fail(StackError::NotAnInteger(func, what))),
    };
    u32::try_from(id)
        .ok()
        .filter(|r| (*r as usize) < t.len)
        .map(Some)
        .ok_or_else(|| fail(StackError::NoSuchRow(func, what, id)))
}

/// Registers the three functions over the frame and callsite tables.
pub fn register(
    conn: &Connection,
    frames: Option<Arc<Table>>,
    callsites: Option<Arc<Table>>,
) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("CAT_STACKS", -1, flags, |ctx| {
        let mut out = Vec::new();
        for i in (0..ctx.len()).rev() {
            match ctx.get_raw(i) {
                ValueRef::Blob(b) => out.extend_from_slice(b),
                ValueRef::Text(t) => entry(&mut out, 1, EntryValue::Name(t)),
                ValueRef::Null => {}
                _ => return Err(fail(StackError::BadEntry(i))),
            }
        }
        Ok(Value::Blob(out))
    })?;
    if let Some(frames) = frames {
        const F: &str = "STACK_FROM_STACK_PROFILE_FRAME";
        conn.create_scalar_function(F, 1, flags, move |ctx| {
            Ok(match row_id(ctx, 0, &frames, F, "frame_id")? {
                None => Value::Null,
                Some(id) => {
                    let mut out = Vec::new();
                    entry(&mut out, 4, EntryValue::Id(id));
                    Value::Blob(out)
                }
            })
        })?;
    }
    if let Some(callsites) = callsites {
        const F: &str = "STACK_FROM_STACK_PROFILE_CALLSITE";
        conn.create_scalar_function(F, -1, flags, move |ctx| {
            let Some(id) = row_id(ctx, 0, &callsites, F, "callsite_id")? else {
                return Ok(Value::Null);
            };
            let annotate = if ctx.len() >= 2 {
                match ctx.get_raw(1) {
                    ValueRef::Integer(v) => v != 0,
                    ValueRef::Null => return Ok(Value::Null),
                    _ => return Err(fail(StackError::NotAnInteger(F, "annotate"))),
                }
            } else {
                false
            };
            let mut out = Vec::new();
            entry(&mut out, if annotate { 3 } else { 2 }, EntryValue::Id(id));
            Ok(Value::Blob(out))
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;
    use crate::tables::profiling::CallsiteRow;
    use crate::{TraceProcessor, Value};

    #[test]
    fn stacks_are_serialized_stack_messages() {
        let mut s = Storage::default();
        for _ in 0..2 {
            s.profiling.callsites.push(CallsiteRow {
                depth: 0,
                parent_id: None,
                frame_id: 0,
            });
        }
        let tp = TraceProcessor::from_storage(s).expect("engine");
        let r = tp
            .query(
                "SELECT hex(STACK_FROM_STACK_PROFILE_CALLSITE(1)), \
                 hex(STACK_FROM_STACK_PROFILE_CALLSITE(1, 1)), \
                 hex(CAT_STACKS(STACK_FROM_STACK_PROFILE_CALLSITE(0), NULL, 'ab')), \
                 STACK_FROM_STACK_PROFILE_CALLSITE(NULL)",
            )
            .expect("query");
        assert_eq!(
            r.rows,
            vec![vec![
                Value::Text("0A021001".into()),
                Value::Text("0A021801".into()),
                Value::Text("0A040A0261620A021000".into()),
                Value::Null
            ]]
        );
        assert!(
            tp.query("SELECT STACK_FROM_STACK_PROFILE_CALLSITE(5)")
                .is_err()
        );
        assert!(tp.query("SELECT CAT_STACKS(1)").is_err());
    }
}
