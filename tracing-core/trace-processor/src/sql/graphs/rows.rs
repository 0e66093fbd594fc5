//! How a graph's edges, its start nodes or a scan's first rows reach a
//! graph operator: `__intrinsic_graph_rows_agg(a, b, ...)` gathers the
//! rows of any table, view, CTE or subquery into one blob, a value of the
//! same query, which the operator decodes. Every row has as many values as
//! the first; each is kept with its type (NULL, integer, double, text or
//! bytes). Decoding checks the blob's tag, its arity and every length: a
//! blob that is not ours is an error, never a panic. No row gives NULL,
//! which the operators read as no rows.

use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Result};

use super::error::GraphError;

/// The aggregate's name.
pub(crate) const AGG: &str = "__intrinsic_graph_rows_agg";

const MAGIC: &[u8] = b"ztgr1";

const NULL: u8 = 0;
const INT: u8 = 1;
const REAL: u8 = 2;
const TEXT: u8 = 3;
const BLOB: u8 = 4;

/// Registers the aggregate on `conn`.
pub(crate) fn register(conn: &Connection) -> Result<()> {
    conn.create_aggregate_function(
        AGG,
        -1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        RowsAgg,
    )
}

/// `__intrinsic_graph_rows_agg`.
struct RowsAgg;

impl Aggregate<Vec<u8>, Option<Vec<u8>>> for RowsAgg {
    fn init(&self, _ctx: &mut Context<'_>) -> Result<Vec<u8>> {
        Ok(Vec::new())
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut Vec<u8>) -> Result<()> {
        let n = ctx.len();
        let arity = u8::try_from(n)
            .ok()
            .filter(|a| *a > 0)
            .ok_or(GraphError::Arity { given: n })?;
        if acc.is_empty() {
            acc.extend_from_slice(MAGIC);
            acc.push(arity);
        } else if acc.get(MAGIC.len()) != Some(&arity) {
            return Err(GraphError::Arity { given: n }.into());
        }
        for i in 0..n {
            push(acc, ctx.get_raw(i));
        }
        Ok(())
    }

    fn finalize(&self, _ctx: &mut Context<'_>, acc: Option<Vec<u8>>) -> Result<Option<Vec<u8>>> {
        Ok(acc.filter(|a| !a.is_empty()))
    }
}

/// Appends one value.
fn push(out: &mut Vec<u8>, v: ValueRef<'_>) {
    match v {
        ValueRef::Null => out.push(NULL),
        ValueRef::Integer(x) => {
            out.push(INT);
            out.extend_from_slice(&x.to_le_bytes());
        }
        ValueRef::Real(x) => {
            out.push(REAL);
            out.extend_from_slice(&x.to_le_bytes());
        }
        ValueRef::Text(b) | ValueRef::Blob(b) => {
            out.push(if matches!(v, ValueRef::Text(_)) {
                TEXT
            } else {
                BLOB
            });
            let len = u32::try_from(b.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(b.get(..len as usize).unwrap_or(b));
        }
    }
}

/// Rows of values, `arity` each.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rows {
    /// Values per row.
    pub arity: usize,
    /// The values, row after row.
    pub values: Vec<Value>,
}

impl Rows {
    /// The rows.
    pub fn iter(&self) -> impl Iterator<Item = &[Value]> {
        self.values.chunks_exact(self.arity.max(1))
    }
}

/// Reads `n` bytes at `*at`, moving past them.
fn take<'b>(b: &'b [u8], at: &mut usize, n: usize) -> Result<&'b [u8], GraphError> {
    let end = at.checked_add(n).ok_or(GraphError::NotRows)?;
    let s = b.get(*at..end).ok_or(GraphError::NotRows)?;
    *at = end;
    Ok(s)
}

fn word(b: &[u8], at: &mut usize) -> Result<[u8; 8], GraphError> {
    let mut w = [0u8; 8];
    w.copy_from_slice(take(b, at, 8)?);
    Ok(w)
}

/// The rows of an argument: a blob the aggregate made, or NULL (no rows).
pub(crate) fn decode(v: &Value) -> Result<Rows, GraphError> {
    let blob = match v {
        Value::Null => return Ok(Rows::default()),
        Value::Blob(b) => b,
        _ => return Err(GraphError::NotRows),
    };
    let body = blob.strip_prefix(MAGIC).ok_or(GraphError::NotRows)?;
    let (&arity, body) = body.split_first().ok_or(GraphError::NotRows)?;
    let mut values = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let tag = take(body, &mut at, 1)?.first().copied().unwrap_or(u8::MAX);
        values.push(match tag {
            NULL => Value::Null,
            INT => Value::Integer(i64::from_le_bytes(word(body, &mut at)?)),
            REAL => Value::Real(f64::from_le_bytes(word(body, &mut at)?)),
            TEXT | BLOB => {
                let mut len = [0u8; 4];
                len.copy_from_slice(take(body, &mut at, 4)?);
                let bytes = take(body, &mut at, u32::from_le_bytes(len) as usize)?;
                if tag == TEXT {
                    Value::Text(String::from_utf8_lossy(bytes).into_owned())
                } else {
                    Value::Blob(bytes.to_vec())
                }
            }
            _ => return Err(GraphError::NotRows),
        });
    }
    let arity = usize::from(arity);
    if arity == 0 || values.len() % arity != 0 {
        return Err(GraphError::NotRows);
    }
    Ok(Rows { arity, values })
}

/// An integer of a row: NULL is None, a double is truncated (as upstream
/// reads a node id), anything else is an error naming `what`.
pub(crate) fn int(v: Option<&Value>, what: &'static str) -> Result<Option<i64>, GraphError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Integer(x)) => Ok(Some(*x)),
        Some(Value::Real(x)) => Ok(Some(*x as i64)),
        Some(_) => Err(GraphError::NotInteger { what }),
    }
}

/// `rows` encoded as the aggregate encodes them.
#[cfg(test)]
pub(crate) fn encode(arity: usize, values: &[Value]) -> Value {
    if values.is_empty() {
        return Value::Null;
    }
    let mut out = MAGIC.to_vec();
    out.push(u8::try_from(arity).unwrap_or(u8::MAX));
    for v in values {
        push(&mut out, ValueRef::from(v));
    }
    Value::Blob(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_decode_as_encoded_and_foreign_blobs_are_refused() {
        let values = vec![
            Value::Integer(-3),
            Value::Null,
            Value::Real(2.5),
            Value::Text("ab'c".into()),
            Value::Blob(vec![1, 2]),
            Value::Integer(i64::MAX),
        ];
        let rows = decode(&encode(2, &values)).unwrap();
        assert_eq!(rows.arity, 2);
        assert_eq!(rows.values, values);
        assert_eq!(rows.iter().count(), 3);
        assert_eq!(decode(&Value::Null).unwrap().iter().count(), 0);
        assert_eq!(decode(&Value::Integer(1)), Err(GraphError::NotRows));
        assert_eq!(
            decode(&Value::Blob(b"other".to_vec())),
            Err(GraphError::NotRows)
        );
        // A value cut short, a wrong count for the arity, an unknown tag.
        let Value::Blob(mut b) = encode(2, &values) else {
            panic!("encoded")
        };
        b.pop();
        assert_eq!(decode(&Value::Blob(b)), Err(GraphError::NotRows));
        let Value::Blob(b) = encode(4, &values) else {
            panic!("encoded")
        };
        assert_eq!(decode(&Value::Blob(b)), Err(GraphError::NotRows));
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[1, 9]);
        assert_eq!(decode(&Value::Blob(b)), Err(GraphError::NotRows));
    }
}
